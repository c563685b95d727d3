"""Backward nodes and recorded forwards for reductions: sum, mean, prod, max/min, amax/amin,
var/std and vector norms."""

from __future__ import annotations

import builtins
import math

from cudalite import _C, _reductions
from cudalite._reductions import NO_DIM, NO_KEEPDIM, NO_OTHER
from cudalite.autograd.functions._common import Node, edge, mark, no_out, nograd, zeros_like
from cudalite.autograd.functions.pointwise import BINARY_RECORDERS
from cudalite.autograd.functions.where import _where


def _norm_dims(dim, ndim):
    """Reduced dims as sorted non-negative ints (all dims for None or an empty list)."""
    if dim is None:
        return list(range(ndim))
    dims = list(dim) if isinstance(dim, (tuple, list)) else [dim]
    if not dims:
        return list(range(ndim))
    nd = builtins.max(ndim, 1)
    return sorted({d % nd for d in dims}) if ndim else []


def _unreduce(g, dims, keepdim):
    """Puts back the reduced dims of ``g`` as size-1 dims."""
    if not keepdim:
        for d in dims:
            g = g.unsqueeze(d)
    return g


def _count(shape, dims):
    n = 1
    for d in dims:
        n *= shape[d]
    return n


class _Reduction(Node):
    __slots__ = ("shape", "dims", "keepdim")


class SumBackward0(_Reduction):
    __slots__ = ("dtype",)

    def apply(self, g):
        if self.dtype is not None and g.dtype != self.dtype:
            g = g.to(self.dtype)
        return (g.expand(*self.shape),)


class SumBackward1(SumBackward0):
    __slots__ = ()

    def apply(self, g):
        if self.dtype is not None and g.dtype != self.dtype:
            g = g.to(self.dtype)
        return (_unreduce(g, self.dims, self.keepdim).expand(*self.shape),)


class MeanBackward0(_Reduction):
    __slots__ = ("n",)

    def apply(self, g):
        return (g.expand(*self.shape) / self.n,)


class MeanBackward1(MeanBackward0):
    __slots__ = ()

    def apply(self, g):
        return (_unreduce(g, self.dims, self.keepdim).expand(*self.shape) / self.n,)


def _reduction(cls, x, r, dim, keepdim):
    node = cls((edge(x),))
    node.shape = x.shape
    node.dims = _norm_dims(dim, x.dim())
    node.keepdim = keepdim
    return node


def _given(name, dim, keepdim, dtype, out):
    """(dim, keepdim) with the arguments not given filled in, after the foundation's checks
    (sentinels arrive from the method wrappers; the top-level ones pass None and False)."""
    if dim is NO_DIM:
        return _reductions.whole(name, True, keepdim, dtype, out)
    return dim, keepdim is not NO_KEEPDIM and keepdim


def sum(input, dim=NO_DIM, keepdim=NO_KEEPDIM, *, dtype=None, out=None):
    node_type = SumBackward0 if dim is NO_DIM else SumBackward1  # sum(None) is torch's dim form
    dim, keepdim = _given("sum", dim, keepdim, dtype, out)
    no_out(out, "sum")
    r = _reductions.sum(input, dim, keepdim, dtype=dtype)
    if not r.dtype.is_floating_point:
        return r
    node = _reduction(node_type, input, r, dim, keepdim)
    node.dtype = input.dtype if input.dtype != r.dtype else None
    return mark(r, node)


def mean(input, dim=NO_DIM, keepdim=NO_KEEPDIM, *, dtype=None, out=None):
    node_type = MeanBackward0 if dim is NO_DIM else MeanBackward1
    dim, keepdim = _given("mean", dim, keepdim, dtype, out)
    no_out(out, "mean")
    r = nograd(_reductions.mean, input, dim, keepdim, dtype=dtype)
    node = _reduction(node_type, input, r, dim, keepdim)
    node.n = _count(node.shape, node.dims) if input.dim() else 1
    return mark(r, node)


class ProdBackward0(_Reduction):
    """Gradient of a product: the product of the other elements, computed without dividing
    by zero (one zero: only it gets a gradient; two or more: none does)."""

    __slots__ = ("self_", "_result")
    _saved = ("self_", "_result")

    def apply(self, g):
        x, dims, keep = self.self_, self.dims, self.keepdim
        g = _unreduce(g, dims, keep)
        res = _unreduce(self.result, dims, keep)
        zero = x == 0
        nzeros = zero.sum(dims, keepdim=True)
        prod_nonzero = _prod_dims(_where(zero, 1.0, x), dims)
        plain = res / _where(zero, 1.0, x)
        grad = _where(nzeros == 0, plain, _where((nzeros == 1) & zero, prod_nonzero, 0.0))
        return (g * grad,)


ProdBackward1 = type("ProdBackward1", (ProdBackward0,), {"__slots__": ()})


def _prod_dims(x, dims):
    for d in sorted(dims, reverse=True):
        x = x.prod(d, keepdim=True)
    return x


def prod(input, dim=NO_DIM, keepdim=NO_KEEPDIM, *, dtype=None, out=None):
    if dim is not NO_DIM:
        _reductions.named_dim(dim)
    dim, keepdim = _given("prod", dim, keepdim, dtype, out)
    no_out(out, "prod")
    if dim is None:
        r = nograd(_reductions.prod, input, dtype=dtype)
    else:
        r = nograd(_reductions.prod, input, dim, keepdim, dtype=dtype)
    if not r.dtype.is_floating_point:
        return r
    node = _reduction(ProdBackward0 if dim is None else ProdBackward1, input, r, dim, keepdim)
    node.self_, node.result = input, r
    return mark(r, node)


class _Evenly(_Reduction):
    """max()/min()/amax/amin: the gradient is shared evenly by the elements equal to the
    result. amax/amin multiply by the mask (torch's scale_grad_by_count: a nan gradient reaches
    every element); max()/min() over everything follow evenly_distribute_backward, which
    counts nan as equal to a nan result and, on the CPU, writes 0 outside the mask."""

    __slots__ = ("self_", "_result")
    _saved = ("self_", "_result")
    _all = False

    def apply(self, g):
        dims, keep = self.dims, self.keepdim
        g = _unreduce(g, dims, keep)
        r = _unreduce(self.result, dims, keep)
        mask = self.self_ == r
        if self._all:
            mask = mask | (self.self_.isnan() & r.isnan())
        share = g / mask.sum(dims, keepdim=True)
        if self._all and self.self_.device.type == "cpu":
            return (_where(mask, share, 0.0),)
        return (share * mask,)


MaxBackward1 = type("MaxBackward1", (_Evenly,), {"__slots__": (), "_all": True})
MinBackward1 = type("MinBackward1", (_Evenly,), {"__slots__": (), "_all": True})
AmaxBackward0 = type("AmaxBackward0", (_Evenly,), {"__slots__": ()})
AminBackward0 = type("AminBackward0", (_Evenly,), {"__slots__": ()})


class MaxBackward0(_Reduction):
    """max/min along a dim: the gradient goes to the element the index points at."""

    __slots__ = ("indices",)
    _saved = ("indices",)

    def apply(self, g):
        d = self.dims[0]
        g = _unreduce(g, self.dims, self.keepdim)
        idx = _unreduce(self.indices, self.dims, self.keepdim)
        n = self.shape[d]
        pos = _C._arange(0, n, 1, _C.int64, g.device).reshape([n] + [1] * (len(self.shape) - d - 1))
        return (_where(pos == idx, g, 0.0),)


MinBackward0 = type("MinBackward0", (MaxBackward0,), {"__slots__": ()})


def _extreme(is_max):
    base = _reductions.max if is_max else _reductions.min

    def rec(input, dim=NO_DIM, keepdim=NO_KEEPDIM, *, other=NO_OTHER, out=None):
        name = "max" if is_max else "min"
        other, dim, keepdim = _reductions.extreme_args(name, True, dim, keepdim, other, out)
        no_out(out, name)
        if other is not None:
            return BINARY_RECORDERS["maximum" if is_max else "minimum"](input, other)
        r = base(input) if dim is None else base(input, dim, keepdim)
        if dim is None:
            node = _reduction(MaxBackward1 if is_max else MinBackward1, input, r, None, False)
            node.self_, node.result = input, r
            return mark(r, node)
        values, indices = r
        node = _reduction(MaxBackward0 if is_max else MinBackward0, input, values, dim, keepdim)
        node.indices = indices
        mark(values, node)
        return r

    rec.__name__ = "max" if is_max else "min"
    return rec


max = _extreme(True)
min = _extreme(False)


def _amaxmin(is_max):
    base = _reductions.amax if is_max else _reductions.amin

    def rec(input, dim=(), keepdim=False, *, out=None):
        no_out(out, "amax" if is_max else "amin")
        r = base(input, dim, keepdim)
        dims = dim if (isinstance(dim, int) or dim) else None
        node = _reduction(AmaxBackward0 if is_max else AminBackward0, input, r, dims, keepdim)
        node.self_, node.result = input, r
        return mark(r, node)

    rec.__name__ = "amax" if is_max else "amin"
    return rec


amax = _amaxmin(True)
amin = _amaxmin(False)


def _div(a, b):
    """a / b as torch's double arithmetic has it: inf (or nan) for b == 0, not an error."""
    return a / b if b else math.copysign(math.inf, a) if a else math.nan


class VarBackward0(_Reduction):
    __slots__ = ("self_", "denom")
    _saved = ("self_",)

    def _centered(self):
        x = self.self_
        return x - x.mean(self.dims, keepdim=True)

    def apply(self, g):
        g = _unreduce(g, self.dims, self.keepdim)
        return (g * self._centered() * _div(2.0, self.denom),)


class StdBackward0(VarBackward0):
    __slots__ = ("_result",)
    _saved = ("self_", "_result")

    def apply(self, g):
        g = _unreduce(g, self.dims, self.keepdim)
        s = _unreduce(self.result, self.dims, self.keepdim)
        gs = _where(s == 0, 0.0, g / s)
        return (gs * self._centered() * _div(1.0, self.denom),)


def _var_args(dim, unbiased, correction):
    if isinstance(dim, bool):
        dim, unbiased = None, dim
    if correction is not None:
        c = correction
    elif unbiased is None:
        c = 1
    else:
        c = 1 if unbiased else 0
    return dim, c


def _var_like(cls, base):
    def rec(input, dim=None, unbiased=None, keepdim=False, *, correction=None, out=None):
        no_out(out, base.__name__)
        d, c = _var_args(dim, unbiased, correction)
        r = nograd(base, input, d, None, keepdim, correction=c)
        node = _reduction(cls, input, r, d, keepdim)
        node.self_ = input
        node.denom = (_count(node.shape, node.dims) if input.dim() else 1) - c
        if cls is StdBackward0:
            node.result = r
        return mark(r, node)

    rec.__name__ = base.__name__
    return rec


var = _var_like(VarBackward0, _reductions.var)
std = _var_like(StdBackward0, _reductions.std)


def var_mean(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
    return var(input, dim, unbiased, keepdim, correction=correction), mean(input, dim, keepdim)


def std_mean(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
    return std(input, dim, unbiased, keepdim, correction=correction), mean(input, dim, keepdim)


class LinalgVectorNormBackward0(_Reduction):
    __slots__ = ("self_", "_result", "p")
    _saved = ("self_", "_result")

    def apply(self, g):
        x, p = self.self_, self.p
        g = _unreduce(g, self.dims, self.keepdim)
        n = _unreduce(self.result, self.dims, self.keepdim)
        if p == 0:
            return (zeros_like(x),)
        if p == 1:
            return (g * x.sign(),)
        if p in (2, 2.0):
            return (x * _where(n == 0, 0.0, g / n),)
        if math.isinf(p):
            mask = x.abs() == n
            count = mask.sum(self.dims, keepdim=True)
            return (_where(mask, x.sign() * (g / count), 0.0),)
        scale = _where(n == 0, 0.0, g / n ** (p - 1))
        return (x * x.abs() ** (p - 2) * scale,)


def norm(input, p="fro", dim=None, keepdim=False, dtype=None, *, out=None):
    no_out(out, "norm")
    r = nograd(_reductions.norm, input, p, dim, keepdim, dtype)
    node = _reduction(LinalgVectorNormBackward0, input, r, dim, keepdim)
    node.self_, node.result = input, r
    node.p = 2 if p == "fro" else p
    return mark(r, node)


# ---- logsumexp ----


class LogsumexpBackward0(_Reduction):
    """The gradient of logsumexp is the softmax of the input along the reduced dims."""

    __slots__ = ("self_", "_result")
    _saved = ("self_", "_result")

    def apply(self, g):
        g = _unreduce(g, self.dims, self.keepdim)
        r = _unreduce(self.result, self.dims, self.keepdim)
        return (g * (self.self_ - r).exp(),)


def logsumexp(input, dim, keepdim=False, *, out=None):
    no_out(out, "logsumexp")
    r = nograd(_reductions.logsumexp, input, dim, keepdim)
    if not input.dtype.is_floating_point:
        return r
    node = _reduction(LogsumexpBackward0, input, r, dim, keepdim)
    node.self_, node.result = input, r
    return mark(r, node)
