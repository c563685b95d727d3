"""cumsum and cumprod (cudalite._tensor_scan) against NumPy: every dtype, result dtypes, dims,
layouts, long lines (the GPU's segmented path), 0-size and 0-dim inputs, and torch's errors."""

from __future__ import annotations

import numpy as np
import pytest

import cudalite as C
from conftest import exact, to_np

DTYPES = [
    C.bool,
    C.uint8,
    C.int8,
    C.int16,
    C.int32,
    C.int64,
    C.float16,
    C.bfloat16,
    C.float32,
    C.float64,
]
TOL = {C.float16: 2e-3, C.bfloat16: 1.6e-2, C.float32: 1e-5, C.float64: 1e-12}


def rand(shape, dtype, device, seed=0, lo=-3, hi=4):
    rng = np.random.default_rng(seed)
    if dtype == C.bool:
        a = rng.random(shape) < 0.5
    elif dtype.is_floating_point:
        a = rng.uniform(0.5, 1.5, shape) * rng.choice([-1, 1], shape)
    else:
        a = rng.integers(0 if dtype == C.uint8 else lo, hi, shape)
    return C.tensor(a, dtype=dtype, device=device)


def check(r, want, dtype, atol=None):
    assert r.dtype == dtype
    got = to_np(r)
    if dtype.is_floating_point:
        tol = TOL[dtype]
        atol = tol if atol is None else atol
        np.testing.assert_allclose(got.astype(np.float64), want, rtol=tol, atol=atol)
    else:
        np.testing.assert_array_equal(got, want.astype(got.dtype))


@pytest.mark.parametrize("dtype", DTYPES)
def test_cumsum_dtypes(device, dtype):
    x = rand((3, 5, 4), dtype, device)
    out_dtype = dtype if dtype.is_floating_point else C.int64
    for dim in (0, 1, 2, -1):
        want = np.cumsum(to_np(x).astype(np.float64), axis=dim)
        check(x.cumsum(dim), want, out_dtype)
        check(C.cumsum(x, dim), want, out_dtype)


@pytest.mark.parametrize("dtype", DTYPES)
def test_cumprod_dtypes(device, dtype):
    x = rand((3, 5, 4), dtype, device, lo=-2, hi=3)
    out_dtype = dtype if dtype.is_floating_point else C.int64
    for dim in (0, 1, -1):
        want = np.cumprod(to_np(x).astype(np.float64), axis=dim)
        check(x.cumprod(dim), want, out_dtype)
        check(C.cumprod(x, dim), want, out_dtype)


def test_dtype_argument(device):
    x = rand((4, 3), C.int32, device)
    r = x.cumsum(0, dtype=C.int32)
    check(r, np.cumsum(to_np(x), 0), C.int32)
    r = x.cumsum(1, dtype=C.float16)
    check(r, np.cumsum(to_np(x).astype(np.float64), 1), C.float16)
    f = rand((4, 3), C.float32, device)
    check(f.cumprod(0, dtype=C.float64), np.cumprod(to_np(f).astype(np.float64), 0), C.float64)
    # integers wrap as torch's int64 arithmetic does
    big = C.tensor([2**40, 2**40, 2**40], device=device)
    check(big.cumprod(0), np.array([2**40, 0, 0]), C.int64)
    small = C.tensor([100, 100, 100], dtype=C.int8, device=device)
    check(small.cumsum(0, dtype=C.int8), np.array([100, 200, 300]).astype(np.int8), C.int8)


def test_long_lines(device):
    # Long rows (the GPU cuts them into segments), many short rows and long columns.
    for shape, dim in (((200003,), 0), ((3, 70001), 1), ((5000, 3), 0), ((3000, 2, 3), 0)):
        x = rand(shape, C.float64, device)
        # (the GPU adds segments' totals in another order: rounding grows with the length)
        check(x.cumsum(dim), np.cumsum(to_np(x), axis=dim), C.float64, atol=1e-9)
        i = rand(shape, C.int64, device)
        check(i.cumsum(dim), np.cumsum(to_np(i), axis=dim), C.int64)
    x = rand((100001,), C.float32, device) * 0 + 1
    check(x.cumsum(0), np.arange(1, 100002, dtype=np.float64), C.float32)
    x = C.ones(50000, dtype=C.int32, device=device)
    check(x.cumprod(0), np.ones(50000), C.int64)


def test_layouts(device):
    base = rand((6, 8), C.float32, device)
    for x in (base.t(), base[::2, 1::3], base[:1].expand(5, 8), base[2]):
        for dim in range(x.dim()):
            check(x.cumsum(dim), np.cumsum(to_np(x).astype(np.float64), dim), C.float32)


def test_zero_size_and_zero_dim(device):
    e = C.empty(0, 3, device=device)
    assert e.cumsum(0).shape == (0, 3) and e.cumprod(1).shape == (0, 3)
    s = C.tensor(3, device=device)
    for dim in (0, -1):
        assert s.cumsum(dim).item() == 3 and s.cumsum(dim).dtype == C.int64
        assert s.cumprod(dim).item() == 3
    b = C.tensor(True, device=device)
    assert b.cumsum(0, dtype=C.bool).item() is True  # torch's kernel never runs for one element


def test_inplace(device):
    x = rand((3, 4), C.float32, device)
    want = np.cumsum(to_np(x).astype(np.float64), 1)
    y = x.clone()
    assert y.cumsum_(1) is y
    check(y, want, C.float32)
    y = x.clone()
    assert y.cumprod_(0) is y
    check(y, np.cumprod(to_np(x).astype(np.float64), 0), C.float32)
    n = C.tensor([1, 2, 3], dtype=C.int32, device=device)
    n.cumsum_(0)
    check(n, np.array([1, 3, 6]), C.int32)
    want = np.cumsum(to_np(x).T.astype(np.float64), 0)
    t = x.t()  # in place into a non-contiguous tensor
    t.cumsum_(0)
    check(t, want, C.float32)


def test_out(device):
    x = C.ones(3, device=device)
    out = C.empty(3, dtype=C.int32, device=device)
    assert C.cumsum(x, 0, out=out) is out
    check(out, np.array([1, 2, 3]), C.int32)
    out = C.empty(2, device=device)
    with pytest.warns(UserWarning, match="was resized"):
        C.cumprod(x * 2, 0, out=out)
    check(out, np.array([2, 4, 8]), C.float32)
    out = C.empty(0, device=device)
    C.cumsum(C.ones(3, dtype=C.int32, device=device), 0, out=out)
    check(out, np.array([1, 2, 3]), C.float32)
    with pytest.raises(
        RuntimeError, match=exact("Expected out tensor to have dtype double, but got int instead")
    ):
        C.cumsum(x, 0, dtype=C.float64, out=C.empty(3, dtype=C.int32, device=device))


def test_errors(device):
    x = rand((3, 4), C.float32, device)
    with pytest.raises(
        IndexError,
        match=exact("Dimension out of range (expected to be in range of [-2, 1], but got 2)"),
    ):
        x.cumsum(2)
    with pytest.raises(
        IndexError,
        match=exact("Dimension out of range (expected to be in range of [-1, 0], but got 1)"),
    ):
        C.tensor(1.0, device=device).cumprod(1)
    with pytest.raises(
        RuntimeError,
        match=exact(
            "Bad in-place call: input tensor dtype float and output tensor dtype double should "
            "match"
        ),
    ):
        x.cumsum_(0, dtype=C.float64)
    kernel = "cumsum_cuda" if device == "cuda" else "cumsum_out_cpu"
    with pytest.raises(
        NotImplementedError, match=exact(f"\"{kernel}\" not implemented for 'Bool'")
    ):
        x.cumsum(0, dtype=C.bool)
    with pytest.raises(NotImplementedError, match="not implemented for 'Bool'"):
        C.tensor([True, False], device=device).cumprod_(0)


# ---- the core's rows (csrc/ops/reductions.def) ----


def test_scan_rows(device):
    from cudalite import _C

    x = C.tensor([1.0, 2.0, 3.0, 4.0], device=device)
    assert sorted(_C._scan_ops) == ["cumprod", "cumsum"]
    for name, ref in (("cumsum", np.cumsum), ("cumprod", np.cumprod)):
        r = _C._scan(_C._scan_ops[name], x, 0, C.float64)
        assert r.dtype == C.float64 and to_np(r).tolist() == ref([1.0, 2.0, 3.0, 4.0]).tolist()


# ---- cummax, cummin, logcumsumexp ----


@pytest.mark.parametrize("dtype", ["float32", "float64", "int64", "int8", "float16", "bfloat16"])
@pytest.mark.parametrize("dim", [0, 1, -1])
def test_cummax_cummin_match_numpy(device, dtype, dim):
    a = np.random.default_rng(0).integers(-5, 5, size=(6, 37))
    x = C.tensor(a, device=device).to(getattr(C, dtype))
    for fn, acc in ((C.cummax, np.maximum), (C.cummin, np.minimum)):
        v, i = fn(x, dim)
        np.testing.assert_array_equal(to_np(v).astype(np.int64), acc.accumulate(a, axis=dim))
        # the index is the last position holding the running extreme
        taken = np.take_along_axis(a, to_np(i), axis=dim)
        np.testing.assert_array_equal(taken, acc.accumulate(a, axis=dim))
        # ... and the last one: the next position never ties it
        run = acc.accumulate(a, axis=dim)
        idx = to_np(i)
        nxt = np.clip(idx + 1, 0, a.shape[dim] - 1)
        after = np.take_along_axis(a, nxt, axis=dim)
        assert not ((nxt > idx) & (nxt <= np.indices(a.shape)[dim % 2]) & (after == run)).any()
        assert i.dtype == C.int64


def test_logcumsumexp_matches_numpy(device):
    a = np.random.default_rng(1).standard_normal((4, 33)) * 30
    a[0, :5] = [-1000.0, 0.0, -np.inf, 700.0, 5.0]
    x = C.tensor(a, device=device)
    np.testing.assert_allclose(
        to_np(C.logcumsumexp(x, 1)), np.logaddexp.accumulate(a, axis=1), rtol=1e-12
    )
    np.testing.assert_allclose(
        to_np(x.t().logcumsumexp(0)), np.logaddexp.accumulate(a.T, axis=0), rtol=1e-12
    )


@pytest.mark.parametrize(
    "fn",
    [
        lambda x: C.cummax(x, 1)[0],
        lambda x: x.cummin(0)[0],
        lambda x: C.logcumsumexp(x, 1),
    ],
    ids=["cummax", "cummin", "logcumsumexp"],
)
def test_scan_gradients(device, fn):
    a = np.random.default_rng(2).standard_normal((3, 9))
    x = C.tensor(a, dtype=C.float64, device=device).requires_grad_()
    assert C.autograd.gradcheck(fn, (x,))


def test_scan_out_and_empty(device):
    x = C.tensor([[1.0, 3.0, 2.0]], device=device)
    v, i = C.empty(1, 3, device=device), C.empty(1, 3, dtype=C.int64, device=device)
    r = C.cummax(x, 1, out=(v, i))
    assert r.values is v and r.indices is i
    np.testing.assert_array_equal(to_np(i), [[0, 1, 1]])
    e = C.zeros(0, 4, device=device)
    assert C.cummin(e, 1).values.shape == (0, 4)
    assert C.logcumsumexp(e, 0).shape == (0, 4)


# ---- diff ----


@pytest.mark.parametrize("n", [0, 1, 2, 7])
@pytest.mark.parametrize("dim", [0, -1])
def test_diff_matches_numpy(device, n, dim):
    a = np.random.default_rng(3).integers(-9, 9, size=(5, 6))
    x = C.tensor(a, device=device)
    np.testing.assert_array_equal(to_np(C.diff(x, n, dim)), np.diff(a, n, axis=dim))
    pre, app = a[:1] if dim == 0 else a[:, :1], a[-2:] if dim == 0 else a[:, -2:]
    r = x.diff(n, dim, prepend=C.tensor(pre, device=device), append=C.tensor(app, device=device))
    want = a if n == 0 else np.diff(a, n, axis=dim, prepend=pre, append=app)  # as torch
    np.testing.assert_array_equal(to_np(r), want)
    b = a > 0
    np.testing.assert_array_equal(
        to_np(C.diff(C.tensor(b, device=device), 1, dim)), np.diff(b, 1, axis=dim)
    )


def test_diff_gradient(device):
    x = C.tensor(np.random.default_rng(4).standard_normal((3, 5)), device=device)
    x = x.requires_grad_()
    assert C.autograd.gradcheck(lambda t: C.diff(t, 2, 1, prepend=t[:, :1] * 2), (x,))
