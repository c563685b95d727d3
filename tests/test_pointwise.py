"""The composed pointwise ops (cudalite/_pointwise.py): gradients, in-place forms, out=,
and the registry's new special functions on values NumPy and math can check. Their
outcomes against torch's are in test_mathops_vs_torch.py."""

from __future__ import annotations

import math

import numpy as np
import pytest

import cudalite as C
from conftest import to_np
from cudalite.autograd import gradcheck

F64 = C.float64


def _x(*shape, device, lo=0.3, hi=2.5, seed=0):
    g = np.random.default_rng(seed)
    v = g.uniform(lo, hi, size=shape)
    return C.tensor(v, dtype=F64, device=device).requires_grad_()


GRADS = {
    "digamma": lambda x: x.digamma(),
    "lgamma": lambda x: C.lgamma(x),
    "polygamma1": lambda x: C.polygamma(1, x),
    "polygamma3": lambda x: x.polygamma(3),
    "mvlgamma": lambda x: C.mvlgamma(x + 1, 3),
    "i0": lambda x: C.i0(x * 3),
    "sinc": lambda x: C.sinc(x),
    "nan_to_num": lambda x: C.nan_to_num(x),
    "clamp_min": lambda x: C.clamp_min(x, 1.0),
    "clamp_max": lambda x: x.clamp_max(1.0),
    "ldexp": lambda x: C.ldexp(x, C.tensor([2], device=x.device)),
    "float_power": lambda x: C.float_power(x, 2.5),
    "addcmul": lambda x: C.addcmul(x, x.flip(-1), x * 2, value=0.5),
    "addcdiv": lambda x: C.addcdiv(x, x.flip(-1), x + 1, value=-2),
    "addcmul_": lambda x: x.clone().addcmul_(x, x),
    "lerp_": lambda x: x.clone().lerp_(x.flip(-1), 0.3),
    "frexp": lambda x: C.frexp(x)[0],
    "logaddexp2": lambda x: C.logaddexp2(x, x.flip(-1) + 0.1),
}


@pytest.mark.parametrize("name", list(GRADS))
def test_gradients_match_finite_differences(name, device):
    assert gradcheck(GRADS[name], (_x(2, 3, device=device),))


def test_nan_to_num_replaces_non_finite_values(device):
    x = C.tensor([math.nan, math.inf, -math.inf, 1.5], device=device)
    np.testing.assert_array_equal(
        to_np(C.nan_to_num(x, nan=1.0, posinf=2.0, neginf=-2.0)), [1.0, 2.0, -2.0, 1.5]
    )
    big = np.finfo(np.float32).max
    np.testing.assert_array_equal(to_np(x.nan_to_num()), [0.0, big, -big, 1.5])
    y = x.clone()
    assert y.nan_to_num_() is y
    out = C.empty(4, device=device)
    assert C.nan_to_num(x, out=out) is out


def test_special_functions_match_math(device):
    v = [0.25, 0.5, 1.0, 3.5, 10.0, 40.0]
    x = C.tensor(v, dtype=F64, device=device)
    np.testing.assert_allclose(to_np(x.lgamma()), [math.lgamma(a) for a in v], rtol=1e-12)
    np.testing.assert_allclose(to_np(C.i0(x)), np.i0(v), rtol=1e-12)
    np.testing.assert_allclose(to_np(C.sinc(x)), np.sinc(v), rtol=1e-12, atol=1e-15)
    # digamma(1) = -gamma, digamma(n + 1) = digamma(n) + 1 / n
    euler = 0.5772156649015329
    d = C.tensor([1.0, 2.0, 3.0], dtype=F64, device=device).digamma()
    np.testing.assert_allclose(to_np(d), [-euler, 1 - euler, 1.5 - euler], rtol=1e-13)
    # trigamma(1) = pi^2 / 6, zeta(2, 1) = pi^2 / 6
    t = C.polygamma(1, C.tensor([1.0], dtype=F64, device=device))
    np.testing.assert_allclose(to_np(t), [math.pi**2 / 6], rtol=1e-13)


def test_gcd_and_lcm_match_numpy(device):
    a = np.array([12, -18, 0, 7, 0, 2**40], dtype=np.int64)
    b = np.array([8, 12, 5, 0, 0, 6], dtype=np.int64)
    ta, tb = C.tensor(a, device=device), C.tensor(b, device=device)
    np.testing.assert_array_equal(to_np(C.gcd(ta, tb)), np.gcd(a, b))
    np.testing.assert_array_equal(to_np(ta.lcm(tb)), np.lcm(a, b))


def test_inplace_forms_write_into_self(device):
    x = C.tensor([1.0, 2.0, 3.0], device=device)
    for call in (
        lambda t: t.addcmul_(t, t, value=2),
        lambda t: t.addcdiv_(t, t + 1),
        lambda t: t.clamp_min_(2.0),
        lambda t: t.clamp_max_(2.0),
        lambda t: t.ldexp_(C.tensor([1], device=device)),
        lambda t: t.lerp_(t * 2, 0.5),
        lambda t: t.polygamma_(1),
        lambda t: t.mvlgamma_(1),
        lambda t: t.digamma_(),
        lambda t: t.sinc_(),
    ):
        y = x.clone()
        assert call(y) is y
    d = x.double()
    assert d.float_power_(2) is d
    np.testing.assert_array_equal(to_np(d), [1.0, 4.0, 9.0])


def test_out_argument(device):
    x = C.tensor([1.0, 2.0, 3.0], device=device)
    out = C.empty(3, device=device)
    assert C.addcmul(x, x, x, out=out) is out
    np.testing.assert_array_equal(to_np(out), [2.0, 6.0, 12.0])
    mant, exp = C.empty(3, device=device), C.empty(3, dtype=C.int32, device=device)
    r = C.frexp(x, out=(mant, exp))
    assert r.mantissa is mant and r.exponent is exp
    np.testing.assert_array_equal(to_np(exp), [1, 2, 2])
    d = C.empty(3, dtype=C.float64, device=device)
    assert C.float_power(x, 2, out=d) is d
    with pytest.raises(RuntimeError, match="the output given to float_power has dtype Float"):
        C.float_power(x, 2, out=out)


def test_zero_size_and_zero_dim(device):
    e = C.zeros(0, 3, device=device)
    assert C.addcmul(e, e, e).shape == (0, 3)
    assert C.nan_to_num(e).shape == (0, 3)
    assert C.frexp(e)[1].shape == (0, 3)
    s = C.tensor(0.5, device=device)
    assert C.polygamma(2, s).shape == ()
    assert C.mvlgamma(s + 2, 2).shape == ()


def test_incomplete_gamma_identities(device):
    x = np.array([1e-3, 0.2, 1.0, 2.5, 7.0, 30.0, 200.0])
    t = C.tensor(x, dtype=F64, device=device)
    one, half = C.ones_like(t), C.full_like(t, 0.5)
    np.testing.assert_allclose(to_np(C.igamma(one, t)), -np.expm1(-x), rtol=1e-13)
    np.testing.assert_allclose(to_np(C.igammac(one, t)), np.exp(-x), rtol=1e-12, atol=1e-300)
    erf = np.vectorize(math.erf)(np.sqrt(x))
    np.testing.assert_allclose(to_np(half.igamma(t)), erf, rtol=1e-13)
    total = to_np(C.igamma(t + 1, t) + C.igammac(t + 1, t))
    np.testing.assert_allclose(total, np.ones_like(x), rtol=1e-13)


def test_incomplete_gamma_gradient_is_for_the_second_argument(device):
    a = C.tensor([0.7, 1.5, 3.0], dtype=F64, device=device)
    assert gradcheck(lambda x: C.igamma(a, x), (_x(3, device=device),))
    assert gradcheck(lambda x: C.igammac(a, x), (_x(3, device=device),))
    with pytest.raises(NotImplementedError, match="the derivative for 'igamma: input'"):
        C.igamma(_x(3, device=device), a).sum().backward()


def test_conjugates_of_real_tensors_are_the_tensor(device):
    x = C.tensor([1.0, -2.0], device=device)
    assert x.conj() is x and C.conj(x) is x
    assert x.resolve_conj() is x and C.resolve_neg(x) is x
    assert x.conj_physical() is x and x.conj_physical_() is x
    np.testing.assert_allclose(to_np(C.angle(x)), [0.0, math.pi], rtol=1e-7)
