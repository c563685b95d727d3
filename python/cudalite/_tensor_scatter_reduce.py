"""scatter_reduce and index_reduce: reductions (sum, prod, mean, amax, amin) of the elements
that an index sends to one position, with or without the position's own value
(``include_self``), as torch has them.

All run scatter's kernels (``_C._scatter_dim``: one pass over the index, atomic adds,
multiplies, maxima and minima on CUDA for every dtype; mean divides by the counts, rounding
down for integers as torch does; NaN wins in amax / amin, as in torch). Without
``include_self`` each destination first takes one of its values (sum, mean, prod: the
reduction's identity). index_reduce is scatter_reduce with the index repeated over every slice
of the source.
"""

from __future__ import annotations

import warnings

from cudalite import _C
from cudalite._memory_format import contiguous_format
from cudalite._tensor import method
from cudalite._tensor_scatter import (
    _check_bounds,
    _check_index_dtype,
    _check_writable,
    _index_add_checks,
    _scatter_shape_check,
    _size,
)

__all__ = ["scatter_reduce", "index_reduce"]

_ASSIGN, _MULTIPLY, _MAX, _MIN = 0, 2, 3, 4
_REDUCTIONS = ("sum", "prod", "mean", "amax", "amin")


def _scatter_reduce_into(self, dim, index, src, reduce, include_self):
    if reduce not in _REDUCTIONS:
        raise RuntimeError(
            f"reduce argument must be either sum, prod, mean, amax or amin, got {reduce}"
        )
    _check_writable(self)
    dim = _C._wrap_dim(dim, self.dim())
    _check_index_dtype("scatter", index)
    if src.dtype != self.dtype:
        raise RuntimeError("scatter(): Expected self.dtype to be equal to src.dtype")
    if reduce == "mean" and self.dtype == _C.bool:
        kernel = (
            "scatter_gather_tensor_cuda_reduce_mean"
            if self.is_cuda
            else ("scatter_gather_tensor_cpu_reduce_mean")
        )
        raise NotImplementedError(f"\"{kernel}\" not implemented for 'Bool'")
    _scatter_shape_check(self, dim, index, src)
    if index.numel() == 0:
        return self
    _check_bounds(index, dim, _size(self, dim))
    x = self if self.dim() else self.view([1])
    idx = index if index.dim() else index.reshape([1])
    s = src if src.dim() else src.reshape([1])
    s = s[tuple(slice(0, n) for n in idx.shape)]  # only the leading block of src is read
    if reduce in ("sum", "mean"):
        if not include_self:
            x.scatter_(dim, idx, 0)
        x.scatter_add_(dim, idx, s)
        if reduce == "mean":
            count = _C._full(list(x.shape), 1 if include_self else 0, x.dtype, x.device)
            count.scatter_add_(dim, idx, _C._full(list(s.shape), 1, x.dtype, x.device))
            if not include_self:  # (positions nothing was sent to keep their value)
                count.clamp_(min=1)
            if x.dtype.is_floating_point:
                x.div_(count)
            else:
                x.copy_(x.div(count, rounding_mode="floor"))
    elif reduce == "prod":
        if not include_self:
            x.scatter_(dim, idx, 1)
        _C._scatter_dim(x, dim, idx, s, _MULTIPLY)
    else:
        if not include_self:  # each destination starts at one of its own values
            _C._scatter_dim(x, dim, idx, s, _ASSIGN)
        _C._scatter_dim(x, dim, idx, s, _MAX if reduce == "amax" else _MIN)
    return self


@method(name="scatter_reduce_")
def _scatter_reduce_(self, dim, index, src, reduce, *, include_self=True):
    """``self``'s elements at ``index`` (along ``dim``) reduced with ``src``'s (``reduce``:
    "sum", "prod", "mean", "amax" or "amin"); ``include_self=False`` leaves ``self``'s own
    value at those positions out."""
    return _scatter_reduce_into(self, dim, index, src, reduce, include_self)


@method(name="scatter_reduce")
def _scatter_reduce(self, dim, index, src, reduce, *, include_self=True):
    out = self.clone(memory_format=contiguous_format)
    return _scatter_reduce_into(out, dim, index, src, reduce, include_self)


def scatter_reduce(input, dim, index, src, reduce, *, include_self=True, out=None):
    from cudalite._reductions import _out
    from cudalite._tensor_scatter import out_no_grad

    out_no_grad("scatter_reduce", out, input, src)
    return _out(
        input.scatter_reduce(dim, index, src, reduce, include_self=include_self), out, exact=True
    )


# ---- index_reduce ----


def _index_reduce_into(self, dim, index, source, reduce, include_self):
    warnings.warn(
        "index_reduce() is in beta and the API may change at any time.", UserWarning, stacklevel=3
    )
    if reduce not in ("prod", "mean", "amax", "amin"):
        raise RuntimeError(
            "index_reduce(): Expected reduce to be one of prod, mean, amax or amin but got "
            f"{reduce}."
        )
    _check_writable(self)
    try:
        dim = _index_add_checks(self, dim, index, source)
    except (RuntimeError, IndexError) as e:  # the same checks, under index_reduce_'s name
        raise type(e)(str(e).replace("index_add_()", "index_reduce_()")) from None
    if self.dtype == _C.bool:
        kernel = "index_func_" if include_self else "index_reduce_func_exclude_input_init"
        raise NotImplementedError(f"\"{kernel}\" not implemented for 'Bool'")
    if index.numel() == 0:
        return self
    flat = index.reshape(-1)
    size = _size(self, dim)
    if ((flat < 0) | (flat >= size)).any().item():
        raise IndexError("index out of range in self")
    x = self if self.dim() else self.view([1])
    src = source if source.dim() else source.reshape([1])
    shape = [-1 if d == dim else 1 for d in range(x.dim())]
    idx = flat.long().reshape(shape).expand(list(src.shape))  # the same index for every slice
    x.scatter_reduce_(dim, idx, src, reduce, include_self=include_self)  # (recorded)
    return self


@method(name="index_reduce_")
def _index_reduce_(self, dim, index, source, reduce, *, include_self=True):
    """``self``'s slices ``index[i]`` along ``dim`` reduced with ``source``'s slices ``i``
    ("prod", "mean", "amax" or "amin"; ``include_self=False`` leaves ``self``'s own values
    out)."""
    return _index_reduce_into(self, dim, index, source, reduce, include_self)


@method(name="index_reduce")
def _index_reduce(self, dim, index, source, reduce, *, include_self=True):
    out = self.clone(memory_format=contiguous_format)
    return _index_reduce_into(out, dim, index, source, reduce, include_self)


def index_reduce(input, dim, index, source, reduce, *, include_self=True, out=None):
    from cudalite._reductions import _out
    from cudalite._tensor_scatter import out_no_grad

    out_no_grad("index_reduce", out, input, source)
    return _out(
        input.index_reduce(dim, index, source, reduce, include_self=include_self), out, exact=True
    )
