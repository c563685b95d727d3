"""median, nanmedian, mode, quantile, nanquantile, aminmax, histc, bincount, cov and
corrcoef (cudalite/_statistics.py): NumPy's answers, gradients, out= and edge cases.
Outcomes against torch's (values, indices, errors) are in test_mathops_vs_torch.py."""

from __future__ import annotations

import numpy as np
import pytest

import cudalite as C
from conftest import to_np
from cudalite.autograd import gradcheck

F64 = C.float64


def _data(*shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape)


@pytest.mark.parametrize("method", ["linear", "lower", "higher", "midpoint", "nearest"])
def test_quantile_matches_numpy(device, method):
    a = _data(5, 7)
    q = np.array([0.0, 0.1, 0.5, 0.77, 1.0])
    x = C.tensor(a, device=device)
    r = C.quantile(x, C.tensor(q, device=device), dim=1, interpolation=method)
    np.testing.assert_allclose(to_np(r), np.quantile(a, q, axis=1, method=method), rtol=1e-12)
    a[1, 2] = np.nan
    x = C.tensor(a, device=device)
    r = x.nanquantile(0.3, 0, keepdim=True, interpolation=method)
    want = np.nanquantile(a, 0.3, axis=0, keepdims=True, method=method)
    np.testing.assert_allclose(to_np(r), want, rtol=1e-12)


@pytest.mark.parametrize("dtype", ["float32", "float64", "int64", "int16", "float16", "bfloat16"])
def test_median_is_the_lower_median(device, dtype):
    a = np.array([[3, 1, 4, 1], [5, 9, 2, 6], [5, 3, 5, 8]])
    x = C.tensor(a, device=device).to(getattr(C, dtype))
    v, i = C.median(x, 1)
    np.testing.assert_array_equal(to_np(v), [1, 5, 5])
    np.testing.assert_array_equal(to_np(x.gather(1, i.unsqueeze(1)).squeeze(1)), to_np(v))
    assert x.median().item() == 4
    assert v.dtype == x.dtype and i.dtype == C.int64


def test_mode_matches_counting(device):
    rng = np.random.default_rng(1)
    a = rng.integers(0, 4, size=(6, 9))
    v, i = C.mode(C.tensor(a, device=device), 1)
    for row, val, idx in zip(a, to_np(v), to_np(i), strict=True):
        counts = np.bincount(row, minlength=4)
        assert val == np.argmax(counts)  # the smallest of the most frequent
        assert idx == np.nonzero(row == val)[0][-1]


def test_histc_and_bincount_match_numpy(device):
    a = _data(100)
    h = C.histc(C.tensor(a, device=device), bins=7, min=-1, max=1.5)
    want = np.histogram(a[(a >= -1) & (a <= 1.5)], bins=7, range=(-1, 1.5))[0]
    np.testing.assert_array_equal(to_np(h), want)
    n = np.random.default_rng(2).integers(0, 9, size=50)
    w = _data(50)
    tn = C.tensor(n, device=device)
    np.testing.assert_array_equal(to_np(C.bincount(tn)), np.bincount(n))
    np.testing.assert_allclose(
        to_np(tn.bincount(C.tensor(w, device=device), 12)), np.bincount(n, w, 12)
    )


def test_cov_and_corrcoef_match_numpy(device):
    a = _data(3, 8)
    fw = np.arange(1, 9)
    aw = np.linspace(0.5, 2, 8)
    x = C.tensor(a, device=device)
    np.testing.assert_allclose(to_np(C.cov(x)), np.cov(a), rtol=1e-12)
    np.testing.assert_allclose(to_np(x.cov(correction=0)), np.cov(a, ddof=0), rtol=1e-12)
    r = C.cov(x, fweights=C.tensor(fw, device=device), aweights=C.tensor(aw, device=device))
    np.testing.assert_allclose(to_np(r), np.cov(a, fweights=fw, aweights=aw), rtol=1e-12)
    np.testing.assert_allclose(to_np(C.corrcoef(x)), np.corrcoef(a), rtol=1e-12)


GRADS = {
    "median": lambda x: C.median(x),
    "median_dim": lambda x: x.median(1)[0],
    "nanmedian_dim": lambda x: x.nanmedian(0, keepdim=True)[0],
    "mode": lambda x: C.mode(x.round(), 1)[0],
    "quantile": lambda x: C.quantile(x, C.tensor([0.2, 0.9], dtype=F64, device=x.device), 1),
    "nanquantile": lambda x: x.nanquantile(0.4, interpolation="midpoint"),
    "aminmax": lambda x: C.aminmax(x, dim=0)[1],
    "cov": lambda x: C.cov(x),
    "corrcoef": lambda x: C.corrcoef(x),
}


@pytest.mark.parametrize("name", list(GRADS))
def test_gradients_match_finite_differences(name, device):
    x = C.tensor(_data(3, 5, seed=3), dtype=F64, device=device).requires_grad_()
    assert gradcheck(GRADS[name], (x,))


def test_out_arguments(device):
    x = C.tensor([[3.0, 1.0, 2.0]], device=device)
    v, i = C.empty(1, device=device), C.empty(1, dtype=C.int64, device=device)
    r = C.median(x, 1, out=(v, i))
    assert r.values is v and r.indices is i
    o = C.empty(1, device=device)
    assert C.quantile(x, 0.5, dim=1, out=o) is o
    lo, hi = C.empty(1, device=device), C.empty(1, device=device)
    r = C.aminmax(x, dim=1, out=(lo, hi))
    assert r.min is lo and r.max is hi
    assert repr(r).startswith("cudalite.return_types.aminmax(\nmin=")


def test_histogram_matches_numpy(device):
    a = _data(200)
    x = C.tensor(a, device=device)
    h, e = C.histogram(x, 9)
    wh, we = np.histogram(a, 9)
    np.testing.assert_array_equal(to_np(h), wh)
    np.testing.assert_allclose(to_np(e), we, rtol=1e-12)
    edges = np.array([-3.0, -0.5, 0.0, 0.1, 2.0])
    w = np.abs(_data(200, seed=1))
    r = x.histogram(C.tensor(edges, device=device), weight=C.tensor(w, device=device), density=True)
    want = np.histogram(a, edges, weights=w, density=True)[0]
    np.testing.assert_allclose(to_np(r.hist), want, rtol=1e-12)
    assert r.bin_edges.shape == (5,)
