"""nn.init: trunc_normal_, orthogonal_ and the deprecated names; torch's names and checks."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

import cudalite as torch
from cudalite import nn
from cudalite.nn import init

# torch 2.11's nn.init.__all__ less sparse_ / dirac_ (and their deprecated names)
TORCH_INIT = [
    "calculate_gain",
    "uniform_",
    "normal_",
    "trunc_normal_",
    "constant_",
    "ones_",
    "zeros_",
    "eye_",
    "xavier_uniform_",
    "xavier_normal_",
    "kaiming_uniform_",
    "kaiming_normal_",
    "orthogonal_",
    "uniform",
    "normal",
    "constant",
    "eye",
    "xavier_uniform",
    "xavier_normal",
    "kaiming_uniform",
    "kaiming_normal",
    "orthogonal",
]


def test_names():
    for name in TORCH_INIT:
        assert callable(getattr(init, name)) and name in init.__all__


def test_erfinv_composition_matches_erf():
    y = torch.tensor([-0.999999, -0.5, 0.0, 0.3, 0.9, 0.99999999], dtype=torch.float64)
    x = init._erfinv(y)
    # torch.erfinv's values for the same inputs
    expected = [
        -3.458910737275499,
        -0.4769362762044699,
        0.0,
        0.2724627147267543,
        1.1630871536766743,
    ]
    np.testing.assert_allclose(x.numpy()[:5], expected, rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(x.erf().numpy(), y.numpy(), rtol=1e-14, atol=1e-15)


def test_trunc_normal(device):
    torch.manual_seed(0)
    t = torch.empty(200, 100, device=device)
    assert init.trunc_normal_(t, mean=1.0, std=2.0, a=-1.0, b=2.5) is t
    v = t.cpu().numpy()
    assert v.min() >= -1.0 and v.max() <= 2.5
    # the mean of N(1, 4) truncated to [-1, 2.5]
    a, b = (-1.0 - 1.0) / 2.0, (2.5 - 1.0) / 2.0

    def pdf(z):
        return math.exp(-z * z / 2) / math.sqrt(2 * math.pi)

    def cdf(z):
        return (1 + math.erf(z / math.sqrt(2))) / 2

    mean = 1.0 + 2.0 * (pdf(a) - pdf(b)) / (cdf(b) - cdf(a))
    assert abs(v.mean() - mean) < 0.03
    t64 = torch.empty(1000, dtype=torch.float64, device=device)
    init.trunc_normal_(t64, std=0.02)
    assert abs(t64.std().item() - 0.02) < 0.002
    with pytest.warns(UserWarning, match="mean is more than 2 std from"):
        init.trunc_normal_(torch.empty(3), mean=10.0)


def test_trunc_normal_generator():
    g = torch.Generator().manual_seed(3)
    a = init.trunc_normal_(torch.empty(5), generator=g)
    g.manual_seed(3)
    b = init.trunc_normal_(torch.empty(5), generator=g)
    assert torch.equal(a, b)


@pytest.mark.parametrize("shape", [(4, 4), (3, 7), (7, 3), (4, 2, 3)])
def test_orthogonal(shape, device):
    torch.manual_seed(0)
    t = torch.empty(*shape, device=device)
    assert init.orthogonal_(t, gain=2.0) is t
    m = t.reshape(shape[0], -1).double().cpu().numpy()
    if m.shape[0] <= m.shape[1]:
        np.testing.assert_allclose(m @ m.T, 4 * np.eye(m.shape[0]), atol=1e-5)
    else:
        np.testing.assert_allclose(m.T @ m, 4 * np.eye(m.shape[1]), atol=1e-5)
    with pytest.raises(ValueError, match="^Only tensors with 2 or more dimensions are supported$"):
        init.orthogonal_(torch.empty(3, device=device))
    assert init.orthogonal_(torch.empty(0, 3)).shape == (0, 3)


def test_init_does_not_record_gradients():
    p = nn.Parameter(torch.empty(3, 4))
    init.trunc_normal_(p)
    init.orthogonal_(p)
    assert p.grad_fn is None and p.is_leaf and p.requires_grad


def test_deprecated_names_warn_and_fill():
    t = torch.empty(2, 3)
    with pytest.warns(
        FutureWarning,
        match=r"^`nn.init.constant` is now deprecated in favor of `nn.init.constant_`.$",
    ):
        init.constant(t, 2.5)
    assert t.tolist() == [[2.5] * 3] * 2
    for name in ["uniform", "normal", "xavier_uniform", "xavier_normal", "kaiming_uniform"]:
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            getattr(init, name)(t)
        assert [type(x.message) for x in w] == [FutureWarning]
        assert getattr(init, name).__name__ == name
    with pytest.warns(FutureWarning):
        init.eye(t)
    assert t.tolist() == [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]]
    with pytest.warns(FutureWarning):
        init.kaiming_normal(t)
    with pytest.warns(FutureWarning):
        init.orthogonal(t)
