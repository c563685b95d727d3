"""where, clamp, equal/allclose/isclose, cat and stack against NumPy, with torch's errors."""

from __future__ import annotations

import math
import re

import numpy as np
import pytest

import cudalite as C
from conftest import exact, to_np


def err(exc, msg):
    return pytest.raises(exc, match=exact(msg))


# ---- where ----


@pytest.mark.parametrize(
    "cond_shape, a_shape, b_shape",
    [((4,), (4,), (4,)), ((3, 1), (1, 4), ()), ((2, 3), (3,), (2, 1))],
)
def test_where_vs_numpy(cond_shape, a_shape, b_shape, device):
    rng = np.random.default_rng(0)
    c = rng.random(cond_shape) > 0.5
    a = rng.integers(-5, 5, a_shape)
    b = rng.random(b_shape)
    got = C.where(
        C.tensor(c, device=device), C.tensor(a, device=device), C.tensor(b, device=device)
    )
    # int64 with float64: float64.
    assert got.dtype is C.float64
    np.testing.assert_array_equal(to_np(got), np.where(c, a, b))


def test_where_scalars_and_method(device):
    c = C.tensor([True, False], device=device)
    r = C.where(c, 1, 2.5)
    assert r.dtype is C.float32 and r.tolist() == [1.0, 2.5]
    x = C.tensor([1, 2], device=device)
    assert x.where(c, 0).tolist() == [1, 0]
    assert C.where(c, C.tensor([1, 2], dtype=C.int8, device=device), 3).dtype is C.int8
    assert (
        C.where(
            c,
            C.tensor([1.0, 2.0], device=device),
            C.tensor([3.5, 4.0], dtype=C.float64, device=device),
        ).dtype
        is C.float64
    )
    # One argument: the indices of the nonzero elements.
    (idx,) = C.where(C.tensor([0, 3, 0, 5], device=device) != 0)
    np.testing.assert_array_equal(to_np(idx), np.nonzero([0, 3, 0, 5])[0])


def test_where_errors():
    c = C.tensor([True, False])
    with err(
        RuntimeError,
        "where expected condition to be a boolean tensor, but got a tensor with dtype Long",
    ):
        C.where(C.tensor([1, 0]), 1, 2)
    with pytest.raises(
        RuntimeError,
        match=re.escape("The size of tensor a (2) must match the size of tensor b (3)"),
    ):
        C.where(c, C.tensor([1, 2]), C.tensor([1, 2, 3]))
    with err(RuntimeError, "value cannot be converted to type int8_t without overflow"):
        C.where(c, C.tensor([1, 2], dtype=C.int8), 300)


# ---- clamp ----


@pytest.mark.parametrize("lo, hi", [(2, 6), (2.5, None), (None, 6), (4, 2), (-1.5, 1.5)])
@pytest.mark.parametrize("dtype", ["int64", "int32", "float32", "float64"])
def test_clamp_vs_numpy(lo, hi, dtype, device):
    a = np.array([[1, 5, 9], [-3, 0, 4]], dtype=dtype)
    t = C.tensor(a, device=device)
    got = C.clamp(t, lo, hi)
    floats = any(isinstance(v, float) for v in (lo, hi))
    want_dtype = "float32" if floats and dtype.startswith("int") else dtype
    assert got.dtype is getattr(C, want_dtype)
    want = a.astype(np.float64)
    if lo is not None:
        want = np.maximum(want, lo)
    if hi is not None:
        want = np.minimum(want, hi)  # min after max: hi wins when lo > hi, as in torch
    np.testing.assert_array_equal(to_np(got), want.astype(want_dtype))
    np.testing.assert_array_equal(to_np(t.clamp(lo, hi)), want.astype(want_dtype))
    np.testing.assert_array_equal(to_np(C.clip(t, lo, hi)), want.astype(want_dtype))


def test_clamp_tensor_bounds_inplace_and_nan(device):
    t = C.tensor([1, 5, 9], device=device)
    lo = C.tensor([2, 2, 2], device=device)
    hi = C.tensor([3], device=device)
    np.testing.assert_array_equal(to_np(C.clamp(t, lo, hi)), np.clip([1, 5, 9], 2, 3))
    f = C.tensor([1.0, 5.0, 9.0], device=device)
    assert f.clamp_(max=2) is f and f.tolist() == [1.0, 2.0, 2.0]
    n = C.clamp(C.tensor([1.0, float("nan")], device=device), 0, 0.5)
    np.testing.assert_array_equal(to_np(n), np.clip(np.array([1.0, np.nan], np.float32), 0, 0.5))
    o = C.empty(3, device=device)
    assert C.clamp(C.tensor([1.0, 5.0, 9.0], device=device), 2, 6, out=o) is o
    assert o.tolist() == [2.0, 5.0, 6.0]


def test_clamp_errors():
    with err(RuntimeError, "cudalite.clamp: At least one of 'min' or 'max' must not be None"):
        C.clamp(C.tensor([1, 5, 9]))
    with err(RuntimeError, "result type Float can't be cast to the desired output type long int"):
        C.tensor([1, 5, 9]).clamp_(2.5, 6)


_CLAMP = "{}() received an invalid combination of arguments - got ({}), but expected one of:"


def test_clamp_one_tensor_bound_and_one_number_is_a_type_error(device):
    # torch's clamp takes both bounds as tensors or both as numbers, never one of each.
    x = C.tensor([1.0, 5.0, 9.0], device=device)
    m = C.tensor([2.0, 2.0, 2.0], device=device)
    M = C._tensor._methods
    for call, name, got in [
        (lambda: C.clamp(x, m, 6), "clamp", "Tensor, Tensor, int"),
        (lambda: C.clamp(x, 2, m), "clamp", "Tensor, int, Tensor"),
        (lambda: C.clamp(x, m, 6, out=C.empty(3)), "clamp", "Tensor, Tensor, int, out=Tensor"),
        (lambda: C.clamp(x, m, True), "clamp", "Tensor, Tensor, bool"),
        (lambda: C.clamp(x, "a", 6), "clamp", "Tensor, str, int"),
        # The methods (as the foundation defines them: once armed, autograd's wrappers call
        # clamp for clip too).
        (lambda: M["clamp"](x, m, 6), "clamp", "Tensor, int"),
        (lambda: M["clamp"](x, 2.5, m), "clamp", "float, Tensor"),
        (lambda: M["clamp_"](x.clone(), m, 6), "clamp_", "Tensor, int"),
        (lambda: M["clip"](x, m, 6), "clip", "Tensor, int"),
        (lambda: x.clamp(m, 6), "clamp", "Tensor, int"),
    ]:
        with err(TypeError, _CLAMP.format(name, got)):
            call()
    # The keyword forms raise the same TypeError (torch lists the keywords by name).
    prefix = re.escape("clamp() received an invalid combination of arguments - got (")
    with pytest.raises(TypeError, match=f"^{prefix}"):
        C.clamp(x, min=m, max=6)
    with pytest.raises(TypeError, match=f"^{prefix}"):
        x.clamp(min=m, max=6.5)
    assert x.tolist() == [1.0, 5.0, 9.0]
    assert C.clamp(x, m, None).tolist() == x.clamp(min=m).tolist() == [2.0, 5.0, 9.0]


def test_clamp_bounds_must_fit_the_result_dtype(device):
    u = C.zeros(2, dtype=C.uint8, device=device)
    for call in (lambda: u.clamp(-1, 300), lambda: u.clamp(max=300), lambda: u.clamp_(-256, 3)):
        with err(RuntimeError, "value cannot be converted to type uint8_t without overflow"):
            call()
    assert u.tolist() == [0, 0]  # nothing written
    assert u.clamp(-1, 3).tolist() == [3, 3]  # -1 wraps to 255, as in torch
    with err(RuntimeError, "value cannot be converted to type c10::Half without overflow"):
        C.zeros(2, dtype=C.float16, device=device).clamp(max=1e10)
    assert u.clamp(2.5, 3).tolist() == [2.5, 2.5]  # a float bound promotes


def test_clamp_with_one_nan_bound_keeps_the_input(device):
    # torch's clamp_min / clamp_max ignore a nan bound; with both bounds nan propagates.
    x = C.tensor([0.0, 2.0], device=device)
    assert x.clamp(float("nan")).tolist() == [0.0, 2.0]
    assert x.clamp(max=float("nan")).tolist() == [0.0, 2.0]
    assert all(math.isnan(v) for v in x.clamp(float("nan"), 1.0).tolist())
    i = C.tensor([1, 2], dtype=C.int8, device=device).clamp(float("nan"))
    assert i.dtype == C.float32 and i.tolist() == [1.0, 2.0]
    o = C.empty(2, device=device)
    assert C.clamp(x, min=float("nan"), out=o) is o and o.tolist() == [0.0, 2.0]


def test_masked_fill_checks_like_torch(device):
    x = C.zeros(2, dtype=C.int8, device=device)
    m = C.tensor([True, False], device=device)
    for v in (float("nan"), float("inf"), 1000, C.tensor(float("nan"))):
        with err(RuntimeError, "value cannot be converted to type int8_t without overflow"):
            x.masked_fill(m, v)
        with err(RuntimeError, "value cannot be converted to type int8_t without overflow"):
            x.masked_fill_(m, v)
    assert x.tolist() == [0, 0]
    assert x.masked_fill(m, 2.5).tolist() == [2, 0]
    with err(RuntimeError, "value cannot be converted to type c10::Half without overflow"):
        C.zeros(2, dtype=C.float16, device=device).masked_fill_(m, 1e10)
    with err(
        RuntimeError, "masked_fill_ only supports boolean masks, but got mask with dtype long int"
    ):
        x.masked_fill(C.tensor([1, 0], device=device), 1)
    with err(
        RuntimeError,
        "masked_fill_ only supports a 0-dimensional value tensor, but got tensor with 1 "
        "dimension(s).",
    ):
        x.masked_fill(m, C.tensor([1, 2], dtype=C.int8, device=device))
    with err(RuntimeError, "output with shape [2] doesn't match the broadcast shape [3, 2]"):
        x.masked_fill_(C.zeros(3, 2, dtype=C.bool, device=device), 1)
    assert x.masked_fill(C.zeros(3, 2, dtype=C.bool, device=device), 1).shape == (3, 2)


def test_lerp_like_torch(device):
    a = C.tensor([1.0, 2.0], device=device)
    b = C.tensor([3.0, 5.0], device=device)
    assert a.lerp(b, 0.25).tolist() == [1.5, 2.75]
    assert a.lerp(b, 1.0).tolist() == [3.0, 5.0]  # end exactly: end - (end - a) * (1 - w)
    assert a.lerp(b, 2).tolist() == [5.0, 8.0]
    w = C.tensor([0.25, 1.0], device=device)
    assert a.lerp(b, w).tolist() == [1.5, 5.0]
    h = C.zeros(2, dtype=C.float16, device=device).lerp(
        C.ones(2, dtype=C.float16, device=device), 0.3
    )
    assert h.dtype == C.float16 and h.tolist() == [C.tensor(0.3, dtype=C.float16).item()] * 2
    with err(NotImplementedError, "\"lerp_kernel_scalar\" not implemented for 'Int'"):
        C.zeros(2, dtype=C.int32, device=device).lerp(C.zeros(2, dtype=C.int32, device=device), 0.5)
    with err(NotImplementedError, "\"lerp_kernel_tensor\" not implemented for 'Byte'"):
        u = C.zeros(2, dtype=C.uint8, device=device)
        u.lerp(u, u)
    with err(RuntimeError, "expected dtype float for `end` but got dtype double"):
        a.lerp(b.double(), 0.5)
    with err(RuntimeError, "expected dtype float for `weight` but got dtype double"):
        a.lerp(b, w.double())
    with err(
        RuntimeError,
        "The size of tensor a (2) must match the size of tensor b (3) at non-singleton dimension 0",
    ):
        a.lerp(C.zeros(3, device=device), 0.5)


# ---- equal / allclose / isclose ----


def test_equal():
    a = C.tensor([1.0, 2.0, float("nan")])
    assert C.equal(a, a) is False  # NaN != NaN
    assert C.equal(C.tensor([1, 2]), C.tensor([1.0, 2.0])) is True
    assert C.equal(C.tensor([1, 2]), C.tensor([1, 2, 3])) is False
    assert C.equal(C.tensor([1, 2]), C.tensor([[1, 2]])) is False
    assert C.tensor([1, 2]).equal(C.tensor([1, 2])) is True
    assert C.equal(C.zeros(0), C.zeros(0)) is True


@pytest.mark.parametrize(
    "a, b, kw",
    [
        ([1.0, 2.0], [1.0, 2.000001], {}),
        ([1.0, 2.0, np.nan], [1.0, 2.0, np.nan], {}),
        ([1.0, 2.0, np.nan], [1.0, 2.0, np.nan], {"equal_nan": True}),
        ([1.0, np.inf, -np.inf], [1.1, np.inf, np.inf], {"rtol": 0.2}),
        ([1.0, 2.0], [1.5, 2.5], {"atol": 0.5}),
        ([1.0, 2.0], [1.0], {}),
        ([100.0, 0.0], [101.0, 1e-9], {"rtol": 0.01}),
    ],
)
def test_isclose_allclose_vs_numpy(a, b, kw, device):
    ta = C.tensor(a, dtype=C.float64, device=device)
    tb = C.tensor(b, dtype=C.float64, device=device)
    np.testing.assert_array_equal(to_np(C.isclose(ta, tb, **kw)), np.isclose(a, b, **kw))
    assert C.allclose(ta, tb, **kw) is bool(np.allclose(a, b, **kw))
    assert ta.allclose(tb, **kw) is bool(np.allclose(a, b, **kw))


def test_isclose_integers_use_the_tolerances(device):
    # As torch: integers and bools are compared in the default dtype, without wrap-around
    # (torch 2.11's results for the same calls).
    def close(a, b, dtype=C.int64, **kw):
        ta, tb = (C.tensor(x, dtype=dtype, device=device) for x in (a, b))
        return C.isclose(ta, tb, **kw).tolist()

    assert close([1, 2, 3], [1, 2, 4], rtol=0.5, atol=1) == [True, True, True]
    assert close([1, 2, 3], [1, 2, 4], rtol=0.1, atol=0.1) == [True, True, False]
    assert close([100], [-100], C.int8, rtol=0, atol=199) == [False]
    assert close([100], [-100], C.int8, rtol=0, atol=200) == [True]
    assert close([0], [255], C.uint8, rtol=0, atol=2) == [False]
    assert close([True, False], [False, False], C.bool, rtol=0, atol=1) == [True, True]
    assert close([2**24 + 1], [2**24], rtol=0, atol=0.5) == [True]  # in float32
    assert close([2**24 + 1], [2**24], rtol=0, atol=0) == [False]


def test_isclose_integers_and_errors():
    np.testing.assert_array_equal(
        to_np(C.isclose(C.tensor([1, 2]), C.tensor([1, 3]))), np.isclose([1, 2], [1, 3])
    )
    assert C.isclose(C.tensor([True]), C.tensor([True])).tolist() == [True]
    with err(RuntimeError, "Float did not match Long"):
        C.isclose(C.tensor([1.0, 2.0]), C.tensor([1, 2]))
    with err(RuntimeError, "Float did not match Long"):
        C.allclose(C.tensor([1.0, 2.0]), C.tensor([1, 2]))
    with err(RuntimeError, "rtol must be greater than or equal to zero, but got -1"):
        C.isclose(C.tensor([1.0]), C.tensor([1.0]), rtol=-1)
    with err(RuntimeError, "atol must be greater than or equal to zero, but got -1.5"):
        C.isclose(C.tensor([1.0]), C.tensor([1.0]), atol=-1.5)
    with pytest.raises(
        RuntimeError,
        match=re.escape("The size of tensor a (2) must match the size of tensor b (3)"),
    ):
        C.allclose(C.tensor([1.0, 2.0]), C.tensor([1.0, 2.0, 3.0]))


# ---- cat / stack ----


@pytest.mark.parametrize(
    "shapes, dim",
    [
        ([(2, 3), (1, 3)], 0),
        ([(2, 3), (2, 1)], 1),
        ([(2, 3), (2, 1), (2, 2)], -1),
        ([(4,), (0,)], 0),
        ([(2, 0), (2, 3)], 1),
        ([(1, 2, 3), (1, 2, 3)], 2),
    ],
)
def test_cat_vs_numpy(shapes, dim, device):
    rng = np.random.default_rng(1)
    arrs = [rng.integers(0, 9, s) for s in shapes]
    got = C.cat([C.tensor(a, device=device) for a in arrs], dim)
    np.testing.assert_array_equal(to_np(got), np.concatenate(arrs, dim))
    got = C.concat(tuple(C.tensor(a, device=device) for a in arrs), dim=dim)
    np.testing.assert_array_equal(to_np(got), np.concatenate(arrs, dim))


def test_cat_promotion_views_and_out(device):
    a = C.ones(2, device=device)
    assert C.cat([a, C.ones(2, dtype=C.int64, device=device)]).dtype is C.float32
    assert C.cat([C.ones(2, dtype=C.int8), C.ones(2, dtype=C.uint8)]).dtype is C.int16
    # Legacy: a 1-D empty tensor joins anything.
    assert C.cat([C.ones(2, 3, device=device), C.zeros(0, device=device)]).shape == (2, 3)
    x = C.arange(12, device=device).reshape(3, 4)
    np.testing.assert_array_equal(
        to_np(C.cat([x.t(), x[:, ::2].t()])),
        np.concatenate([np.arange(12).reshape(3, 4).T, np.arange(12).reshape(3, 4)[:, ::2].T]),
    )
    o = C.empty(0, device=device)
    assert C.cat([C.ones(2, 3, device=device), C.zeros(2, 1, device=device)], dim=1, out=o) is o
    assert o.shape == (2, 4)


def test_cat_errors():
    with err(
        RuntimeError,
        "Sizes of tensors must match except in dimension 0. Expected size 3 but got size 1 for "
        "tensor number 1 in the list.",
    ):
        C.cat([C.ones(2, 3), C.zeros(2, 1)])
    with err(RuntimeError, "Tensors must have same number of dimensions: got 2 and 1"):
        C.cat([C.ones(2, 3), C.zeros(2)])
    with err(ValueError, "cudalite.cat(): expected a non-empty list of Tensors"):
        C.cat([])
    with err(IndexError, "Dimension out of range (expected to be in range of [-1, 0], but got 2)"):
        C.cat([C.ones(2)], dim=2)
    with err(RuntimeError, "zero-dimensional tensor (at position 0) cannot be concatenated"):
        C.cat([C.tensor(1.0), C.tensor(2.0)])
    with err(TypeError, "expected Tensor as element 1 in argument 0, but got int"):
        C.cat([C.ones(2, 3), 1])


@pytest.mark.parametrize("dim", [0, 1, -1, 2, -3])
def test_stack_vs_numpy(dim, device):
    rng = np.random.default_rng(2)
    arrs = [rng.random((2, 3)) for _ in range(3)]
    got = C.stack([C.tensor(a, device=device) for a in arrs], dim)
    np.testing.assert_array_equal(to_np(got), np.stack(arrs, dim))


def test_stack_promotion_and_scalars(device):
    assert C.stack([C.ones(2), C.ones(2, dtype=C.int64)]).dtype is C.float32
    s = C.stack([C.tensor(1.0, device=device), C.tensor(2.0, device=device)])
    assert s.shape == (2,) and s.tolist() == [1.0, 2.0]


def test_stack_errors():
    with err(
        RuntimeError,
        "stack expects each tensor to be equal size, but got [2] at entry 0 and [3] at entry 1",
    ):
        C.stack([C.ones(2), C.zeros(3)])
    with err(RuntimeError, "stack expects a non-empty TensorList"):
        C.stack([])
    with err(IndexError, "Dimension out of range (expected to be in range of [-2, 1], but got 3)"):
        C.stack([C.ones(2)], dim=3)


def test_cat_out_writes_into_out(device):
    a, b = C.arange(3.0, device=device), C.arange(2.0, device=device)
    o = C.zeros(2, 5, dtype=C.float64, device=device)
    view = o[0]
    assert C.cat([a, b], out=view) is view
    assert o.tolist() == [[0.0, 1.0, 2.0, 0.0, 1.0], [0.0] * 5]  # in o's memory, as float64
    s = C.zeros(10, device=device)
    C.cat([a, b], out=s[::2])
    assert s.tolist() == [0.0, 0.0, 1.0, 0.0, 2.0, 0.0, 0.0, 0.0, 1.0, 0.0]
    with err(TypeError, "torch.cat(): input types can't be cast to the desired output type Long"):
        C.cat([a, b], out=C.zeros(5, dtype=C.int64, device=device))
    with pytest.warns(UserWarning, match="An output with one or more elements was resized"):
        r = C.cat([a, b], out=C.zeros(6, device=device))
    assert r.shape == (5,)
