"""Pooling (max/avg/adaptive, 1-d and 2-d) and interpolate against torch 2.11's values,
gradients, errors and module reprs recorded in data/nn_cnn_expected.json (cases in
nn_cnn_cases.py), on every device; gradcheck in float64."""

from __future__ import annotations

import numpy as np
import pytest

import cudalite as torch
from cudalite.autograd import gradcheck
from cudalite.nn import functional as F
from nn_cnn_cases import (
    POOL_CASES,
    POOL_ERRORS,
    REPRS,
    check_error_case,
    check_repr,
    check_value_case,
    load_expected,
)

EXPECTED = load_expected()


@pytest.mark.parametrize("name", [n for n, _ in POOL_CASES])
@pytest.mark.parametrize("dtype", [torch.float64, torch.float32])
def test_values_and_gradients_match_torch(name, dtype, device):
    check_value_case(torch, EXPECTED, name, dtype, device)


@pytest.mark.parametrize("expr", POOL_ERRORS)
def test_errors_match_torch(expr, device):
    check_error_case(torch, EXPECTED, expr, device)


@pytest.mark.parametrize("expr", [e for e in REPRS if "Pool" in e or "Upsampl" in e])
def test_module_reprs_match_torch(expr):
    check_repr(torch, EXPECTED, expr)


GRADCHECK = [
    "F.avg_pool2d(x, 3, 2, 1, ceil_mode=True, count_include_pad=False)",
    "F.avg_pool2d(x, 2, divisor_override=3)",
    "F.avg_pool1d(x[0], 3, 2, 1)",
    "F.max_pool2d(x, 3, 2, 1)",
    "F.max_pool1d(x[0], 2, 1)",
    "F.adaptive_avg_pool2d(x, (3, 2))",
    "F.adaptive_avg_pool2d(x, 1)",
    "F.adaptive_max_pool2d(x, (2, 3))",
    "F.interpolate(x, scale_factor=2)",
    "F.interpolate(x, size=(7, 3), mode='bilinear')",
    "F.interpolate(x, size=(7, 3), mode='bilinear', align_corners=True)",
]


@pytest.mark.parametrize("expr", GRADCHECK)
def test_gradcheck(expr, device):
    # distinct values: max pooling's gradient is smooth away from ties
    x = torch.tensor(
        np.random.default_rng(0).permutation(40).reshape(2, 4, 5) / 7.0,
        device=device,
        requires_grad=True,
    ).unsqueeze(0)
    assert gradcheck(lambda x: eval(expr, {"F": F, "x": x}), (x,))  # noqa: S307


def test_max_pool_module_returns_indices_and_they_point_at_the_maxima(device):
    m = torch.nn.MaxPool2d(3, stride=2, padding=1, return_indices=True)
    x = torch.randn(2, 3, 7, 6, device=device)
    out, idx = m(x)
    assert idx.dtype == torch.int64
    picked = x.reshape(2, 3, -1).gather(2, idx.reshape(2, 3, -1)).reshape(out.shape)
    assert torch.equal(picked, out)


def test_max_pool_propagates_nan(device):
    x = torch.zeros(1, 1, 4, 4, device=device)
    x[0, 0, 1, 2] = float("nan")
    out = F.max_pool2d(x, 2)
    assert torch.isnan(out[0, 0, 0, 1]) and not torch.isnan(out[0, 0, 1, 1])


def test_pooling_grad_fns_are_torchs(device):
    x = torch.randn(1, 2, 6, 6, device=device, requires_grad=True)
    assert type(F.max_pool2d(x, 2).grad_fn).__name__ == "MaxPool2DWithIndicesBackward0"
    assert type(F.avg_pool2d(x, 2).grad_fn).__name__ == "AvgPool2DBackward0"
    assert type(F.adaptive_avg_pool2d(x, 4).grad_fn).__name__ == "AdaptiveAvgPool2DBackward0"
    assert type(F.adaptive_max_pool2d(x, 4).grad_fn).__name__ == "AdaptiveMaxPool2DBackward0"


def test_flatten_after_pooling_views(device):
    # the blitz's Net: x.view(-1, 16 * 5 * 5) after the last pool needs a contiguous result
    x = torch.randn(4, 16, 10, 10, device=device)
    assert F.max_pool2d(x, 2, 2).view(-1, 16 * 5 * 5).shape == (4, 400)
    assert F.adaptive_avg_pool2d(x, (5, 5)).view(4, -1).shape == (4, 400)


@pytest.mark.parametrize(
    "args", [(3, 2, 1), (2,), (3, 1, 1, 2, True), ((2, 3), (1, 2), (1, 0), (2, 1))]
)
def test_max_pool_without_indices_or_grad_gives_the_same_maxima(args, device):
    # without a graph or indices the maxima come from one reduction over the windows
    x = torch.randn(2, 3, 9, 8, device=device)
    x[0, 0, 0, 0] = float("nan")
    x[1, 1] = float("-inf")
    with_grad = F.max_pool2d(x.clone().requires_grad_(), *args).detach()
    plain = F.max_pool2d(x, *args)
    np.testing.assert_array_equal(plain.cpu().numpy(), with_grad.cpu().numpy())  # nan == nan
    x1 = x[:, :, 0]
    np.testing.assert_array_equal(
        F.max_pool1d(x1, 3, 2, 1).cpu().numpy(),
        F.max_pool1d(x1.clone().requires_grad_(), 3, 2, 1).detach().cpu().numpy(),
    )
