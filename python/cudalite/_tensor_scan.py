"""cumsum and cumprod: inclusive scans along one dimension (``_C._scan``; ops/scan.cpp).

Integer and bool inputs scan in int64 unless ``dtype`` says otherwise, as torch's do; the
input is converted to the result dtype first.
"""

from __future__ import annotations

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
