"""Backward nodes and recorded forwards for gather, scatter, scatter_add, index_add, the
scans (cumsum, cumprod), tril/triu and roll; formulas as torch's derivatives.yaml.
(repeat_interleave records through the ops it is made of, as torch's does.)"""

from __future__ import annotations

from cudalite import _C, _tensor
from cudalite._C import Tensor
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


def _wrap(dim, t):
    return _C._wrap_dim(dim, t.dim())


# ---- gather, scatter, scatter_add, index_add ----


class GatherBackward0(Node):
    __slots__ = ("dim", "index", "self_meta")
    _saved = ("index",)

    def apply(self, g):
        shape, dtype, device = self.self_meta
        z = _C._full(list(shape), 0, dtype, device)
        return (z.scatter_add(self.dim, self.index, g),)


def gather(self, dim, index, *, sparse_grad=False):
    out = nograd(_m["gather"], self, dim, index, sparse_grad=sparse_grad)
    node = GatherBackward0((edge(self),))
    node.dim, node.index = _wrap(dim, self), index
    node.self_meta = (self.shape, self.dtype, self.device)
    return mark(out, node)


class ScatterBackward0(Node):  # src
    __slots__ = ("dim", "index")
    _saved = ("index",)

    def apply(self, g):
        n = self._next
        gs = g.scatter(self.dim, self.index, 0) if n[0] is not None else None
        gsrc = g.gather(self.dim, self.index) if n[1] is not None else None
        return (gs, gsrc)


class ScatterBackward1(Node):  # value
    __slots__ = ("dim", "index")
    _saved = ("index",)

    def apply(self, g):
        return (g.scatter(self.dim, self.index, 0),)


class NotImplemented(Node):  # noqa: A001 - torch's name for nodes of ops without a formula
    __slots__ = ("op",)

    def apply(self, g):
        raise RuntimeError(f"derivative for aten::{self.op} is not implemented")


def _scatter_node(self, dim, index, src, value, reduce):
    if reduce is not None:
        node = NotImplemented((edge(self), edge(src)) if isinstance(src, Tensor) else (edge(self),))
        node.op = "scatter"
        return node
    if isinstance(src, Tensor):
        node = ScatterBackward0((edge(self), edge(src)))
    else:
        node = ScatterBackward1((edge(self),))
    node.dim, node.index = _wrap(dim, self), index
    return node


def scatter(self, dim, index, src=None, value=None, *, reduce=None):
    out = nograd(_m["scatter"], self, dim, index, src, value, reduce=reduce)
    return mark(out, _scatter_node(self, dim, index, src, value, reduce))


def scatter_(self, dim, index, src=None, value=None, *, reduce=None):
    check_inplace(self)
    return adopt(self, scatter(self, dim, index, src, value, reduce=reduce))


class ScatterAddBackward0(Node):
    __slots__ = ("dim", "index")
    _saved = ("index",)

    def apply(self, g):
        n = self._next
        gsrc = g.gather(self.dim, self.index) if n[1] is not None else None
        return (g if n[0] is not None else None, gsrc)


def scatter_add(self, dim, index, src):
    out = nograd(_m["scatter_add"], self, dim, index, src)
    node = ScatterAddBackward0((edge(self), edge(src)))
    node.dim, node.index = _wrap(dim, self), index
    return mark(out, node)


def scatter_add_(self, dim, index, src):
    check_inplace(self)
    return adopt(self, scatter_add(self, dim, index, src))


class IndexAddBackward0(Node):
    __slots__ = ("dim", "index", "alpha", "source_shape")
    _saved = ("index",)

    def apply(self, g):
        n = self._next
        gsrc = None
        if n[1] is not None:
            if g.dim():
                gsrc = g.index_select(self.dim, self.index.reshape(-1))
            else:
                gsrc = g.reshape([1]).index_select(0, self.index.reshape(-1))
            gsrc = gsrc.reshape(list(self.source_shape))
            if self.alpha != 1:
                gsrc = gsrc * self.alpha
        return (g if n[0] is not None else None, gsrc)


def index_add(self, dim, index, source, *, alpha=1):
    out = nograd(_m["index_add"], self, dim, index, source, alpha=alpha)
    node = IndexAddBackward0((edge(self), edge(source)))
    node.dim, node.index, node.alpha = _wrap(dim, self), index, alpha
    node.source_shape = source.shape
    return mark(out, node)


def index_add_(self, dim, index, source, *, alpha=1):
    check_inplace(self)
    return adopt(self, index_add(self, dim, index, source, alpha=alpha))


# ---- scans ----


def _reversed_cumsum(t, dim):
    return t.flip([dim]).cumsum(dim).flip([dim])


class CumsumBackward0(Node):
    __slots__ = ("dim", "self_dtype")

    def apply(self, g):
        if g.dtype != self.self_dtype:
            g = g.to(self.self_dtype)
        if g.numel() <= 1 or g.dim() == 0:
            return (g,)
        return (_reversed_cumsum(g, self.dim),)


def cumsum(self, dim, *, dtype=None):
    out = nograd(_m["cumsum"], self, dim, dtype=dtype)
    node = CumsumBackward0((edge(self),))
    node.dim, node.self_dtype = _wrap(dim, self), self.dtype
    return mark(out, node)


def cumsum_(self, dim, *, dtype=None):
    check_inplace(self)
    return adopt(self, cumsum(self, dim, dtype=dtype))


class CumprodBackward0(Node):
    __slots__ = ("dim", "self_", "_result", "self_dtype")
    _saved = ("self_", "_result")  # _result: the output (Note [Saved outputs] in graph.py)

    def apply(self, g):
        x, out, dim = self.self_, self.result, self.dim
        if g.dtype != self.self_dtype:
            g = g.to(self.self_dtype)
        if x.numel() <= 1 or x.dim() == 0 or x.shape[dim] == 1:
            return (g,)
        w = g * out
        is_zero = x == 0
        if not is_zero.any().item():
            return (_reversed_cumsum(w, dim) / x,)
        # With zeros: before the first zero z of a line, sum_{j>=k} g_j out_j / x_k (the
        # out_j past z are 0); at z, prod_{i<z} x_i * sum_{j>=z} g_j prod_{z<i<=j} x_i;
        # after z, 0 (every product also holds x_z).
        zeros_seen = is_zero.long().cumsum(dim)
        before = zeros_seen == 0
        first = is_zero & (zeros_seen == 1)
        gx = _reversed_cumsum(w, dim) / x.masked_fill(~before, 1)
        gx = gx.masked_fill(~before, 0)
        pre = x.masked_fill(~before, 1).cumprod(dim)  # at z: prod_{i<z} x_i
        post = x.masked_fill(before | first, 1).cumprod(dim)  # prod_{z<i<=j} x_i
        s = _reversed_cumsum((g * post).masked_fill(before, 0), dim)
        return (gx + (pre * s).masked_fill(~first, 0),)


def cumprod(self, dim, *, dtype=None):
    out = nograd(_m["cumprod"], self, dim, dtype=dtype)
    node = CumprodBackward0((edge(self),))
    node.dim, node.self_dtype = _wrap(dim, self), self.dtype
    node.self_ = self if out.dtype == self.dtype else self.to(out.dtype)
    node.result = out
    return mark(out, node)


def cumprod_(self, dim, *, dtype=None):
    check_inplace(self)
    return adopt(self, cumprod(twin(self), dim, dtype=dtype))


# ---- tril, triu, roll ----


class TrilBackward0(Node):
    __slots__ = ("diagonal",)

    def apply(self, g):
        return (g.tril(self.diagonal),)


class TriuBackward0(Node):
    __slots__ = ("diagonal",)

    def apply(self, g):
        return (g.triu(self.diagonal),)


def _triangle(cls, name):
    def f(self, diagonal=0):
        out = nograd(_m[name], self, diagonal)
        node = cls((edge(self),))
        node.diagonal = diagonal
        return mark(out, node)

    def f_(self, diagonal=0):
        check_inplace(self)
        return adopt(self, f(self, diagonal))

    return f, f_


tril, tril_ = _triangle(TrilBackward0, "tril")
triu, triu_ = _triangle(TriuBackward0, "triu")


class RollBackward0(Node):
    __slots__ = ("shifts", "dims")

    def apply(self, g):
        return (g.roll(self.shifts, self.dims),)


def roll(self, shifts, dims=()):
    out = nograd(_m["roll"], self, shifts, dims)
    node = RollBackward0((edge(self),))
    neg = [-s for s in shifts] if isinstance(shifts, (list, tuple)) else -shifts
    node.shifts, node.dims = neg, dims
    return mark(out, node)


RECORDERS = {
    "gather": gather,
    "scatter": scatter,
    "scatter_": scatter_,
    "scatter_add": scatter_add,
    "scatter_add_": scatter_add_,
    "index_add": index_add,
    "index_add_": index_add_,
    "cumsum": cumsum,
    "cumsum_": cumsum_,
    "cumprod": cumprod,
    "cumprod_": cumprod_,
    "tril": tril,
    "tril_": tril_,
    "triu": triu,
    "triu_": triu_,
    "roll": roll,
}
