"""torch's type promotion: Python scalars and 0-dim tensors, and property tests of promotion
and broadcasting against NumPy."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import mutually_broadcastable_shapes

import cudalite as C
from conftest import to_np

NAMES = [
    "bool", "uint8", "int8", "int16", "int32", "int64",
    "float16", "bfloat16", "float32", "float64",
]  # fmt: skip


def t(dt, zero_dim=False):
    return C.tensor(1 if zero_dim else [1, 2], dtype=getattr(C, dt))


# (expression, dtype and values PyTorch 2.11 gives).
CASES = {
    "i32+2.5": (lambda: t("int32") + 2.5, "float32", [3.5, 4.5]),
    "u8+1000": (lambda: t("uint8") + 1000, "uint8", [233, 234]),
    "i64/2": (lambda: t("int64") / 2, "float32", [0.5, 1.0]),
    "i8/i8": (lambda: t("int8") / t("int8"), "float32", [1.0, 1.0]),
    "f16+1.5": (lambda: t("float16") + 1.5, "float16", [2.5, 3.5]),
    "bf16+1.5": (lambda: t("bfloat16") + 1.5, "bfloat16", [2.5, 3.5]),
    "b+b": (lambda: t("bool") + t("bool"), "bool", [True, True]),
    "b+1": (lambda: t("bool") + 1, "int64", [2, 2]),
    "b+1.5": (lambda: t("bool") + 1.5, "float32", [2.5, 2.5]),
    "b*True": (lambda: t("bool") * True, "bool", [True, True]),
    "0f64+i32": (lambda: t("float64", True) + t("int32"), "float64", [2.0, 3.0]),
    "0f64+f32": (lambda: t("float64", True) + t("float32"), "float32", [2.0, 3.0]),
    "0f64+f16": (lambda: t("float64", True) + t("float16"), "float16", [2.0, 3.0]),
    "0i64+i8": (lambda: t("int64", True) + t("int8"), "int8", [2, 3]),
    "0i64+0i8": (lambda: t("int64", True) + t("int8", True), "int64", 2),
    "0f32+i64": (lambda: t("float32", True) + t("int64"), "float32", [2.0, 3.0]),
    "0i32+b": (lambda: t("int32", True) + t("bool"), "int32", [2, 2]),
    "0b+i8": (lambda: t("bool", True) + t("int8"), "int8", [2, 3]),
    "i16+True": (lambda: t("int16") + True, "int16", [2, 3]),
    "f16+2": (lambda: t("float16") + 2, "float16", [3.0, 4.0]),
    "i32+np.f64": (lambda: t("int32") + np.float64(1.5), "float32", [2.5, 3.5]),
    "i32+np.i64": (lambda: t("int32") + np.int64(2), "int32", [3, 4]),
    "f32+np.f64": (lambda: t("float32") + np.float64(2.5), "float32", [3.5, 4.5]),
    "2.5+i16": (lambda: 2.5 + t("int16"), "float32", [3.5, 4.5]),
    "i64//2": (lambda: t("int64") // 2, "int64", [0, 1]),
    "i8**2": (lambda: t("int8") ** 2, "int8", [1, 4]),
    "i8**2.0": (lambda: t("int8") ** 2.0, "float32", [1.0, 4.0]),
    "2**i8": (lambda: 2 ** t("int8"), "int8", [2, 4]),
    "2.0**i8": (lambda: 2.0 ** t("int8"), "float32", [2.0, 4.0]),
    "u8-i8": (lambda: t("uint8") - t("int8"), "int16", [0, 0]),
    "bf16+f16": (lambda: t("bfloat16") + t("float16"), "float32", [2.0, 4.0]),
    "0f16+bf16": (lambda: t("float16", True) + t("bfloat16"), "bfloat16", [2.0, 3.0]),
    "u8==1000": (lambda: t("uint8") == 1000, "bool", [False, False]),
    "i32<2.5": (lambda: t("int32") < 2.5, "bool", [True, True]),
    "0f64*0i32": (lambda: t("float64", True) * t("int32", True), "float64", 1.0),
    "where f16": (lambda: C.where(t("bool") ^ t("bool", True), t("float16"), 2.5), "float16",
                  [2.5, 2.5]),
    "i8&1": (lambda: t("int8") & 1, "int8", [1, 0]),
    "b|2": (lambda: t("bool") | 2, "int64", [3, 3]),
    "atan2 i16": (lambda: C.atan2(t("int16"), t("int16")), "float32", [0.7853981852531433] * 2),
    "max(i8,u8)": (lambda: C.maximum(t("int8"), t("uint8")), "int16", [1, 2]),
}  # fmt: skip


@pytest.mark.parametrize("case", list(CASES))
def test_promotion_cases(case):
    fn, dtype, values = CASES[case]
    r = fn()
    assert r.dtype is getattr(C, dtype)
    assert r.tolist() == values


def test_default_dtype_for_integer_division():
    C.set_default_dtype(C.float64)
    assert (t("int32") / 2).dtype is C.float64
    assert (t("int32") + 2.5).dtype is C.float64
    assert C.sqrt(t("int64")).dtype is C.float64
    C.set_default_dtype(C.float32)


def test_result_type():
    assert C.result_type(t("int32"), 2.5) is C.float32
    assert C.result_type(t("uint8"), 1000) is C.uint8
    assert C.result_type(t("float64", True), t("int32")) is C.float64
    assert C.result_type(t("int8"), t("uint8")) is C.int16
    assert C.result_type(t("bool"), True) is C.bool


# ---- property tests ----

CATEGORY = {n: 0 if n == "bool" else 1 if n in NAMES[1:6] else 2 for n in NAMES}


def expected_dtype(a, b, a_zero_dim, b_zero_dim):
    """torch's rule: a 0-dim tensor only widens a dimensioned one of a lower category."""
    if a_zero_dim == b_zero_dim:
        return C.promote_types(getattr(C, a), getattr(C, b))
    dimmed, zero = (b, a) if a_zero_dim else (a, b)
    if CATEGORY[zero] > CATEGORY[dimmed]:
        return C.promote_types(getattr(C, dimmed), getattr(C, zero))
    return getattr(C, dimmed)


def scalar_dtype(tensor_dtype, scalar):
    """torch's rule for Python numbers: they widen only a tensor of a lower category."""
    kind = 0 if isinstance(scalar, bool) else 1 if isinstance(scalar, int) else 2
    if kind > CATEGORY[tensor_dtype]:
        return C.float32 if kind == 2 else C.int64
    return getattr(C, tensor_dtype)


def np_values(shape, dtype, rng):
    if dtype == "bool":
        return rng.random(shape) > 0.5
    if dtype == "uint8":
        return rng.integers(0, 10, shape)
    if dtype in NAMES[2:6]:
        return rng.integers(-8, 9, shape)
    return rng.integers(-16, 17, shape) * 0.5


def reference(op, a, b, rdt):
    """NumPy computing in the result dtype (bfloat16 and float16 via float64)."""
    rname = rdt._name
    ct = np.float64 if rname in ("float16", "bfloat16", "float32", "float64") else rname
    a = np.asarray(a).astype(ct)
    b = np.asarray(b).astype(ct)
    return {"add": np.add, "mul": np.multiply, "maximum": np.maximum}[op](a, b)


def compare(got, want, rdt):
    assert got.dtype is rdt
    g = to_np(got)
    assert g.shape == np.shape(want)
    if rdt.is_floating_point:
        np.testing.assert_allclose(g, np.asarray(want, dtype=np.float64), rtol=1e-2, atol=1e-2)
    else:
        np.testing.assert_array_equal(g, np.asarray(want).astype(g.dtype))


@settings(max_examples=60, deadline=None)
@given(
    shapes=mutually_broadcastable_shapes(num_shapes=2, max_dims=3, max_side=4),
    a=st.sampled_from(NAMES),
    b=st.sampled_from(NAMES),
    op=st.sampled_from(["add", "mul", "maximum"]),
    seed=st.integers(0, 2**16),
)
def test_property_tensor_tensor(shapes, a, b, op, seed):
    rng = np.random.default_rng(seed)
    sa, sb = shapes.input_shapes
    va, vb = np_values(sa, a, rng), np_values(sb, b, rng)
    ta = C.tensor(va, dtype=getattr(C, a))
    tb = C.tensor(vb, dtype=getattr(C, b))
    rdt = expected_dtype(a, b, len(sa) == 0, len(sb) == 0)
    assert C.result_type(ta, tb) is rdt
    got = getattr(C, op)(ta, tb)
    assert tuple(got.shape) == shapes.result_shape
    compare(got, reference(op, va, vb, rdt), rdt)


@settings(max_examples=60, deadline=None)
@given(
    shape=st.lists(st.integers(0, 4), max_size=3).map(tuple),
    a=st.sampled_from(NAMES),
    scalar=st.sampled_from([True, False, 0, 3, -2, 1.5, -0.5]),
    op=st.sampled_from(["add", "mul", "maximum"]),
    seed=st.integers(0, 2**16),
)
def test_property_tensor_scalar(shape, a, scalar, op, seed):
    if op == "maximum":
        op = "mul"  # maximum takes tensors only
    va = np_values(shape, a, np.random.default_rng(seed))
    ta = C.tensor(va, dtype=getattr(C, a))
    rdt = scalar_dtype(a, scalar)
    got = getattr(C, op)(ta, scalar)
    assert got.dtype is rdt
    assert C.result_type(ta, scalar) is rdt
    want = reference(op, va, np.full(shape, scalar), rdt)
    compare(got, want, rdt)
    compare(scalar * ta if op == "mul" else scalar + ta, want, rdt)  # reflected forms


@settings(max_examples=40, deadline=None)
@given(shapes=mutually_broadcastable_shapes(num_shapes=3, max_dims=3, max_side=3))
def test_property_broadcast_where(shapes):
    sc, sa, sb = shapes.input_shapes
    rng = np.random.default_rng(0)
    c = rng.random(sc) > 0.5
    a, b = rng.random(sa), rng.random(sb)
    got = C.where(C.tensor(c), C.tensor(a, dtype=C.float64), C.tensor(b, dtype=C.float64))
    np.testing.assert_array_equal(to_np(got), np.where(c, a, b))
    assert tuple(C.broadcast_shapes(sc, sa, sb)) == shapes.result_shape
