"""Activation functions of ``nn.functional`` that compose tensor ops (gelu, silu, mish,
softplus, elu, leaky_relu, hardtanh, relu6), so autograd differentiates them through their
parts. Values follow torch's formulas; integer inputs raise torch's NotImplementedError where
torch's kernel is floating-only."""

from __future__ import annotations

from cudalite import _C, _arg_parser
from cudalite._C import Tensor
from cudalite.autograd.functions import gelu as _gelu

__all__ = [
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
]


def _tensor(op, x):
    if not isinstance(x, Tensor):
        raise TypeError(
            f"{op}(): argument 'input' (position 1) must be Tensor, not {_arg_parser.tp_name(x)}"
        )


def _floating(x, cpu_kernel, cuda_kernel):
    """torch's error for a floating-only kernel given an integer or bool tensor."""
    dt = x.dtype
    if not dt.is_floating_point:
        kernel = cuda_kernel if x.is_cuda else cpu_kernel
        raise NotImplementedError(f"\"{kernel}\" not implemented for '{dt._short_name}'")


def _inplace(input, out):
    """Writes ``out`` into ``input`` (torch's in-place variants) and returns ``input``."""
    input.copy_(out)
    return input


def gelu(input, approximate="none"):
    """``x * Phi(x)``, or its tanh approximation with ``approximate='tanh'``."""
    _tensor("gelu", input)
    if approximate not in ("none", "tanh"):
        raise RuntimeError("approximate argument must be either none or tanh.")
    _floating(input, "GeluKernelImpl", "GeluCUDAKernelImpl")
    return _gelu.gelu(input, approximate)


def silu(input, inplace=False):
    """``x * sigmoid(x)``."""
    _tensor("silu", input)
    _floating(input, "silu_cpu", "silu_cuda")
    out = input * input.sigmoid()
    return _inplace(input, out) if inplace else out


def _softplus(x, beta, threshold):
    """``log(1 + exp(beta * x)) / beta``, linear where ``beta * x > threshold``. The exp's
    argument is clamped so that the branch where() discards has finite gradients."""
    bx = x * beta if beta != 1 else x
    soft = bx.clamp(max=threshold).exp().log1p()
    if beta != 1:
        soft = soft / beta
    return x.where(bx > threshold, soft)


def softplus(input, beta=1.0, threshold=20.0):
    """``log(1 + exp(beta * x)) / beta``, reverting to ``x`` where ``beta * x > threshold``."""
    _tensor("softplus", input)
    _floating(input, "softplus_cpu", "softplus_cuda")
    return _softplus(input, beta, threshold)


def mish(input, inplace=False):
    """``x * tanh(softplus(x))``."""
    _tensor("mish", input)
    _floating(input, "mish_cpu", "mish_cuda")
    out = input * _softplus(input, 1.0, 20.0).tanh()
    return _inplace(input, out) if inplace else out


def elu(input, alpha=1.0, inplace=False):
    """``x`` where ``x > 0``, else ``alpha * (exp(x) - 1)``."""
    _tensor("elu", input)
    _floating(input, "elu_cpu", "elu_cuda")
    neg = input.clamp(max=0).expm1() * alpha
    out = input.where(input > 0, neg)
    return _inplace(input, out) if inplace else out


def elu_(input, alpha=1.0):
    return elu(input, alpha, True)


def leaky_relu(input, negative_slope=0.01, inplace=False):
    """``x`` where ``x > 0``, else ``negative_slope * x``."""
    _tensor("leaky_relu", input)
    _floating(input, "leaky_relu_cpu", "leaky_relu_cuda")
    out = input.where(input > 0, input * negative_slope)
    return _inplace(input, out) if inplace else out


def leaky_relu_(input, negative_slope=0.01):
    return leaky_relu(input, negative_slope, True)


def hardtanh(input, min_val=-1.0, max_val=1.0, inplace=False):
    """``x`` clamped to ``[min_val, max_val]``; as torch's, the gradient is zero at the bounds."""
    _tensor("hardtanh", input)
    if min_val > max_val:
        raise ValueError("min_val cannot be greater than max_val")
    if not input.dtype.is_floating_point:  # torch's kernel keeps integer dtypes
        min_val, max_val = int(min_val), int(max_val)
    out = input.clamp(min_val, max_val)
    if input.requires_grad and _C._is_grad_enabled():
        inside = (input > min_val).logical_and(input < max_val)
        out = input.where(inside, out.detach())
    return _inplace(input, out) if inplace else out


def hardtanh_(input, min_val=-1.0, max_val=1.0):
    return hardtanh(input, min_val, max_val, True)


def relu6(input, inplace=False):
    """``min(max(x, 0), 6)``."""
    _tensor("relu6", input)
    return hardtanh(input, 0.0, 6.0, inplace)
