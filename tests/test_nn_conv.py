"""Convolutions (nn.functional conv1d/2d/3d, conv_transpose1d/2d, unfold, fold and the
Conv/ConvTranspose modules) against torch 2.11's values, gradients, errors, reprs and seeded
parameters recorded in data/nn_cnn_expected.json (cases in nn_cnn_cases.py), on every
device; gradcheck in float64; half precision forward; the cuDNN switches."""

from __future__ import annotations

import numpy as np
import pytest

import cudalite as torch
from cudalite.autograd import gradcheck
from cudalite.nn import functional as F
from nn_cnn_cases import (
    CONV_CASES,
    CONV_ERRORS,
    REPRS,
    SEEDED,
    check_error_case,
    check_repr,
    check_seeded,
    check_value_case,
    load_expected,
)

EXPECTED = load_expected()


@pytest.fixture(autouse=True)
def _full_float32():
    # cuDNN's float32 convolutions use TF32 by default (as torch's): compare in full precision
    with torch.backends.cudnn.flags(enabled=True, allow_tf32=False):
        yield


@pytest.mark.parametrize("name", [n for n, _ in CONV_CASES])
@pytest.mark.parametrize("dtype", [torch.float64, torch.float32])
def test_values_and_gradients_match_torch(name, dtype, device):
    check_value_case(torch, EXPECTED, name, dtype, device)


@pytest.mark.parametrize("expr", CONV_ERRORS)
def test_errors_match_torch(expr, device):
    check_error_case(torch, EXPECTED, expr, device)


@pytest.mark.parametrize("expr", [e for e in REPRS if "Conv" in e])
def test_module_reprs_match_torch(expr):
    check_repr(torch, EXPECTED, expr)


@pytest.mark.parametrize("expr", [e for e in SEEDED if "Conv" in e])
def test_seeded_parameters_match_torch_exactly(expr):
    check_seeded(torch, EXPECTED, expr)


GRADCHECK = [
    "F.conv2d(x, w, b, stride=(2, 1), padding=1, dilation=(1, 2))",
    "F.conv2d(x, w[:2, :1], b[:2], padding='same', groups=2)",
    "F.conv1d(x[:, :, 0], w[:, :, 0], b, stride=2, padding=1)",
    "F.conv_transpose2d(x, w.transpose(0, 1), b, stride=2, padding=1, output_padding=1)",
    "F.unfold(x, 2, padding=1, stride=(1, 2)).sum(2) + b.sum()",
    "F.fold(F.unfold(x, 2, dilation=2), (5, 4), 2, dilation=2) * w.sum() + b.sum()",
]


@pytest.mark.parametrize("expr", GRADCHECK)
def test_gradcheck(expr, device):
    g = np.random.default_rng(0)
    x = torch.tensor(g.standard_normal((2, 2, 5, 4)), device=device, requires_grad=True)
    w = torch.tensor(g.standard_normal((3, 2, 2, 3)), device=device, requires_grad=True)
    b = torch.tensor(g.standard_normal(3), device=device, requires_grad=True)
    env = {"F": F, "x": x, "w": w, "b": b}
    assert gradcheck(lambda x, w, b: eval(expr, {**env, "x": x, "w": w, "b": b}), (x, w, b))  # noqa: S307


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_half_precision_forward(dtype, device):
    g = np.random.default_rng(1)
    x = torch.tensor(g.standard_normal((2, 3, 6, 5)), device=device)
    w = torch.tensor(g.standard_normal((4, 3, 3, 3)) * 0.3, device=device)
    ref = F.conv2d(x, w, padding=1)
    out = F.conv2d(x.to(dtype), w.to(dtype), padding=1)
    assert out.dtype == dtype
    tol = 2e-2 if dtype == torch.float16 else 8e-2
    np.testing.assert_allclose(out.double().cpu().numpy(), ref.cpu().numpy(), rtol=tol, atol=tol)


@pytest.mark.parametrize("mode", ["reflect", "replicate", "circular"])
def test_conv2d_padding_modes_pad_then_convolve(mode, device):
    m = torch.nn.Conv2d(2, 3, (3, 2), padding=(1, 2), padding_mode=mode).to(device)
    x = torch.randn(2, 2, 5, 6, device=device)
    ref = F.conv2d(F.pad(x, (2, 2, 1, 1), mode=mode), m.weight, m.bias)
    assert torch.allclose(m(x), ref, atol=1e-6)


def test_conv_same_padding_module_pads_asymmetrically_for_even_kernels(device):
    m = torch.nn.Conv2d(1, 1, (4, 2), padding="same", padding_mode="replicate").to(device)
    x = torch.randn(1, 1, 5, 6, device=device)
    # 'same' with an even kernel pads one more on the right/bottom (torch's rule)
    ref = F.conv2d(F.pad(x, (0, 1, 1, 2), mode="replicate"), m.weight, m.bias)
    assert m(x).shape == x.shape
    assert torch.allclose(m(x), ref, atol=1e-6)


def test_conv_transpose_output_size_picks_the_output_padding(device):
    m = torch.nn.ConvTranspose2d(2, 3, 3, stride=2, padding=1).to(device)
    x = torch.randn(1, 2, 4, 5, device=device)
    assert m(x).shape == (1, 3, 7, 9)
    assert m(x, output_size=[8, 10]).shape == (1, 3, 8, 10)
    with pytest.raises(ValueError, match="requested an output size of"):
        m(x, output_size=[9, 10])


def test_conv_transpose_is_the_adjoint_of_conv(device):
    # <conv(x, w), y> == <x, conv_transpose(y, w)>
    x = torch.randn(2, 3, 7, 6, dtype=torch.float64, device=device)
    w = torch.randn(4, 3, 3, 2, dtype=torch.float64, device=device)
    y = torch.randn(2, 4, 3, 4, dtype=torch.float64, device=device)
    lhs = (F.conv2d(x, w, stride=2, padding=(0, 1)) * y).sum()
    rhs = (x * F.conv_transpose2d(y, w, stride=2, padding=(0, 1))).sum()
    assert abs(float(lhs) - float(rhs)) < 1e-9


def test_conv_grad_fn_is_convolution_backward(device):
    x = torch.randn(1, 2, 4, 4, device=device, requires_grad=True)
    w = torch.randn(3, 2, 3, 3, device=device)
    assert type(F.conv2d(x, w).grad_fn).__name__ == "ConvolutionBackward0"
    with torch.no_grad():
        assert F.conv2d(x, w).grad_fn is None
        assert not torch.is_grad_enabled()
    # only the input requires grad: the weight and bias get none
    F.conv2d(x, w).sum().backward()
    assert x.grad.shape == x.shape and w.grad is None


def test_conv2d_module_trains(device):
    torch.manual_seed(0)
    m = torch.nn.Conv2d(3, 4, 3, padding=1).to(device)
    opt = torch.optim.SGD(m.parameters(), lr=0.1)
    x = torch.randn(4, 3, 6, 6, device=device)
    target = torch.randn(4, 4, 6, 6, device=device)
    losses = []
    for _ in range(5):
        opt.zero_grad()
        loss = F.mse_loss(m(x), target)
        loss.backward()
        opt.step()
        losses.append(loss.item())
    assert losses[-1] < losses[0]


def test_cudnn_switches_and_availability():
    cudnn = torch.backends.cudnn
    assert isinstance(cudnn.is_available(), bool)
    v = cudnn.version()
    assert v is None or isinstance(v, int)
    orig = cudnn.benchmark
    try:
        cudnn.benchmark = True
        assert cudnn.benchmark is True
        with cudnn.flags(enabled=False, deterministic=True):
            assert cudnn.enabled is False and cudnn.deterministic is True
        assert cudnn.enabled is True
    finally:
        cudnn.benchmark = orig
    with pytest.raises(RuntimeError, match="set_benchmark_cudnn expects a bool, but got int"):
        cudnn.benchmark = 1


def test_conv_with_cudnn_disabled_gives_the_same_result(device):
    x = torch.randn(2, 3, 8, 8, device=device, requires_grad=True)
    w = torch.randn(5, 3, 3, 3, device=device, requires_grad=True)
    y1 = F.conv2d(x, w, padding=1, stride=2)
    g1 = torch.autograd.grad(y1.sum(), (x, w))
    with torch.backends.cudnn.flags(enabled=False):
        y2 = F.conv2d(x, w, padding=1, stride=2)
        g2 = torch.autograd.grad(y2.sum(), (x, w))
    assert torch.allclose(y1, y2, atol=1e-4)
    for a, b in zip(g1, g2, strict=True):
        assert torch.allclose(a, b, atol=1e-4)


def test_functional_names_exist():
    for name in ("conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d", "unfold"):
        assert callable(getattr(F, name))
    for name in ("Conv1d", "Conv2d", "Conv3d", "ConvTranspose1d", "ConvTranspose2d"):
        assert issubclass(getattr(torch.nn, name), torch.nn.Module)


def test_conv_module_rejects_unknown_padding_strings_and_modes():
    # torch formats the valid values as a Python set, whose order varies between runs
    with pytest.raises(ValueError, match=r"^Invalid padding string 'full', should be one of \{"):
        torch.nn.Conv2d(3, 6, 3, padding="full")
    with pytest.raises(ValueError, match=r"^padding_mode must be one of \{.*'circular'"):
        torch.nn.Conv2d(3, 6, 3, padding_mode="foo")


# Not named `benchmark`: pytest-benchmark, where installed, owns that fixture name.
@pytest.mark.parametrize("cudnn_benchmark", [False, True])
@pytest.mark.parametrize("deterministic", [False, True])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float16])
def test_cuda_convolutions_under_each_cudnn_setting(cudnn_benchmark, deterministic, dtype, device):
    if device != "cuda":
        pytest.skip("cuDNN's settings apply to CUDA tensors")
    g = np.random.default_rng(2)
    x64 = torch.tensor(g.standard_normal((4, 6, 9, 8)), device=device)
    w64 = torch.tensor(g.standard_normal((8, 3, 3, 3)) * 0.3, device=device)
    x = x64.to(dtype).requires_grad_()
    w = w64.to(dtype).requires_grad_()
    with torch.backends.cudnn.flags(
        enabled=True, benchmark=cudnn_benchmark, deterministic=deterministic, allow_tf32=False
    ):
        y = F.conv2d(x, w, stride=(2, 1), padding=1, dilation=(1, 2), groups=2)
        gx, gw = torch.autograd.grad(y.float().square().sum(), (x, w))
    x64.requires_grad_()
    w64.requires_grad_()
    ref = F.conv2d(x64, w64, stride=(2, 1), padding=1, dilation=(1, 2), groups=2)
    rgx, rgw = torch.autograd.grad(ref.square().sum(), (x64, w64))
    tol = 1e-4 if dtype == torch.float32 else 3e-2
    for a, b in ((y, ref), (gx, rgx), (gw, rgw)):
        scale = float(b.abs().max())
        assert float((a.double() - b).abs().max()) <= tol * scale


def test_cuda_conv_runs_on_cudnn_where_it_loads(device):
    if device != "cuda":
        pytest.skip("cuDNN runs CUDA tensors")
    x = torch.randn(1, 2, 5, 5, device=device, requires_grad=True)
    w = torch.randn(3, 2, 3, 3, device=device)
    y = F.conv2d(x, w)
    assert y.grad_fn.cudnn is torch.backends.cudnn.is_available()
    with torch.backends.cudnn.flags(enabled=False):
        assert F.conv2d(x, w).grad_fn.cudnn is False


def test_host_im2col_and_col2im_refuse_bad_arguments():
    x = torch.randn(1, 2, 4, 4)
    im2col, col2im = torch._C._im2col, torch._C._col2im
    with pytest.raises(RuntimeError, match="windows outside the input"):
        im2col(x, 1, [3, 3], [1, 1], [2, 2], [2, 2])
    with pytest.raises(RuntimeError, match="channels not divisible by groups"):
        im2col(x, 3, [1, 1], [1, 1], [1, 1], [4, 4])
    with pytest.raises(RuntimeError, match="one kernel size, stride, dilation"):
        im2col(x, 1, [1], [1, 1], [1, 1], [4, 4])
    src = torch.randn(1, 2, 2, 2, 3, 3)  # (N, C, *out, *k)
    with pytest.raises(RuntimeError, match="windows outside the result"):
        col2im(src, 2, [3, 3], [1, 1], [1, 1])
    with pytest.raises(RuntimeError, match="expected float32 or float64"):
        col2im(src.half(), 2, [4, 4], [1, 1], [1, 1])
    # the adjoint: <im2col(x), c> == <x, col2im(c)>
    cols = im2col(x.double(), 1, [2, 3], [1, 1], [2, 1], [2, 2])
    c = torch.randn(cols.shape, dtype=torch.float64)
    view = c.view(1, 2, 2, 2, 2, 3).permute(0, 3, 1, 2, 4, 5)  # (N, C, *out, *k)
    back = col2im(view, 2, [4, 4], [1, 1], [2, 1])
    assert abs(float((cols * c).sum()) - float((x.double() * back).sum())) < 1e-9


def test_cudnn_path_can_be_given_in_the_environment():
    if not torch.backends.cudnn.is_available():
        pytest.skip("needs cuDNN")
    import os
    import subprocess
    import sys

    loaded = torch._C._cuda._cudnn_library_path()
    if not os.path.isabs(loaded):
        pytest.skip("cuDNN was found by the loader's own search, not in a known folder")
    folder = os.path.dirname(loaded)
    code = (
        "import cudalite as t; print(t.backends.cudnn.version(), t._C._cuda._cudnn_library_path())"
    )
    env = dict(os.environ, CUDALITE_CUDNN_PATH=folder)
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    version, path = out.stdout.split()
    assert int(version) == torch.backends.cudnn.version()
    assert path.startswith(folder)


class _EmulatedCudnn:
    """cuDNN's three convolution entry points computed on the CPU by the im2col path (the
    two gradients by autograd, the convolution being linear in each argument)."""

    calls = 0

    @classmethod
    def _conv(cls, x, w, p, s, d, groups):
        cls.calls += 1
        fn = F.conv2d if x.dim() == 4 else F.conv3d
        with torch.backends.cudnn.flags(enabled=False):
            return fn(x, w, None, s, p, d, groups)

    def _cudnn_convolution(self, x, w, p, s, d, groups, *flags):
        return self._conv(x, w, p, s, d, groups).detach()

    def _cudnn_convolution_backward_input(self, x_sizes, dy, w, p, s, d, groups, *flags):
        with torch.enable_grad():  # the adapter runs with grad mode off
            x0 = torch.zeros(x_sizes, dtype=dy.dtype, requires_grad=True)
            y = self._conv(x0, w.detach(), p, s, d, groups)
            return torch.autograd.grad(y, x0, dy)[0]

    def _cudnn_convolution_backward_weight(self, w_sizes, dy, x, p, s, d, groups, *flags):
        with torch.enable_grad():
            w0 = torch.zeros(w_sizes, dtype=dy.dtype, requires_grad=True)
            y = self._conv(x.detach(), w0, p, s, d, groups)
            return torch.autograd.grad(y, w0, dy)[0]


@pytest.mark.parametrize("name", [n for n, _ in CONV_CASES if "fold" not in n])
def test_cudnn_adapter_maps_every_convolution_onto_the_three_primitives(name, monkeypatch):
    # Where cuDNN runs, conv1d (as 2-d), transposed convolutions (as the adjoint pair) and
    # all gradients go through cuDNN's forward, backward data and backward filter: checked
    # here with those primitives emulated on the CPU, against torch's recorded outcomes.
    from cudalite.nn import _cudnn_conv

    monkeypatch.setattr(_cudnn_conv, "_lib", lambda: _EmulatedCudnn())

    def usable(x, pads=None):  # as on CUDA with cuDNN loaded (the emulator turns it off)
        if not torch.backends.cudnn.enabled:
            return False
        return pads is None or all(a == b for a, b in pads)

    monkeypatch.setattr(_cudnn_conv, "usable", usable)
    before = _EmulatedCudnn.calls
    check_value_case(torch, EXPECTED, name, torch.float64, "cpu")
    assert _EmulatedCudnn.calls >= before + 3  # forward, and the input and weight gradients


@pytest.mark.parametrize("which", ["input", "weight", "neither"])
def test_conv_output_memory_format_follows_torch(which, device):
    torch.manual_seed(0)
    x = torch.randn(2, 3, 6, 5, device=device)
    w = torch.randn(4, 3, 3, 3, device=device)
    ref = F.conv2d(x, w, padding=1, stride=(1, 2))
    if which == "input":
        x = x.contiguous(memory_format=torch.channels_last)
    if which == "weight":
        w = w.contiguous(memory_format=torch.channels_last)
    y = F.conv2d(x, w, padding=1, stride=(1, 2))
    last = y.is_contiguous(memory_format=torch.channels_last) and not y.is_contiguous()
    assert last == (which != "neither")
    assert torch.allclose(y, ref, atol=1e-5)


def test_conv_channels_last_gradients_match_contiguous(device):
    torch.manual_seed(0)
    x = torch.randn(2, 3, 6, 5, device=device)
    w = torch.randn(4, 3, 3, 3, device=device, requires_grad=True)
    gy = torch.randn(2, 4, 6, 5, device=device)
    grads = []
    for t in (x, x.contiguous(memory_format=torch.channels_last)):
        t = t.clone().requires_grad_(True)
        y = F.conv2d(t, w, padding=1)
        assert y.grad_fn.name() == "ConvolutionBackward0"
        grads.append(torch.autograd.grad(y, [t, w], gy))
    for a, b in zip(grads[0], grads[1], strict=True):
        assert torch.allclose(a, b, atol=1e-4)
