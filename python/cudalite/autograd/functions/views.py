"""Backward nodes and recorded forwards for views and shape functions (view, reshape,
permute, transpose, expand, squeeze, unsqueeze, select, slices, as_strided), copies and casts
(clone, contiguous, to), and the embedding of a gradient into a larger zero tensor."""

from __future__ import annotations

from cudalite import _C, _memory_format
from cudalite._C import Tensor
from cudalite.autograd.functions._common import (
    RAW,
    Node,
    check_inplace,
    edge,
    fix,
    mark,
    multi_view_msg,
    nograd,
    nograd_view_msg,
    remark,
    sum_to,
    tr,
    zeros,
)
from cudalite.autograd.functions.pointwise import AliasBackward0, CloneBackward0
from cudalite.autograd.graph import INFERENCE

_orig = {}  # the plain Tensor methods, filled in by autograd.install


# Note [View grad_fn] (csrc/bindings/bind_autograd.cpp)
# A view autograd tracks keeps its node in its dict as "_view_fn", with the version it was
# made at as "_attr_version", and its base: "_base_" (the root of its chain of views) or,
# for views of a leaf that requires grad, "_view_of_leaf" (that leaf). Tensor.grad_fn returns
# the node while the version is the same; once the view's base or another view of it has
# been modified in place, view_grad_fn makes a new node (AsStridedBackward0 of the base's
# current history), as torch does, so that gradients through the view see the write.


def track_view(out, x, node, nr=None):
    """Makes ``out``, a view of ``x`` made in grad mode, the output of ``node``. Views of a leaf
    that requires grad remember it, so that in-place ops on them raise torch's error; views of
    other tensors remember their base, so that an in-place op on the view also rewrites the
    base's history (``rebase_view``)."""
    mark(out, node, nr, "_view_fn")
    d = x.__dict__
    od = out.__dict__
    od["_attr_version"] = out._version
    ng = d.get("_nograd_view")
    if ng is not None:  # a view of a view made in no_grad mode
        od["_nograd_view"] = (ng[0], True)
    leaf = d.get("_view_of_leaf")
    if leaf is not None:
        od["_view_of_leaf"] = leaf
    elif x._rg and x.grad_fn is None:
        od["_view_of_leaf"] = x
    else:
        od["_base_"] = d.get("_base_", x)
    return out


def _view_mark(out, x, node):
    return track_view(out, x, node)


def nograd_view(out, base):
    """A view made in no_grad (or inference) mode of ``base``, which requires grad: a leaf
    that requires grad, as in torch, which no gradient reaches and which in-place ops in grad
    mode refuse (``check_inplace``); reading its grad_fn raises once its base was modified in
    place (view_grad_fn). ``out`` may be a list of views (split)."""
    if isinstance(out, Tensor):
        if out is not base and not out._rg and out._is_view():
            out._requires_grad_flag = True
            d = out.__dict__
            d["_rg"] = True
            d["_nograd_view"] = (INFERENCE.depth > 0, False)
            d["_attr_version"] = out._version
    elif isinstance(out, (tuple, list)):
        for o in out:
            nograd_view(o, base)
    return out


def view_grad_fn(t):
    """The node of tracked view ``t`` whose version changed since its node was made (Note
    [View grad_fn]): torch's errors for views made in no_grad mode and outputs of multi-view
    ops, else a new AsStridedBackward0 of the base's current history."""
    d = t.__dict__
    ng = d.get("_nograd_view")
    if ng is not None:
        raise RuntimeError(nograd_view_msg(t, ng, indirect=True))
    if "_multi_view" in d:
        raise RuntimeError(multi_view_msg(t, indirect=True))
    base = d.get("_base_")
    if base is None:
        base = d["_view_of_leaf"]
    node = _as_strided_node(base, t)
    d["_view_fn"] = node
    d["_attr_version"] = t._version
    d.pop("_output_nr", None)
    return node


def _as_strided_node(base, v):
    """AsStridedBackward0 taking view ``v``'s gradient to ``base``'s current history."""
    node = AsStridedBackward0((edge(base),))
    node.shape, node.size, node.stride = base.shape, tuple(v.shape), tuple(v.stride())
    node.offset = v.storage_offset() - base.storage_offset()
    node.base_stride = None if base.is_contiguous() else tuple(base.stride())
    return node


class ViewCopySlices(Node):
    """The base of a view that was modified in place: the viewed region's gradient goes to
    the new values, the rest to the base's old history."""

    __slots__ = ("size", "stride", "offset")
    _cpp_name = "torch::autograd::CopySlices"

    def apply(self, g):
        gb = g.contiguous()._clone()
        _C._fill_(RAW["as_strided"](gb, self.size, self.stride, self.offset), 0, False, False)
        region = RAW["as_strided"](g.contiguous(), self.size, self.stride, self.offset)
        return (gb, region._clone())


ViewCopySlices.__name__ = ViewCopySlices.__qualname__ = "CopySlices"


def rebase_view(v):
    """After an in-place op gave view ``v`` a new history, makes its base's history
    "old base with v's region replaced" and v a view of that (torch's CopySlices)."""
    base = v.__dict__.get("_base_")
    if base is None:
        return
    if not base.is_contiguous():
        raise RuntimeError(
            "cudalite: an in-place operation on a view of a non-contiguous tensor that "
            "requires grad is not supported; use an out-of-place operation"
        )
    node = ViewCopySlices((edge(base), edge(v)))
    node.size, node.stride = tuple(v.shape), tuple(v.stride())
    node.offset = v.storage_offset() - base.storage_offset()
    remark(base, node)
    remark(v, _as_strided_node(base, v))


class ViewBackward0(Node):
    __slots__ = ("shape",)

    def apply(self, g):
        return (g.reshape(self.shape),)


UnsafeViewBackward0 = type("UnsafeViewBackward0", (ViewBackward0,), {"__slots__": ()})
SqueezeBackward0 = type("SqueezeBackward0", (ViewBackward0,), {"__slots__": ()})
SqueezeBackward1 = type("SqueezeBackward1", (ViewBackward0,), {"__slots__": ()})
SqueezeBackward2 = type("SqueezeBackward2", (ViewBackward0,), {"__slots__": ()})


def _shape_node(cls, x):
    node = cls((edge(x),))
    node.shape = x.shape
    return node


def view(self, *shape, **kw):
    out = _orig["view"](self, *shape, **kw)
    if "dtype" in kw or (len(shape) == 1 and isinstance(shape[0], _C.dtype)):
        return out  # view(dtype) reinterprets bits: not differentiable
    return _view_mark(out, self, _shape_node(ViewBackward0, self))


def reshape(self, *shape, **kw):
    out = _orig["reshape"](self, *shape, **kw)
    if out._is_same_storage(self):
        return _view_mark(out, self, _shape_node(ViewBackward0, self))
    # reshape had to copy: torch records the copy and an "unsafe" view of it
    clone = CloneBackward0((edge(self),))
    node = UnsafeViewBackward0(((clone, 0),))
    node.shape = self.shape
    return mark(out, node)


def unsafe_view(t, shape):
    """``t.reshape(shape)`` recorded as torch's UnsafeViewBackward0 (matmul's last step)."""
    out = _orig["reshape"](t, *shape)
    return mark(out, _shape_node(UnsafeViewBackward0, t))


def flatten(self, start_dim=0, end_dim=-1):
    out = _orig["flatten"](self, start_dim, end_dim)
    if out is self:
        return out
    if out._is_same_storage(self):
        return _view_mark(out, self, _shape_node(ViewBackward0, self))
    clone = CloneBackward0((edge(self),))
    node = UnsafeViewBackward0(((clone, 0),))
    node.shape = self.shape
    return mark(out, node)


def squeeze(self, dim=None):
    out = _orig["squeeze"](self, dim)
    if dim is None:
        cls = SqueezeBackward0
    elif isinstance(dim, (tuple, list)):
        cls = SqueezeBackward2
    else:
        cls = SqueezeBackward1
    return _view_mark(out, self, _shape_node(cls, self))


class UnsqueezeBackward0(Node):
    __slots__ = ("dim",)

    def apply(self, g):
        return (g.squeeze(self.dim),)


def unsqueeze(self, dim):
    out = _orig["unsqueeze"](self, dim)
    node = UnsqueezeBackward0((edge(self),))
    node.dim = dim if dim >= 0 else dim + out.dim()
    return _view_mark(out, self, node)


class PermuteBackward0(Node):
    __slots__ = ("dims",)

    def apply(self, g):
        inv = [0] * len(self.dims)
        for i, d in enumerate(self.dims):
            inv[d] = i
        return (g.permute(*inv),)


def permute(self, *dims, **kw):
    out = _orig["permute"](self, *dims, **kw)
    if "dims" in kw:
        dims = kw["dims"]
    elif len(dims) == 1 and isinstance(dims[0], (tuple, list)):
        dims = dims[0]
    nd = max(self.dim(), 1)
    node = PermuteBackward0((edge(self),))
    node.dims = [d % nd for d in dims]
    return _view_mark(out, self, node)


class TransposeBackward0(Node):
    __slots__ = ("dim0", "dim1")

    def apply(self, g):
        return (g.transpose(self.dim0, self.dim1),)


def transpose(self, dim0, dim1):
    out = _orig["transpose"](self, dim0, dim1)
    node = TransposeBackward0((edge(self),))
    node.dim0, node.dim1 = dim0, dim1
    return _view_mark(out, self, node)


class TBackward0(Node):
    __slots__ = ()

    def apply(self, g):
        return (tr(g) if g.dim() == 2 else g.t(),)


def t(self):
    out = _orig["transpose"](self, 0, 1) if self.dim() == 2 else nograd(_orig["t"], self)
    return _view_mark(out, self, TBackward0((edge(self),)))


# In-place views record their view's node under torch's name for the in-place form.
_INPLACE_NAMES = {
    "TBackward0": "TBackward1",
    "TransposeBackward0": "TransposeBackward1",
    "SqueezeBackward0": "SqueezeBackward3",
    "SqueezeBackward1": "SqueezeBackward4",
    "SqueezeBackward2": "SqueezeBackward5",
    "UnsqueezeBackward0": "UnsqueezeBackward1",
}
_inplace_nodes = {}


def inplace_view(view, name):
    """The recorder of ``x.name(...)``, the in-place form of the recorded ``view``: ``x``
    becomes the view and the output of its node (it stays a view of its base, if it was one)."""

    def rec(self, *args, **kwargs):
        check_inplace(self)
        if name == "t_" and self.dim() > 2:
            _orig["t_"](self)  # the foundation's error
        v = view(self, *args, **kwargs)
        node = v.grad_fn
        cls = type(node)
        sub = _inplace_nodes.get(cls)
        if sub is None:
            sub = _inplace_nodes[cls] = type(
                _INPLACE_NAMES[cls.__name__], (cls,), {"__slots__": ()}
            )
        node.__class__ = sub
        self._set_metadata(v)
        self._bump_version()  # torch counts in-place views as writes
        return remark(self, node)

    rec.__name__ = name
    return rec


class ExpandBackward0(Node):
    __slots__ = ("shape",)

    def apply(self, g):
        return (sum_to(g, self.shape),)


def expand(self, *sizes):
    out = _orig["expand"](self, *sizes)
    return _view_mark(out, self, _shape_node(ExpandBackward0, self))


# ---- gradients of selections: embed into zeros ----


class _EmbedBackward(Node):
    """The backward of an "embed into zeros" step is the selection again; recorded only when
    a backward pass builds a graph (create_graph=True)."""

    __slots__ = ("select",)

    def apply(self, g):
        return (self.select(g),)


_embed_types = {}


def embed(g, shape, select, name):
    """Zeros of ``shape`` with ``g`` written where ``select(zeros)`` points."""
    z = zeros(shape, g)
    _C._copy_(select(z), g, False, False)  # z is new: no version bump
    if g._rg and _C._is_grad_enabled():
        cls = _embed_types.get(name)
        if cls is None:
            cls = _embed_types[name] = type(name, (_EmbedBackward,), {"__slots__": ()})
        node = cls((edge(g),))
        node.select = select
        mark(z, node)
    return z


class SelectBackward0(Node):
    __slots__ = ("shape", "dim", "index")

    def apply(self, g):
        dim, index = self.dim, self.index
        return (embed(g, self.shape, lambda z: z.select(dim, index), "SelectBackwardBackward0"),)


def select(self, dim, index):
    out = _orig["select"](self, dim, index)
    node = _shape_node(SelectBackward0, self)
    node.dim, node.index = dim, index
    return _view_mark(out, self, node)


class SliceBackward0(Node):
    __slots__ = ("shape", "dim", "start", "end", "step")

    def apply(self, g):
        d, a, b, s = self.dim, self.start, self.end, self.step
        return (embed(g, self.shape, lambda z: z._slice(d, a, b, s), "SliceBackwardBackward0"),)


def slice_(self, dim, start, end, step=1):
    out = self._slice(dim, start, end, step)
    node = _shape_node(SliceBackward0, self)
    node.dim, node.start, node.end, node.step = dim, start, end, step
    return _view_mark(out, self, node)


def narrow(self, dim, start, length):
    if isinstance(start, Tensor):
        start = int(start.item())
    if start < 0:
        start += self.shape[dim]
    return slice_(self, dim, start, start + length, 1)


def strided_positions(size, stride, offset, device):
    """The storage offsets (int64, contiguous, of shape ``size``) of the elements of the
    view with these sizes, strides and storage offset."""
    pos = _C._full([], offset, _C.int64, device)
    for i, (sz, st) in enumerate(zip(size, stride, strict=True)):
        ar = _C._arange(0, sz, 1, _C.int64, device) * st
        pos = pos + ar.reshape([sz] + [1] * (len(size) - i - 1))
    return pos.expand(*size).contiguous()


class AsStridedBackward0(Node):
    """The gradient of a view with the geometry (size, stride, offset) relative to the memory
    of an input of ``shape``: contiguous, or with the strides ``base_stride`` (a dense base
    laid out in another order, for the views that view_grad_fn remakes)."""

    __slots__ = ("shape", "size", "stride", "offset", "base_stride")

    def __init__(self, edges):
        super().__init__(edges)
        self.base_stride = None

    def apply(self, g):
        n = 1
        for s in self.shape:
            n *= s
        flat = zeros([n], g)
        if self.base_stride is None:
            # positions of the view's elements in a contiguous copy of the input
            pos = strided_positions(self.size, self.stride, self.offset, g.device)
        else:
            pos = _strided_positions(
                self.shape, self.base_stride, self.size, self.stride, self.offset, g.device
            )
        _C._scatter_offsets(flat, pos, g.contiguous(), True)
        return (flat.reshape(self.shape),)


def _strided_positions(shape, base_stride, size, stride, off, device):
    """The flat (row-major) index in an input of ``shape`` laid out with ``base_stride`` of
    each element of the view (size, stride, off): the indices are written into a buffer
    through the input's geometry and read back through the view's."""
    extent = 1 + sum((s - 1) * st for s, st in zip(shape, base_stride, strict=True) if s)
    n = 1
    for s in shape:
        n *= s
    buf = _C._full([extent], 0, _C.int64, device)
    idx = _C._arange(0, n, 1, _C.int64, device).reshape(list(shape))
    _C._copy_(RAW["as_strided"](buf, list(shape), list(base_stride), 0), idx, False, False)
    return RAW["as_strided"](buf, list(size), list(stride), off).contiguous()


def as_strided(self, size, stride, storage_offset=None):
    out = _orig["as_strided"](self, size, stride, storage_offset)
    if not self.is_contiguous():
        raise NotImplementedError(
            "cudalite: the gradient of as_strided is supported for contiguous inputs only"
        )
    node = _shape_node(AsStridedBackward0, self)
    node.size, node.stride = tuple(size), tuple(stride)
    base = self.storage_offset()
    node.offset = (base if storage_offset is None else storage_offset) - base
    return _view_mark(out, self, node)


def alias(self):
    """``x[...]``: a new tensor object for the same view."""
    return _view_mark(self._alias(), self, AliasBackward0((edge(self),)))


# ---- copies and casts ----


def clone(self, *, memory_format=None):
    out = self._clone()
    if memory_format is not None:
        out = _memory_format.apply(out, memory_format, "clone")
    return mark(out, CloneBackward0((edge(self),)))


def contiguous(self, memory_format=None):
    args = () if memory_format is None else (memory_format,)
    out = _orig["contiguous"](self, *args)
    if out is self:
        return out
    return mark(out, CloneBackward0((edge(self),)))


class ToCopyBackward0(Node):
    __slots__ = ("dtype", "device")

    def apply(self, g):
        return (g.to(device=self.device, dtype=self.dtype),)


def copied(self, out):
    """Records ``out``, a converted copy of ``self`` (``to``, ``cuda``, ``float`` ...);
    anything else (``type()``'s name of the type) passes through."""
    if out is self or not isinstance(out, Tensor) or not out.dtype.is_floating_point:
        return out
    node = ToCopyBackward0((edge(self),))
    node.dtype, node.device = self.dtype, self.device
    return mark(out, node)


def cast_method(name):
    def rec(self, *args, **kwargs):
        return copied(self, _orig[name](self, *args, **kwargs))

    rec.__name__ = name
    return rec


class CopyBackwards(Node):
    """``self.copy_(src)``: self's old values get no gradient, src gets the gradient (summed,
    converted back to its shape, dtype and device)."""

    __slots__ = ("m1",)
    _cpp_name = "torch::autograd::CopyBackwards"

    def apply(self, g):
        n = self._next
        g0 = zeros(g.shape, g) if n[0] is not None else None
        return (g0, fix(g, self.m1) if n[1] is not None else None)


def copy_(self, src, non_blocking=False):
    check_inplace(self)
    e0, e1 = edge(self), edge(src) if isinstance(src, Tensor) else None
    _orig["copy_"](self, src, non_blocking)
    if e0 is None and e1 is None:
        return self
    node = CopyBackwards((e0, e1))
    node.m1 = (src.shape, src.dtype, src.device) if e1 is not None else None
    remark(self, node)
    rebase_view(self)
    return self
