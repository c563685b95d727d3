"""The backward node of scatter_reduce with ``reduce="prod"``, ``"amax"`` or ``"amin"``
(index_reduce records through it too), torch's formulas from derivatives.yaml: for prod the
product without the element (zeros handled exactly), for amax / amin the gradient shared
equally among the values equal to the result. sum and mean record through the ops they are
made of (_tensor_scatter_reduce.py)."""

from __future__ import annotations

from cudalite import _C, _tensor
from cudalite.autograd.functions._common import (
    Node,
    adopt,
    check_inplace,
    edge,
    mark,
    nograd,
    twin,
)

_m = _tensor._methods  # the plain (not recording) implementations


class ScatterReduceBackward0(Node):
    __slots__ = ("dim", "index", "self_", "src", "_result", "include_self", "reduce")
    _saved = ("index", "self_", "src", "_result")

    def apply(self, g):
        if self.reduce != "prod":
            return self._extreme(g)
        dim, index, x, src, out = self.dim, self.index, self.self_, self.src, self.result
        inc = self.include_self
        n = self._next
        gx = gs = None
        if n[0] is not None:
            masked = x.masked_fill(x == 0, 1)
            gx = g * masked.scatter_reduce(dim, index, src, "prod", include_self=inc) / masked
            if not inc:
                gx = gx.scatter(dim, index, 0)
        if n[1] is not None:
            zero = src == 0
            ones = _C._full(list(x.shape), 0, x.dtype, x.device)
            nzeros = ones.scatter_add(dim, index, zero.to(x.dtype)).gather(dim, index)
            src_i = src[tuple(slice(0, s) for s in index.shape)] if src.dim() else src
            zero_i = zero[tuple(slice(0, s) for s in index.shape)] if src.dim() else zero
            single = zero_i & (nzeros == 1)
            masked_src = src.clone()
            if src.dim():
                masked_src[tuple(slice(0, s) for s in index.shape)] = src_i.masked_fill(single, 1)
            else:
                masked_src = src_i.masked_fill(single, 1)
            other = x.scatter_reduce(dim, index, masked_src, "prod", include_self=inc)
            gi = ((g * other).gather(dim, index)).where(
                single, (g * out).gather(dim, index) / src_i.masked_fill(zero_i, 1)
            )
            if tuple(gi.shape) != tuple(src.shape):
                full = _C._full(list(src.shape), 0, src.dtype, src.device)
                full[tuple(slice(0, s) for s in index.shape)] = gi
                gi = full
            gs = gi
        return (gx, gs)

    def _extreme(self, g):
        dim, index, x, src, out = self.dim, self.index, self.self_, self.src, self.result
        lead = tuple(slice(0, s) for s in index.shape)
        src_i = src[lead] if src.dim() else src
        value = out.gather(dim, index)
        self_is = x == out
        src_is = src_i == value
        count = self_is.to(x.dtype).scatter_add(dim, index, src_is.to(x.dtype))
        shared = g / count
        gx = gs = None
        if self._next[0] is not None:
            gx = shared.where(self_is, 0.0)
            if not self.include_self:
                gx = gx.scatter(dim, index, 0)
        if self._next[1] is not None:
            gs = shared.gather(dim, index).where(src_is, 0.0)
            if tuple(gs.shape) != tuple(src.shape):
                full = _C._full(list(src.shape), 0, src.dtype, src.device)
                full[lead] = gs
                gs = full
        return (gx, gs)


_NODES = ("prod", "amax", "amin")


def scatter_reduce(self, dim, index, src, reduce, *, include_self=True):
    if reduce not in _NODES:  # recorded through the ops it is made of
        return _m["scatter_reduce"](self, dim, index, src, reduce, include_self=include_self)
    out = nograd(_m["scatter_reduce"], self, dim, index, src, reduce, include_self=include_self)
    node = ScatterReduceBackward0((edge(self), edge(src)))
    node.dim = _C._wrap_dim(dim, self.dim())
    node.index, node.self_, node.src = index, self, src
    node.include_self, node.reduce = include_self, reduce
    node.result = out
    return mark(out, node)


def scatter_reduce_(self, dim, index, src, reduce, *, include_self=True):
    if reduce not in _NODES:
        return _m["scatter_reduce_"](self, dim, index, src, reduce, include_self=include_self)
    check_inplace(self)
    out = scatter_reduce(twin(self), dim, index, src, reduce, include_self=include_self)
    return adopt(self, out)


RECORDERS = {"scatter_reduce": scatter_reduce, "scatter_reduce_": scatter_reduce_}
