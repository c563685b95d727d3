"""tril and triu (cudalite._tensor_triangular) against NumPy: every dtype, diagonals, batches,
layouts, 0-size inputs, in place, out=, and torch's errors."""

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
    a = np.random.default_rng(0).integers(1, 5, shape)
    return C.tensor(a, dtype=dtype, device=device)


@pytest.mark.parametrize("dtype", DTYPES)
def test_dtypes_and_diagonals(device, dtype):
    x = rand((4, 5), dtype, device)
    for k in (-5, -1, 0, 1, 2, 6):
        for name, ref in (("tril", np.tril), ("triu", np.triu)):
            r = getattr(x, name)(k)
            assert r.dtype == dtype
            np.testing.assert_array_equal(to_np(r), ref(to_np(x), k))
            np.testing.assert_array_equal(to_np(getattr(C, name)(x, k)), ref(to_np(x), k))
            np.testing.assert_array_equal(to_np(getattr(C, name)(x, diagonal=k)), ref(to_np(x), k))


def test_batched_and_layouts(device):
    x = rand((2, 3, 4, 5), C.float32, device)
    np.testing.assert_array_equal(to_np(x.tril(-1)), np.tril(to_np(x), -1))
    np.testing.assert_array_equal(to_np(x.triu(1)), np.triu(to_np(x), 1))
    for v in (x.transpose(-1, -2), x[:, ::2, 1:, ::2], x[:1, :1].expand(3, 2, 4, 5)):
        np.testing.assert_array_equal(to_np(v.tril()), np.tril(to_np(v)))
        np.testing.assert_array_equal(to_np(v.triu(2)), np.triu(to_np(v), 2))
    assert C.empty(0, 3, device=device).tril().shape == (0, 3)
    assert C.empty(2, 0, 4, device=device).triu(1).shape == (2, 0, 4)


def test_inplace(device):
    x = rand((3, 4, 4), C.float32, device)
    want = np.tril(to_np(x), 1)
    y = x.clone()
    assert y.tril_(1) is y
    np.testing.assert_array_equal(to_np(y), want)
    y = x.clone()
    assert y.triu_() is y
    np.testing.assert_array_equal(to_np(y), np.triu(to_np(x)))
    want = np.triu(to_np(x).transpose(0, 2, 1), -1)
    x.transpose(1, 2).triu_(-1)  # through a non-contiguous view
    np.testing.assert_array_equal(to_np(x.transpose(1, 2)), want)


def test_out(device):
    x = rand((3, 3), C.float32, device)
    out = C.empty(0, device=device)
    assert C.tril(x, out=out) is out
    np.testing.assert_array_equal(to_np(out), np.tril(to_np(x)))
    with pytest.raises(
        RuntimeError, match=exact("Expected out tensor to have dtype float, but got int instead")
    ):
        C.triu(x, out=C.empty(3, 3, dtype=C.int32, device=device))


def test_errors(device):
    for name in ("tril", "triu"):
        for t in (C.tensor(1.0, device=device), C.ones(3, device=device)):
            msg = f"{name}: input tensor must have at least 2 dimensions"
            with pytest.raises(RuntimeError, match=exact(msg)):
                getattr(t, name)()
            with pytest.raises(RuntimeError, match=exact(msg)):
                getattr(t, name + "_")()
    with pytest.raises(TypeError):
        C.ones(2, 2, device=device).tril(1.5)
