"""gather, scatter, scatter_add and index_add (cudalite._tensor_scatter) against NumPy, on every
dtype and on non-contiguous, expanded, 0-size and 0-dim inputs; torch's errors."""

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


def rand(shape, dtype, device, seed=0):
    rng = np.random.default_rng(seed)
    if dtype == C.bool:
        a = rng.random(shape) < 0.5
    elif dtype in (C.uint8,):
        a = rng.integers(0, 5, shape)
    elif not dtype.is_floating_point:
        a = rng.integers(-4, 5, shape)
    else:
        a = rng.integers(-8, 9, shape) / 4  # exact in every float dtype, so sums are exact
    return C.tensor(a, dtype=dtype, device=device)


def idx(a, device, dtype=C.int64):
    return C.tensor(np.asarray(a), dtype=dtype, device=device)


def sub(a, shape, dim):
    """a[:shape[0], :shape[1], ...] except along dim (a NumPy view)."""
    return a[tuple(slice(None) if k == dim else slice(0, n) for k, n in enumerate(shape))]


def np_scatter_positions(index, dim):
    """Full NumPy index tuples for every position of ``index`` (dim replaced by index)."""
    ind = list(np.indices(index.shape, sparse=False))
    ind[dim] = index
    return tuple(ind)


# ---- gather ----


@pytest.mark.parametrize("dtype", DTYPES)
def test_gather_dtypes(device, dtype):
    x = rand((4, 5), dtype, device)
    i = np.array([[0, 3, 3], [1, 0, 4]])
    for dim in (0, 1, -1):
        ii = i % x.shape[dim]
        r = x.gather(dim, idx(ii, device))
        want = np.take_along_axis(sub(to_np(x), ii.shape, dim % 2), ii, axis=dim)
        assert r.dtype == dtype and r.device.type == device
        np.testing.assert_array_equal(to_np(r), want)
        np.testing.assert_array_equal(to_np(C.gather(x, dim, idx(ii, device))), want)


def test_gather_layouts(device):
    base = rand((6, 5, 4), C.float32, device)
    i = np.random.default_rng(1).integers(0, 3, (3, 2, 4))
    for x in (base.transpose(0, 2), base[::2, 1:, ::2], base[:1].expand(5, 5, 4), base[2]):
        ii = i[tuple(slice(0, n) for n in x.shape)] if x.dim() == 3 else i[0]
        ii = np.minimum(ii, x.shape[0] - 1)
        r = x.gather(0, idx(ii, device))
        want = np.take_along_axis(sub(to_np(x), ii.shape, 0), ii, axis=0)
        np.testing.assert_array_equal(to_np(r), want)
    # a non-contiguous int32 index
    ii = idx(np.array([[0, 1], [2, 0], [1, 1]]), device, C.int32).t()
    r = base[:, :, 0].gather(1, ii)
    np.testing.assert_array_equal(
        to_np(r), np.take_along_axis(sub(to_np(base[:, :, 0]), (2, 3), 1), to_np(ii), axis=1)
    )


def test_gather_zero_size_and_zero_dim(device):
    x = rand((3, 2), C.float32, device)
    assert x.gather(0, idx(np.zeros((0, 2), np.int64), device)).shape == (0, 2)
    assert x.gather(1, idx(np.zeros((3, 0), np.int64), device)).shape == (3, 0)
    e = C.empty(0, 3, device=device)
    assert e.gather(1, idx(np.zeros((0, 5), np.int64), device)).shape == (0, 5)
    s = C.tensor(5.0, device=device)
    assert s.gather(0, idx(0, device)).item() == 5.0
    r = s.gather(0, idx([0, 0], device))
    assert r.shape == (2,) and to_np(r).tolist() == [5.0, 5.0]
    v = C.tensor([1.0, 2.0], device=device)
    r = v.gather(0, idx(1, device))
    assert r.shape == () and r.item() == 2.0


def test_gather_out(device):
    x = rand((3, 4), C.float32, device)
    out = C.empty(0, device=device)
    r = C.gather(x, 1, idx([[1], [0], [3]], device), out=out)
    assert r is out and out.shape == (3, 1)
    with pytest.raises(
        RuntimeError, match=exact("Expected out tensor to have dtype float, but got int instead")
    ):
        C.gather(x, 1, idx([[1]], device), out=C.empty(1, 1, dtype=C.int32, device=device))


def test_gather_errors(device):
    x = rand((3, 4), C.float32, device)
    with pytest.raises(
        IndexError,
        match=exact("Dimension out of range (expected to be in range of [-2, 1], but got 2)"),
    ):
        x.gather(2, idx([[0]], device))
    with pytest.raises(RuntimeError, match=exact("gather(): Expected dtype int32/int64 for index")):
        x.gather(1, C.tensor([[0.0]], device=device))
    with pytest.raises(
        RuntimeError,
        match=exact("Index tensor must have the same number of dimensions as input tensor"),
    ):
        x.gather(1, idx([0], device))
    with pytest.raises(
        RuntimeError,
        match=exact(
            "Size does not match at dimension 0 expected index [4, 2] to be no larger than self "
            "[3, 4] apart from dimension 1"
        ),
    ):
        x.gather(1, idx(np.zeros((4, 2), np.int64), device))
    for bad in (4, -1):
        with pytest.raises(
            RuntimeError, match=exact(f"index {bad} is out of bounds for dimension 1 with size 4")
        ):
            x.gather(1, idx([[0, bad]], device))


# ---- scatter ----


@pytest.mark.parametrize("dtype", DTYPES)
def test_scatter_src_dtypes(device, dtype):
    x = rand((4, 5), dtype, device)
    src = rand((3, 6), dtype, device, seed=1)
    i = np.array([[0, 3, 1], [2, 0, 3]])  # distinct along dim 0 in each column
    for dim, ii in ((0, i), (1, i)):
        r = x.scatter(dim, idx(ii, device), src)
        want = to_np(x)
        np.put_along_axis(sub(want, ii.shape, dim), ii, sub(to_np(src), ii.shape, -1), axis=dim)
        assert r.dtype == dtype
        np.testing.assert_array_equal(to_np(r), want)
    y = x.clone()
    assert y.scatter_(1, idx(i, device), src) is y
    want = to_np(x)
    np.put_along_axis(sub(want, i.shape, 1), i, sub(to_np(src), i.shape, -1), axis=1)
    np.testing.assert_array_equal(to_np(y), want)


@pytest.mark.parametrize("dtype", DTYPES)
def test_scatter_value_dtypes(device, dtype):
    x = rand((3, 4), dtype, device)
    i = np.array([[1, 3], [0, 2]])
    v = True if dtype == C.bool else 2
    r = x.scatter(1, idx(i, device), v)
    want = to_np(x)
    np.put_along_axis(sub(want, i.shape, 1), i, v, axis=1)
    np.testing.assert_array_equal(to_np(r), want)
    r = C.scatter(x, 1, idx(i, device), value=v)
    np.testing.assert_array_equal(to_np(r), want)


def test_scatter_value_converted(device):
    x = C.zeros(3, dtype=C.int64, device=device)
    assert to_np(x.scatter(0, idx([1], device), 2.7)).tolist() == [0, 2, 0]
    assert to_np(x.scatter(0, idx([1], device), True)).tolist() == [0, 1, 0]


@pytest.mark.parametrize("dtype", [C.int32, C.int64, C.float16, C.bfloat16, C.float32, C.float64])
def test_scatter_reduce(device, dtype):
    x = rand((3, 4), dtype, device) + 1
    i = np.array([[1, 1, 3], [0, 0, 0]])  # duplicates accumulate
    src = C.tensor([[2, 3, 1], [2, 2, 2]], dtype=dtype, device=device)
    with pytest.warns(UserWarning, match="The reduce argument of cudalite.scatter with Tensor src"):
        r = x.scatter(1, idx(i, device), src, reduce="add")
    want = to_np(x).astype(np.float64)
    np.add.at(want, np_scatter_positions(i, 1), to_np(src).astype(np.float64))
    np.testing.assert_array_equal(to_np(r).astype(np.float64), want)
    with pytest.warns(UserWarning, match="is deprecated"):
        r = x.scatter(1, idx(i, device), src, reduce="multiply")
    want = to_np(x).astype(np.float64)
    np.multiply.at(want, np_scatter_positions(i, 1), to_np(src).astype(np.float64))
    np.testing.assert_array_equal(to_np(r).astype(np.float64), want)
    r = x.scatter(1, idx(i, device), 3, reduce="multiply")
    want = to_np(x).astype(np.float64)
    np.multiply.at(want, np_scatter_positions(i, 1), 3.0)
    np.testing.assert_array_equal(to_np(r).astype(np.float64), want)


def test_scatter_layouts(device):
    base = rand((5, 6), C.float32, device)
    x = base.t()  # (6, 5), non-contiguous
    src = rand((8, 8), C.float32, device, seed=2)[::2, 1::2]  # (4, 4), stepped
    i = np.array([[0, 5, 2], [3, 1, 4]])
    r = x.scatter(0, idx(i, device), src)
    want = to_np(x)
    np.put_along_axis(sub(want, i.shape, 0), i, sub(to_np(src), i.shape, -1), axis=0)
    np.testing.assert_array_equal(to_np(r), want)
    y = base.clone()
    y.t().scatter_(0, idx(i, device), src)  # in place through a transposed view
    np.testing.assert_array_equal(to_np(y.t()), want)
    # an expanded src
    r = x.scatter(0, idx(i, device), C.tensor([7.0], device=device).expand(2, 3))
    want = to_np(x)
    np.put_along_axis(sub(want, i.shape, 0), i, 7.0, axis=0)
    np.testing.assert_array_equal(to_np(r), want)


def test_scatter_zero_size_and_zero_dim(device):
    x = rand((3, 2), C.float32, device)
    r = x.scatter(0, idx(np.zeros((0,), np.int64), device), C.ones(1, device=device))
    np.testing.assert_array_equal(to_np(r), to_np(x))
    s = C.tensor(1.0, device=device)
    assert s.scatter(0, idx(0, device), C.tensor(4.0, device=device)).item() == 4.0
    assert s.scatter_add(0, idx(0, device), C.tensor(4.0, device=device)).item() == 5.0


def test_scatter_errors(device):
    x = rand((3, 4), C.float32, device)
    i = idx([[0, 1], [2, 0]], device)
    with pytest.raises(
        RuntimeError, match=exact("scatter(): Expected self.dtype to be equal to src.dtype")
    ):
        x.scatter(1, i, C.ones(2, 2, dtype=C.float64, device=device))
    with pytest.raises(
        RuntimeError, match=exact("scatter(): Expected dtype int32/int64 for index")
    ):
        x.scatter(1, C.tensor([[0.0]], device=device), C.ones(1, 1, device=device))
    with pytest.raises(
        RuntimeError,
        match=exact(
            "Expected index [2, 2] to be no larger than self [3, 4] apart from dimension 1 and to "
            "be no larger size than src [1, 1]"
        ),
    ):
        x.scatter(1, i, C.ones(1, 1, device=device))
    with pytest.raises(
        RuntimeError,
        match=exact("Index tensor must have the same number of dimensions as self tensor"),
    ):
        x.scatter(0, idx([1], device), C.ones(1, device=device))
    with pytest.raises(
        IndexError,
        match=exact("Dimension out of range (expected to be in range of [-1, 0], but got 1)"),
    ):
        x.scatter(0, idx([[1]], device), C.ones(1, device=device))
    with pytest.raises(
        RuntimeError, match=exact("reduce argument must be either add or multiply.")
    ):
        x.scatter(1, i, C.ones(2, 2, device=device), reduce="mean")
    for bad in (4, -1):
        with pytest.raises(
            RuntimeError, match=exact(f"index {bad} is out of bounds for dimension 1 with size 4")
        ):
            x.scatter(1, idx([[bad]], device), 1.0)
    with pytest.raises(IndexError, match="Dimension out of range"):
        x.scatter(2, i, 1.0)


def test_scatter_out(device):
    x = rand((3, 4), C.float32, device)
    out = C.empty(3, 4, device=device)
    r = C.scatter(x, 1, idx([[0]], device), C.ones(1, 1, device=device), out=out)
    assert r is out and out[0, 0].item() == 1.0


# ---- scatter_add ----


@pytest.mark.parametrize("dtype", DTYPES)
def test_scatter_add_dtypes(device, dtype):
    x = rand((4, 5), dtype, device)
    src = rand((3, 6), dtype, device, seed=1)
    i = np.array([[0, 3, 3], [0, 0, 3]])  # duplicates
    for dim in (0, 1):
        r = x.scatter_add(dim, idx(i, device), src)
        want = to_np(x)
        s = sub(to_np(src), i.shape, -1)
        if dtype == C.bool:
            np.logical_or.at(want, np_scatter_positions(i, dim), s)
        else:
            want = want.astype(np.float64)
            np.add.at(want, np_scatter_positions(i, dim), s.astype(np.float64))
            want = want.astype(to_np(x).dtype)
        assert r.dtype == dtype
        np.testing.assert_array_equal(to_np(r), want)
    y = x.clone()
    assert y.scatter_add_(0, idx(i, device), src) is y
    np.testing.assert_array_equal(to_np(y), to_np(x.scatter_add(0, idx(i, device), src)))
    np.testing.assert_array_equal(to_np(C.scatter_add(x, 0, idx(i, device), src)), to_np(y))


def test_scatter_add_many_duplicates(device):
    # Every element of a long source lands on one of few targets (atomics on CUDA).
    n = 10000
    for dtype in (C.float32, C.float16, C.bfloat16, C.int32, C.int64, C.int16, C.int8):
        x = C.zeros(4, dtype=dtype, device=device)
        i = idx(np.arange(n) % 4, device)
        r = x.scatter_add(0, i, C.ones(n, dtype=dtype, device=device))
        got = to_np(r)
        if dtype in (C.float16, C.bfloat16):
            # Past 2048 (float16) or 256 (bfloat16) adding 1 rounds away: the sums stall there.
            stall = 2048 if dtype == C.float16 else 256
            np.testing.assert_array_equal(got, np.full(4, stall, np.float32))
        else:  # int8 wraps around as torch's does
            np.testing.assert_array_equal(got, np.full(4, n // 4).astype(got.dtype))


def test_scatter_add_errors(device):
    x = rand((3, 4), C.float32, device)
    with pytest.raises(
        RuntimeError, match=exact("scatter_add(): Expected self.dtype to be equal to src.dtype")
    ):
        x.scatter_add(1, idx([[0]], device), C.ones(1, 1, dtype=C.float64, device=device))
    with pytest.raises(
        RuntimeError, match=exact("scatter_add(): Expected dtype int32/int64 for index")
    ):
        x.scatter_add(1, C.tensor([[0.0]], device=device), C.ones(1, 1, device=device))
    with pytest.raises(
        RuntimeError, match=exact("index 7 is out of bounds for dimension 1 with size 4")
    ):
        x.scatter_add(1, idx([[7]], device), C.ones(1, 1, device=device))


# ---- index_add ----


@pytest.mark.parametrize("dtype", DTYPES)
def test_index_add_dtypes(device, dtype):
    x = rand((4, 3), dtype, device)
    for dim, alpha in ((0, 1), (1, 2), (-1, 1), (0, -1)):
        if dtype in (C.bool, C.uint8) and alpha == -1:
            continue
        i = np.array([0, 2, 0]) if dim == 0 else np.array([1, 1, 2, 0])
        shape = [4, 3]
        shape[dim] = len(i)
        src = rand(tuple(shape), dtype, device, seed=3)
        r = x.index_add(dim, idx(i, device), src, alpha=alpha)
        want = to_np(x)
        wm, sm = np.moveaxis(want, dim, 0), np.moveaxis(to_np(src), dim, 0)
        if dtype == C.bool:
            np.logical_or.at(wm, i, sm)
        else:
            w = wm.astype(np.float64)
            np.add.at(w, i, alpha * sm.astype(np.float64))
            wm[...] = w.astype(wm.dtype)
        assert r.dtype == dtype
        np.testing.assert_array_equal(to_np(r), want)


def test_index_add_forms(device):
    x = rand((3, 4), C.float32, device)
    src = C.ones(2, 4, device=device)
    i = idx([0, 2], device)
    y = x.clone()
    assert y.index_add_(0, i, src, alpha=2) is y
    want = to_np(x)
    want[[0, 2]] += 2
    np.testing.assert_array_equal(to_np(y), want)
    np.testing.assert_array_equal(to_np(C.index_add(x, 0, i, src, alpha=2)), want)
    out = C.empty(0, device=device)
    assert C.index_add(x, 0, i, src, alpha=2, out=out) is out
    np.testing.assert_array_equal(to_np(out), want)
    # int32 index, non-contiguous self and source
    t = x.t().contiguous().t()
    r = t.index_add(1, idx([3, 3], device, C.int32), C.ones(4, 3, device=device).t()[:, :2])
    want = to_np(x)
    want[:, 3] += 2
    np.testing.assert_array_equal(to_np(r), want)
    # the integer alpha of integer tensors, and 0-dim self / index / source
    n = C.zeros(3, dtype=C.int64, device=device)
    r = n.index_add(0, idx([0, 0, 1], device), C.ones(3, dtype=C.int64, device=device), alpha=2.5)
    assert to_np(r).tolist() == [4, 2, 0]
    s = C.tensor(1.0, device=device)
    assert s.index_add(0, idx([0], device), C.tensor(2.0, device=device)).item() == 3.0
    v = C.zeros(3, device=device)
    assert to_np(v.index_add(0, idx(1, device), C.ones(1, device=device))).tolist() == [0, 1, 0]
    assert x.index_add(
        0, idx(np.zeros(0, np.int64), device), C.ones(0, 4, device=device)
    ).shape == (3, 4)


def test_index_add_errors(device):
    x = rand((3, 4), C.float32, device)
    src = C.ones(2, 4, device=device)
    with pytest.raises(
        RuntimeError, match=exact("index 3 is out of bounds for dimension 0 with size 3")
    ):
        x.index_add(0, idx([0, 3], device), src)
    with pytest.raises(IndexError, match=exact("index out of range in self")):
        x.index_add(0, idx([0, 3], device), src, alpha=2)
    with pytest.raises(IndexError, match=exact("index out of range in self")):
        C.zeros(3, device=device).index_add(0, idx([-1], device), C.ones(1, device=device))
    with pytest.raises(
        RuntimeError,
        match=exact(
            "source tensor shape must match self tensor shape, excluding the specified dimension. "
            "Got self.shape = [3, 4] source.shape = [2, 3]"
        ),
    ):
        x.index_add(0, idx([0, 2], device), C.ones(2, 3, device=device))
    with pytest.raises(
        RuntimeError,
        match=exact(
            "index_add_(): Number of indices (2) should be equal to source.size(dim): (3), for "
            "dim: 0"
        ),
    ):
        x.index_add(0, idx([0, 2], device), C.ones(3, 4, device=device))
    with pytest.raises(
        RuntimeError,
        match=exact(
            "index_add_(): self (Float) and source (Double) must have the same scalar type"
        ),
    ):
        x.index_add(0, idx([0, 2], device), src.double())
    with pytest.raises(
        IndexError,
        match=exact(
            "index_add_(): Index is supposed to be a vector, but got dim: 2 with type: Long and "
            "size: [1, 2]"
        ),
    ):
        x.index_add(0, idx([[0, 2]], device), src)
    with pytest.raises(
        RuntimeError,
        match=exact("index_add_(): Expected dtype int32/int64 for index but got: Float"),
    ):
        x.index_add(0, C.tensor([0.0, 2.0], device=device), src)
    with pytest.raises(
        IndexError,
        match=exact("Dimension out of range (expected to be in range of [-2, 1], but got 2)"),
    ):
        x.index_add(2, idx([0], device), src)
    with pytest.raises(
        IndexError, match=exact("Dimension specified as 0 but tensor has no dimensions")
    ):
        C.tensor(1.0, device=device).index_add(0, idx([0, 0], device), C.tensor(1.0, device=device))


def test_writes_into_expanded_tensors_are_refused(device):
    x = C.zeros(1, 4, device=device).expand(3, 4)
    msg = (
        "unsupported operation: more than one element of the written-to tensor refers to a "
        "single memory location. Please clone() the tensor before performing the operation."
    )
    i = idx([[0]], device)
    for f in (
        lambda: x.scatter_(1, i, 1.0),
        lambda: x.scatter_add_(1, i, C.ones(1, 1, device=device)),
        lambda: x.index_add_(0, idx([0], device), C.ones(1, 4, device=device)),
    ):
        with pytest.raises(RuntimeError, match=exact(msg)):
            f()
    assert x.scatter(1, i, 1.0)[0, 0].item() == 1.0  # out of place: a copy
