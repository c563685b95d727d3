"""nansum and nanmean (_reductions.py) against NumPy's, with torch's dtype rules, errors and
gradients (zero where the input is NaN). Expected values are what PyTorch 2.11 gives."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import cudalite as C
from conftest import to_np

NAN = float("nan")
A = np.array(
    [[[1.0, NAN, 3.0, 4.0], [NAN, NAN, NAN, 2.5]], [[0.5, 2.0, NAN, -1.0], [7.0, 1.0, 1.0, 1.0]]]
)


@pytest.mark.parametrize("dim", [None, 0, 1, -1, (0, 2), (0, 1, 2)])
@pytest.mark.parametrize("keepdim", [False, True])
def test_nansum_nanmean_match_numpy(dim, keepdim, device):
    x = C.tensor(A, device=device)
    axis = dim if dim is not None else None
    kd = keepdim if dim is not None else False
    got = C.nansum(x, dim, keepdim=kd) if dim is not None else C.nansum(x)
    np.testing.assert_allclose(to_np(got), np.nansum(A, axis=axis, keepdims=kd))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # "Mean of empty slice"
        want = np.nanmean(A, axis=axis, keepdims=kd)
    got = x.nanmean(dim, keepdim=kd) if dim is not None else x.nanmean()
    np.testing.assert_allclose(to_np(got), want, equal_nan=True)


def test_nan_reductions_dtypes_and_errors(device):
    i = C.tensor([1, 2, 3], device=device)
    assert C.nansum(i).item() == 6 and C.nansum(i).dtype is C.int64
    assert C.nansum(C.tensor([True, True], device=device)).item() == 2
    h = C.tensor([1.0, NAN, 2.0], dtype=C.float16, device=device)
    assert C.nansum(h).dtype is C.float16 and C.nansum(h).item() == 3.0
    assert h.nanmean().dtype is C.float16 and h.nanmean().item() == 1.5
    d = C.nansum(h, dtype=C.float64)
    assert d.dtype is C.float64 and d.item() == 3.0
    assert np.isnan(C.nanmean(C.tensor([NAN, NAN], device=device)).item())
    assert C.nansum(C.tensor([NAN], device=device)).item() == 0.0
    with pytest.raises(
        RuntimeError,
        match="^nanmean\\(\\): expected input to have floating point "
        "or complex dtype but got Long$",
    ):
        C.nanmean(i)


def test_nan_reductions_gradients(device):
    x = C.tensor([[1.0, NAN], [3.0, 4.0]], device=device, requires_grad=True)
    C.nansum(x).backward()
    np.testing.assert_array_equal(to_np(x.grad), [[1, 0], [1, 1]])
    y = C.tensor([[1.0, NAN], [3.0, 4.0]], device=device, requires_grad=True)
    C.nanmean(y, 1).sum().backward()
    np.testing.assert_array_equal(to_np(y.grad), [[1, 0], [0.5, 0.5]])
