"""Elementwise math, comparisons and matrix products as functions (``cudalite.add`` ...).

Every function here is one call into the C++ core; the Tensor methods in ``_tensor.py`` are
thin wrappers around these.
"""

from __future__ import annotations

from cudalite import _C, _linalg
from cudalite._C import Tensor
from cudalite._lazy import is_np_number, np_number_types
from cudalite._linalg import addmm, bmm, dot, matmul, mm, mv
from cudalite._op_registry import BINARY, OPS, UNARY

# Written here by hand; the registry's functions are added below.
__all__ = [
    "add",
    "sub",
    "subtract",
    "div",
    "divide",
    "true_divide",
    "where",
    "clamp",
    "clip",
    "matmul",
    "mm",
    "bmm",
    "addmm",
    "mv",
    "dot",
    "equal",
    "allclose",
    "isclose",
    "result_type",
    "cat",
    "concat",
    "concatenate",
    "stack",
    "lerp",
]


_NUMBER = (bool, int, float)
# torch's ops that take no Python numbers, and those whose argument errors name the argument
# (the others have several overloads and report "an invalid combination of arguments").
_TENSOR_ONLY = {name for op in OPS if op.tensor_only for name in (op.name, *op.aliases)}
_NAMED_ARG = _TENSOR_ONLY | {"add", "sub", "mul", "div"}


def _type_name(x):
    from cudalite._arg_parser import tp_name

    return tp_name(x)


def check_args(name, input, other, method=False):
    """torch's argument-parser TypeErrors for a binary op's operands (``name`` may be an
    in-place method name such as 'add_')."""
    base = name.rstrip("_")
    allowed = Tensor if base in _TENSOR_ONLY else (Tensor, *_NUMBER, *np_number_types())
    ok_in, ok_other = isinstance(input, allowed), isinstance(other, allowed)
    if ok_in and ok_other:
        return
    if base in _NAMED_ARG:
        arg, pos, bad = ("input", 1, input) if not ok_in else ("other", 1 if method else 2, other)
        raise TypeError(
            f"{name}(): argument '{arg}' (position {pos}) must be Tensor, not {_type_name(bad)}"
        )
    got = ", ".join(_type_name(a) for a in ((other,) if method else (input, other)))
    raise TypeError(
        f"{name}() received an invalid combination of arguments - got ({got}), but expected one of:"
    )


def _b(name, public=None):
    op = BINARY[name]
    public = public or name
    tensor_only = public in _TENSOR_ONLY

    def fn(input, other, *, out=None):
        if tensor_only or not (isinstance(other, (Tensor, *_NUMBER)) or is_np_number(other)):
            check_args(public, input, other)
        return _C._binary(op, input, other, out)

    fn.__name__ = public
    fn.__doc__ = f"Elementwise ``{public}`` with broadcasting and torch's type promotion."
    return fn


def _u(name):
    op = UNARY[name]

    def fn(input, *, out=None):
        return _C._unary(op, input, out)

    fn.__name__ = name
    fn.__doc__ = f"Elementwise ``{name}``."
    return fn


def _registry_functions():
    """``cudalite.<name>`` for each op of the registry, and its aliases (one object)."""
    fns = {}
    for op in OPS:
        if op.custom:
            continue
        fn = _b(op.name) if op.arity == 2 else _u(op.name)
        for name in (op.name, *op.aliases):
            fns[name] = fn
    return fns


_REGISTRY_FUNCTIONS = _registry_functions()
globals().update(_REGISTRY_FUNCTIONS)
__all__ += list(_REGISTRY_FUNCTIONS)
true_divide = _b("div", "true_divide")


def _raw(name, *args):
    """The registry op ``name`` on ``args`` (never recorded by autograd)."""
    if len(args) == 2:
        return _C._binary(BINARY[name], args[0], args[1], None)
    return _C._unary(UNARY[name], args[0], None)


def _scaled(input, other, alpha):
    """``alpha * other`` with torch's alpha_check against the op's result dtype."""
    rt = _C._result_type(input, other)
    if isinstance(alpha, bool) and rt != _C.bool:
        raise RuntimeError("Boolean alpha only supported for Boolean results.")
    if isinstance(alpha, float) and not rt.is_floating_point:
        raise RuntimeError(
            "For integral input tensors, argument alpha must not be a floating point number."
        )
    if rt == _C.bool:
        # In bool arithmetic alpha * other is other when alpha is nonzero.
        return other if alpha else _C._binary(BINARY["logical_and"], other, False, None)
    return _C._binary(BINARY["mul"], other, alpha, None)


def add(input, other, *, alpha=1, out=None):
    """``input + alpha * other``."""
    if not (isinstance(other, (Tensor, *_NUMBER)) or is_np_number(other)):
        check_args("add", input, other)
    if type(alpha) is not int or alpha != 1:
        other = _scaled(input, other, alpha)
    return _C._binary(BINARY["add"], input, other, out)


def sub(input, other, *, alpha=1, out=None):
    """``input - alpha * other``."""
    if not (isinstance(other, (Tensor, *_NUMBER)) or is_np_number(other)):
        check_args("sub", input, other)
    if type(alpha) is not int or alpha != 1:
        if any(
            x.dtype == _C.bool if isinstance(x, Tensor) else isinstance(x, bool)
            for x in (input, other)
        ):
            _C._binary(BINARY["sub"], input, other, None)  # raises torch's sub_check error
        other = _scaled(input, other, alpha)
    return _C._binary(BINARY["sub"], input, other, out)


subtract = sub


def div(input, other, *, rounding_mode=None, out=None):
    """True division, or with ``rounding_mode`` 'trunc' / 'floor'."""
    if not (isinstance(other, (Tensor, *_NUMBER)) or is_np_number(other)):
        check_args("div", input, other)
    if rounding_mode is None:
        return _C._binary(BINARY["div"], input, other, out)
    if rounding_mode == "floor":
        return _C._binary(BINARY["floor_divide"], input, other, out)
    if rounding_mode == "trunc":
        q = _C._binary(BINARY["div"], input, other, None)
        rt = _C._result_type(input, other)
        q = _C._unary(UNARY["trunc"], q, None)
        if not rt.is_floating_point:
            q = _C._to(q, None, rt, False, False)
        if out is not None:
            _C._copy_(out, q, False)
            return out
        return q
    raise RuntimeError(
        "div expected rounding_mode to be one of None, 'trunc', or 'floor' but found "
        f"'{rounding_mode}'"
    )


divide = div


def where(condition, input=None, other=None):
    """``input`` where ``condition`` holds, else ``other``; one argument: ``nonzero`` tuple."""
    if input is None and other is None:
        return tuple(condition.nonzero().t())
    return _C._where(condition, input, other)


def _clamp_bound_kind(b):
    if b is None:
        return None
    if isinstance(b, Tensor):
        return "Tensor"
    return "Number" if isinstance(b, _NUMBER) or is_np_number(b) else "other"


def check_clamp_args(name, input, min, max, out=None, method=False):
    """torch's clamp takes both bounds as Tensors or both as numbers (two overloads): other
    mixes get its parser's TypeError (the arguments listed as if given by position, as the
    autograd wrappers pass them)."""
    kmin, kmax = _clamp_bound_kind(min), _clamp_bound_kind(max)
    if (
        (kmin is None or kmax is None or kmin == kmax)
        and "other" not in (kmin, kmax)
        and (method or isinstance(input, Tensor))
    ):
        return
    got = [_type_name(a) for a in ((min, max) if method else (input, min, max))]
    if out is not None:
        got.append(f"out={_type_name(out)}")
    raise TypeError(
        f"{name}() received an invalid combination of arguments - got ({', '.join(got)}), "
        "but expected one of:"
    )


def clamp(input, min=None, max=None, *, out=None):
    """Limits values to [min, max]."""
    check_clamp_args("clamp", input, min, max, out)
    return clamp_checked(input, min, max, out)


def clamp_checked(input, min, max, out=None):
    """clamp after its argument checks (the Tensor methods check their own way)."""
    if out is not None:
        for bound in (min, max):
            rt = None if bound is None else _C._result_type(input, bound)
            if rt is not None and not _C.can_cast(rt, out.dtype):
                # clamp's own wording (C++ type name for the output).
                raise RuntimeError(
                    f"result type {rt._short_name} can't be cast to the desired "
                    f"output type {_dtype_name(out.dtype)}"
                )
    if isinstance(min, Tensor) or isinstance(max, Tensor):
        r = input
        if min is not None:
            r = _raw("maximum", r, min)
        if max is not None:
            r = _raw("minimum", r, max)
        if out is not None:
            _C._copy_(out, r, False)
            return out
        return r
    return _C._clamp(input, min, max, out)


clip = clamp  # (the autograd wrapper of clamp serves as both)


def lerp(input, end, weight):
    """``input + weight * (end - input)``, computed as torch does: at float precision for
    16-bit inputs, and as ``end - (end - input) * (1 - weight)`` where ``|weight| >= 0.5`` (so
    that a weight of 1 gives ``end`` exactly)."""
    wt = isinstance(weight, Tensor)
    for name, t in (("end", end), ("weight", weight if wt else None)):
        if t is not None and t.dtype != input.dtype:
            raise RuntimeError(
                f"expected dtype {_dtype_name(input.dtype)} for `{name}` but got dtype "
                f"{_dtype_name(t.dtype)}"
            )
    shape = _C._broadcast_shapes(tuple(input.shape), tuple(end.shape))
    if wt:
        _C._broadcast_shapes(tuple(shape), tuple(weight.shape))
    if not input.dtype.is_floating_point:
        kernel = "lerp_kernel_tensor" if wt else "lerp_kernel_scalar"
        raise NotImplementedError(f"\"{kernel}\" not implemented for '{input.dtype._short_name}'")
    low = input.dtype in (_C.float16, _C.bfloat16)
    x, e = (input.float(), end.float()) if low else (input, end)
    w = weight.float() if wt and low else weight
    if not wt:
        w = float(weight)
        r = x + w * (e - x) if -0.5 < w < 0.5 else e - (e - x) * (1 - w)
    else:
        r = where(w.abs() < 0.5, x + w * (e - x), e - (e - x) * (1 - w))
    return r.to(input.dtype) if low else r


def result_type(tensor1, tensor2):
    """The dtype an op on these two operands produces (torch's promotion rules)."""
    return _C._result_type(tensor1, tensor2)


# ---- matrix products (in _linalg) ----

_dtype_name = _linalg.cpp_name


# ---- comparisons of whole tensors ----


def equal(input, other):
    """True when both tensors have the same size and elements."""
    if tuple(input.shape) != tuple(other.shape):
        return False
    return bool(
        _C._reduce(6, _C._binary(BINARY["eq"], input, other, None), None, False, None).item()
    )


def isclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    """Elementwise ``|input - other| <= atol + rtol * |other|``."""
    if input.dtype != other.dtype:
        raise RuntimeError(f"{input.dtype._short_name} did not match {other.dtype._short_name}")
    if rtol < 0:
        raise RuntimeError(f"rtol must be greater than or equal to zero, but got {rtol}")
    if atol < 0:
        raise RuntimeError(f"atol must be greater than or equal to zero, but got {atol}")
    a, b = input, other
    close = _raw("eq", a, b)
    if equal_nan and a.dtype.is_floating_point:
        close = close | (_raw("isnan", a) & _raw("isnan", b))
    if rtol == 0 and atol == 0:
        return close
    if not a.dtype.is_floating_point:
        # As torch: integers and bools are compared in the default dtype (no wrap-around).
        a, b = a.to(_C.get_default_dtype()), b.to(_C.get_default_dtype())
    # Like torch, only a finite difference can be within tolerance (inf - -inf is not).
    diff = _raw("abs", sub(a, b))
    within = _raw("le", diff, atol + _raw("abs", _raw("mul", b, rtol)))
    return close | (_raw("isfinite", diff) & within)


def allclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    """True when every element is close (see ``isclose``)."""
    return bool(isclose(input, other, rtol, atol, equal_nan).all().item())


# ---- joining ----


def _tensor_sequence(tensors):
    """A tuple or list, as torch's parser takes for tensors (not a tensor, nor an iterator):
    anything else raises a TypeError that the argument check words as torch's."""
    if not isinstance(tensors, (tuple, list)):
        raise TypeError("tensors must be a tuple or list of tensors")
    return list(tensors)


def cat(tensors, dim=0, *, out=None):
    """Concatenates tensors along an existing dim."""
    tensors = _tensor_sequence(tensors)
    for i, t in enumerate(tensors):
        if not isinstance(t, Tensor):
            raise TypeError(
                f"expected Tensor as element {i} in argument 0, but got {type(t).__name__}"
            )
    r = _C._cat(tensors, dim)
    if out is None:
        return r
    if not _C.can_cast(r.dtype, out.dtype):
        raise TypeError(
            f"torch.cat(): input types can't be cast to the desired output type "
            f"{out.dtype._short_name}"
        )
    for t in tensors:  # torch writes into out as it reads the inputs
        _C._assert_no_overlap(out, t)
    return _linalg._out(r, out)


concat = concatenate = cat


def stack(tensors, dim=0, *, out=None):
    """Joins tensors of equal size along a new dim."""
    tensors = _tensor_sequence(tensors)
    if not tensors:
        raise RuntimeError("stack expects a non-empty TensorList")
    shape = tuple(tensors[0].shape)
    for i, t in enumerate(tensors):
        if tuple(t.shape) != shape:
            raise RuntimeError(
                f"stack expects each tensor to be equal size, but got {list(shape)} at entry 0 "
                f"and {list(t.shape)} at entry {i}"
            )
    nd = len(shape) + 1
    if not -nd <= dim < nd:
        raise IndexError(
            f"Dimension out of range (expected to be in range of [{-nd}, {nd - 1}], but got {dim})"
        )
    return cat([t.unsqueeze(dim) for t in tensors], dim, out=out)


# ---- logit ----
__all__ += ["logit", "logit_"]


def _logit(input, eps):
    if eps is not None and (isinstance(eps, bool) or not isinstance(eps, (int, float))):
        raise TypeError("eps must be a float")  # worded by Note [Argument errors]
    dtype = input.dtype if input.dtype.is_floating_point else _C.get_default_dtype()
    x = input.to(_C.float32) if dtype in (_C.float16, _C.bfloat16) else input.to(dtype)
    if eps is not None:
        # the bounds in the input's dtype, as torch's kernel holds them: 1 - 1e-6 is 1.0 in
        # float16 and bfloat16, so logit(1, 1e-6) is inf there
        cpu = _C.device("cpu")
        lo = _C._full([], float(eps), dtype, cpu).item()
        hi = _C._full([], 1.0 - lo, dtype, cpu).item()
        x = _C._where(x < lo, lo, _C._where(x > hi, hi, x))
    return _raw("log", _raw("div", x, _raw("sub", 1.0, x))).to(dtype)


def logit(input, eps=None, *, out=None):
    """``log(p / (1 - p))``; with ``eps``, p is first clamped to [eps, 1 - eps]."""
    from cudalite._reductions import _out

    return _out(_logit(input, eps), out)


def logit_(input, eps=None):
    """:func:`logit` in place."""
    return logit(input, eps, out=input)
