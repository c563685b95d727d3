"""nn.utils: clip_grad_norm_ (get_total_norm, clip_grads_with_norm_), clip_grad_value_,
parameters_to_vector / vector_to_parameters, against NumPy and torch's messages."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

import cudalite as torch
from conftest import to_np
from cudalite import nn
from cudalite.nn import utils


def _params(device, dtype=None):
    dtype = dtype or torch.float32
    a = nn.Parameter(torch.ones(2, 3, dtype=dtype, device=device))
    b = nn.Parameter(torch.ones(4, dtype=dtype, device=device))
    c = nn.Parameter(torch.ones(1, dtype=dtype, device=device))  # no gradient
    a.grad = torch.tensor([[3.0, -4.0, 0.5], [1.0, 2.0, -2.5]], dtype=dtype, device=device)
    b.grad = torch.tensor([0.25, -6.0, 1.5, 0.0], dtype=dtype, device=device)
    return [a, b, c]


def _all_grads(params):
    return np.concatenate([to_np(p.grad).ravel() for p in params if p.grad is not None])


@pytest.mark.parametrize("norm_type", [2.0, 1, 3.5, math.inf, -math.inf, 0.5])
def test_clip_grad_norm(device, norm_type):
    params = _params(device)
    g = _all_grads(params).astype(np.float64)
    if norm_type == math.inf:
        expected = np.abs(g).max()
    elif norm_type == -math.inf:
        expected = np.abs(g).min()
    else:
        expected = (np.abs(g) ** norm_type).sum() ** (1 / norm_type)
    total = utils.clip_grad_norm_(params, max_norm=1.5, norm_type=norm_type)
    assert total.shape == () and total.dtype == torch.float32
    assert str(total.device).startswith(device)
    np.testing.assert_allclose(total.item(), expected, rtol=1e-5)
    coef = min(1.0, 1.5 / (expected + 1e-6))
    np.testing.assert_allclose(_all_grads(params), g * coef, rtol=1e-5, atol=1e-7)
    assert params[2].grad is None


def test_clip_grad_norm_leaves_small_gradients(device):
    p = nn.Parameter(torch.zeros(3, device=device))
    p.grad = torch.tensor([0.1, 0.2, -0.2], device=device)
    total = utils.clip_grad_norm_(p, 10.0)  # a single tensor is accepted
    assert total.item() == pytest.approx(0.3, rel=1e-6)
    # the coefficient is clamped to 1: the gradients are multiplied by exactly 1
    assert to_np(p.grad).tolist() == torch.tensor([0.1, 0.2, -0.2]).tolist()


def test_get_total_norm_and_clip_grads_with_norm(device):
    params = _params(device, torch.float64)
    grads = [p.grad for p in params if p.grad is not None]
    total = utils.get_total_norm(grads)
    expected = np.linalg.norm(_all_grads(params))
    assert total.dtype == torch.float64 and total.item() == pytest.approx(expected, rel=1e-12)
    utils.clip_grads_with_norm_(params, 2.0, total)
    np.testing.assert_allclose(np.linalg.norm(_all_grads(params)), 2.0, rtol=1e-6)
    assert utils.get_total_norm([]).item() == 0.0
    utils.clip_grads_with_norm_([params[2]], 1.0, total)  # no gradients: nothing to do


def test_clip_grad_norm_nonfinite(device):
    p = nn.Parameter(torch.zeros(2, device=device))
    p.grad = torch.tensor([1.0, math.inf], device=device)
    with pytest.raises(RuntimeError) as e:
        utils.clip_grad_norm_([p], 1.0, error_if_nonfinite=True)
    assert str(e.value) == (
        "The total norm of order 2.0 for gradients from `parameters` is non-finite, so it "
        "cannot be clipped. To disable this error and scale the gradients by the non-finite "
        "norm anyway, set `error_if_nonfinite=False`"
    )
    total = utils.clip_grad_norm_([p], 1.0)
    assert math.isinf(total.item())
    assert to_np(p.grad)[0] == 0.0 and math.isnan(to_np(p.grad)[1])


def test_clip_grad_norm_warnings():
    with pytest.warns(UserWarning, match="`parameters` is an empty generator, no gradient"):
        utils.clip_grad_norm_((p for p in []), 1.0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        utils.clip_grad_norm_([], 1.0)  # an empty list: no warning
    p = _params("cpu")
    with pytest.warns(FutureWarning, match="`torch.nn.utils.clip_grad_norm` is now deprecated"):
        total = utils.clip_grad_norm(p, 1.0)
    assert total.item() == pytest.approx(np.linalg.norm(_all_grads(_params("cpu"))), rel=1e-6)


@pytest.mark.parametrize("foreach", [None, False, True])
def test_foreach_gives_the_same_result(device, foreach):
    ref, p = _params(device), _params(device)
    total_ref = utils.clip_grad_norm_(ref, 1.0)
    total = utils.clip_grad_norm_(p, 1.0, foreach=foreach)
    assert total.item() == total_ref.item() and _all_grads(p).tolist() == _all_grads(ref).tolist()
    assert utils.get_total_norm([q.grad for q in p[:2]], foreach=foreach).item() == (
        utils.get_total_norm([q.grad for q in ref[:2]]).item()
    )


@pytest.mark.parametrize("foreach", [None, False, True])
def test_clip_grad_value(device, foreach):
    params = _params(device)
    g = _all_grads(params)
    assert utils.clip_grad_value_(params, 2, foreach=foreach) is None
    assert _all_grads(params).tolist() == np.clip(g, -2.0, 2.0).tolist()
    assert params[2].grad is None


def test_no_grad_inside_clipping():
    p = nn.Parameter(torch.ones(2))
    p.grad = torch.ones(2, requires_grad=True) * 3  # a gradient that has a history
    utils.clip_grad_norm_([p], 1.0)
    assert p.grad.tolist() == pytest.approx([2**-0.5] * 2, rel=1e-5)


def test_parameters_to_vector_and_back(device):
    m = nn.Linear(3, 2).to(device)
    vec = utils.parameters_to_vector(m.parameters())
    assert vec.shape == (8,) and vec.requires_grad
    expected = np.concatenate([to_np(m.weight.detach()).ravel(), to_np(m.bias.detach())])
    assert to_np(vec.detach()).tolist() == expected.tolist()
    new = torch.arange(8.0, device=device)
    utils.vector_to_parameters(new, m.parameters())
    assert m.weight.tolist() == [[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]]
    assert m.bias.tolist() == [6.0, 7.0]
    assert isinstance(m.weight, nn.Parameter) and m.weight.shape == (2, 3)
    new[0] = 42.0  # the parameters now view the vector
    assert m.weight[0, 0].item() == 42.0


def test_vector_to_parameters_errors():
    with pytest.raises(TypeError) as e:
        utils.vector_to_parameters([1.0, 2.0], [nn.Parameter(torch.ones(2))])
    assert str(e.value) == "expected torch.Tensor, but got: list"


@pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA GPU visible")
def test_parameters_on_two_devices():
    ps = [nn.Parameter(torch.ones(2)), nn.Parameter(torch.ones(2, device="cuda"))]
    msg = "Found two parameters on different devices, this is currently not supported."
    with pytest.raises(TypeError, match=msg):
        utils.parameters_to_vector(ps)
    with pytest.raises(TypeError, match=msg):
        utils.parameters_to_vector(ps[::-1])
    ps[0].grad, ps[1].grad = torch.ones(2) * 3, torch.ones(2, device="cuda") * 4
    total = utils.clip_grad_norm_(ps, 1.0)  # the norms meet on the first device
    assert total.device.type == "cpu" and total.item() == pytest.approx(50**0.5)
    utils.clip_grad_norm_(ps, 1.0, foreach=True)
    assert ps[1].grad.tolist() == pytest.approx([4 / 50**0.5] * 2, rel=1e-5)
