"""roll, repeat_interleave and meshgrid (cudalite._tensor_rearrange) against NumPy: every
dtype, shift and dim forms, repeats as ints and tensors, layouts, 0-size and 0-dim inputs,
torch's errors."""

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


def rand(shape, dtype, device):
    a = np.random.default_rng(0).integers(0, 50, shape)
    if dtype == C.bool:
        a = a % 2
    return C.tensor(a, dtype=dtype, device=device)


@pytest.mark.parametrize("dtype", DTYPES)
def test_roll_dtypes(device, dtype):
    x = rand((3, 4), dtype, device)
    a = to_np(x)
    cases = [
        ((1,), {}, dict(shift=1)),
        ((-7,), {}, dict(shift=-7)),
        ((2, 1), {}, dict(shift=2, axis=1)),
        ((-1, 0), {}, dict(shift=-1, axis=0)),
        (((1, 2), (0, 1)), {}, dict(shift=(1, 2), axis=(0, 1))),
        (([5, -3], [-1, -2]), {}, dict(shift=(5, -3), axis=(-1, -2))),
        (([1, 1], [0, 0]), {}, dict(shift=(1, 1), axis=(0, 0))),
        ((3,), {"dims": 1}, dict(shift=3, axis=1)),
    ]
    for args, kw, ref in cases:
        r = x.roll(*args, **kw)
        assert r.dtype == dtype and r.shape == x.shape
        np.testing.assert_array_equal(to_np(r), np.roll(a, **ref))
        np.testing.assert_array_equal(to_np(C.roll(x, *args, **kw)), np.roll(a, **ref))


def test_roll_layouts_and_edges(device):
    x = rand((5, 6), C.float32, device)
    for v in (x.t(), x[::2, 1::2], x[:1].expand(3, 6)):
        np.testing.assert_array_equal(to_np(v.roll(2)), np.roll(to_np(v), 2))
        np.testing.assert_array_equal(to_np(v.roll(-1, 1)), np.roll(to_np(v), -1, 1))
    r = x.roll(0, 0)
    assert r.data_ptr() != x.data_ptr()  # a copy even when nothing moves
    np.testing.assert_array_equal(to_np(r), to_np(x))
    assert C.empty(3, 0, 3, device=device).roll([-2, 6], [3, -4]).shape == (3, 0, 3)
    s = C.tensor(4.0, device=device)
    assert s.roll(3).item() == 4.0


def test_roll_errors(device):
    x = C.ones(3, 4, device=device)
    with pytest.raises(RuntimeError, match=exact("`shifts` required")):
        x.roll((), ())
    with pytest.raises(
        RuntimeError, match=exact("shifts and dimensions must align. shifts: 2, dims:1")
    ):
        x.roll((1, 2), (0,))
    with pytest.raises(
        RuntimeError, match=exact("shifts and dimensions must align. shifts: 2, dims:0")
    ):
        x.roll([1, 1])
    with pytest.raises(
        IndexError,
        match=exact("Dimension out of range (expected to be in range of [-2, 1], but got 2)"),
    ):
        x.roll(1, 2)
    with pytest.raises(
        IndexError, match=exact("Dimension specified as 0 but tensor has no dimensions")
    ):
        C.tensor(1.0, device=device).roll(1, 0)
    msg = "roll(): argument 'shifts' (position 1) must be tuple of ints, not float"
    with pytest.raises(TypeError, match=exact(msg)):
        x.roll(1.5)
    msg = (
        "roll(): argument 'dims' (position 2) must be tuple of ints, but found element of type "
        "str at pos 0"
    )
    with pytest.raises(TypeError, match=exact(msg)):
        x.roll((1,), ("a",))


@pytest.mark.parametrize("dtype", DTYPES)
def test_repeat_interleave_dtypes(device, dtype):
    x = rand((3, 4), dtype, device)
    a = to_np(x)
    for reps, dim in ((2, None), (3, 0), (1, 1), (0, -1), (2, -2)):
        r = x.repeat_interleave(reps, dim=dim)
        assert r.dtype == dtype
        np.testing.assert_array_equal(to_np(r), np.repeat(a, reps, axis=dim))
        np.testing.assert_array_equal(
            to_np(C.repeat_interleave(x, reps, dim)), np.repeat(a, reps, axis=dim)
        )
    reps = [1, 0, 3]
    r = x.repeat_interleave(C.tensor(reps, device=device), dim=0)
    np.testing.assert_array_equal(to_np(r), np.repeat(a, reps, axis=0))


def test_repeat_interleave_forms(device):
    x = rand((3, 4), C.float32, device)
    a = to_np(x)
    reps = np.array([2, 0, 1, 3])
    for rt in (C.tensor(reps, device=device), C.tensor(reps, dtype=C.int32, device=device)):
        np.testing.assert_array_equal(
            to_np(x.repeat_interleave(rt, dim=1)), np.repeat(a, reps, axis=1)
        )
    flat = C.tensor(np.arange(12) % 3, device=device)
    np.testing.assert_array_equal(
        to_np(x.repeat_interleave(flat)), np.repeat(a.reshape(-1), np.arange(12) % 3)
    )
    one = C.tensor([2], device=device)
    np.testing.assert_array_equal(to_np(x.repeat_interleave(one, dim=0)), np.repeat(a, 2, axis=0))
    np.testing.assert_array_equal(
        to_np(x.repeat_interleave(C.tensor(2, device=device), dim=1)), np.repeat(a, 2, axis=1)
    )
    r = C.repeat_interleave(C.tensor([1, 2, 0, 3], device=device))
    assert r.dtype == C.int64 and to_np(r).tolist() == [0, 1, 1, 3, 3, 3]
    r = C.repeat_interleave(C.tensor([2, 1], dtype=C.int32, device=device))
    assert r.dtype == C.int32 and to_np(r).tolist() == [0, 0, 1]
    assert x.repeat_interleave(2, dim=0, output_size=6).shape == (6, 4)
    assert x.t().repeat_interleave(2, dim=1).shape == (4, 6)
    np.testing.assert_array_equal(
        to_np(x.t().repeat_interleave(2, dim=1)), np.repeat(a.T, 2, axis=1)
    )
    s = C.tensor(3.0, device=device)
    assert to_np(s.repeat_interleave(2)).tolist() == [3.0, 3.0]
    assert C.empty(0, 2, device=device).repeat_interleave(3, dim=0).shape == (0, 2)
    assert x.repeat_interleave(C.tensor([0, 0, 0], device=device), dim=0).shape == (0, 4)


def test_repeat_interleave_errors(device):
    x = C.ones(3, 4, device=device)
    with pytest.raises(RuntimeError, match=exact("repeats can not be negative")):
        x.repeat_interleave(-1)
    with pytest.raises(RuntimeError, match=exact("Repeats must be non-negative")):
        x.repeat_interleave(C.tensor([1, -2, 0], device=device), dim=0)
    with pytest.raises(
        RuntimeError,
        match=exact(
            "repeats must have the same size as input along dim, but got repeats.size(0) = 2 and "
            "input.size(0) = 3"
        ),
    ):
        x.repeat_interleave(C.tensor([1, 2], device=device), dim=0)
    with pytest.raises(RuntimeError, match=exact("repeats must be 0-dim or 1-dim tensor")):
        x.repeat_interleave(C.tensor([[1]], device=device), dim=0)
    kernel = "repeat_interleave_cuda" if device == "cuda" else "repeat_interleave_cpu"
    with pytest.raises(
        NotImplementedError, match=exact(f"\"{kernel}\" not implemented for 'Float'")
    ):
        x.repeat_interleave(C.tensor([1.0, 2.0, 3.0], device=device), dim=0)
    with pytest.raises(
        RuntimeError, match=exact("repeat_interleave: Invalid output_size, expected 6 but got 5")
    ):
        x.repeat_interleave(2, dim=0, output_size=5)
    with pytest.raises(
        IndexError,
        match=exact("Dimension out of range (expected to be in range of [-2, 1], but got 2)"),
    ):
        x.repeat_interleave(2, dim=2)
    with pytest.raises(
        IndexError,
        match=exact("Dimension out of range (expected to be in range of [-1, 0], but got 1)"),
    ):
        C.tensor(1.0, device=device).repeat_interleave(2, dim=0)
    with pytest.raises(
        IndexError, match=exact("Dimension specified as 0 but tensor has no dimensions")
    ):
        C.tensor(1.0, device=device).repeat_interleave(C.tensor([2], device=device), dim=0)


# ---- meshgrid ----


@pytest.mark.parametrize("indexing", ["ij", "xy"])
def test_meshgrid_matches_numpy(device, indexing):
    a = np.arange(3.0)
    b = np.arange(4.0) * 10
    c = np.array([7.0])
    got = C.meshgrid(
        C.tensor(a, device=device), C.tensor(b, device=device), C.tensor(c, device=device),
        indexing=indexing,
    )  # fmt: skip
    want = np.meshgrid(a, b, c, indexing=indexing)
    assert len(got) == 3
    for g, w in zip(got, want, strict=True):
        assert tuple(g.shape) == w.shape and g.device.type == device
        np.testing.assert_array_equal(to_np(g), w)
    # views of the inputs (expand), as torch's: a write to the input shows in the grid
    x = C.arange(3.0, device=device)
    gx, _ = C.meshgrid([x, C.arange(2.0, device=device)], indexing="ij")
    assert gx.stride() == (1, 0)
    x[0] = 5.0
    assert gx[0].tolist() == [5.0, 5.0]


def test_meshgrid_gradient_and_zero_dim(device):
    x = C.arange(3.0, device=device).requires_grad_()
    y = C.tensor(2.0, device=device)
    gx, gy = C.meshgrid(x, y, indexing="ij")
    assert gx.shape == (3, 1) and gy.tolist() == [[2.0], [2.0], [2.0]]
    (gx * 2).sum().backward()
    assert x.grad.tolist() == [2.0, 2.0, 2.0]


def test_meshgrid_errors_and_warning(device):
    a = C.arange(3, device=device)
    with pytest.warns(UserWarning, match="it will be required to pass the indexing argument"):
        C.meshgrid(a, a)
    with pytest.raises(
        RuntimeError,
        match=exact('torch.meshgrid: indexing must be one of "xy" or "ij", but received: xx'),
    ):
        C.meshgrid(a, a, indexing="xx")
    with pytest.raises(RuntimeError, match="same dtype"):
        C.meshgrid(a, a.float(), indexing="ij")
    with pytest.raises(RuntimeError, match="Expected 0D or 1D tensor in the tensor list"):
        C.meshgrid(C.ones(2, 2, device=device), indexing="ij")
    with pytest.raises(RuntimeError, match="meshgrid expects a non-empty TensorList"):
        C.meshgrid(indexing="ij")
