"""Shared pieces of the recorded ops: running a forward without recording, fitting a
gradient back to an input's shape, dtype and device, and the in-place rules."""

from __future__ import annotations

from cudalite import _C, _ops
from cudalite._C import Tensor
from cudalite.autograd import saved
from cudalite.autograd.graph import Node, edge, mark

B = _ops.BINARY
U = _ops.UNARY

grad_enabled = _C._is_grad_enabled
set_grad = _C._set_grad_enabled

__all__ = ["Node", "edge", "mark", "remark", "nograd", "meta", "fix", "sum_to", "check_inplace"]


def nograd(fn, *args, **kwargs):
    """Runs ``fn`` with recording off: a recorded op computes its forward through the plain
    implementation, whose inner tensor ops must not record nodes of their own."""
    set_grad(False)
    try:
        return fn(*args, **kwargs)
    finally:
        set_grad(True)


def no_out(out, name):
    if out is not None:
        raise RuntimeError(
            f"{name}(): functions with out=... arguments don't support automatic "
            "differentiation, but one of the arguments requires grad."
        )


def meta(t, out, om=None):
    """None when a gradient shaped like ``out`` fits input ``t`` as it is; else what
    ``fix`` needs to make it fit (broadcast dims to sum, a dtype or device to convert to).
    ``om`` is ``out_meta(out)`` when the caller checks several inputs against one output."""
    if not isinstance(t, Tensor):
        return None
    if om is None:
        om = out_meta(out)
    shape, dtype = t.shape, t.dtype
    if shape == om[0] and dtype is om[1] and t.is_cuda == om[2]:
        return None
    return (shape, dtype, t.device)


def out_meta(out):
    return (out.shape, out.dtype, out.is_cuda)


def fix(g, m):
    if m is None or g is None:
        return g
    shape, dtype, device = m
    if g.shape != shape:
        g = sum_to(g, shape)
    if g.dtype != dtype or g.device != device:
        g = g.to(device=device, dtype=dtype)
    return g


# The plain C++ methods, filled in by autograd.install before it wraps them: formulas use
# them when no graph is being built.
RAW = {}
_SUM = _C._reduce_ops["sum"]


def sum_to(g, shape):
    """Sums ``g`` over the dims that broadcasting added or stretched to get ``shape``."""
    gs = g.shape
    if gs == shape:
        return g
    lead = len(gs) - len(shape)
    keep = [i + lead for i, s in enumerate(shape) if s == 1 and gs[i + lead] != 1]
    if g._rg and grad_enabled():
        dims = list(range(lead)) + keep
        if dims:
            g = g.sum(dims, keepdim=True)
        return g.reshape(shape) if lead else g
    if keep:
        g = _C._reduce(_SUM, g, keep, True, None)
    if lead:
        g = _C._reduce(_SUM, g, list(range(lead)), False, None)
    return g


def tr(x):
    """``x.t()`` of a matrix inside formulas (recorded only when building a graph)."""
    if x._rg and grad_enabled():
        return x.t()
    return RAW["transpose"](x, 0, 1)


def zeros_like(t):
    return _C._full(list(t.shape), 0, t.dtype, t.device)


def zeros(shape, like):
    return _C._full(list(shape), 0, like.dtype, like.device)


def multi_view_msg(t, indirect=False):
    """torch's error for an in-place op on an output of split/unbind/chunk (``indirect``: on
    its base or another view of it, seen when reading the view's grad_fn)."""
    how = "its base or another view of its base has been" if indirect else "is being"
    return (
        f"Output {t._output_nr} of {_view_node_name(t)} is a view and {how} modified inplace. "
        "This view is the output of a function that returns multiple views. Such functions do "
        "not allow the output views to be modified inplace. You should replace the inplace "
        "operation by an out-of-place one."
    )


def _view_node_name(t):
    """The name of view ``t``'s node as made (torch names it without remaking it)."""
    fn = t.__dict__.get("_view_fn")
    return type(fn if fn is not None else t.grad_fn).__name__


def check_inplace(t):
    """torch's errors for in-place ops that would lose a leaf's gradient."""
    if "_multi_view" in t.__dict__ and grad_enabled():
        raise RuntimeError(multi_view_msg(t))
    ng = t.__dict__.get("_nograd_view")
    if ng is not None and grad_enabled():
        raise RuntimeError(nograd_view_msg(t, ng))
    if t._rg and t.grad_fn is None:
        raise RuntimeError(
            "a leaf Variable that requires grad is being used in an in-place operation."
        )
    base = t.__dict__.get("_view_of_leaf")
    if base is not None and grad_enabled():
        raise RuntimeError(
            "a view of a leaf Variable that requires grad is being used in an in-place operation."
        )


def nograd_view_msg(t, ng, node_name=None, indirect=False):
    """torch's error for an in-place op in grad mode on a view made in no_grad (or
    inference) mode, or on a view of one (``ng``: (inference, of_view)); ``node_name``
    names the view op that setitem applied first. ``indirect``: the view's base or another
    view of it was modified (seen when reading the view's grad_fn)."""
    inference, of_view = ng
    where = "inference mode" if inference else "no_grad mode"
    how = "in normal mode" if inference else "with grad mode enabled"
    block = "inference_mode" if inference else "no_grad"
    if node_name is None and of_view:
        node_name = _view_node_name(t)
    head = (
        f"A view was created in {where}"
        if node_name is None
        else f"Output 0 of {node_name} is a view of a view which was created in {where}"
    )
    what = "its base or another view of its base has been" if indirect else "is being"
    return (
        f"{head} and {what} modified inplace {how}. Given that this use case is ambiguous "
        "and error-prone, it is forbidden. You can clarify your code by moving both the view "
        f"and the inplace either both inside the {block} block (if you don't want the inplace "
        "to be tracked) or both outside (if you want the inplace to be tracked)."
    )


def remark(t, node):
    """Makes ``t``, written in place, the output of ``node``; a view autograd tracks keeps it
    as its node at its new version (Note [View grad_fn] in views.py)."""
    d = t.__dict__
    d.pop("_output_nr", None)
    if "_attr_version" in d:
        mark(t, node, None, "_view_fn")
        d["_attr_version"] = t._version
    else:
        mark(t, node)
    return t


def twin(t):
    """A copy of ``t``'s values that stands for ``t`` in the graph (same edge): in-place ops
    whose backward needs the old value save this instead of the tensor they overwrite."""
    c = t._clone()
    if t._rg:
        c._requires_grad_flag = True
        d = c.__dict__
        d["_rg"] = True
        d["grad_fn"] = t.grad_fn
        d["_output_nr"] = t._output_nr
        acc = t.__dict__.get("_acc")
        if acc is not None:
            d["_acc"] = acc
    return c


def adopt(self, r):
    """Finishes an in-place op computed out of place as ``r``: writes the values into
    ``self`` and makes ``self`` the output of ``r``'s node."""
    _C._copy_(self, r, False)
    node = r.grad_fn
    if node is not None:
        remark(self, node)
        if "_base_" in self.__dict__:
            from cudalite.autograd.functions.views import rebase_view

            rebase_view(self)
        if node._vers is not None and "_result" in node._saved:
            saved.resave_output(node, self)
    return self


def is_float(t):
    return t.dtype.is_floating_point


def edges2(a, b):
    return (
        edge(a) if isinstance(a, Tensor) else None,
        edge(b) if isinstance(b, Tensor) else None,
    )


def metas(node, a, b, out):
    om = out_meta(out)
    node.m0 = meta(a, out, om) if isinstance(a, Tensor) else None
    node.m1 = meta(b, out, om) if isinstance(b, Tensor) else None
