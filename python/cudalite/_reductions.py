"""Reductions: sum, mean, prod, max, min, argmax, argmin, std, var, norm, all, any.

The core reduces rows (``_C._reduce``); mean, var, std and norm are compositions.
"""

from __future__ import annotations

import builtins
import math
import warnings

from cudalite import _C, _linalg
from cudalite._arg_parser import as_dtype
from cudalite._C import Tensor

__all__ = [
    "sum",
    "mean",
    "prod",
    "max",
    "min",
    "amax",
    "amin",
    "argmax",
    "argmin",
    "std",
    "var",
    "norm",
    "all",
    "any",
    "count_nonzero",
    "nansum",
    "nanmean",
    "std_mean",
    "var_mean",
    "logsumexp",
]

# The core's reductions by name (csrc/ops/reductions.def, Note [Reduction rows]).
_OPS = _C._reduce_ops
SUM, PROD, MAX, MIN = _OPS["sum"], _OPS["prod"], _OPS["max"], _OPS["min"]
ARGMAX, ARGMIN, ALL, ANY = _OPS["argmax"], _OPS["argmin"], _OPS["all"], _OPS["any"]
_cpp = _linalg.cpp_name


class _ReturnType(tuple):
    """A named pair like ``torch.return_types.max(values=..., indices=...)``."""

    _name = ""
    # torch's return types are structseqs: these counts, no _fields.
    n_fields = n_sequence_fields = 2
    n_unnamed_fields = 0

    def __new__(cls, values, indices):
        return tuple.__new__(cls, (values, indices))

    values = property(lambda self: self[0])
    indices = property(lambda self: self[1])

    def __repr__(self):
        return f"cudalite.return_types.{self._name}(\nvalues={self[0]!r},\nindices={self[1]!r})"


def _return_type(name):
    return type(
        name,
        (_ReturnType,),
        {"_name": name, "__slots__": (), "__module__": "cudalite.return_types"},
    )


def _named_pair(name, first, second):
    """A pair whose fields are not (values, indices): ``aminmax(min=, max=)``."""

    def rep(self):
        return f"cudalite.return_types.{name}(\n{first}={self[0]!r},\n{second}={self[1]!r})"

    fields = {first: property(lambda self: self[0]), second: property(lambda self: self[1])}
    attrs = {"_name": name, "__slots__": (), "__module__": "cudalite.return_types"}
    return type(name, (_ReturnType,), {**attrs, **fields, "__repr__": rep})


class return_types:  # noqa: N801 - torch's module name
    max = _return_type("max")
    min = _return_type("min")
    max_out = _return_type("max_out")  # what max(..., dim, out=(values, indices)) returns
    min_out = _return_type("min_out")
    sort = _return_type("sort")
    topk = _return_type("topk")
    # ---- sorting (_sorting.py) ----
    kthvalue = _return_type("kthvalue")
    sort_out = _return_type("sort_out")  # what sort(..., out=(values, indices)) returns
    topk_out = _return_type("topk_out")
    kthvalue_out = _return_type("kthvalue_out")
    # ---- statistics and scans (_statistics.py, _tensor_scan.py) ----
    median = _return_type("median")
    nanmedian = _return_type("nanmedian")
    mode = _return_type("mode")
    cummax = _return_type("cummax")
    cummin = _return_type("cummin")
    aminmax = _named_pair("aminmax", "min", "max")
    frexp = _named_pair("frexp", "mantissa", "exponent")
    histogram = _named_pair("histogram", "hist", "bin_edges")


def _dims(dim):
    if dim is None:
        return None
    if isinstance(dim, (tuple, list)):
        return list(dim)
    return [dim]


def _int_dim(name, dim, pos=1):
    if isinstance(dim, (tuple, list)):
        if name in ("argmax", "argmin"):
            raise TypeError(
                f"{name}(): argument 'dim' (position {pos}) must be int, not {type(dim).__name__}"
            )
        raise TypeError(
            f"{name}() received an invalid combination of arguments - got "
            f"({type(dim).__name__}), but expected one of:"
        )


def _check_nonempty(name, input, dims, wrapped=True):
    """torch's errors for max-like reductions over nothing."""
    if dims is None or len(dims) == 0:
        if input.numel() == 0:
            raise (IndexError if name.startswith("arg") else RuntimeError)(
                f"{name}(): Expected reduction dim to be specified for input.numel() == 0."
                + (
                    ""
                    if name.startswith("arg")
                    else " Specify the reduction dim with the 'dim' argument."
                )
            )
        return
    for d in dims:
        w = _C._wrap_dim(d, input.dim())
        if input.dim() and input.shape[w] == 0:
            raise IndexError(
                f"{name}(): Expected reduction dim {w if wrapped else d} to have non-zero size."
            )


def _count(t, dims):
    if dims is None or len(dims) == 0:
        return t.numel()
    n = 1
    nd = builtins.max(t.dim(), 1)
    for d in dims:
        n *= t.shape[d % nd] if t.dim() else 1
    return n


class _Absent:
    """The default of an argument whose absence picks torch's overload (``x.sum()`` has no
    keepdim; ``x.sum(None, True)`` is fine)."""

    __slots__ = ("_name",)

    def __init__(self, name):
        self._name = name

    def __repr__(self):
        return f"<{self._name} not given>"


NO_DIM, NO_KEEPDIM, NO_OTHER = _Absent("dim"), _Absent("keepdim"), _Absent("other")


def _arg_type(a):
    from cudalite._ops import _type_name

    return "cudalite.dtype" if isinstance(a, _C.dtype) else _type_name(a)


def bad_call(name, method, pos, kw):
    """torch's argument-parser TypeError: ``pos`` the positional arguments after input, ``kw``
    the (name, value) keywords given, in the order torch lists them (the last given first)."""
    got = [] if method else ["Tensor"]
    got += [_arg_type(a) for a in pos]
    got += [f"{k}={_arg_type(v)}" for k, v in kw if v is not NO_KEEPDIM and v is not NO_OTHER]
    s = ", ".join(got) + (", " if method and not pos and len(got) else "")
    return TypeError(
        f"{name}() received an invalid combination of arguments - got ({s}), but expected one of:"
    )


# Reductions whose overload without dim takes out= too.
_WHOLE_OUT = {"mean"}


def whole(name, method, keepdim, dtype=None, out=None):
    """dim not given: torch's overload without dim takes no keepdim (and only mean's takes
    out=). Returns (dim, keepdim) for reducing over everything."""
    if keepdim is not NO_KEEPDIM or (out is not None and name not in _WHOLE_OUT):
        kw = [("out", out), ("dtype", dtype), ("keepdim", keepdim)]
        raise bad_call(name, method, (), [(k, v) for k, v in kw if v is not None])
    return None, False


def named_dim(dim):
    if dim is None:  # torch's Dimname overload
        raise RuntimeError("Please look up dimensions by name, got: name = None.")


def _named(input, dim):
    """torch's errors for a dim given as a name (no tensor here has named dims)."""
    if dim is None:
        raise RuntimeError("Please look up dimensions by name, got: name = None.")
    if isinstance(dim, str):
        names = ", ".join(["None"] * input.dim())
        raise RuntimeError(f"Name '{dim}' not found in Tensor[{names}].")


def sum(input, dim=NO_DIM, keepdim=NO_KEEPDIM, *, dtype=None, out=None):
    """Sum over all elements or over ``dim`` (int or tuple). With ``out=``, computed in the
    dtype of ``out`` unless ``dtype`` is given (which ``out`` must then have), as torch does."""
    if dim is NO_DIM:
        dim, keepdim = whole("sum", True, keepdim, dtype, out)
    elif keepdim is NO_KEEPDIM:
        keepdim = False
    dtype = _out_dtype(out, dtype)
    r = _C._reduce(SUM, input, _dims(dim), keepdim, dtype)
    return _out(r, out)


def prod(input, dim=NO_DIM, keepdim=NO_KEEPDIM, *, dtype=None, out=None):
    """Product over all elements or over one dim (``out=`` as for sum)."""
    if dim is NO_DIM:
        dim, keepdim = whole("prod", True, keepdim, dtype, out)
    else:
        named_dim(dim)
        _int_dim("prod", dim)
        keepdim = keepdim is not NO_KEEPDIM and keepdim
    dtype = _out_dtype(out, dtype)
    return _out(_C._reduce(PROD, input, _dims(dim), keepdim, dtype), out)


def _out_dtype(out, dtype):
    """sum and prod into ``out``: the dtype to compute in."""
    if out is None:
        return dtype
    if dtype is not None and out.dtype != dtype:
        raise RuntimeError(
            f"Expected out tensor to have dtype {_cpp(dtype)}, but got {_cpp(out.dtype)} instead"
        )
    return out.dtype


def _float_check(input, dtype, name):
    dtype = as_dtype(dtype)
    dt = dtype if dtype is not None else input.dtype
    if not dt.is_floating_point:
        which = "Input" if dtype is None else "Optional"
        raise RuntimeError(
            f"{name}(): could not infer output dtype. {which} dtype must be either a floating "
            f"point or complex dtype. Got: {dt._short_name}"
        )
    return dt


def mean(input, dim=NO_DIM, keepdim=NO_KEEPDIM, *, dtype=None, out=None):
    """Mean over all elements or over ``dim``."""
    if dim is NO_DIM:
        dim, keepdim = whole("mean", True, keepdim, dtype, out)
    elif keepdim is NO_KEEPDIM:
        keepdim = False
    dt = _float_check(input, dtype, "mean")
    x = input if input.dtype == dt else input.to(dt)
    dims = _dims(dim)
    # float16 / bfloat16: summed and divided in float32, rounded once (as torch's kernels
    # accumulate); a half-precision sum overflows long before the mean does
    low = dt in (_C.float16, _C.bfloat16)
    s = _C._reduce(SUM, x, dims, keepdim, _C.float32 if low else None)
    n = _count(input, dims)
    r = s / n if n else s * float("nan")
    return _out(r.to(dt) if low else r, out)


def _out(r, out, exact=False):
    """Writes ``r`` into ``out`` (resized like torch's outputs): out's dtype must be ``r``'s
    when ``exact``, else one ``r`` can be cast to."""
    if out is None:
        return r
    if not isinstance(out, Tensor):
        raise TypeError(f"out must be a Tensor, not {type(out).__name__}")
    if exact and out.dtype != r.dtype:
        raise RuntimeError(
            f"Expected out tensor to have dtype {_cpp(r.dtype)}, but got {_cpp(out.dtype)} instead"
        )
    if not _C.can_cast(r.dtype, out.dtype):
        raise RuntimeError(
            f"result type {r.dtype._short_name} can't be cast to the desired output type "
            f"{out.dtype._short_name}"
        )
    return _linalg._out(r, out)


def extreme_args(name, method, dim, keepdim, other, out):
    """Picks torch's max/min overload: returns ``other`` (a tensor: elementwise), or None with
    ``dim`` None (everything) or an int; raises torch's errors for other combinations."""
    kw = [("out", out), ("keepdim", keepdim)] if out is not None else [("keepdim", keepdim)]
    if isinstance(dim, Tensor) and other is NO_OTHER:
        dim, other = NO_DIM, dim  # max(a, b): positional other
        pos = (other,)
    else:
        pos = () if dim is NO_DIM else (dim,)
        kw.append(("other", other))
    if other is not NO_OTHER:
        if (
            not isinstance(other, Tensor)
            or dim is not NO_DIM
            or keepdim is not NO_KEEPDIM
            or not (out is None or isinstance(out, Tensor))
        ):
            raise bad_call(name, method, pos, kw)
        return other, None, False
    if dim is NO_DIM:
        if keepdim is not NO_KEEPDIM or not (out is None or isinstance(out, Tensor)):
            raise bad_call(name, method, pos, kw)
        return None, None, False
    named_dim(dim)
    if isinstance(dim, Tensor) or out is not None and not isinstance(out, (tuple, list)):
        raise bad_call(name, method, pos, kw)
    _int_dim(name, dim)
    return None, dim, keepdim is not NO_KEEPDIM and keepdim


_MAXIMUM = _C._binary_op_names.index("maximum")
_MINIMUM = _C._binary_op_names.index("minimum")


def _extreme(input, other, dim, keepdim, is_max):
    name = "max" if is_max else "min"
    if other is not None:
        return _C._binary(_MAXIMUM if is_max else _MINIMUM, input, other, None)
    if dim is None:
        _check_nonempty(name, input, None)
        return _C._reduce(MAX if is_max else MIN, input, None, False, None)
    v, i = _C._reduce_with_indices(is_max, input, dim, keepdim)
    return (return_types.max if is_max else return_types.min)(v, i)


def _extreme_out(r, out, name):
    """max/min into ``out``: a tensor for the whole-tensor form, (values, indices) along a dim."""
    if out is None:
        return r
    if isinstance(r, Tensor):
        return _out(r, out)
    if len(out) != 2:
        raise TypeError(f"expected tuple of 2 elements but got {len(out)}")
    values = _out(r[0], out[0], exact=True)
    indices = _out(r[1], out[1], exact=True)
    return getattr(return_types, name + "_out")(values, indices)


def max(input, dim=NO_DIM, keepdim=NO_KEEPDIM, *, other=NO_OTHER, out=None):
    """Largest element, or (values, indices) along ``dim``, or elementwise with a tensor
    (``other``, or given in dim's place)."""
    other, dim, keepdim = extreme_args("max", True, dim, keepdim, other, out)
    return _extreme_out(_extreme(input, other, dim, keepdim, True), out, "max")


def min(input, dim=NO_DIM, keepdim=NO_KEEPDIM, *, other=NO_OTHER, out=None):
    """Smallest element, or (values, indices) along ``dim``, or elementwise with a tensor."""
    other, dim, keepdim = extreme_args("min", True, dim, keepdim, other, out)
    return _extreme_out(_extreme(input, other, dim, keepdim, False), out, "min")


def _same_dtype_out(input, out):
    if out is not None and out.dtype != input.dtype:
        raise RuntimeError(
            f"Expected the dtype for input and out to match, but got {input.dtype._short_name} "
            f"for input's dtype and {out.dtype._short_name} for out's dtype."
        )


def amax(input, dim=(), keepdim=False, *, out=None):
    """Largest values over ``dim`` (all dims when empty)."""
    _check_nonempty("amax", input, _dims(dim), wrapped=False)
    _same_dtype_out(input, out)
    return _out(_C._reduce(MAX, input, _dims(dim) or None, keepdim, None), out)


def amin(input, dim=(), keepdim=False, *, out=None):
    """Smallest values over ``dim`` (all dims when empty)."""
    _check_nonempty("amin", input, _dims(dim), wrapped=False)
    _same_dtype_out(input, out)
    return _out(_C._reduce(MIN, input, _dims(dim) or None, keepdim, None), out)


def _arg(input, dim, keepdim, op):
    name = "argmax" if op == ARGMAX else "argmin"
    _int_dim(name, dim)
    if input.dtype == _C.bool:
        raise RuntimeError(f"{name}(): does not support bool input")
    _check_nonempty(name, input, None if dim is None else [dim])
    if dim is None:
        flat = input.reshape(-1)
        r = _C._reduce(op, flat, [0], False, None)
        return r.reshape([1] * input.dim()) if keepdim else r
    return _C._reduce(op, input, [dim], keepdim, None)


def argmax(input, dim=None, keepdim=False, *, out=None):
    """Index of the largest element (first one on ties; NaN counts as largest)."""
    return _out(_arg(input, dim, keepdim, ARGMAX), out, exact=True)


def argmin(input, dim=None, keepdim=False, *, out=None):
    """Index of the smallest element."""
    return _out(_arg(input, dim, keepdim, ARGMIN), out, exact=True)


def _correction(unbiased, correction):
    if unbiased is not None and unbiased is not True and unbiased is not False:
        raise TypeError("unbiased is a bool")  # worded by Note [Argument errors]
    if correction is not None:
        return correction
    if unbiased is None:
        return 1
    return 1 if unbiased else 0


def var(input, dim=None, unbiased=None, keepdim=False, *, correction=None, out=None):
    """Variance with Bessel's correction by default."""
    return _out(_var(input, dim, unbiased, keepdim, correction, "var").to(input.dtype), out)


def _var(input, dim, unbiased, keepdim, correction, name):
    if isinstance(dim, bool):
        dim, unbiased = None, dim
    if not input.dtype.is_floating_point:
        raise RuntimeError("std and var only support floating point and complex dtypes")
    c = _correction(unbiased, correction)
    dims = _dims(dim)
    input = _upcast(input)  # the caller casts the result back
    m = _C._reduce(SUM, input, dims, True, None) / builtins.max(_count(input, dims), 1)
    d = input - m
    ss = _C._reduce(SUM, d * d, dims, keepdim, None)
    if input.numel() // builtins.max(ss.numel(), 1) - c <= 0:
        warnings.warn(
            f"{name}(): degrees of freedom is <= 0. Correction should be strictly "
            "less than the reduction factor (input numel divided by output numel).",
            UserWarning,
            stacklevel=3,
        )
    # Like torch, divide by max(0, N - correction): inf, or nan for a zero sum of squares.
    return ss / builtins.max(0, _count(input, dims) - c)


def _upcast(x):
    """float16 and bfloat16 computed in float32, as torch's accumulate type: squares of
    values above 256 overflow float16."""
    return x.to(_C.float32) if x.dtype in (_C.float16, _C.bfloat16) else x


def std(input, dim=None, unbiased=None, keepdim=False, *, correction=None, out=None):
    """Standard deviation with Bessel's correction by default."""
    r = _var(input, dim, unbiased, keepdim, correction, "std").sqrt().to(input.dtype)
    return _out(r, out)


def var_mean(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
    """(var, mean) in one call."""
    return var(input, dim, unbiased, keepdim, correction=correction), mean(input, dim, keepdim)


def std_mean(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
    """(std, mean) in one call."""
    return std(input, dim, unbiased, keepdim, correction=correction), mean(input, dim, keepdim)


def norm(input, p="fro", dim=None, keepdim=False, dtype=None, *, out=None):
    """Vector p-norm over all elements or ``dim`` ('fro' and 2 are the same for vectors;
    'fro' over more than two dims raises, as torch's matrix norm does). ``dtype``: the input
    is cast to it first (a floating dtype at least as wide as the input's, as in torch)."""
    dtype = as_dtype(dtype)
    if p is None:  # torch's default: the 2-norm ('fro' over two dims)
        p = "fro"
    elif isinstance(p, str) and p != "fro":
        if p == "nuc":
            raise NotImplementedError("norm(p='nuc'): the nuclear norm is not in cudalite")
        raise RuntimeError(f"linalg.matrix_norm: Order {p} not supported.")
    if not input.dtype.is_floating_point:
        raise RuntimeError(
            "linalg.vector_norm: Expected a floating point or complex tensor as input. Got "
            f"{input.dtype._short_name}"
        )
    if dtype is not None:
        if not dtype.is_floating_point:
            raise RuntimeError(
                "linalg.vector_norm: dtype should be floating point or complex, but got "
                f"{dtype._short_name}"
            )
        if _C.promote_types(input.dtype, dtype) != dtype:
            raise RuntimeError(
                f"linalg.vector_norm: the dtype of the input ({input.dtype._short_name}) should "
                f"be convertible without narrowing to the specified dtype ({dtype._short_name})"
            )
        input = input.to(dtype)
    if p == "fro" and isinstance(dim, (tuple, list)) and len(dim) > 2:
        got = " ".join(str(d) for d in dim)
        raise RuntimeError(f"linalg.matrix_norm: dim must be a 2-tuple. Got {got}")
    out_dtype = input.dtype
    x = _upcast(input).abs()
    dims = _dims(dim)
    if p in ("fro", 2, 2.0):
        r = _C._reduce(SUM, x * x, dims, keepdim, None).sqrt()
    elif p == math.inf:
        r = _C._reduce(MAX, x, dims, keepdim, None)
    elif p == -math.inf:
        r = _C._reduce(MIN, x, dims, keepdim, None)
    elif p == 0:
        r = _C._reduce(SUM, (x != 0).to(x.dtype), dims, keepdim, None)
    elif p == 1:
        r = _C._reduce(SUM, x, dims, keepdim, None)
    else:
        r = _C._reduce(SUM, x**p, dims, keepdim, None) ** (1.0 / p)
    return _out(r.to(out_dtype), out, exact=True)


def _logical(op, input, dim, keepdim):
    dims = _dims(dim)
    if dims is not None and len(dims) == 0:
        r = input != 0  # torch reduces over no dims here: elementwise
    else:
        r = _C._reduce(op, input, dims, keepdim, None)
    # torch keeps uint8 for uint8 inputs (a legacy of byte masks).
    return r.to(_C.uint8) if input.dtype == _C.uint8 else r


def _logical_out(name, r, out):
    if out is not None and out.dtype not in (_C.bool, _C.uint8):
        raise RuntimeError(
            f"{name} only supports bool tensor for result, got: {out.dtype._short_name}"
        )
    return _out(r, out)


def all(input, dim=None, keepdim=False, *, out=None):
    """True when every element (along ``dim``) is nonzero."""
    return _logical_out("all", _logical(ALL, input, dim, keepdim), out)


def any(input, dim=None, keepdim=False, *, out=None):
    """True when any element (along ``dim``) is nonzero."""
    return _logical_out("any", _logical(ANY, input, dim, keepdim), out)


def count_nonzero(input, dim=None):
    """The number of nonzero elements (along ``dim``)."""
    return _C._reduce(SUM, input != 0, _dims(dim), False, None)


# nansum and nanmean are written with Tensor methods (masked_fill, sum), so that autograd,
# once armed, records them: the gradient is zero where the input is NaN, as torch's.
def nansum(input, dim=None, keepdim=False, *, dtype=None):
    """Sum (as :func:`sum`) that counts NaN as zero."""
    if input.dtype.is_floating_point:
        input = input.masked_fill(input.isnan(), 0)
    return input.sum(dim, keepdim, dtype=dtype)


def nanmean(input, dim=None, keepdim=False, *, dtype=None):
    """Mean (as :func:`mean`) of the elements that are not NaN; NaN where there are none."""
    if not input.dtype.is_floating_point:
        raise RuntimeError(
            "nanmean(): expected input to have floating point or complex dtype but got "
            f"{input.dtype._short_name}"
        )
    count = (~input.isnan()).sum(dim, keepdim)
    return nansum(input, dim, keepdim, dtype=dtype) / count


# ---- logsumexp ----


def logsumexp(input, dim, keepdim=False, *, out=None):
    """``log(sum(exp(input)))`` over ``dim``, computed around the largest value so that it
    neither overflows nor underflows; integer inputs give the default float dtype. Infinite
    maxima are not subtracted (all -inf gives -inf, an inf gives inf), as in torch."""
    for d in dim if isinstance(dim, (tuple, list)) else [dim]:
        _named(input, d)
    dims = _dims(dim)
    if not dims and not keepdim and input.dim():
        # torch reduces over everything but then fails to write the result, so do we
        ones = ", ".join(["1"] * input.dim())
        raise RuntimeError(f"output with shape [] doesn't match the broadcast shape [{ones}]")
    if out is not None and not out.dtype.is_floating_point:
        raise RuntimeError(
            "logsumexp(): Expected floating point type for result tensor, but got: "
            f"{out.dtype._short_name}"
        )
    dtype = input.dtype if input.dtype.is_floating_point else _C.get_default_dtype()
    x = _upcast(input if input.dtype == dtype else input.to(dtype))
    dims = dims or None
    if x.numel() == 0:
        r = _C._reduce(SUM, x.exp(), dims, keepdim, None).log()
    else:
        m = _C._reduce(MAX, x, dims, True, None)
        m = m.masked_fill(m.abs() == math.inf, 0)
        s = _C._reduce(SUM, (x - m).exp(), dims, keepdim, None).log()
        r = s + (m if keepdim else m.reshape(list(s.shape)))
    return _out(r.to(dtype), out)
