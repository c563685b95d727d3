"""addmv, addr, addmm_, baddbmm, addbmm, outer / ger, inner, vdot, kron and cross
(cudalite/_products.py): NumPy's answers, gradients, in-place forms and out=. Outcomes
against torch's (values, errors) are in test_mathops_vs_torch.py."""

from __future__ import annotations

import numpy as np
import pytest

import cudalite as C
from conftest import to_np
from cudalite.autograd import gradcheck

F64 = C.float64


def _a(*shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape)


def _t(a, device):
    return C.tensor(a, device=device)


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16"])
def test_products_match_numpy(device, dtype):
    tol = {"float32": 1e-5, "float64": 1e-12, "float16": 1e-2, "bfloat16": 6e-2}[dtype]
    dt = getattr(C, dtype)
    m, v, w, b1, b2 = _a(3, 4), _a(4, seed=1), _a(3, seed=2), _a(2, 3, 4, seed=3), _a(2, 4, 5)
    T = lambda a: _t(a, device).to(dt)  # noqa: E731
    close = lambda got, want: np.testing.assert_allclose(  # noqa: E731
        to_np(got).astype(np.float64), want, rtol=tol, atol=tol * 4
    )
    close(C.addmv(T(w), T(m), T(v), beta=0.5, alpha=2), 0.5 * w + 2 * (m @ v))
    close(C.addr(T(m), T(w), T(v), alpha=-1), m - np.outer(w, v))
    close(C.baddbmm(T(b1[:, :, :1]), T(b1), T(b2)), b1[:, :, :1] + b1 @ b2)
    close(C.addbmm(T(m[:, :1]), T(b1), T(b2), beta=2), 2 * m[:, :1] + (b1 @ b2).sum(0))
    close(C.outer(T(w), T(v)), np.outer(w, v))
    close(C.inner(T(b1), T(m)), np.inner(b1, m))
    close(C.vdot(T(v), T(v)), np.vdot(v, v))
    close(C.kron(T(m), T(b1)), np.kron(m, b1))
    close(
        C.cross(T(b1[:, :, :3]), T(b2[:, :3, :3]), dim=1),
        np.cross(b1[:, :, :3], b2[:, :3, :3], axis=1),
    )


def test_non_contiguous_operands(device):
    m = _a(4, 3)
    v = _a(8)
    x = _t(m, device).t()  # 3x4, transposed
    vec = _t(v, device)[::2]  # stride 2
    np.testing.assert_allclose(to_np(C.addmv(vec[:3], x, vec)), v[::2][:3] + m.T @ v[::2])
    np.testing.assert_allclose(to_np(C.kron(x, vec[:2])), np.kron(m.T, v[::2][:2]))


GRADS = {
    "addmv": lambda x: C.addmv(x[0, :3], x[:, :4].t()[:3], x[1], beta=0.5, alpha=2),
    "addr": lambda x: C.addr(x[:3, :3], x[0, :3], x[1, :3]),
    "addmm_": lambda x: x[:3, :3].clone().addmm_(x[:3, :4], x[:4, :3].t().t()),
    "baddbmm": lambda x: C.baddbmm(
        x[:2, :2].expand(2, 2, 2), x[:, :4].reshape(2, 2, 4), x[:, :4].reshape(2, 4, 2)
    ),
    "addbmm": lambda x: C.addbmm(x[:2, :2], x[:, :4].reshape(2, 2, 4), x[:, :4].reshape(2, 4, 2)),
    "outer": lambda x: C.outer(x[0], x[1]),
    "inner": lambda x: C.inner(x, x[:2]),
    "vdot": lambda x: C.vdot(x[0], x[1]),
    "kron": lambda x: C.kron(x[:2, :2], x[2:, 2:]),
    "cross": lambda x: C.cross(x[:, :3], x[:, 1:], dim=1),
}


@pytest.mark.parametrize("name", list(GRADS))
def test_gradients_match_finite_differences(name, device):
    x = C.tensor(_a(4, 4, seed=5), dtype=F64, device=device).requires_grad_()
    assert gradcheck(GRADS[name], (x,))


def test_inplace_forms_and_out(device):
    m, v, w = _t(_a(3, 4), device), _t(_a(4, seed=1), device), _t(_a(3, seed=2), device)
    y = w.clone()
    assert y.addmv_(m, v) is y
    np.testing.assert_allclose(to_np(y), to_np(w + m.mv(v)), rtol=1e-12)
    z = m.clone()
    assert z.addr_(w, v, beta=0) is z
    np.testing.assert_allclose(to_np(z), to_np(C.outer(w, v)), rtol=1e-12)
    out = C.empty(3, 4, dtype=F64, device=device)
    assert C.outer(w, v, out=out) is out
    np.testing.assert_array_equal(to_np(C.ger(w, v)), to_np(out))


@pytest.mark.parametrize("n", [0, 1, 2, 5, 8])
def test_matrix_power_matches_numpy(device, n):
    a = _a(2, 3, 3) / 2
    np.testing.assert_allclose(
        to_np(C.matrix_power(_t(a, device), n)), np.linalg.matrix_power(a, n), rtol=1e-12
    )
    x = C.tensor(a, dtype=F64, device=device).requires_grad_()
    assert gradcheck(lambda t: t.matrix_power(n), (x,))


def test_matrix_power_refuses_negative_powers(device):
    with pytest.raises(NotImplementedError, match="negative exponent"):
        C.matrix_power(C.eye(2, device=device), -1)
