"""Backward nodes and recorded forwards for matrix products: mm, addmm, bmm, dot, mv and
matmul (which, like torch's, folds or batches its inputs and records those steps)."""

from __future__ import annotations

from cudalite import _C, _linalg, _ops
from cudalite._C import Tensor
from cudalite.autograd.functions._common import Node, edge, fix, mark, meta, no_out, nograd, tr
from cudalite.autograd.functions.views import unsafe_view


def _mm(a, b):
    """A matrix product inside formulas; recorded only when building a graph of the backward."""
    if _C._is_grad_enabled() and (a._rg or b._rg):
        return mm(a, b)
    return _linalg._product(a, b)


def _bmm(a, b):
    if _C._is_grad_enabled() and (a._rg or b._rg):
        return bmm(a, b)
    return _linalg._product(a, b)


def _transposed(m):
    return not m.is_contiguous() and m.stride(0) == 1


def _grad_mat2(mat1, g, transposed):
    """``mat1.T @ g`` laid out like mat2: for the ``W.t()`` of a Linear layer
    (``transposed``), computing ``(g.T @ mat1).T`` makes W's gradient come out contiguous,
    as torch arranges it."""
    if transposed:
        return tr(_mm(tr(g), mat1))
    return _mm(tr(mat1), g)


class MmBackward0(Node):
    __slots__ = ("self_", "mat2", "t2")
    _saved = ("mat2", "self_")  # torch's order: its names, sorted

    def apply(self, g):
        n = self._next
        ga = _mm(g, tr(self.mat2)) if n[0] is not None else None
        gb = _grad_mat2(self.self_, g, self.t2) if n[1] is not None else None
        return (ga, gb)


def _record_mm(cls, r, a, b):
    node = cls((edge(a), edge(b)))
    node.self_ = a if node._next[1] is not None else None
    node.mat2 = b if node._next[0] is not None else None
    node.t2 = node._next[1] is not None and b.dim() == 2 and _transposed(b)
    return mark(r, node)


def mm(input, mat2, *, out=None):
    no_out(out, "mm")
    return _record_mm(MmBackward0, _ops.mm(input, mat2), input, mat2)


_ROWS = ("rows",)


class AddmmBackward0(Node):
    __slots__ = ("mat1", "mat2", "alpha", "beta", "m0", "t2")
    _saved = ("mat1", "mat2")

    def apply(self, g):
        n = self._next
        a, b = self.alpha, self.beta
        gi = g1 = g2 = None
        if n[0] is not None:
            if self.m0 is _ROWS:
                gi = (
                    g.sum(0)
                    if g._rg and _C._is_grad_enabled()
                    else _C._reduce(_C._reduce_ops["sum"], g, [0], False, None)
                )
            else:
                gi = fix(g if b == 1 else g * b, self.m0)
        if n[1] is not None:
            g1 = _mm(g, tr(self.mat2))
            if a != 1:
                g1 = g1 * a
        if n[2] is not None:
            g2 = _grad_mat2(self.mat1, g, self.t2)
            if a != 1:
                g2 = g2 * a
        return (gi, g1, g2)


def record_addmm(r, input, mat1, mat2, beta=1, alpha=1, bias_rows=False):
    """Makes ``r = beta * input + alpha * mat1 @ mat2`` (already computed) an AddmmBackward0
    output. ``bias_rows``: input is a vector added to every row (nn.Linear's bias), whose
    gradient is the column sum."""
    node = AddmmBackward0(
        (edge(input) if isinstance(input, Tensor) else None, edge(mat1), edge(mat2))
    )
    node.mat1 = mat1 if node._next[2] is not None else None
    node.mat2 = mat2 if node._next[1] is not None else None
    node.alpha, node.beta = alpha, beta
    node.m0 = _ROWS if bias_rows else meta(input, r)
    node.t2 = node._next[2] is not None and _transposed(mat2)
    return mark(r, node)


def addmm(input, mat1, mat2, *, beta=1, alpha=1, out=None):
    no_out(out, "addmm")
    r = nograd(_ops.addmm, input, mat1, mat2, beta=beta, alpha=alpha)
    return record_addmm(r, input, mat1, mat2, beta, alpha)


class BmmBackward0(MmBackward0):
    __slots__ = ()

    def apply(self, g):
        n = self._next
        ga = _bmm(g, self.mat2.transpose(1, 2)) if n[0] is not None else None
        gb = _bmm(self.self_.transpose(1, 2), g) if n[1] is not None else None
        return (ga, gb)


def bmm(input, mat2, *, out=None):
    no_out(out, "bmm")
    return _record_mm(BmmBackward0, _ops.bmm(input, mat2), input, mat2)


class DotBackward0(Node):
    __slots__ = ("self_", "other")
    _saved = ("self_", "other")

    def apply(self, g):
        n = self._next
        return (
            g * self.other if n[0] is not None else None,
            g * self.self_ if n[1] is not None else None,
        )


def dot(input, other, *, out=None):
    no_out(out, "dot")
    return _record_dot(_ops.dot(input, other), input, other)


class MvBackward0(Node):
    __slots__ = ("self_", "vec")
    _saved = ("self_", "vec")

    def apply(self, g):
        n = self._next
        ga = g.unsqueeze(1) * self.vec if n[0] is not None else None
        gv = _mm(tr(self.self_), g.unsqueeze(1)).squeeze(1) if n[1] is not None else None
        return (ga, gv)


def mv(input, vec, *, out=None):
    no_out(out, "mv")
    return _record_mv(_ops.mv(input, vec), input, vec)


def _record_mv(r, input, vec):
    node = MvBackward0((edge(input), edge(vec)))
    # as torch, each is saved only for the other's gradient
    node.self_ = input if node._next[1] is not None else None
    node.vec = vec if node._next[0] is not None else None
    return mark(r, node)


def matmul(input, other, *, out=None):
    """Recorded matmul, decomposed the way torch's is so the recorded nodes match."""
    no_out(out, "matmul")
    if not isinstance(input, Tensor) or not isinstance(other, Tensor):
        return _ops.matmul(input, other)
    da, db = input.dim(), other.dim()
    if da == 0 or db == 0 or da <= 2 and db <= 2 and (da, db) != (1, 2):
        r = _ops.matmul(input, other)  # also raises torch's errors
        if da == 1 and db == 1:
            return _record_dot(r, input, other)
        if db == 1:
            return _record_mv(r, input, other)
        return _record_mm(MmBackward0, r, input, other)
    if input.shape[-1] != other.shape[-2 if db > 1 else -1]:
        return _ops.matmul(input, other)  # raises the size error
    if (da, db) == (1, 2):
        return input.unsqueeze(0).mm(other).squeeze(0)
    if db <= 2:
        # fold the batch dims of input into rows: one mm
        k = input.shape[-1]
        rows = input.reshape(-1, k)
        o = other if db == 2 else other.unsqueeze(1)
        r = rows.mm(o)
        shape = list(input.shape[:-1]) + ([other.shape[1]] if db == 2 else [])
        return unsafe_view(r, shape)
    a = input.unsqueeze(0) if da == 1 else input
    b = other.unsqueeze(-1) if db == 1 else other
    batch = list(_C._broadcast_shapes(a.shape[:-2], b.shape[:-2]))
    n, k, m = a.shape[-2], a.shape[-1], b.shape[-1]
    bs = 1
    for s in batch:
        bs *= s
    a3 = a.expand(*batch, n, k).reshape(bs, n, k)
    b3 = b.expand(*batch, k, m).reshape(bs, k, m)
    shape = batch + ([n] if da > 1 else []) + ([m] if db > 1 else [])
    return unsafe_view(bmm(a3, b3), shape)


def _record_dot(r, a, b):
    node = DotBackward0((edge(a), edge(b)))
    # as torch, each is saved only for the other's gradient ("self" and "tensor" there)
    node.self_ = a if node._next[1] is not None else None
    node.other = b if node._next[0] is not None else None
    return mark(r, node)


def rmatmul(self, other):
    return matmul(other, self)
