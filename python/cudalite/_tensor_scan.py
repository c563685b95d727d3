"""cumsum and cumprod: inclusive scans along one dimension (``_C._scan``; ops/scan.cpp).

Integer and bool inputs scan in int64 unless ``dtype`` says otherwise, as torch's do; the
input is converted to the result dtype first.
"""

from __future__ import annotations

import sys

from cudalite import _C
from cudalite._arg_parser import as_dtype
from cudalite._linalg import cpp_name as _cpp
from cudalite._reductions import _out, _out_dtype
from cudalite._tensor import method
from cudalite._tensor_scatter import out_no_grad

__all__ = ["cumsum", "cumprod"]

_SUM, _PROD = _C._scan_ops["cumsum"], _C._scan_ops["cumprod"]  # csrc/ops/reductions.def


def _scan(name, op, self, dim, dtype):
    dim = _C._wrap_dim(dim, self.dim())
    dtype = as_dtype(dtype)
    if dtype is None:
        dtype = self.dtype if self.dtype.is_floating_point else _C.int64
    if dtype == _C.bool and self.dim() and self.numel():  # torch's kernels have no bool scan
        kernel = f"{name}_cuda" if self.is_cuda else f"{name}_out_cpu"
        raise NotImplementedError(f"\"{kernel}\" not implemented for 'Bool'")
    return _C._scan(op, self, dim, dtype)


def _scan_(name, op, self, dim, dtype):
    dtype = as_dtype(dtype)
    if dtype is not None and dtype != self.dtype:
        raise RuntimeError(
            f"Bad in-place call: input tensor dtype {_cpp(self.dtype)} and output tensor dtype "
            f"{_cpp(dtype)} should match"
        )
    r = _scan(name, op, self, dim, self.dtype)
    _C._copy_(self, r, False)
    return self


@method(name="cumsum")
def _cumsum(self, dim, *, dtype=None):
    return _scan("cumsum", _SUM, self, dim, dtype)


@method(name="cumprod")
def _cumprod(self, dim, *, dtype=None):
    return _scan("cumprod", _PROD, self, dim, dtype)


@method(name="cumsum_")
def _cumsum_(self, dim, *, dtype=None):
    return _scan_("cumsum", _SUM, self, dim, dtype)


@method(name="cumprod_")
def _cumprod_(self, dim, *, dtype=None):
    return _scan_("cumprod", _PROD, self, dim, dtype)


def cumsum(input, dim, *, dtype=None, out=None):
    out_no_grad("cumsum", out, input)
    if out is None:
        return input.cumsum(dim, dtype=dtype)
    r = _scan("cumsum", _SUM, input, dim, _out_dtype(out, as_dtype(dtype)))
    return _out(r, out)


def cumprod(input, dim, *, dtype=None, out=None):
    out_no_grad("cumprod", out, input)
    if out is None:
        return input.cumprod(dim, dtype=dtype)
    r = _scan("cumprod", _PROD, input, dim, _out_dtype(out, as_dtype(dtype)))
    return _out(r, out)


# ---- cummax, cummin, logcumsumexp ----
# Inclusive scans of an associative combine, in log2(n) doubling steps of whole-tensor ops
# (each position combines with the one 1, 2, 4, ... before it), so that autograd records them.

__all__ += ["cummax", "cummin", "logcumsumexp"]


def _doubling(dim, n, state, combine):
    """Scans ``state`` (a tuple of tensors) along ``dim``: after the step of shift s, position
    k holds the combination of positions k - 2s + 1 .. k."""
    s = 1
    while s < n:
        head = tuple(t.narrow(dim, 0, s) for t in state)
        prev = tuple(t.narrow(dim, 0, n - s) for t in state)
        cur = tuple(t.narrow(dim, s, n - s) for t in state)
        new = combine(prev, cur)
        cat = sys.modules["cudalite"].cat  # the recorded cat
        state = tuple(cat([h, t], dim) for h, t in zip(head, new, strict=True))
        s *= 2
    return state


def _cumext(name, self, dim, is_max):
    d = _C._wrap_dim(dim, self.dim())
    indices = self.new_zeros(self.shape, dtype=_C.int64)
    kind = getattr(_rt(), name)
    if self.dim() == 0 or self.numel() == 0:
        return kind(self.clone(), indices)
    n = self.shape[d]
    shape = [1] * self.dim()
    shape[d] = n
    pos = _arange(n, self.device).reshape(shape).expand(self.shape).contiguous()
    floating = self.dtype.is_floating_point

    def combine(prev, cur):
        (pv, pi), (cv, ci) = prev, cur
        # the later element wins ties (its index is the last one), NaN wins everything
        take = cv >= pv if is_max else cv <= pv
        if floating:
            take = cv.isnan() | (take & ~pv.isnan())
        return cv.where(take, pv), ci.where(take, pi)

    v, i = _doubling(d, n, (self, pos), combine)
    return kind(v, i)


def _arange(n, device):
    from cudalite._creation import arange

    return arange(n, device=device)


def _rt():
    from cudalite._reductions import return_types

    return return_types


def _logcumsumexp(self, dim):
    d = _C._wrap_dim(dim, self.dim())
    if not self.dtype.is_floating_point:
        kernel = "logcumsumexp_out_cuda" if self.is_cuda else "logcumsumexp_out_cpu"
        raise NotImplementedError(f"\"{kernel}\" not implemented for '{self.dtype._short_name}'")
    if self.dim() == 0 or self.numel() == 0:
        return self.clone()
    n = self.shape[d]
    return _doubling(d, n, (self,), lambda p, c: (p[0].logaddexp(c[0]),))[0]


@method(name="cummax")
def _cummax(self, dim):
    return _cumext("cummax", self, dim, True)


@method(name="cummin")
def _cummin(self, dim):
    return _cumext("cummin", self, dim, False)


@method(name="logcumsumexp")
def _m_logcumsumexp(self, dim):
    return _logcumsumexp(self, dim)


def _pair(kind, r, out, input):
    if out is None:
        return r
    out_no_grad(kind.__name__, out[0], input)
    return kind(_out(r[0], out[0]), _out(r[1], out[1]))


def cummax(input, dim, *, out=None):
    """Running maximum along ``dim`` and the index where each was reached (the last of equal
    values; NaN propagates)."""
    return _pair(_rt().cummax, _cumext("cummax", input, dim, True), out, input)


def cummin(input, dim, *, out=None):
    """Running minimum along ``dim`` and the index where each was reached."""
    return _pair(_rt().cummin, _cumext("cummin", input, dim, False), out, input)


def logcumsumexp(input, dim, *, out=None):
    """``log(cumsum(exp(input), dim))`` computed without overflow."""
    out_no_grad("logcumsumexp", out, input)
    return _out(_logcumsumexp(input, dim), out)


# ---- diff ----

__all__ += ["diff"]


def _diff(self, n, dim, prepend, append):
    if self.dim() == 0:
        raise RuntimeError("diff expects input to be at least one-dimensional")
    if n < 0:
        raise RuntimeError(f"order must be non-negative but got {n}")
    d = _C._wrap_dim(dim, self.dim())
    if n == 0:
        return self
    parts = [t for t in (prepend, self, append) if t is not None]
    x = sys.modules["cudalite"].cat(parts, d) if len(parts) > 1 else self
    for _ in range(n):
        m = x.shape[d]
        if m == 0:
            break
        hi, lo = x.narrow(d, 1, m - 1), x.narrow(d, 0, m - 1)
        x = hi.logical_xor(lo) if x.dtype == _C.bool else hi - lo
    return x


def diff(input, n=1, dim=-1, prepend=None, append=None, *, out=None):
    """The ``n``-th forward difference along ``dim`` (``prepend`` and ``append`` joined to
    the input first); bools differ by ``!=``."""
    out_no_grad("diff", out, input)
    return _out(_diff(input, n, dim, prepend, append), out)


method(name="diff")(
    lambda self, n=1, dim=-1, prepend=None, append=None: _diff(self, n, dim, prepend, append)
)
