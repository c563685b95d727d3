"""Batch, instance and group normalisation and the channel dropouts against torch 2.11's
values, gradients, errors, module reprs, seeded parameters and running statistics recorded
in data/nn_cnn_expected.json (cases in nn_cnn_cases.py), on every device."""

from __future__ import annotations

import numpy as np
import pytest

import batchnorm_cases as bn_cases
import cudalite as torch
from cudalite.autograd import gradcheck
from cudalite.nn import functional as F
from nn_cnn_cases import (
    NORM_CASES,
    NORM_ERRORS,
    REPRS,
    SEEDED,
    batchnorm_steps,
    check_error_case,
    check_repr,
    check_seeded,
    check_value_case,
    load_expected,
)

EXPECTED = load_expected()
NORMS = ("Norm", "Dropout")


@pytest.mark.parametrize("name", [n for n, _ in NORM_CASES])
@pytest.mark.parametrize("dtype", [torch.float64, torch.float32])
def test_values_and_gradients_match_torch(name, dtype, device):
    check_value_case(torch, EXPECTED, name, dtype, device)


@pytest.mark.parametrize("expr", NORM_ERRORS)
def test_errors_match_torch(expr, device):
    check_error_case(torch, EXPECTED, expr, device)


@pytest.mark.parametrize("expr", [e for e in REPRS if any(n in e for n in NORMS)])
def test_module_reprs_match_torch(expr):
    check_repr(torch, EXPECTED, expr)


@pytest.mark.parametrize("expr", [e for e in SEEDED if "Norm" in e])
def test_seeded_parameters_match_torch_exactly(expr):
    check_seeded(torch, EXPECTED, expr)


@pytest.mark.parametrize("momentum", [0.1, None])
def test_batchnorm_running_statistics_match_torch(momentum, device):
    y, rm, rv, n = batchnorm_steps(torch, device, momentum)
    ey, erm, erv, en = EXPECTED["batchnorm"][str(momentum)]
    assert n == en
    np.testing.assert_allclose(rm, erm, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(rv, erv, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(y.ravel(), ey, rtol=1e-5, atol=1e-5)


GRADCHECK = [
    "F.batch_norm(x, None, None, w, b, True)",
    "F.batch_norm(x, x.new_full((4,), 0.3), x.new_full((4,), 2.0), w, b, False)",
    "F.group_norm(x, 2, w, b)",
    "F.instance_norm(x, weight=w, bias=b)",
]


@pytest.mark.parametrize("expr", GRADCHECK)
def test_gradcheck(expr, device):
    g = np.random.default_rng(0)
    x = torch.tensor(g.standard_normal((3, 4, 5)), device=device, requires_grad=True)
    w = torch.tensor(g.standard_normal(4), device=device, requires_grad=True)
    b = torch.tensor(g.standard_normal(4), device=device, requires_grad=True)
    env = {"F": F}
    assert gradcheck(lambda x, w, b: eval(expr, {**env, "x": x, "w": w, "b": b}), (x, w, b))  # noqa: S307


def test_batchnorm_eval_uses_running_stats_and_does_not_update_them(device):
    bn = torch.nn.BatchNorm2d(3).to(device)
    bn.running_mean.fill_(1.0)
    bn.running_var.fill_(4.0)
    bn.eval()
    x = torch.randn(2, 3, 4, 4, device=device)
    y = bn(x)
    assert torch.allclose(y, (x - 1) / (4 + 1e-5) ** 0.5, atol=1e-6)
    assert bool((bn.running_mean == 1).all()) and int(bn.num_batches_tracked) == 0


def test_batchnorm_without_running_stats_normalises_with_the_batch_in_eval(device):
    bn = torch.nn.BatchNorm1d(3, track_running_stats=False, affine=False).to(device).eval()
    x = torch.randn(8, 3, device=device) * 3 + 2
    y = bn(x)
    assert bn.running_mean is None
    assert torch.allclose(y.mean(0), torch.zeros(3, device=device), atol=1e-5)
    assert list(bn.state_dict()) == []


def test_batchnorm_state_dict_keys_are_torchs():
    assert list(torch.nn.BatchNorm2d(2).state_dict()) == [
        "weight",
        "bias",
        "running_mean",
        "running_var",
        "num_batches_tracked",
    ]


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_batchnorm_half_precision(dtype, device):
    bn = torch.nn.BatchNorm2d(3).to(device)
    x = torch.randn(4, 3, 5, 5, device=device)
    ref = F.batch_norm(x, None, None, training=True)
    out = F.batch_norm(x.to(dtype), None, None, training=True)
    assert out.dtype == dtype
    np.testing.assert_allclose(out.float().cpu().numpy(), ref.cpu().numpy(), atol=5e-2)
    bn(x)  # float32 module, float32 input: running stats updated
    assert not bool((bn.running_var == 1).all())


def test_dropout2d_zeroes_whole_channels_and_scales_the_rest(device):
    x = torch.ones(8, 16, 3, 3, device=device)
    y = F.dropout2d(x, 0.5)
    per_channel = y.reshape(8, 16, 9)
    first = per_channel[..., :1]
    assert bool((per_channel == first).all())  # one draw per channel
    vals = set(first.reshape(-1).tolist())
    assert vals <= {0.0, 2.0} and len(vals) == 2
    assert torch.equal(F.dropout2d(x, 0.5, training=False), x)
    m = torch.nn.Dropout2d(0.3).eval()
    assert torch.equal(m(x), x)


def test_dropout2d_stream_matches_torch_on_cpu():
    torch.manual_seed(0)
    y = F.dropout2d(torch.ones(4, 5, 2, 2), 0.4)
    assert y.reshape(-1).tolist() == EXPECTED["dropout2d"]


# ---- the fused kernels against torch (batchnorm_cases.py, data/batchnorm_expected.json) ----

BN = bn_cases.load_expected()
# tolerance relative to the largest expected magnitude (at least 1), per input dtype
BN_TOL = {"float64": 1e-9, "float32": 3e-5, "float16": 1e-2, "bfloat16": 4e-2}


def _close(got, want, tol, what):
    got, want = np.asarray(got, dtype=np.float64), np.asarray(want, dtype=np.float64)
    assert got.shape == want.shape, what
    scale = max(1.0, float(np.abs(want).max())) if want.size else 1.0
    np.testing.assert_allclose(got, want, rtol=tol, atol=tol * scale, err_msg=what)


@pytest.mark.parametrize("dtype", bn_cases.DTYPES)
@pytest.mark.parametrize("name", [r[0] for r in bn_cases.RUNS])
def test_batchnorm_training_runs_match_torch(name, dtype, device):
    got = bn_cases.train_run(torch, name, dtype, device)
    want = BN["runs"][f"{name}/{dtype}"]
    assert sorted(got) == sorted(want)
    # y = x * scale + shift rounds at the magnitude of x * scale: a large mean costs digits
    offset = next(r[4] for r in bn_cases.RUNS if r[0] == name)
    tol = BN_TOL[dtype] * (1.0 if dtype == "float64" else max(1.0, abs(offset) / 10))
    for key, values in want.items():
        _close(got[key], values, tol, key)


@pytest.mark.parametrize("name,training", bn_cases.DOUBLE)
def test_batchnorm_double_backward_matches_torch(name, training, device):
    got = bn_cases.double_backward(torch, training, device)
    for key, values in BN["double"][name].items():
        _close(got[key], values, 1e-9, key)


@pytest.mark.parametrize("expr", bn_cases.ERRORS)
def test_batchnorm_errors_match_torch(expr, device):
    if device == "cuda" and any(t in expr for t in (".double()", ".half()", ".bfloat16()")):
        pytest.skip("torch's dtype rules for mixed parameters are its CPU kernels'")
    kind, msg = BN["errors"][expr]
    with pytest.raises(Exception) as info:  # noqa: PT011 - the type is compared below
        eval(expr, bn_cases.error_env(torch, device))  # noqa: S307
    assert type(info.value).__name__ == kind
    assert str(info.value) == msg.replace("torch.", "cudalite.")


@pytest.mark.parametrize("expr", bn_cases.MIXED)
def test_batchnorm_mixed_parameter_dtypes_match_torch(expr, device):
    dtype, values = BN["mixed"][expr]
    y = eval(expr, bn_cases.error_env(torch, device))  # noqa: S307
    assert str(y.dtype) == dtype.replace("torch.", "cudalite.")
    _close(y.double().cpu().numpy().ravel(), values, 1e-2, expr)


def test_batchnorm_grad_fn_and_saved_statistics(device):
    x = torch.randn(4, 3, 2, 2, device=device, requires_grad=True)
    y = F.batch_norm(x, None, None, training=True)
    assert y.grad_fn.name() == "NativeBatchNormBackward0"
    mean = x.detach().mean([0, 2, 3])
    var = x.detach().var([0, 2, 3], unbiased=False)
    assert torch.allclose(y.grad_fn.result1, mean, atol=1e-6)
    assert torch.allclose(y.grad_fn.result2, (var + 1e-5).rsqrt(), atol=1e-5)


def test_batchnorm_empty_batch_keeps_running_statistics(device):
    bn = torch.nn.BatchNorm2d(3).to(device)
    x = torch.randn(0, 3, 4, 4, device=device, requires_grad=True)
    y = bn(x)
    assert y.shape == (0, 3, 4, 4)
    assert bool((bn.running_mean == 0).all()) and bool((bn.running_var == 1).all())
    y.sum().backward()
    assert bn.weight.grad is not None and x.grad.shape == x.shape


def test_batchnorm_non_contiguous_input_and_running_stats(device):
    x = torch.randn(3, 5, 4, 6, device=device).transpose(2, 3)
    rm_big = torch.zeros(10, device=device)
    rv_big = torch.ones(10, device=device)
    rm, rv = rm_big[::2], rv_big[::2]
    y = F.batch_norm(x, rm, rv, training=True, momentum=0.5)
    ref_rm, ref_rv = torch.zeros(5, device=device), torch.ones(5, device=device)
    ref = F.batch_norm(x.contiguous(), ref_rm, ref_rv, training=True, momentum=0.5)
    assert torch.allclose(y, ref, atol=1e-6)
    assert torch.allclose(rm, ref_rm) and torch.allclose(rv, ref_rv)
    assert bool((rm_big[1::2] == 0).all())


def test_batchnorm_node_name_follows_torchs_backend_choice(device):
    x = torch.randn(4, 3, 5, device=device, requires_grad=True)
    w = torch.ones(3, device=device, requires_grad=True)
    b = torch.zeros(3, device=device, requires_grad=True)
    cuda = device == "cuda"
    affine = F.batch_norm(x, None, None, w, b, training=True).grad_fn.name()
    assert affine == ("CudnnBatchNormBackward0" if cuda else "NativeBatchNormBackward0")
    # no affine parameters, or a 2-dim input: torch's native kernels on every device
    assert F.batch_norm(x, None, None, training=True).grad_fn.name() == "NativeBatchNormBackward0"
    y = F.batch_norm(x[:, :, 0], None, None, w, b, training=True)
    assert y.grad_fn.name() == "NativeBatchNormBackward0"
    z = F.batch_norm(x.double(), None, None, w.double(), b.double(), training=True)
    assert z.grad_fn.name() == "NativeBatchNormBackward0"


@pytest.mark.parametrize("training", [True, False])
def test_batchnorm_channels_last_keeps_its_layout_and_values(training, device):
    torch.manual_seed(0)
    x = torch.randn(3, 4, 5, 6, device=device) * 2 + 1
    xc = x.contiguous(memory_format=torch.channels_last).requires_grad_(True)
    xn = x.clone().requires_grad_(True)
    w = torch.randn(4, device=device, requires_grad=True)
    b = torch.randn(4, device=device, requires_grad=True)
    stats = [(torch.rand(4, device=device), torch.rand(4, device=device) + 0.5) for _ in "ab"]
    (rm1, rv1), (rm2, rv2) = stats[0], (stats[0][0].clone(), stats[0][1].clone())
    gy = torch.randn(3, 4, 5, 6, device=device)
    y1 = F.batch_norm(xc, rm1, rv1, w, b, training)
    assert y1.is_contiguous(memory_format=torch.channels_last) and not y1.is_contiguous()
    gx1, gw1, gb1 = torch.autograd.grad(y1, [xc, w, b], gy)
    assert gx1.is_contiguous(memory_format=torch.channels_last)
    y2 = F.batch_norm(xn, rm2, rv2, w, b, training)
    gx2, gw2, gb2 = torch.autograd.grad(y2, [xn, w, b], gy)
    for a, e in ((y1, y2), (gx1, gx2), (gw1, gw2), (gb1, gb2), (rm1, rm2), (rv1, rv2)):
        assert torch.allclose(a, e, atol=1e-4, rtol=1e-5)


@pytest.mark.parametrize("shape", [(4096, 16), (64, 8, 40, 3)])
def test_batchnorm_large_inputs_against_numpy(shape, device):
    """Inputs large enough to be split over threads (CPU) and blocks (CUDA)."""
    g = np.random.default_rng(3)
    xn = g.standard_normal(shape) * 3 + 5
    gyn = g.standard_normal(shape)
    wn, bn_ = g.standard_normal(shape[1]), g.standard_normal(shape[1])
    x = torch.tensor(xn, device=device, requires_grad=True)
    w = torch.tensor(wn, device=device, requires_grad=True)
    b = torch.tensor(bn_, device=device, requires_grad=True)
    rm, rv = (
        torch.zeros(shape[1], device=device, dtype=torch.float64),
        torch.ones(shape[1], device=device, dtype=torch.float64),
    )
    y = F.batch_norm(x, rm, rv, w, b, True, 0.25)
    gx, gw, gb = torch.autograd.grad(y, [x, w, b], torch.tensor(gyn, device=device))
    dims = (0,) + tuple(range(2, len(shape)))
    cs = [1, shape[1]] + [1] * (len(shape) - 2)
    m = xn.shape[0] * int(np.prod(shape[2:]))
    mu, var = xn.mean(dims), xn.var(dims)
    xhat = (xn - mu.reshape(cs)) / np.sqrt(var.reshape(cs) + 1e-5)
    ey = xhat * wn.reshape(cs) + bn_.reshape(cs)
    egb = gyn.sum(dims)
    egw = (gyn * xhat).sum(dims)
    egx = (wn / np.sqrt(var + 1e-5)).reshape(cs) * (
        gyn - egb.reshape(cs) / m - xhat * egw.reshape(cs) / m
    )
    for got, want in ((y, ey), (gx, egx), (gw, egw), (gb, egb)):
        np.testing.assert_allclose(got.detach().cpu().numpy(), want, rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(rm.cpu().numpy(), 0.25 * mu, rtol=1e-12)
    np.testing.assert_allclose(rv.cpu().numpy(), 0.75 + 0.25 * xn.var(dims, ddof=1), rtol=1e-12)
