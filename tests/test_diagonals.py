"""trace, diag, diagflat, diag_embed (cudalite/_diagonals.py) and dist, renorm
(cudalite/_norms.py): NumPy's answers, gradients and edge cases. Outcomes against
torch's (values, errors) are in test_mathops_vs_torch.py."""

from __future__ import annotations

import numpy as np
import pytest

import cudalite as C
from conftest import to_np
from cudalite.autograd import gradcheck

F64 = C.float64


def _a(*shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape)


@pytest.mark.parametrize("offset", [-2, 0, 1, 3])
def test_diag_and_diagflat_match_numpy(device, offset):
    v, m = _a(4), _a(3, 5)
    np.testing.assert_array_equal(
        to_np(C.diag(C.tensor(v, device=device), offset)), np.diag(v, offset)
    )
    np.testing.assert_array_equal(
        to_np(C.tensor(m, device=device).diag(offset)), np.diag(m, offset)
    )
    np.testing.assert_array_equal(
        to_np(C.diagflat(C.tensor(m, device=device), offset)), np.diagflat(m, offset)
    )


def test_diag_embed_places_the_last_dim_on_diagonals(device):
    a = _a(2, 3)
    x = C.tensor(a, device=device)
    r = C.diag_embed(x, 1, 0, 2)
    assert r.shape == (4, 2, 4)
    for k in range(2):
        np.testing.assert_array_equal(to_np(r[:, k, :]), np.diag(a[k], 1))
    inf = C.tensor([np.inf, 1.0], device=device)
    np.testing.assert_array_equal(to_np(C.diag_embed(inf)), [[np.inf, 0], [0, 1]])


def test_trace_dist_renorm_match_numpy(device):
    m, n = _a(4, 3), _a(4, 3, seed=1)
    x, y = C.tensor(m, device=device), C.tensor(n, device=device)
    assert np.isclose(C.trace(x).item(), np.trace(m))
    for p in (1, 2, 3.5, np.inf):
        assert np.isclose(C.dist(x, y, p).item(), np.linalg.norm((m - n).ravel(), p))
    r = to_np(C.renorm(x, 2, 0, 0.8))
    norms = np.linalg.norm(m, axis=1, keepdims=True)
    want = np.where(norms > 0.8, m * 0.8 / (norms + 1e-7), m)
    np.testing.assert_allclose(r, want, rtol=1e-12)
    z = x.clone()
    assert z.renorm_(2, 0, 0.8) is z


GRADS = {
    "trace": lambda x: C.trace(x),
    "diag_vector": lambda x: C.diag(x[0], 1),
    "diag_matrix": lambda x: x.diag(-1),
    "diagflat": lambda x: C.diagflat(x[:2]),
    "diag_embed": lambda x: C.diag_embed(x, -1, 0, 2),
    "dist": lambda x: C.dist(x[0], x[1], 3),
    "renorm": lambda x: C.renorm(x, 2, 1, 0.5),
}


@pytest.mark.parametrize("name", list(GRADS))
def test_gradients_match_finite_differences(name, device):
    x = C.tensor(_a(3, 3, seed=4), dtype=F64, device=device).requires_grad_()
    assert gradcheck(GRADS[name], (x,))
