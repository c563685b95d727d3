"""Elementwise ops against NumPy over every dtype, shape kind and layout, and their errors.

References are computed by NumPy in float64 (floats) or in the integer result dtype, then cast
to the dtype torch's promotion gives; which op/dtype pairs raise is what PyTorch 2.11 raises.
"""

from __future__ import annotations

import math
import operator
import re
import zlib

import numpy as np
import pytest

import cudalite as C
from conftest import exact, to_np

INTS = ["uint8", "int8", "int16", "int32", "int64"]
FLOATS = ["float16", "bfloat16", "float32", "float64"]
ALL = ["bool", *INTS, *FLOATS]
NP = {"bool": np.bool_, "float16": np.float16, "bfloat16": np.float32}


def np_dtype(name):
    return NP.get(name, getattr(np, name, None))


def data(shape, dtype, rng, *, nonzero=False, small=False):
    """Values exact in every dtype (halves of small ints for floats)."""
    if dtype == "bool":
        a = rng.random(shape) > 0.5
    elif dtype == "uint8":
        a = rng.integers(0, 4 if small else 10, shape)
    elif dtype in INTS:
        a = rng.integers(-3 if small else -8, 4 if small else 9, shape)
    else:
        a = rng.integers(-16, 17, shape) * 0.5
    a = np.asarray(a)
    if nonzero and dtype != "bool":
        a = np.where(a == 0, 1, a)
    return a.astype(np_dtype(dtype))


# Operand layouts: (shape of a, shape of b, how to view the data).
LAYOUTS = [
    ((), (), None),
    ((0,), (0,), None),
    ((5,), (5,), None),
    ((3, 4), (3, 4), None),
    ((3, 1), (1, 4), None),
    ((4, 3), (4, 3), "t"),  # transposed: (3, 4) non-contiguous views
    ((3, 8), (3, 8), "step"),  # [:, ::2]: (3, 4) with a stride of 2
    ((2, 3, 4), (4,), None),
]


def make(arr, dtype, device, how):
    t = C.tensor(arr, dtype=getattr(C, dtype), device=device)
    if how == "t":
        return t.t(), arr.T
    if how == "step":
        return t[:, ::2], arr[:, ::2]
    return t, arr


def tol(dtype):
    return {"float16": 2e-3, "bfloat16": 1e-2}.get(dtype, 1e-6)


def check(got, want, dtype):
    assert got.dtype is getattr(C, dtype)
    g = to_np(got)
    assert g.shape == want.shape
    if dtype in FLOATS:
        with np.errstate(all="ignore"):  # rounding to the result dtype may overflow to inf
            want = want.astype(np_dtype(dtype)).astype(np.float64)
        np.testing.assert_allclose(g, want, rtol=tol(dtype), atol=tol(dtype), equal_nan=True)
    else:
        np.testing.assert_array_equal(g, want.astype(np_dtype(dtype)))


def sigmoid(x):
    return 1 / (1 + np.exp(-x))


# name -> (NumPy function, argument domain)
BINARY = {
    "add": (np.add, None),
    "sub": (np.subtract, None),
    "mul": (np.multiply, None),
    "div": (np.true_divide, None),
    "floor_divide": (np.floor_divide, "nonzero"),
    "remainder": (np.remainder, "nonzero"),
    "pow": (np.power, "pow"),
    "maximum": (np.maximum, None),
    "minimum": (np.minimum, None),
    "atan2": (np.arctan2, None),
    "eq": (np.equal, None),
    "ne": (np.not_equal, None),
    "lt": (np.less, None),
    "le": (np.less_equal, None),
    "gt": (np.greater, None),
    "ge": (np.greater_equal, None),
    "bitwise_and": (np.bitwise_and, None),
    "bitwise_or": (np.bitwise_or, None),
    "bitwise_xor": (np.bitwise_xor, None),
    "logical_and": (np.logical_and, None),
    "logical_or": (np.logical_or, None),
    "logical_xor": (np.logical_xor, None),
}
OPERATORS = {
    "add": operator.add, "sub": operator.sub, "mul": operator.mul, "div": operator.truediv,
    "floor_divide": operator.floordiv, "remainder": operator.mod, "pow": operator.pow,
    "eq": operator.eq, "ne": operator.ne, "lt": operator.lt, "le": operator.le,
    "gt": operator.gt, "ge": operator.ge, "bitwise_and": operator.and_,
    "bitwise_or": operator.or_, "bitwise_xor": operator.xor,
}  # fmt: skip
COMPARE = {"eq", "ne", "lt", "le", "gt", "ge", "logical_and", "logical_or", "logical_xor"}


def binary_error(name, dtype):
    """(exception, message) torch raises for a same-dtype tensor pair, or None."""
    if dtype == "bool" and name == "sub":
        return RuntimeError, "Subtraction, the `-` operator, with two bool tensors"
    if dtype == "bool" and name in ("floor_divide", "remainder", "pow"):
        kernel = {"floor_divide": "div_floor_cpu", "remainder": "remainder_cpu", "pow": "pow"}
        return NotImplementedError, f"\"{kernel[name]}\" not implemented for 'Bool'"
    if dtype in FLOATS and name.startswith("bitwise"):
        short = {"float16": "Half", "bfloat16": "BFloat16", "float32": "Float", "float64": "Double"}
        return NotImplementedError, f"\"{name}_cpu\" not implemented for '{short[dtype]}'"
    return None


def result_dtype(name, dtype):
    if name in COMPARE:
        return "bool"
    if name in ("div", "atan2") and dtype not in FLOATS:
        return "float32"
    return dtype


@pytest.mark.parametrize("dtype", ALL)
@pytest.mark.parametrize("name", list(BINARY))
def test_binary_vs_numpy(name, dtype, device):
    fn, domain = BINARY[name]
    err = binary_error(name, dtype)
    rng = np.random.default_rng(zlib.crc32(f"{name}{dtype}".encode()))
    rdt = result_dtype(name, dtype)
    for sa, sb, how in LAYOUTS:
        a = data(sa, dtype, rng, small=domain == "pow")
        b = data(sb, dtype, rng, nonzero=domain == "nonzero", small=domain == "pow")
        if domain == "pow" and dtype in INTS:
            b = np.abs(b)
        ta, a = make(a, dtype, device, how)
        tb, b = make(b, dtype, device, how)
        if err is not None:
            if device == "cpu" or err[0] is RuntimeError:
                with pytest.raises(err[0], match=re.escape(err[1])):
                    getattr(C, name)(ta, tb)
            continue
        if dtype in FLOATS:
            a, b = a.astype(np.float64), b.astype(np.float64)
        elif rdt == "float32":
            a, b = a.astype(np.float64), b.astype(np.float64)
        with np.errstate(all="ignore"):
            want = fn(a, b)
        check(getattr(C, name)(ta, tb), want, rdt)
        check(getattr(ta, name)(tb), want, rdt)
        if name in OPERATORS:
            check(OPERATORS[name](ta, tb), want, rdt)


UNARY = {
    "neg": np.negative, "abs": np.abs, "exp": np.exp, "log": np.log, "sqrt": np.sqrt,
    "sin": np.sin, "cos": np.cos, "tan": np.tan, "tanh": np.tanh, "sigmoid": sigmoid,
    "relu": lambda x: np.maximum(x, 0), "floor": np.floor, "ceil": np.ceil, "round": np.round,
    "trunc": np.trunc, "sign": lambda x: x.copy() if x.dtype == bool else np.sign(x),
    "reciprocal": lambda x: 1 / x,
    "rsqrt": lambda x: 1 / np.sqrt(x), "isnan": np.isnan, "isinf": np.isinf,
    "isfinite": np.isfinite, "bitwise_not": np.invert, "logical_not": np.logical_not,
    "square": np.square, "log2": np.log2, "log10": np.log10, "log1p": np.log1p,
    "expm1": np.expm1, "erf": np.vectorize(math.erf, otypes=[np.float64]),
}  # fmt: skip
FLOAT_RESULT = {"exp", "log", "sqrt", "sin", "cos", "tan", "tanh", "sigmoid", "reciprocal",
                "rsqrt", "log2", "log10", "log1p", "expm1", "erf"}  # fmt: skip
PREDICATES = {"isnan", "isinf", "isfinite", "logical_not"}


def unary_error(name, dtype):
    if dtype == "bool":
        if name == "neg":
            return RuntimeError, "Negation, the `-` operator, on a bool tensor is not supported."
        if name == "relu":
            return RuntimeError, "Boolean inputs not supported for relu"
        if name == "abs":
            return NotImplementedError, "\"abs_cpu\" not implemented for 'Bool'"
        if name in ("floor", "ceil", "round", "trunc"):
            return NotImplementedError, f"\"{name}_vml_cpu\" not implemented for 'Bool'"
    if name == "bitwise_not" and dtype in FLOATS:
        return NotImplementedError, '"bitwise_not_cpu" not implemented for'
    return None


@pytest.mark.parametrize("dtype", ALL)
@pytest.mark.parametrize("name", list(UNARY))
def test_unary_vs_numpy(name, dtype, device):
    err = unary_error(name, dtype)
    if name == "abs" and dtype == "bool" and device == "cuda":
        err = None  # torch's CUDA abs has a bool kernel (the identity); its CPU one has not
    rng = np.random.default_rng(zlib.crc32(f"{name}{dtype}".encode()))
    if name in PREDICATES:
        rdt = "bool"
    elif name == "square" and dtype == "bool":
        rdt = "int64"  # torch's square is pow(x, 2)
    elif name in FLOAT_RESULT and dtype not in FLOATS:
        rdt = "float32"
    else:
        rdt = dtype
    for sa, _, how in LAYOUTS:
        ta, a = make(data(sa, dtype, rng), dtype, device, how)
        if err is not None:
            if device == "cpu" or err[0] is RuntimeError:
                with pytest.raises(err[0], match=re.escape(err[1])):
                    getattr(C, name)(ta)
            continue
        if rdt == "int64":
            a = a.astype(np.int64)
        elif rdt in FLOATS or dtype in FLOATS:
            a = a.astype(np.float64)
        with np.errstate(all="ignore"):
            want = UNARY[name](a)
        check(getattr(C, name)(ta), want, rdt)
        check(getattr(ta, name)(), want, rdt)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32", "float64"])
def test_special_float_values(dtype, device):
    vals = [float("nan"), float("inf"), -float("inf"), -0.0, 0.0, 1.5]
    t = C.tensor(vals, dtype=getattr(C, dtype), device=device)
    a = np.array(vals)
    np.testing.assert_array_equal(to_np(C.isnan(t)), np.isnan(a))
    np.testing.assert_array_equal(to_np(C.isinf(t)), np.isinf(a))
    np.testing.assert_array_equal(to_np(C.isfinite(t)), np.isfinite(a))
    other = C.tensor([1.0] * 6, dtype=getattr(C, dtype), device=device)
    # maximum/minimum propagate NaN like NumPy's.
    np.testing.assert_array_equal(to_np(C.maximum(t, other)), np.maximum(a, 1.0))
    np.testing.assert_array_equal(to_np(C.minimum(t, other)), np.minimum(a, 1.0))
    np.testing.assert_array_equal(to_np(t == t), a == a)
    np.testing.assert_array_equal(to_np(t != t), a != a)
    with np.errstate(all="ignore"):
        np.testing.assert_array_equal(to_np(-t), -a)
        check(C.sqrt(t), np.sqrt(a), dtype)
        check(t // 0, np.floor_divide(a, 0.0), dtype)
        check(C.exp(t), np.exp(a), dtype)


def test_operators_and_reflected(device):
    a = np.array([[1.5, -2.0, 3.0]])
    t = C.tensor(a, dtype=C.float64, device=device)
    for op in (operator.add, operator.sub, operator.mul, operator.truediv, operator.pow,
               operator.floordiv, operator.mod):  # fmt: skip
        np.testing.assert_allclose(to_np(op(t, 2)), op(a, 2))
        np.testing.assert_allclose(to_np(op(2, t)), op(2, a))
    np.testing.assert_array_equal(to_np(-t), -a)
    np.testing.assert_array_equal(to_np(abs(t)), abs(a))
    np.testing.assert_array_equal(to_np(+t), a)
    i = C.tensor([5, 6], device=device)
    np.testing.assert_array_equal(to_np(~i), ~np.array([5, 6]))
    np.testing.assert_array_equal(to_np(3 & i), 3 & np.array([5, 6]))
    np.testing.assert_array_equal(to_np(~C.tensor([True, False], device=device)), [False, True])


@pytest.mark.parametrize("dtype", ["float32", "float64", "bfloat16", "float16"])
def test_pow_half_exponents_are_sqrt_and_rsqrt(dtype, device):
    # torch computes x ** 0.5 as sqrt(x) and x ** -0.5 as rsqrt(x), which differ from pow at
    # -0.0 and -inf; its CPU float16 kernel is the exception and keeps pow.
    t = C.tensor([-0.0, -math.inf, 4.0, math.nan], dtype=getattr(C, dtype), device=device)
    as_pow = dtype == "float16" and device == "cpu"
    root = (t**0.5).tolist()
    assert root[0] == 0.0 and math.copysign(1.0, root[0]) == (1.0 if as_pow else -1.0)
    assert (root[1] == math.inf) if as_pow else math.isnan(root[1])
    assert root[2] == 2.0 and math.isnan(root[3])
    inv = C.pow(t, -0.5).tolist()
    assert inv[0] == (math.inf if as_pow else -math.inf)
    assert (inv[1] == 0.0) if as_pow else math.isnan(inv[1])
    assert inv[2] == 0.5 and math.isnan(inv[3])
    out = C.empty(0, dtype=C.float64, device=device)
    assert C.pow(t, 0.5, out=out).tolist()[2] == 2.0 and out.dtype is C.float64


# Which ops read a Python number at float precision in a 16-bit op (the rest round it to the
# tensor's dtype first), per device: torch 2.11, scripts/probe_scalar_precision.py.
_AT_FLOAT = {
    "cpu": {"mul", "div", "floor_divide"},
    "cuda": {"add", "sub", "mul", "div", "floor_divide"},
}


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
@pytest.mark.parametrize("op", ["add", "sub", "mul", "div", "floor_divide", "remainder", "lt"])
def test_numbers_in_16_bit_ops_are_read_at_torchs_precision(op, dtype, device):
    dt = getattr(C, dtype)
    x = C.tensor([1e-3, 0.25, 0.5, 1.0, 3.0, 7.5, -2.5, 100.0], dtype=dt, device=device)
    f = getattr(C, op)
    for s in (0.3, 1 / 3, 1e5, 1e-5, 7.0):
        at_float = op in _AT_FLOAT[device]
        n = s if at_float else C.tensor(s, dtype=dt).item()
        if op == "div" and device == "cuda":  # a multiply by the float reciprocal
            want = (x.float() * (1.0 / n)).to(f(x, s).dtype)
        else:
            want = f(x.float(), C.tensor(n, dtype=C.float32, device=device))
            want = want.to(dt) if want.is_floating_point() else want
        got = f(x, s)
        np.testing.assert_array_equal(to_np(got), to_np(want), err_msg=f"{op}({dtype}, {s})")
    # What it changes: the product is finite, where 1e5 rounded to half is inf.
    assert (C.zeros(2, dtype=dt, device=device) * 1e5).tolist() == [0.0, 0.0]


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32", "float64", "int64"])
def test_number_divided_by_tensor_is_reciprocal_times_number(dtype, device):
    # torch's __rtruediv__ is self.reciprocal() * other: two roundings, not one.
    x = C.tensor([3, 7, 9, 11, 13, -6], dtype=getattr(C, dtype), device=device)
    for s in (3, 0.3, 2.0):
        np.testing.assert_array_equal(to_np(s / x), to_np(x.reciprocal() * s))
    if dtype == "float32":
        assert (3 / C.tensor([7.0], device=device)).item() == np.float32(
            np.float32(1 / np.float32(7)) * np.float32(3)
        )


def test_integer_pow_and_division_semantics(device):
    a = C.tensor([5, -5, 7, -7], device=device)
    b = C.tensor([-2, 2, 3, -3], device=device)
    np.testing.assert_array_equal(
        to_np(a // b), np.array([5, -5, 7, -7]) // np.array([-2, 2, 3, -3])
    )
    np.testing.assert_array_equal(to_np(a % b), np.array([5, -5, 7, -7]) % np.array([-2, 2, 3, -3]))
    np.testing.assert_array_equal(
        to_np(a.div(2, rounding_mode="trunc")), np.trunc(np.array([5, -5, 7, -7]) / 2)
    )
    np.testing.assert_array_equal(
        to_np(a.div(2, rounding_mode="floor")), np.array([5, -5, 7, -7]) // 2
    )
    u = C.tensor([2], dtype=C.uint8, device=device)
    assert to_np(u**9).tolist() == (np.array([2], np.uint8) ** np.uint8(9)).tolist()
    assert (u - 3).tolist() == (np.array([2], np.uint8) - np.uint8(3)).tolist()


def test_div_rounding_mode_error():
    msg = "div expected rounding_mode to be one of None, 'trunc', or 'floor' but found 'bad'"
    with pytest.raises(RuntimeError, match=exact(msg)):
        C.tensor([1.0]).div(2, rounding_mode="bad")


# ---- errors ----


def err(exc, msg):
    return pytest.raises(exc, match=exact(msg))


SUB_TWO = (
    "Subtraction, the `-` operator, with two bool tensors is not supported. Use the `^` or "
    "`logical_xor()` operator instead."
)
SUB_ONE = (
    "Subtraction, the `-` operator, with a bool tensor is not supported. If you are trying to "
    "invert a mask, use the `~` or `logical_not()` operator instead."
)
NEG = (
    "Negation, the `-` operator, on a bool tensor is not supported. If you are trying to invert "
    "a mask, use the `~` or `logical_not()` operator instead."
)


def test_bool_arithmetic_errors():
    b = C.tensor([True, False])
    two, one, neg = SUB_TWO, SUB_ONE, NEG
    for call, msg in [
        (lambda: b - b, two), (lambda: b.sub_(b), two), (lambda: C.sub(b, b, alpha=2), two),
        (lambda: b - 1, one), (lambda: 1 - b, one), (lambda: C.tensor([1]) - b, one),
        (lambda: b - 1.5, one), (lambda: C.tensor([1]) - True, one),
        (lambda: -b, neg), (lambda: C.neg(b), neg), (lambda: b.neg_(), neg),
    ]:  # fmt: skip
        with err(RuntimeError, msg):
            call()
    # Bool addition and multiplication are logical or / and.
    assert (b + b).tolist() == [True, False] and (b * b).dtype is C.bool


def test_integer_division_by_zero_cpu():
    i8 = C.tensor([1], dtype=C.int8)
    for call in (lambda: C.tensor([1, 2]) // 0, lambda: C.tensor([1, 2]) % 0,
                 lambda: C.tensor([1, 2]) // C.tensor([1, 0]),
                 lambda: C.remainder(i8, C.zeros(1, dtype=C.int8))):  # fmt: skip
        with err(RuntimeError, "ZeroDivisionError"):
            call()
    # Nothing is divided when the result is empty: no error (as torch).
    assert (C.zeros(0, dtype=C.int16) // C.tensor([False])).shape == (0,)
    assert C.remainder(C.zeros(0, 3, dtype=C.int64), 0).shape == (0, 3)
    with np.errstate(all="ignore"):
        want = np.array([1.0, -1.0, 0.0]) // 0
    np.testing.assert_array_equal(to_np(C.tensor([1.0, -1.0, 0.0]) // 0), want)


def test_other_op_errors():
    with err(RuntimeError, "Integers to negative integer powers are not allowed."):
        C.tensor([2, 3]) ** -1
    with err(
        TypeError, "~ (operator.invert) is only implemented on integer and Boolean-type tensors"
    ):
        ~C.tensor([1.0])
    with err(NotImplementedError, "\"bitwise_and_cpu\" not implemented for 'Float'"):
        C.tensor([1.0]) & C.tensor([1.0])
    with err(
        RuntimeError,
        "For integral input tensors, argument alpha must not be a floating point number.",
    ):
        C.tensor([1, 2]).add_(1, alpha=0.5)
    with err(RuntimeError, "Boolean alpha only supported for Boolean results."):
        C.add(C.tensor([1, 2]), 2, alpha=True)
    msg = "The size of tensor a (2) must match the size of tensor b (3) at non-singleton dimension"
    with pytest.raises(RuntimeError, match=re.escape(msg)):
        C.tensor([1, 2]) + C.tensor([1, 2, 3])
    assert C.add(C.tensor([True]), C.tensor([True]), alpha=2).tolist() == [True]
    assert C.add(C.tensor([1, 2]), C.tensor([1, 1]), alpha=3).tolist() == [4, 5]


MUST = "(): argument '{}' (position {}) must be Tensor, not {}"
COMBO = "() received an invalid combination of arguments - got ({}), but expected one of:"


@pytest.mark.parametrize(
    "call, msg",
    [
        (lambda x: C.maximum(x, 2), "maximum" + MUST.format("other", 2, "int")),
        (lambda x: x.maximum(2), "maximum" + MUST.format("other", 1, "int")),
        (lambda x: C.maximum(2, x), "maximum" + MUST.format("input", 1, "int")),
        (lambda x: x.atan2(1.0), "atan2" + MUST.format("other", 1, "float")),
        (lambda x: C.logical_or(x, 1), "logical_or" + MUST.format("other", 2, "int")),
        (lambda x: x.logical_and_(1), "logical_and_" + MUST.format("other", 1, "int")),
        (lambda x: C.minimum(x, np.float32(1)),
         "minimum" + MUST.format("other", 2, "numpy.float32")),
        (lambda x: C.add(x, "a"), "add" + MUST.format("other", 2, "str")),
        (lambda x: x.add("a"), "add" + MUST.format("other", 1, "str")),
        (lambda x: x.sub(None), "sub" + MUST.format("other", 1, "NoneType")),
        (lambda x: C.eq(x, None), "eq" + COMBO.format("Tensor, NoneType")),
        (lambda x: x.remainder("a"), "remainder" + COMBO.format("str")),
        (lambda x: C.true_divide(x, "a"), "true_divide" + COMBO.format("Tensor, str")),
        (lambda x: x + "a", "unsupported operand type(s) for +: 'Tensor' and 'str'"),
        (lambda x: x < None, "'<' not supported between instances of 'Tensor' and 'NoneType'"),
    ],
)  # fmt: skip
def test_argument_type_errors(call, msg):
    with err(TypeError, msg):
        call(C.tensor([1.0, 2.0]))


def test_bitwise_into_a_floating_out(device):
    a = C.tensor([1, 6], device=device)
    out = C.empty(2, dtype=C.float32, device=device)
    if device == "cuda":  # torch's CUDA kernel runs in the out= dtype, which has none
        with pytest.raises(
            NotImplementedError, match="^\"bitwise_or_cuda\" not implemented for 'Float'$"
        ):
            C.bitwise_or(a, 3, out=out)
    else:
        assert C.bitwise_or(a, 3, out=out).tolist() == [3.0, 7.0]


# ---- erfinv and logit ----


def test_erfinv_values(device):
    # recorded from torch 2.11 (float64, CPU)
    y = [1 - 1e-15, 0.999999, -0.3, 1e-300, 0.7, -0.99, 1 - 2**-53, 0.0]
    want = [
        5.675915739744713,
        3.458910737275499,
        -0.2724627147267543,
        8.86226925452758e-301,
        0.7328690779592167,
        -1.8213863677184494,
        5.8635847487551676,
        0.0,
    ]
    got = C.erfinv(C.tensor(y, dtype=C.float64, device=device)).tolist()
    np.testing.assert_allclose(got, want, rtol=1e-14)
    edge = C.erfinv(C.tensor([-1.0, 1.0, 2.0, math.nan, -0.0], device=device))
    assert str(edge.tolist()) == "[-inf, inf, nan, nan, -0.0]"
    # erf(erfinv(y)) == y, in each floating dtype and from integers (as float32)
    for dtype, tol in ((C.float32, 1e-6), (C.float16, 2e-3), (C.bfloat16, 1e-2)):
        x = C.linspace(-0.99, 0.99, 41, device=device).to(dtype)
        r = C.erfinv(x)
        assert r.dtype == dtype
        back = [math.erf(v) for v in to_np(r.double())]
        np.testing.assert_allclose(back, to_np(x.double()), rtol=tol, atol=tol)
    r = C.tensor([0, 1], device=device).erfinv()
    assert r.dtype == C.float32 and r.tolist() == [0.0, math.inf]
    x = C.tensor([0.5, -0.5], device=device)
    assert x.erfinv_() is x and abs(x[0].item() - 0.4769362762044699) < 1e-6


def test_logit_values(device):
    x = C.tensor([0, 1.0, 2.0, -1, 0.5, 0.25], device=device)
    np.testing.assert_allclose(
        to_np(C.logit(x)), [-math.inf, math.inf, math.nan, math.nan, 0.0, -math.log(3)], rtol=1e-6
    )
    # eps clamps to [eps, 1 - eps]; a negative eps clamps nothing that matters
    lo = math.log(0.25 / 0.75)
    np.testing.assert_allclose(to_np(x.logit(0.25)), [lo, -lo, -lo, lo, 0.0, lo], rtol=1e-6)
    np.testing.assert_allclose(to_np(C.logit(x, eps=0.75)), [-lo, lo, lo, -lo, -lo, -lo], rtol=1e-6)
    got = to_np(C.logit(x, -0.25))
    assert math.isnan(got[2]) and math.isnan(got[3]) and got[0] == -math.inf
    for dtype, want in ((C.int64, C.float32), (C.float16, C.float16), (C.bfloat16, C.bfloat16)):
        r = C.logit(C.tensor([0, 1], device=device).to(dtype), 0.1)
        assert r.dtype == want
        np.testing.assert_allclose(to_np(r).astype(float), [-2.1972, 2.1972], rtol=1e-2)


def test_logit_out_and_inplace(device):
    x = C.tensor([0.3, 0.5], device=device)
    o = C.empty(0, dtype=C.float64, device=device)
    assert C.logit(x, out=o) is o and o.dtype == C.float64
    assert x.logit_(0.4) is x
    np.testing.assert_allclose(to_np(x), [math.log(0.4 / 0.6), 0.0], rtol=1e-6)
    assert C.logit_(C.tensor([0.5], device=device)).item() == 0.0
    msg = "^result type Float can't be cast to the desired output type Long$"
    with pytest.raises(RuntimeError, match=msg):
        C.tensor([1, 2], device=device).logit_()
    with pytest.raises(RuntimeError, match=msg):
        C.logit(x, out=C.empty(0, dtype=C.int64, device=device))
    with pytest.raises(TypeError):
        C.logit(x, eps="a")


def test_logit_gradient(device):
    x = C.tensor([0.2, 0.5, 0.7], dtype=C.float64, device=device, requires_grad=True)
    assert C.autograd.gradcheck(C.logit, (x,))
    assert C.autograd.gradcheck(lambda t: t.logit(0.1), (x,))
    assert C.autograd.gradgradcheck(C.logit, (x,))
    assert type(C.logit(x).grad_fn).__name__ == "LogitBackward0"
    # as torch: nan outside [0, 1] without eps, zero where eps clamped
    y = C.tensor([0, 1.0, 2.0, -1, 0.5, 0.1, 0.9], device=device, requires_grad=True)
    C.logit(y).sum().backward()
    np.testing.assert_allclose(
        to_np(y.grad), [math.inf, math.inf, math.nan, math.nan, 4.0, 1 / 0.09, 1 / 0.09], rtol=1e-5
    )
    y.grad = None
    y.logit(0.2).sum().backward()
    assert y.grad.tolist() == [0, 0, 0, 0, 4.0, 0, 0]
    z = C.tensor([0.25], device=device, requires_grad=True) * 1
    z.logit_()
    assert type(z.grad_fn).__name__ == "LogitBackward0"
    with pytest.raises(RuntimeError, match="^logit\\(\\): functions with out=... arguments"):
        C.logit(x, out=C.empty(0, dtype=C.float64, device=device))
