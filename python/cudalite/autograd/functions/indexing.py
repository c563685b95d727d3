"""Backward nodes and recorded forwards for indexing (``x[idx]``, ``x[idx] = v``,
index_select, index_put_, masked_fill) and for joining and splitting (cat, stack, unbind,
split, chunk), repeat and flip."""

from __future__ import annotations

import builtins

from cudalite import _C, _indexing
from cudalite._C import Tensor
from cudalite.autograd.functions._common import (
    Node,
    adopt,
    check_inplace,
    edge,
    fix,
    mark,
    meta,
    nograd,
    nograd_view_msg,
    remark,
    zeros,
)
from cudalite.autograd.functions.views import _orig, _view_mark, embed, rebase_view, track_view
from cudalite.autograd.functions.where import _where

_VIEW_OF_LEAF = (
    "a view of a leaf Variable that requires grad is being used in an in-place operation."
)


def _is_basic(i):
    return i is None or i is Ellipsis or isinstance(i, (int, slice)) and not isinstance(i, bool)


def _basic_name(items):
    """torch's node name for a basic index: that of the last step it applies."""
    name = "AliasBackward0"
    for i in items:
        if isinstance(i, int):
            name = "SelectBackward0"
        elif i is None:
            name = "UnsqueezeBackward0"
        elif isinstance(i, slice) and i != slice(None):
            name = "SliceBackward0"
    return name


class _IndexNode(Node):
    __slots__ = ("shape", "idx")
    _saved = ("idx",)

    def apply(self, g):
        idx = self.idx
        return (embed(g, self.shape, lambda z: _indexing.getitem(z, idx), self._bwd),)


_basic_types = {
    n: type(n, (_IndexNode,), {"__slots__": (), "_bwd": n.replace("0", "Backward0")})
    for n in ("AliasBackward0", "SelectBackward0", "UnsqueezeBackward0", "SliceBackward0")
}


def index_embed(g, shape, idx):
    """Zeros of ``shape`` plus ``g`` added at ``idx`` (repeated indices accumulate)."""
    z = zeros(shape, g)
    view, adv = _indexing._walk(z, idx)
    _C._scatter_offsets(view, _indexing._offsets(view, adv), g.contiguous(), True)
    if g._rg and _C._is_grad_enabled():
        node = IndexBackwardBackward0((edge(g),))
        node.idx = idx
        mark(z, node)
    return z


class IndexBackwardBackward0(Node):
    __slots__ = ("idx",)

    def apply(self, g):
        return (_indexing.getitem(g, self.idx),)


class IndexBackward0(Node):
    __slots__ = ("shape", "idx")
    _saved = ("idx",)

    def apply(self, g):
        return (index_embed(g, self.shape, self.idx),)


def getitem(self, idx):
    out = nograd(_indexing.getitem, self, idx)
    items = idx if isinstance(idx, tuple) else (idx,)
    if builtins.all(_is_basic(i) for i in items):
        node = _basic_types[_basic_name(items)]((edge(self),))
        node.shape, node.idx = self.shape, idx
        return _view_mark(out, self, node)
    node = IndexBackward0((edge(self),))
    node.shape, node.idx = self.shape, idx
    return mark(out, node)


class CopySlices(Node):
    """``self[idx] = value``: the overwritten part of self gets no gradient; value gets the
    gradient of the part it was written to (summed over broadcast dims)."""

    __slots__ = ("idx", "vmeta", "accumulate")
    _saved = ("idx",)
    _cpp_name = "torch::autograd::CopySlices"

    def apply(self, g):
        n = self._next
        gx = gv = None
        if n[0] is not None:
            if self.accumulate:
                gx = g
            else:
                keep = _C._full(list(g.shape), True, _C.bool, g.device)
                _indexing.setitem(keep, self.idx, False)
                gx = _where(keep, g, 0.0)  # overwritten elements get 0, even where g is nan
        if n[1] is not None:
            gv = fix(_indexing.getitem(g, self.idx) if not g._rg else g[self.idx], self.vmeta)
        return (gx, gv)


IndexPutBackward0 = type("IndexPutBackward0", (CopySlices,), {"__slots__": (), "_cpp_name": None})


def _consumed(i):
    """How many dims of the indexed tensor index ``i`` takes (None and ... take none)."""
    if i is None or i is Ellipsis:
        return 0
    if isinstance(i, Tensor) and i.dtype is _C.bool:
        return builtins.max(i.dim(), 1)
    return 1


def _setitem_view_name(self, idx):
    """The node of the last view torch's ``self[idx] = v`` makes before writing (a select,
    slice or unsqueeze; full slices are skipped), or None when it writes into ``self``."""
    items = idx if isinstance(idx, tuple) else (idx,)
    n = sum(_consumed(i) for i in items)
    name, dim = None, 0
    for i in items:
        if i is Ellipsis:
            dim = self.dim() - n
            continue
        if i is None:
            name = "UnsqueezeBackward0"
        elif isinstance(i, int) and not isinstance(i, bool):
            name = "SelectBackward0"
        elif isinstance(i, Tensor) and i.dim() == 0 and not i.dtype.is_floating_point:
            name = "SelectBackward0" if i.dtype is not _C.bool else name
        elif isinstance(i, slice) and dim < self.dim():
            start, stop, step = i.start, i.stop, i.step
            size = self.shape[dim]
            full = start in (None, 0) and step in (None, 1) and (stop is None or stop >= size)
            name = name if full else "SliceBackward0"
        dim += _consumed(i)
        n -= _consumed(i)
    return name


def _check_leaf_view(self, idx=()):
    ng = self.__dict__.get("_nograd_view")
    if ng is not None:
        name = _setitem_view_name(self, idx)
        raise RuntimeError(nograd_view_msg(self, ng, name))
    if (self._rg and self.grad_fn is None) or "_view_of_leaf" in self.__dict__:
        raise RuntimeError(_VIEW_OF_LEAF)


def setitem(self, idx, value):
    _check_leaf_view(self, idx)
    vt = isinstance(value, Tensor)
    e_self, e_val = edge(self), (edge(value) if vt else None)
    nograd(_indexing.setitem, self, idx, value)
    if e_self is None and e_val is None:
        return
    node = CopySlices((e_self, e_val))
    node.idx, node.accumulate = idx, False
    node.vmeta = (value.shape, value.dtype, value.device) if vt else None
    remark(self, node)
    rebase_view(self)


def index_put_(self, indices, values, accumulate=False):
    _check_leaf_view(self)
    e_self, e_val = edge(self), edge(values)
    nograd(_indexing.index_put_, self, indices, values, accumulate)
    if e_self is None and e_val is None:
        return self
    node = IndexPutBackward0((e_self, e_val))
    node.idx, node.accumulate = tuple(indices), accumulate
    node.vmeta = (values.shape, values.dtype, values.device)
    remark(self, node)
    rebase_view(self)
    return self


class IndexSelectBackward0(Node):
    __slots__ = ("shape", "dim", "index")
    _saved = ("index",)

    def apply(self, g):
        idx = (slice(None),) * self.dim + (self.index,)
        return (index_embed(g, self.shape, idx),)


def index_select(self, dim, index):
    out = nograd(_orig["index_select"], self, dim, index)
    node = IndexSelectBackward0((edge(self),))
    node.shape, node.index = self.shape, index.reshape(-1) if index.dim() == 0 else index
    node.dim = dim % builtins.max(self.dim(), 1)
    return mark(out, node)


class MaskedFillBackward0(Node):
    __slots__ = ("mask", "m0")
    _saved = ("mask",)

    def apply(self, g):
        n = self._next
        gx = fix(_where(self.mask, 0.0, g), self.m0) if n[0] is not None else None
        if len(n) == 1:
            return (gx,)
        gv = _where(self.mask, g, 0.0).sum() if n[1] is not None else None
        return (gx, gv)


def masked_fill(self, mask, value):
    out = nograd(_orig["masked_fill"], self, mask, value)
    edges = (edge(self), edge(value)) if isinstance(value, Tensor) else (edge(self),)
    node = MaskedFillBackward0(edges)
    node.mask, node.m0 = mask, meta(self, out)
    return mark(out, node)


def masked_fill_(self, mask, value):
    check_inplace(self)
    return adopt(self, masked_fill(self, mask, value))


# ---- joining and splitting ----


class CatBackward0(Node):
    __slots__ = ("dim", "sizes", "metas")

    def apply(self, g):
        out, pos = [], 0
        for e, size, m in zip(self._next, self.sizes, self.metas, strict=True):
            if size is None:
                out.append(None)
                continue
            if e is not None:
                out.append(fix(g.narrow(self.dim, pos, size), m))
            else:
                out.append(None)
            pos += size
        return tuple(out)


def cat(tensors, dim=0, *, out=None):
    from cudalite import _ops

    tensors = list(tensors)
    r = nograd(_ops.cat, tensors, dim, out=out)
    d = dim % builtins.max(r.dim(), 1)
    node = CatBackward0(tuple(edge(t) for t in tensors))
    node.dim = d
    # torch skips legacy empty 1-D tensors when joining higher-dim ones
    node.sizes = [
        None if (t.dim() == 1 and t.shape[0] == 0 and r.dim() != 1) else t.shape[d] for t in tensors
    ]
    node.metas = [(t.shape, t.dtype, t.device) if t.dtype != r.dtype else None for t in tensors]
    return mark(r, node)


class StackBackward0(Node):
    __slots__ = ("dim", "metas")

    def apply(self, g):
        return tuple(
            fix(g.select(self.dim, i), m) if e is not None else None
            for i, (e, m) in enumerate(zip(self._next, self.metas, strict=True))
        )


def stack(tensors, dim=0, *, out=None):
    from cudalite import _ops

    tensors = list(tensors)
    r = nograd(_ops.stack, tensors, dim, out=out)
    node = StackBackward0(tuple(edge(t) for t in tensors))
    node.dim = dim % r.dim()
    node.metas = [(t.shape, t.dtype, t.device) if t.dtype != r.dtype else None for t in tensors]
    return mark(r, node)


class _MultiOut(Node):
    __slots__ = ("_n", "dim", "shapes", "like")
    _multi = True
    _saved = ("like",)

    def _filled(self, grads):
        return [
            g if g is not None else zeros(s, self.like)
            for g, s in zip(grads, self.shapes, strict=True)
        ]


class UnbindBackward0(_MultiOut):
    __slots__ = ()

    def apply(self, grads):
        from cudalite import stack as stack_

        return (stack_(self._filled(grads), self.dim),)


class SplitBackward0(_MultiOut):
    __slots__ = ()

    def apply(self, grads):
        from cudalite import cat as cat_

        return (cat_(self._filled(grads), self.dim),)


SplitWithSizesBackward0 = type("SplitWithSizesBackward0", (SplitBackward0,), {"__slots__": ()})


def _multi(cls, self, outs, dim):
    node = cls((edge(self),))
    node._n = len(outs)
    node.dim = dim % builtins.max(self.dim(), 1)
    node.shapes = [o.shape for o in outs]
    node.like = _C._full([], 0, self.dtype, self.device)
    for i, o in enumerate(outs):
        track_view(o, self, node, i)
        o.__dict__["_multi_view"] = True
    return outs


def unbind(self, dim=0):
    return _multi(UnbindBackward0, self, nograd(_orig["unbind"], self, dim), dim)


def split(self, split_size, dim=0):
    outs = nograd(_orig["split"], self, split_size, dim)
    cls = SplitBackward0 if isinstance(split_size, int) else SplitWithSizesBackward0
    return _multi(cls, self, outs, dim)


def chunk(self, chunks, dim=0):
    return _multi(SplitBackward0, self, nograd(_orig["chunk"], self, chunks, dim), dim)


class RepeatBackward0(Node):
    __slots__ = ("shape", "repeats")

    def apply(self, g):
        reps = self.repeats
        xs = [1] * (len(reps) - len(self.shape)) + list(self.shape)
        split = [v for r, s in zip(reps, xs, strict=True) for v in (r, s)]
        g = g.reshape(split).sum(list(range(0, len(split), 2)))
        return (g.reshape(self.shape),)


def repeat(self, *sizes):
    out = nograd(_orig["repeat"], self, *sizes)
    node = RepeatBackward0((edge(self),))
    node.shape = self.shape
    node.repeats = (
        list(sizes[0]) if len(sizes) == 1 and isinstance(sizes[0], (tuple, list)) else (list(sizes))
    )
    return mark(out, node)


class FlipBackward0(Node):
    __slots__ = ("dims",)

    def apply(self, g):
        return (g.flip(self.dims),)


def flip(self, *dims):
    out = nograd(_orig["flip"], self, *dims)
    node = FlipBackward0((edge(self),))
    node.dims = list(dims[0]) if len(dims) == 1 and isinstance(dims[0], (tuple, list)) else dims
    return mark(out, node)
