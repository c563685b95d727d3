"""The op registry (Note [The op registry], csrc/ops/ops.def): every row becomes a function, a
method, its in-place form and its aliases; every op x dtype x device computes what the row's
NumPy expression computes, in the dtype the row's result kind gives; every differentiable op
has a formula whose gradient matches finite differences."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

import cudalite
from conftest import to_np
from cudalite import _op_registry
from cudalite._op_registry import OPS
from cudalite.autograd import derivatives
from cudalite.autograd.functions import pointwise

DTYPES = [
    "bool",
    "uint8",
    "int8",
    "int16",
    "int32",
    "int64",
    "float16",
    "bfloat16",
    "float32",
    "float64",
]
FLOATING = {"float16", "bfloat16", "float32", "float64"}
IDS = [op.name for op in OPS]

# What torch does that the row's columns don't say (each also in test_ops.py): ops without a
# bool kernel, and square of bools, which is pow(x, 2) and promotes to int64.
NO_BOOL_KERNEL = {"sub", "floor_divide", "remainder", "pow", "relu", "floor", "ceil", "round"}
NO_BOOL_KERNEL |= {"trunc", "gcd", "lcm", "bitwise_left_shift", "bitwise_right_shift"}


def _loop_takes(loop, dtype):
    return {
        "all": True,
        "floating": dtype in FLOATING,
        "integral": dtype not in FLOATING,
        "not_bool": dtype != "bool",
    }[loop]


def _inputs(dtype, arity):
    """Values in each op's domain where that matters (divisors and exponents nonzero and
    small), with ties for round."""
    if dtype == "bool":
        x, y = [True, False, True, False], [True, True, False, False]
    elif dtype == "uint8":
        x, y = [0, 1, 2, 5, 6, 3], [1, 2, 3, 1, 2, 3]
    elif dtype in FLOATING:
        x = [-2.5, -1.25, -0.5, 0.0, 0.5, 0.75, 1.5, 2.5]
        y = [0.5, -1.5, 2.0, 1.25, -0.75, 3.0, 1.0, -2.0]
    else:
        x, y = [-3, -2, -1, 0, 1, 2, 3, 2], [1, 2, 3, 1, 2, 3, 1, 2]
    return (x,) if arity == 1 else (x, y)


def _numpy(op, args):
    env = {**vars(np), "math": math}
    names = dict(zip(("x", "y"), args, strict=False))
    with np.errstate(all="ignore"):
        try:
            return np.asarray(eval(op.numpy, env, names))
        except TypeError:  # NumPy has no bool loop for some ufuncs (sign): as uint8
            names = {k: v.astype(np.uint8) for k, v in names.items()}
            return np.asarray(eval(op.numpy, env, names))


def _call(op, device, dtype):
    dt = getattr(cudalite, dtype)
    ts = [cudalite.tensor(v, dtype=dt, device=device) for v in _inputs(dtype, op.arity)]
    return ts, getattr(cudalite, op.name)(*ts)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("op", OPS, ids=IDS)
def test_op_vs_numpy(device, op, dtype):
    compute = dtype
    if op.result == "float" and dtype not in FLOATING and not op.int_identity:
        compute = "float32"  # the default dtype
    identity = op.int_identity and dtype not in FLOATING and dtype != "bool"
    raises = not (identity or _loop_takes(op.loop, compute))
    raises = raises or (dtype == "bool" and op.name in NO_BOOL_KERNEL)
    if op.name == "abs" and dtype == "bool":
        raises = device == "cpu"  # torch's CUDA abs of bools is the identity
    if raises:
        with pytest.raises((NotImplementedError, RuntimeError)):
            _call(op, device, dtype)
        return
    ts, r = _call(op, device, dtype)
    if identity:
        expected_dtype = dtype
    elif op.result == "bool":
        expected_dtype = "bool"
    elif op.name == "square" and dtype == "bool":
        expected_dtype = "int64"
    else:
        expected_dtype = compute
    assert r.dtype == getattr(cudalite, expected_dtype)
    assert r.device.type == device
    if identity:
        np.testing.assert_array_equal(to_np(r), to_np(ts[0]))
        return
    if not op.numpy:
        pytest.skip("no NumPy expression in the row")
    # NumPy computes from the inputs as cudalite holds them, converted to the compute dtype
    # (16-bit floats in float32, as the kernels do).
    np_dtype = "float32" if compute in ("float16", "bfloat16") else compute
    args = [to_np(t).astype(np_dtype) for t in ts]
    expected = _numpy(op, args)
    got = to_np(r)
    if expected_dtype in FLOATING:
        tol = {"float16": 2e-3, "bfloat16": 1.6e-2, "float32": 2e-6, "float64": 1e-12}
        rtol = tol[expected_dtype]
        np.testing.assert_allclose(
            got.astype(np.float64),
            expected.astype(np.float64),
            rtol=rtol,
            atol=rtol,
            equal_nan=True,
        )
    else:
        np.testing.assert_array_equal(got, expected.astype(got.dtype))


@pytest.mark.parametrize("op", OPS, ids=IDS)
def test_each_row_is_a_function_method_and_inplace_form(op):
    fn = getattr(cudalite, op.name)
    assert callable(fn)
    assert callable(getattr(cudalite.Tensor, op.name))
    assert hasattr(cudalite.Tensor, op.name + "_") == op.inplace
    for alias in op.aliases:
        assert callable(getattr(cudalite, alias))
        assert hasattr(cudalite.Tensor, alias)
        assert hasattr(cudalite.Tensor, alias + "_") == op.inplace
        x = cudalite.tensor([0.25, 1.5, 2.0])
        args = (x,) if op.arity == 1 else (x, x + 1)
        np.testing.assert_array_equal(to_np(getattr(cudalite, alias)(*args)), to_np(fn(*args)))


@pytest.mark.parametrize("op", [op for op in OPS if op.inplace], ids=lambda op: op.name)
def test_inplace_form_writes_into_self(device, op):
    if op.loop == "integral":
        x = cudalite.tensor([1, 6, 2, 5], device=device)
    else:
        x = cudalite.tensor([0.25, 1.5, 2.0, 0.75], device=device)
    args = (x.clone(),) if op.arity == 1 else (x.clone(), x + 1)
    expected = getattr(cudalite, op.name)(*args).to(x.dtype)
    target = args[0]
    assert getattr(target, op.name + "_")(*args[1:]) is target
    np.testing.assert_array_equal(to_np(target), to_np(expected))


@pytest.mark.parametrize("op", [op for op in OPS if op.tensor_only], ids=lambda op: op.name)
def test_tensor_only_ops_refuse_numbers(op):
    with pytest.raises(TypeError, match="must be Tensor"):
        getattr(cudalite, op.name)(cudalite.tensor([1.0]), 2)


def test_every_differentiable_op_has_one_formula():
    grad = {op.name for op in OPS if op.grad}
    formulas = set(derivatives.UNARY) | set(derivatives.BINARY)
    recorded = set(pointwise.BINARY_RECORDERS) | {"square"}  # square is recorded as pow
    assert formulas <= grad, "a formula for an op the registry doesn't mark Grad"
    assert grad <= formulas | recorded, "a Grad op without a formula"
    assert not set(derivatives.UNARY) & set(derivatives.BINARY)


def test_node_names_follow_torch():
    assert derivatives.node_name("log1p") == "Log1PBackward0"
    assert derivatives.node_name("atan2") == "Atan2Backward0"
    x = cudalite.tensor([0.5, 1.5], requires_grad=True)
    assert cudalite.hypot(x, x + 1).grad_fn.name() == "HypotBackward0"
    assert x.erfc().grad_fn.name() == "ErfcBackward0"
    assert x.expm1().grad_fn.name() == "Expm1Backward0"


_GRAD_X = [0.3, 0.7, 1.4, 2.2]
_GRAD_Y = [1.1, 0.2, 2.3, 0.9]
# Ops defined on part of the line: x inside their domain.
_GRAD_DOMAIN = {
    "asin": lambda x: x * 0.4,
    "acos": lambda x: x * 0.4,
    "atanh": lambda x: x * 0.4,
    "acosh": lambda x: x + 1.1,
    "erfinv": lambda x: x * 0.4,
    "_zeta": lambda x: x + 1.5,  # zeta(x, q) is finite for x > 1
}
# Ops without a derivative for their first operand (torch's special.zeta, igamma, igammac).
_NO_SELF_GRAD = {"_zeta", "igamma", "igammac"}


@pytest.mark.parametrize(
    "op", [op for op in OPS if op.grad and op.name != "floor_divide"], ids=lambda op: op.name
)
def test_gradient_matches_finite_differences(device, op):
    # Away from kinks and discontinuities (x != y, x / y not an integer, x > 0).
    xs = [_GRAD_DOMAIN.get(op.name, lambda v: v)(v) for v in _GRAD_X]
    rg = op.name not in _NO_SELF_GRAD
    x = cudalite.tensor(xs, dtype=cudalite.float64, device=device, requires_grad=rg)
    args = (x,)
    if op.arity == 2:
        y = cudalite.tensor(_GRAD_Y, dtype=cudalite.float64, device=device, requires_grad=True)
        args = (x, y)
    assert cudalite.autograd.gradcheck(getattr(cudalite, op.name), args)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32", "float64"])
def test_signbit_reads_the_sign_of_zeros_and_nans(device, dtype):
    values = [-0.0, 0.0, -1.5, 2.0, -np.inf, np.inf, -np.nan]
    expected = [True, False, True, False, True, False, True]
    if device == "cuda" and dtype in ("float16", "bfloat16"):
        # CUDA's float -> 16-bit conversions (__float2half_rn, as torch's) make every NaN the
        # canonical positive one: the sign of -nan does not survive the cast.
        values, expected = values[:-1], expected[:-1]
    x = cudalite.from_numpy(np.array(values, dtype=np.float32))
    x = x.to(device=device, dtype=getattr(cudalite, dtype))
    assert cudalite.signbit(x).tolist() == expected


def test_zeta_has_no_derivative_for_its_first_operand():
    x = cudalite.tensor([2.5, 3.0], requires_grad=True)
    with pytest.raises(NotImplementedError, match="the derivative for 'zeta' is not implemented"):
        cudalite._zeta(x, 1.5).sum().backward()


def test_floor_divide_has_no_derivative():
    x = cudalite.tensor([1.5, 2.5], requires_grad=True)
    with pytest.raises(RuntimeError, match="the derivative for 'floor_divide' is not implemented"):
        cudalite.floor_divide(x, 2.0).sum().backward()


def test_ops_md_lists_the_registry():
    """docs/ops.md is generated from the registry (scripts/gen_ops_md.py)."""
    import importlib.util

    root = Path(__file__).resolve().parent.parent
    spec = importlib.util.spec_from_file_location("gen_ops_md", root / "scripts/gen_ops_md.py")
    gen = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(gen)
    assert (root / "docs/ops.md").read_text() == gen.markdown(_op_registry.OPS), (
        "docs/ops.md is out of date: run python scripts/gen_ops_md.py"
    )
