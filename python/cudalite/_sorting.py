"""Sorting along a dim: sort, argsort, msort, topk and kthvalue.

One core op (``_C._sort``, Note [Sort keys] in csrc/ops/sort.h) sorts every slice along a dim,
whole or cut to its first k. Orders are torch's: NaN above inf, -0.0 equal to 0.0, and equal
values in input order (what torch guarantees with ``stable=True``; here every sort is stable).
"""

from __future__ import annotations

from cudalite import _C
from cudalite._linalg import cpp_name as _cpp
from cudalite._reductions import _named, _out, return_types

__all__ = ["sort", "argsort", "msort", "topk", "kthvalue"]


def _dim(input, dim, op):
    if op == "kthvalue":  # torch's Dimname overload
        _named(input, dim)
    elif isinstance(dim, str) or (dim is None and op in ("sort", "argsort")):
        raise RuntimeError(
            f"{op}: You passed a dimname (string) to this op in place of a dimension index "
            "but it does not yet support this behavior. Please pass a dimension index to work "
            "around this."
        )
    if isinstance(dim, bool) or not isinstance(dim, int):
        raise TypeError("dim must be an int")  # worded by Note [Argument errors]
    return _C._wrap_dim(dim, input.dim())


def _flag(value, name):
    if value is not True and value is not False:
        raise TypeError(f"{name} must be a bool")  # worded by Note [Argument errors]
    return value


def _named_out(r, out, name):
    """(values, indices) written into ``out``, a pair, as torch's ``return_types.<name>_out``."""
    if out is None:
        return r
    if not isinstance(out, (tuple, list)) or len(out) != 2:
        raise TypeError(f"{name}(): argument 'out' must be tuple of Tensors")
    v, i = out
    if name == "kthvalue":
        if v.dtype != r[0].dtype:
            raise RuntimeError("output values must be of same type as input")
        if i.dtype != _C.int64:
            raise RuntimeError("output indices must be of scalar type Long")
    else:  # both checked before either is written
        for got, want in ((v, r[0]), (i, r[1])):
            if got.dtype != want.dtype:
                raise RuntimeError(
                    f"Expected out tensor to have dtype {_cpp(want.dtype)}, but got "
                    f"{_cpp(got.dtype)} instead"
                )
    values = _out(r[0], v, exact=True)
    indices = _out(r[1], i, exact=True)
    return getattr(return_types, name + "_out")(values, indices)


def _check_k(input, k, dim):
    if isinstance(k, bool) or not isinstance(k, int):
        raise TypeError("k must be an int")  # worded by Note [Argument errors]
    n = input.shape[dim] if input.dim() else 1
    return n


def sort(input, dim=-1, descending=False, *, stable=None, out=None):
    """Sorts along ``dim`` (ascending unless ``descending``): (values, indices). Equal values
    keep their input order, as torch's ``stable=True`` promises."""
    d = _dim(input, dim, "sort")
    _flag(descending, "descending")
    if stable is not None:
        _flag(stable, "stable")
    v, i = _C._sort(input, d, descending, -1)
    return _named_out(return_types.sort(v, i), out, "sort")


def argsort(input, dim=-1, descending=False, *, stable=None, out=None):
    """The indices that sort ``input`` along ``dim``."""
    d = _dim(input, dim, "argsort")
    _flag(descending, "descending")
    if stable is None and out is not None:
        raise TypeError("argsort takes out= only with stable=")  # worded by Note [Argument errors]
    if stable is not None:
        _flag(stable, "stable")
    return _out(_C._sort(input, d, descending, -1)[1], out, exact=True)


def msort(input, *, out=None):
    """``input`` sorted along its first dim."""
    return _out(_C._sort(input, _dim(input, 0, "msort"), False, -1)[0], out, exact=True)


def topk(input, k, dim=-1, largest=True, sorted=True, *, out=None):
    """The ``k`` largest (or smallest) values along ``dim`` and their indices, largest first
    (always in order, also with ``sorted=False``)."""
    d = _dim(input, dim, "topk")
    n = _check_k(input, k, d)
    _flag(largest, "largest")
    _flag(sorted, "sorted")
    if k < 0 or k > n:
        raise RuntimeError("selected index k out of range")
    if input.dtype == _C.bool:
        if input.is_cuda:
            raise NotImplementedError("\"topk_out_cuda\" not implemented for 'Bool'")
        raise RuntimeError("topk does not support bool dtypes on CPU")
    v, i = _C._sort(input, d, largest, k)
    return _named_out(return_types.topk(v, i), out, "topk")


def kthvalue(input, k, dim=-1, keepdim=False, *, out=None):
    """The ``k``-th smallest value along ``dim`` (k counts from 1) and its index."""
    d = _dim(input, dim, "kthvalue")
    n = _check_k(input, k, d)
    _flag(keepdim, "keepdim")
    if input.dim() and n == 0:
        raise IndexError(f"kthvalue(): Expected reduction dim {d} to have non-zero size.")
    if k < 1 or k > n:
        raise RuntimeError(f"kthvalue(): selected number k out of range for dimension {d}")
    if input.dtype == _C.bool and input.dim():  # a 0-dim tensor is its own kthvalue
        raise NotImplementedError(
            f"\"kthvalue_{'cuda' if input.is_cuda else 'cpu'}\" not implemented for 'Bool'"
        )
    v, i = _C._sort(input, d, False, k)
    if input.dim():
        v, i = v.narrow(d, k - 1, 1), i.narrow(d, k - 1, 1)
        if not keepdim:
            v, i = v.squeeze(d), i.squeeze(d)
        v, i = v.contiguous(), i.contiguous()
    return _named_out(return_types.kthvalue(v, i), out, "kthvalue")
