"""Backward nodes and recorded forwards for sorting: sort, msort, topk and kthvalue. Each
gradient goes back to the element its index points at (the others get zero)."""

from __future__ import annotations

from cudalite import _C, _sorting
from cudalite.autograd.functions._common import Node, edge, mark, no_out, zeros


class SortBackward0(Node):
    __slots__ = ("shape", "dim", "keepdim", "indices")
    _saved = ("indices",)

    def apply(self, g):
        return (_scatter(self.shape, self.dim, self.indices, g, self.keepdim),)


TopkBackward0 = type("TopkBackward0", (SortBackward0,), {"__slots__": ()})
KthvalueBackward0 = type("KthvalueBackward0", (SortBackward0,), {"__slots__": ()})


def _scatter(shape, dim, indices, g, keepdim):
    """A zero tensor of ``shape`` with ``g`` written at ``indices`` along ``dim``."""
    nd = len(shape)
    if nd == 0:
        return g.reshape([])
    if not keepdim:
        g, indices = g.unsqueeze(dim), indices.unsqueeze(dim)
    out = zeros(shape, g)
    idx = []
    for j in range(nd):
        if j == dim:
            idx.append(indices)
        else:
            n = indices.shape[j]
            pos = _C._arange(0, n, 1, _C.int64, g.device)
            idx.append(pos.reshape([n if i == j else 1 for i in range(nd)]))
    out[tuple(idx)] = g
    return out


def _record(cls, input, r, dim, keepdim=True):
    if not input.dtype.is_floating_point:
        return r
    node = cls((edge(input),))
    node.shape = list(input.shape)
    node.dim = _C._wrap_dim(dim, input.dim())
    node.keepdim = keepdim
    node.indices = r[1]
    mark(r[0], node)
    return r


def sort(input, dim=-1, descending=False, *, stable=None, out=None):
    no_out(out, "sort")
    return _record(SortBackward0, input, _sorting.sort(input, dim, descending, stable=stable), dim)


def msort(input, *, out=None):
    no_out(out, "msort")
    r = _sorting.sort(input, 0)
    return _record(SortBackward0, input, r, 0)[0]


def topk(input, k, dim=-1, largest=True, sorted=True, *, out=None):
    no_out(out, "topk")
    return _record(TopkBackward0, input, _sorting.topk(input, k, dim, largest, sorted), dim)


def kthvalue(input, k, dim=-1, keepdim=False, *, out=None):
    no_out(out, "kthvalue")
    r = _sorting.kthvalue(input, k, dim, keepdim)
    return _record(KthvalueBackward0, input, r, dim, keepdim)
