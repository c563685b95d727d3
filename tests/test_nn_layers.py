"""The transformer and CNN pieces of nn.functional against torch 2.11's values, gradients
and errors recorded in nn_layers_expected.json (cases in nn_layers_cases.py), on every
device, in float64 and float32; gradcheck in float64; half precision forward where torch's
kernels take it."""

from __future__ import annotations

import json
import pathlib

import numpy as np
import pytest

import cudalite as torch
from _recorded_nn import check_values_and_gradients, on_device
from cudalite.autograd import gradcheck
from cudalite.nn import functional as F
from nn_layers_cases import ERROR_CASES, VALUE_CASES, inputs, run

EXPECTED = json.loads((pathlib.Path(__file__).parent / "nn_layers_expected.json").read_text())


@pytest.mark.parametrize("name", [n for n, _ in VALUE_CASES])
@pytest.mark.parametrize("dtype", [torch.float64, torch.float32])
def test_values_and_gradients_match_torch(name, dtype, device):
    expr = dict(VALUE_CASES)[name]
    exp = EXPECTED["values"][name]
    check_values_and_gradients(torch, run, expr, exp, dtype, device)


# torch's CUDA kernels' names in their dtype errors (the recorded messages are the CPU's)
CUDA_NAMES = {
    '"GeluKernelImpl"': '"GeluCUDAKernelImpl"',
    '"silu_cpu"': '"silu_cuda"',
    '"mish_cpu"': '"mish_cuda"',
    '"elu_cpu"': '"elu_cuda"',
    '"leaky_relu_cpu"': '"leaky_relu_cuda"',
    '"softplus_cpu"': '"softplus_cuda"',
    "torch.FloatTensor": "torch.cuda.FloatTensor",
}


@pytest.mark.parametrize("expr", ERROR_CASES)
def test_errors_match_torch(expr, device):
    etype, msg = EXPECTED["errors"][expr]
    msg = on_device(msg, CUDA_NAMES, device)
    env = inputs(torch, torch.float64, device)
    with pytest.raises(Exception) as e:  # noqa: PT011 - the type is compared below
        eval(expr, {"M": torch, "F": F}, env)  # noqa: S307 - the recorded cases
    assert type(e.value).__name__ == etype
    assert str(e.value) == msg.replace("torch.", "cudalite.")


# gradcheck (finite differences) in float64: every differentiable case but those whose
# gradient is not the Jacobian on purpose (padding_idx, scale_grad_by_freq) or not smooth
GRADCHECK = [
    "F.gelu(x)",
    "F.gelu(x, approximate='tanh')",
    "F.silu(x)",
    "F.mish(x)",
    "F.softplus(x, beta=2.0, threshold=1.5)",
    "F.elu(x, alpha=0.5)",
    "F.leaky_relu(x, 0.2)",
    "F.hardtanh(x, -0.5, 0.7)",
    "F.layer_norm(x, (3,), y[0], y[1])",
    "F.layer_norm(x, (2, 3))",
    "F.embedding(M.tensor([[0, 1], [1, 1]], device=x.device), x)",
    "F.scaled_dot_product_attention(x, y, y)",
    "F.scaled_dot_product_attention(x, y, y, is_causal=True)",
    "F.scaled_dot_product_attention(x, y, y, attn_mask=M.tensor([[True, False], [False, False]]"
    ", device=x.device))",
    "F.pad(x, (1, 2, 0, 1), value=0.5)",
    "F.pad(x.unsqueeze(0), (2, 1), mode='reflect')",
    "F.pad(x.unsqueeze(0), (3, 2), mode='replicate')",
    "F.pad(x.unsqueeze(0), (2, 3), mode='circular')",
    "F.smooth_l1_loss(x, y, beta=0.5)",
    "F.huber_loss(x, y, delta=0.7)",
    "F.binary_cross_entropy(x.sigmoid(), y.sigmoid())",
    "F.binary_cross_entropy_with_logits(x, y.sigmoid(), pos_weight=M.ones(3, dtype=x.dtype, "
    "device=x.device) * 2)",
]


@pytest.mark.parametrize("expr", GRADCHECK)
def test_gradcheck(expr, device):
    x = torch.tensor(
        [[0.3, -1.2, 2.1], [-0.4, 0.9, 1.7]], dtype=torch.float64, device=device, requires_grad=True
    )
    y = torch.tensor(
        [[1.1, 0.2, -0.6], [0.5, -2.0, 0.8]], dtype=torch.float64, device=device, requires_grad=True
    )
    assert gradcheck(lambda x, y: eval(expr, {"M": torch, "F": F, "x": x, "y": y}), (x, y))  # noqa: S307


# forward in half precision (torch's CPU and CUDA kernels take float16 and bfloat16)
HALF = [
    "F.gelu(x)",
    "F.gelu(x, approximate='tanh')",
    "F.silu(x)",
    "F.mish(x)",
    "F.elu(x)",
    "F.leaky_relu(x)",
    "F.hardtanh(x)",
    "F.layer_norm(x, (3,))",
    "F.scaled_dot_product_attention(x, x, x, is_causal=True)",
    "F.pad(x, (1, 1), value=2.0)",
    "F.softplus(x)",
]


@pytest.mark.parametrize("expr", HALF)
@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_half_precision_forward(expr, dtype, device):
    x64 = torch.tensor([[0.3, -1.2, 2.1], [-0.4, 0.9, 1.7]], dtype=torch.float64, device=device)
    ref = eval(expr, {"M": torch, "F": F, "x": x64})  # noqa: S307
    out = eval(expr, {"M": torch, "F": F, "x": x64.to(dtype)})  # noqa: S307
    assert out.dtype == dtype
    tol = 1e-2 if dtype == torch.float16 else 4e-2
    np.testing.assert_allclose(out.double().cpu().numpy(), ref.cpu().numpy(), rtol=tol, atol=tol)


def test_inplace_activations_write_their_input(device):
    for fn, ref in [
        (lambda t: F.elu(t, inplace=True), F.elu),
        (F.elu_, F.elu),
        (lambda t: F.leaky_relu(t, 0.2, True), lambda t: F.leaky_relu(t, 0.2)),
        (F.leaky_relu_, F.leaky_relu),
        (F.hardtanh_, F.hardtanh),
        (lambda t: F.relu6(t * 1, True), F.relu6),
        (lambda t: F.silu(t, inplace=True), F.silu),
        (lambda t: F.mish(t, True), F.mish),
    ]:
        x = torch.tensor([-2.0, -0.5, 0.0, 0.5, 7.0], device=device)
        expected = ref(x.clone())
        out = fn(x)
        assert torch.equal(out, expected)
    x = torch.tensor([-2.0, 0.5, 7.0], device=device)
    assert F.hardtanh_(x) is x
    assert x.tolist() == [-1.0, 0.5, 1.0]


def test_hardtanh_and_relu6_keep_integer_dtypes(device):
    x = torch.tensor([-3, 0, 4, 9], device=device)
    assert F.hardtanh(x).tolist() == [-1, 0, 1, 1]
    assert F.relu6(x).dtype == torch.int64
    assert F.relu6(x).tolist() == [0, 0, 4, 6]


def test_hardtanh_gradient_is_zero_at_the_bounds(device):
    x = torch.tensor([-1.0, -0.5, 1.0, 2.0], device=device, requires_grad=True)
    F.hardtanh(x).sum().backward()
    assert x.grad.tolist() == [0.0, 1.0, 0.0, 0.0]


def test_embedding_max_norm_renormalises_rows_in_place(device):
    w = torch.tensor([[3.0, 4.0], [0.3, 0.4], [6.0, 8.0]], device=device, requires_grad=True)
    out = F.embedding(torch.tensor([0, 1, 0], device=device), w, max_norm=1.0)
    # rows looked up with a norm above 1 are scaled to norm 1 (torch's 1e-7 included)
    np.testing.assert_allclose(w.detach().cpu().numpy()[0], [3 / (5 + 1e-7), 4 / (5 + 1e-7)])
    assert w.detach().cpu().numpy()[2].tolist() == [6.0, 8.0]  # not looked up: unchanged
    assert w.is_leaf and w.grad is None
    np.testing.assert_allclose(out.detach().cpu().numpy()[1], [0.3, 0.4], rtol=1e-6)
    out.sum().backward()
    assert w.grad.tolist() == [[2.0, 2.0], [1.0, 1.0], [0.0, 0.0]]


def test_embedding_sparse_gradients_are_not_supported(device):
    w = torch.ones(3, 2, device=device)
    with pytest.raises(NotImplementedError, match="sparse gradients are not supported"):
        F.embedding(torch.tensor([0], device=device), w, sparse=True)


def test_sdpa_dropout_drops_weights_and_scales_the_rest(device):
    torch.manual_seed(0)
    q = torch.ones(1, 64, 4, device=device)
    v = torch.arange(64.0, device=device).view(64, 1).expand(64, 4).contiguous().unsqueeze(0)
    out = F.scaled_dot_product_attention(q, q, v, dropout_p=0.5)
    ref = F.scaled_dot_product_attention(q, q, v)
    assert not torch.allclose(out, ref)
    # each weight is 1/64 kept as 2/64 or dropped: the mean over many rows stays close
    assert abs(out.mean().item() - ref.mean().item()) < 0.25 * ref.mean().item()
    assert torch.equal(F.scaled_dot_product_attention(q, q, v, dropout_p=0.0), ref)


def test_sdpa_causal_matches_masked_fill_path(device):
    torch.manual_seed(1)
    q, k, v = (torch.randn(2, 3, 5, 4, dtype=torch.float64, device=device) for _ in range(3))
    keep = torch.arange(5, device=device).view(5, 1) >= torch.arange(5, device=device)
    att = (q @ k.transpose(-2, -1)) * (1.0 / 2.0)
    att = att.masked_fill(keep.logical_not(), float("-inf")).softmax(-1)
    ref = att @ v
    out = F.scaled_dot_product_attention(q, k, v, is_causal=True)
    np.testing.assert_allclose(out.cpu().numpy(), ref.cpu().numpy(), rtol=1e-12, atol=1e-12)
    out2 = F.scaled_dot_product_attention(q, k, v, attn_mask=keep)
    np.testing.assert_allclose(out2.cpu().numpy(), ref.cpu().numpy(), rtol=1e-12, atol=1e-12)


def test_functional_names_exist():
    for name in [
        "gelu",
        "silu",
        "mish",
        "softplus",
        "elu",
        "elu_",
        "leaky_relu",
        "leaky_relu_",
        "hardtanh",
        "hardtanh_",
        "relu6",
        "embedding",
        "one_hot",
        "layer_norm",
        "pad",
        "scaled_dot_product_attention",
        "smooth_l1_loss",
        "huber_loss",
        "binary_cross_entropy",
        "binary_cross_entropy_with_logits",
    ]:
        assert callable(getattr(F, name)) and name in F.__all__
