"""gather, scatter, scatter_add and index_add: reads and writes along one dimension through an
index tensor, as torch has them (checks and messages of its CPU kernels).

The loops are ``_C._gather_dim`` / ``_C._scatter_dim`` (ops/index.cpp, one pass over the
index for CPU and CUDA alike, ops/dim_indexer.h); on CUDA the adds and multiplies are atomic
for every dtype (kernels/misc.cu). Indices are bounds-checked first (one synchronisation with
the device): torch's CUDA kernels assert instead, which ends the process's CUDA context.
"""

from __future__ import annotations

import warnings

from cudalite import _C
from cudalite._C import Tensor
from cudalite._reductions import _out
from cudalite._tensor import method

__all__ = ["gather", "scatter", "scatter_add", "index_add"]

_ASSIGN, _ADD, _MULTIPLY = 0, 1, 2
_MAX, _MIN = _C._reduce_ops["max"], _C._reduce_ops["min"]
_REDUCE = {"add": _ADD, "multiply": _MULTIPLY}


def out_no_grad(name, out, *tensors):
    """torch's error for ``out=`` when an input requires grad (in grad mode)."""
    if out is not None and _C._is_grad_enabled():
        if any(isinstance(t, Tensor) and t.requires_grad for t in tensors):
            raise RuntimeError(
                f"{name}(): functions with out=... arguments don't support automatic "
                "differentiation, but one of the arguments requires grad."
            )


def _check_writable(t):
    """torch's error for writing through an index into a tensor whose elements share memory."""
    if any(st == 0 and n > 1 for st, n in zip(t.stride(), t.shape, strict=True)):
        raise RuntimeError(
            "unsupported operation: more than one element of the written-to tensor refers to a "
            "single memory location. Please clone() the tensor before performing the operation."
        )


def _nd(t):
    return t.dim() if t.dim() else 1


def _size(t, d):
    return t.shape[d] if t.dim() else 1


def _check_index_dtype(name, index):
    if index.dtype not in (_C.int64, _C.int32):
        raise RuntimeError(f"{name}(): Expected dtype int32/int64 for index")


def _check_bounds(index, dim, size):
    """torch's error for the first index (in memory order) outside [0, size). Two reductions
    and, on CUDA, one synchronisation."""
    if index.numel() == 0:
        return
    lo = _C._reduce(_MIN, index, None, False, None)
    hi = _C._reduce(_MAX, index, None, False, None)
    if index.is_cuda:
        lo, hi = _C._cat([lo.reshape([1]), hi.reshape([1])], 0).tolist()
    else:
        lo, hi = lo.item(), hi.item()
    if lo < 0 or hi >= size:
        flat = index.reshape(-1)
        v = flat[(flat < 0) | (flat >= size)][0].item()
        raise RuntimeError(f"index {v} is out of bounds for dimension {dim} with size {size}")


# ---- gather ----


def _gather_shape_check(self, dim, index):
    if _nd(index) != _nd(self):
        raise RuntimeError("Index tensor must have the same number of dimensions as input tensor")
    for d in range(_nd(self)):
        if d != dim and _size(index, d) > _size(self, d):
            raise RuntimeError(
                f"Size does not match at dimension {d} expected index {list(index.shape)} to be "
                f"no larger than self {list(self.shape)} apart from dimension {dim}"
            )


@method(name="gather")
def _gather(self, dim, index, *, sparse_grad=False):
    dim = _C._wrap_dim(dim, self.dim())
    _check_index_dtype("gather", index)
    _gather_shape_check(self, dim, index)
    if index.numel() == 0:
        return _C._empty(list(index.shape), self.dtype, self.device, False)
    _check_bounds(index, dim, _size(self, dim))
    if index.dim() and self.dim():
        return _C._gather_dim(self, dim, index)
    # 0-dim tensors as one dim of size 1
    x = self if self.dim() else self.reshape([1])
    return _C._gather_dim(x, dim, index.reshape([-1] if index.dim() else [1])).view(index.shape)


def gather(input, dim, index, *, sparse_grad=False, out=None):
    out_no_grad("gather", out, input)
    return _out(input.gather(dim, index, sparse_grad=sparse_grad), out, exact=True)


# ---- scatter, scatter_add ----


def _scatter_shape_check(self, dim, index, src):
    if index.numel() == 0:
        return
    if _nd(index) != _nd(self):
        raise RuntimeError("Index tensor must have the same number of dimensions as self tensor")
    for d in range(_nd(self)):
        too_big = d != dim and _size(index, d) > _size(self, d)
        if src is not None:
            if d >= _nd(src):
                n = _nd(src)
                raise IndexError(
                    "Dimension out of range (expected to be in range of "
                    f"[{-n}, {n - 1}], but got {d})"
                )
            too_big = too_big or _size(index, d) > _size(src, d)
        if too_big:
            if src is None:
                raise RuntimeError(
                    f"Expected index {list(index.shape)} to be no larger than self "
                    f"{list(self.shape)} apart from dimension {dim}"
                )
            raise RuntimeError(
                f"Expected index {list(index.shape)} to be no larger than self "
                f"{list(self.shape)} apart from dimension {dim} and to be no larger size than "
                f"src {list(src.shape)}"
            )


def _scatter_into(self, name, dim, index, src, value, mode):
    """self[... index[i] ...] (op)= src[i] (or value) for every position i of index."""
    _check_writable(self)
    dim = _C._wrap_dim(dim, self.dim())
    _check_index_dtype(name, index)
    if src is not None and src.dtype != self.dtype:
        raise RuntimeError(f"{name}(): Expected self.dtype to be equal to src.dtype")
    _scatter_shape_check(self, dim, index, src)
    if index.numel() == 0:
        return self
    _check_bounds(index, dim, _size(self, dim))
    if src is None:
        src = _C._empty([], self.dtype, self.device, False)
        _C._fill_(src, value, bump_version=False)
    # 0-dim tensors as one dim of size 1 (views: the writes land in self)
    x = self if self.dim() else self.reshape([1])
    idx = index if index.dim() else index.reshape([1])
    if src.dim() and src.dim() != idx.dim():
        src = src.reshape([1])
    _C._scatter_dim(x, dim, idx, src, mode)
    return self


def _scatter_args(src, value, reduce):
    """(src tensor or None, value, mode) from torch's scatter overloads."""
    if isinstance(src, Tensor):
        if value is not None:
            raise TypeError("scatter() got both src and value")
    else:
        src, value = None, src if value is None else value
    if reduce is None:
        return src, value, _ASSIGN
    if reduce not in _REDUCE:
        raise RuntimeError("reduce argument must be either add or multiply.")
    if src is not None:
        warnings.warn(
            "The reduce argument of cudalite.scatter with Tensor src is deprecated and will be "
            "removed in a future cudalite release. Use cudalite.scatter_reduce instead for more "
            "reduction options.",
            UserWarning,
            stacklevel=3,
        )
    return src, value, _REDUCE[reduce]


@method(name="scatter_")
def _scatter_(self, dim, index, src=None, value=None, *, reduce=None):
    src, value, mode = _scatter_args(src, value, reduce)
    return _scatter_into(self, "scatter", dim, index, src, value, mode)


@method(name="scatter")
def _scatter(self, dim, index, src=None, value=None, *, reduce=None):
    src, value, mode = _scatter_args(src, value, reduce)
    return _scatter_into(self.clone(), "scatter", dim, index, src, value, mode)


@method(name="scatter_add_")
def _scatter_add_(self, dim, index, src):
    return _scatter_into(self, "scatter_add", dim, index, src, None, _ADD)


@method(name="scatter_add")
def _scatter_add(self, dim, index, src):
    return _scatter_into(self.clone(), "scatter_add", dim, index, src, None, _ADD)


def scatter(input, dim, index, src=None, value=None, *, reduce=None, out=None):
    out_no_grad("scatter", out, input, src)
    return _out(input.scatter(dim, index, src, value, reduce=reduce), out, exact=True)


def scatter_add(input, dim, index, src, *, out=None):
    out_no_grad("scatter_add", out, input, src)
    return _out(input.scatter_add(dim, index, src), out, exact=True)


# ---- index_add ----


def _index_add_checks(self, dim, index, source):
    dim = _C._wrap_dim(dim, self.dim())
    if index.dim() > 1:
        raise IndexError(
            "index_add_(): Index is supposed to be a vector, but got dim: "
            f"{index.dim()} with type: {index.dtype._short_name} and size: {list(index.shape)}"
        )
    if index.dtype not in (_C.int64, _C.int32):
        raise RuntimeError(
            f"index_add_(): Expected dtype int32/int64 for index but got: {index.dtype._short_name}"
        )
    if self.dtype != source.dtype:
        raise RuntimeError(
            f"index_add_(): self ({self.dtype._short_name}) and source "
            f"({source.dtype._short_name}) must have the same scalar type"
        )
    if not source.dim() and index.numel() != 1:  # torch reads source.size(dim) for its message
        raise IndexError(f"Dimension specified as {dim} but tensor has no dimensions")
    n = _size(source, dim) if source.dim() > dim or not source.dim() else None
    if n is None:
        _C._wrap_dim(dim, source.dim())  # torch's IndexError for source.size(dim)
    if index.numel() != n:
        raise RuntimeError(
            f"index_add_(): Number of indices ({index.numel()}) should be equal to "
            f"source.size(dim): ({n}), for dim: {dim}"
        )
    same = _nd(self) == _nd(source) and all(
        _size(self, d) == _size(source, d) for d in range(_nd(self)) if d != dim
    )
    if not same:
        raise RuntimeError(
            "source tensor shape must match self tensor shape, excluding the specified "
            f"dimension. Got self.shape = {list(self.shape)} source.shape = {list(source.shape)}"
        )
    return dim


@method(name="index_add_")
def _index_add_(self, dim, index, source, *, alpha=1):
    _check_writable(self)
    dim = _index_add_checks(self, dim, index, source)
    if index.numel() == 0:
        return self
    # torch's CPU kernel takes its scatter_add path for these (its errors), else a loop of
    # slices whose error differs.
    if self.dim() > 1 and dim in (0, self.dim() - 1) and index.dtype == _C.int64 and alpha == 1:
        _check_bounds(index, dim, _size(self, dim))
    else:
        flat = index.reshape(-1)
        if ((flat < 0) | (flat >= _size(self, dim))).any().item():
            raise IndexError("index out of range in self")
    if alpha != 1 and self.dtype != _C.bool:
        a = alpha if self.dtype.is_floating_point else int(alpha)
        source = source * a  # rounded to the dtype, as torch's kernels do
    x = self if self.dim() else self.reshape([1])
    src = source if source.dim() else source.reshape([1])
    shape = [-1 if d == dim else 1 for d in range(x.dim())]
    idx = index.reshape(shape).expand(list(src.shape))  # the same index for every slice
    _C._scatter_dim(x, dim, idx, src, _ADD)
    return self


@method(name="index_add")
def _index_add(self, dim, index, source, *, alpha=1):
    return _index_add_(self.clone(), dim, index, source, alpha=alpha)


def index_add(input, dim, index, source, *, alpha=1, out=None):
    out_no_grad("index_add", out, input, source)
    return _out(input.index_add(dim, index, source, alpha=alpha), out, exact=True)
