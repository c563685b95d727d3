"""Activation functions of ``nn.functional`` that compose tensor ops (gelu, silu, mish,
softplus, elu, leaky_relu, hardtanh, relu6, celu, selu, glu, the shrinks, hardsigmoid,
hardswish, logsigmoid, softmin, softsign, threshold, rrelu, prelu), so autograd
differentiates them through their parts. Values follow torch's formulas; integer inputs
raise torch's NotImplementedError where torch's kernel is floating-only."""

from __future__ import annotations

import struct
import warnings

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
    # ---- more activations ----
    "celu",
    "celu_",
    "selu",
    "selu_",
    "glu",
    "hardshrink",
    "softshrink",
    "hardsigmoid",
    "hardswish",
    "logsigmoid",
    "softmin",
    "softsign",
    "tanhshrink",
    "threshold",
    "threshold_",
    "rrelu",
    "rrelu_",
    "prelu",
    "gumbel_softmax",
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


# ---- more activations ----

_ONE_SIXTH_F = struct.unpack("f", struct.pack("f", 1.0 / 6.0))[0]  # 1/6 rounded to float
_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_SCALE = 1.0507009873554804934193349852946


def celu(input, alpha=1.0, inplace=False):
    """``x`` where ``x > 0``, else ``alpha * (exp(x / alpha) - 1)``."""
    _tensor("celu_" if inplace else "celu", input)
    if alpha == 0:
        raise RuntimeError("ZeroDivisionError: alpha cannot be 0 for CELU")
    _floating(input, "elu_cpu", "elu_cuda")
    neg = (input.clamp(max=0) * (1.0 / alpha)).expm1() * alpha
    out = input.where(input > 0, neg)
    return _inplace(input, out) if inplace else out


def celu_(input, alpha=1.0):
    return celu(input, alpha, True)


def selu(input, inplace=False):
    """``scale * x`` where ``x > 0``, else ``scale * alpha * (exp(x) - 1)`` (torch's
    constants)."""
    _tensor("selu_" if inplace else "selu", input)
    _floating(input, "elu_cpu", "elu_cuda")
    neg = input.clamp(max=0).expm1() * (_SELU_ALPHA * _SELU_SCALE)
    out = (input * _SELU_SCALE).where(input > 0, neg)
    return _inplace(input, out) if inplace else out


def selu_(input):
    return selu(input, True)


def glu(input, dim=-1):
    """``a * sigmoid(b)`` for the halves ``a``, ``b`` of ``input`` along ``dim``."""
    _tensor("glu", input)
    if input.dim() == 0:
        raise RuntimeError("glu does not support scalars because halving size must be even")
    d = _C._wrap_dim(dim, input.dim())
    n = input.size(d)
    if n % 2:
        raise RuntimeError(f"Halving dimension must be even, but dimension {d} is size {n}")
    _floating(input, "glu_cpu", "glu_cuda")
    a, b = input.narrow(d, 0, n // 2), input.narrow(d, n // 2, n // 2)
    return a * b.sigmoid()


def hardshrink(input, lambd=0.5):
    """``x`` where ``|x| > lambd``, else 0."""
    _tensor("hardshrink", input)
    _floating(input, "hardshrink_cpu", "hardshrink_cuda")
    return input.where((input < -lambd).logical_or(input > lambd), 0.0)


def softshrink(input, lambd=0.5):
    """``x - lambd`` above ``lambd``, ``x + lambd`` below ``-lambd``, else 0."""
    _tensor("softshrink", input)
    if lambd < 0:
        from cudalite import finfo

        dt = input.dtype
        top = f"{finfo(dt).max:g}" if dt.is_floating_point else f"{2**63 - 1}"
        raise RuntimeError(
            f"lambda must be in range [0, {top}] for input dtype {dt._short_name}, but found "
            f"{_num(lambd)}"
        )
    _floating(input, "softshrink_cpu", "softshrink_cuda")
    inner = input * 0
    out = (input - lambd).where(input > lambd, inner)
    return (input + lambd).where(input < -lambd, out)


def _num(v):
    """A number as c10's Scalar prints it in messages (``-1`` for an integral float)."""
    v = float(v)
    return str(int(v)) if v.is_integer() else repr(v)


def _hardsigmoid(x):
    """``relu6(x + 3) / 6`` with torch's gradient: 1/6 strictly inside (-3, 3), else 0."""
    lin = (x + 3) / 6.0
    y = lin.clamp(0.0, 1.0)
    if x.requires_grad and _C._is_grad_enabled():
        # torch's backward multiplies by 1/6 rounded to float, in every dtype
        slope = x * _ONE_SIXTH_F
        inside = (x > -3.0).logical_and(x < 3.0)
        y = (slope - slope.detach() + lin.detach()).where(inside, y.detach())
    return y


def hardsigmoid(input, inplace=False):
    """``0`` below -3, ``1`` above 3, ``x / 6 + 1 / 2`` between."""
    _tensor("hardsigmoid_" if inplace else "hardsigmoid", input)
    _floating(input, "hardsigmoid_cpu", "hardsigmoid_cuda")
    out = _hardsigmoid(input)
    return _inplace(input, out) if inplace else out


def hardswish(input, inplace=False):
    """``x * relu6(x + 3) / 6``; torch's gradient: 0 below -3, ``x / 3 + 1 / 2`` on
    [-3, 3], 1 above."""
    _tensor("hardswish_" if inplace else "hardswish", input)
    _floating(input, "hardswish_cpu", "hardswish_cuda")
    mid = (input >= -3.0).logical_and(input <= 3.0)
    upper = input.masked_fill(input <= 3.0, 0.0)
    out = (input * (input + 3) / 6.0).where(mid, upper)
    return _inplace(input, out) if inplace else out


def logsigmoid(input):
    """``log(sigmoid(x)) = min(x, 0) - log1p(exp(-|x|))``, stable for large ``|x|``."""
    _tensor("log_sigmoid", input)
    _floating(input, "log_sigmoid_cpu", "log_sigmoid_forward_cuda")
    return input.clamp(max=0) - (-input.abs()).exp().log1p()


def softmin(input, dim=None, _stacklevel=3, dtype=None):
    """``softmax(-input, dim)``."""
    from cudalite.nn.functional import _softmax_dim

    if dim is None:
        dim = _softmax_dim(input.dim())
    if dtype is None:
        return (-input).softmax(dim)
    return (-input).softmax(dim, dtype=dtype)


def softsign(input):
    """``x / (1 + |x|)``."""
    return input / (input.abs() + 1)


def tanhshrink(input):
    """``x - tanh(x)``."""
    return input - input.tanh()


def threshold(input, threshold, value, inplace=False):
    """``x`` where ``x > threshold``, else ``value`` (integer inputs keep their dtype)."""
    _tensor("threshold_" if inplace else "threshold", input)
    if input.dtype is _C.bool:
        kernel = "threshold_cuda" if input.is_cuda else "threshold_cpu"
        raise NotImplementedError(f"\"{kernel}\" not implemented for 'Bool'")
    if not input.dtype.is_floating_point and input.dtype is not _C.bool:
        value = int(value)
    out = input.masked_fill(input <= threshold, value)
    return _inplace(input, out) if inplace else out


def threshold_(input, threshold, value):
    return globals()["threshold"](input, threshold, value, True)


def rrelu(input, lower=1.0 / 8, upper=1.0 / 3, training=False, inplace=False):
    """Leaky ReLU with slope ``(lower + upper) / 2``; in training each non-positive element
    gets its own slope drawn from U(lower, upper)."""
    _tensor("rrelu_" if inplace else "rrelu", input)
    if lower > upper:
        raise RuntimeError("Lower bound should be less than or equal to the upper bound")
    if training:
        _floating(input, "rrelu_with_noise_out_cpu", "rrelu_with_noise_out_cuda")
    else:
        _floating(input, "leaky_relu_cpu", "leaky_relu_cuda")
    if training:
        slope = _C._empty_like(input, None, None).uniform_(lower, upper)
        out = input.where(input > 0, input * slope)
    else:
        out = input.where(input > 0, input * ((lower + upper) / 2))
    return _inplace(input, out) if inplace else out


def rrelu_(input, lower=1.0 / 8, upper=1.0 / 3, training=False):
    return rrelu(input, lower, upper, training, True)


def prelu(input, weight):
    """``x`` where ``x > 0``, else ``weight * x``, one slope per channel (dim 1) or one for
    all."""
    _tensor("prelu", input)
    if not isinstance(weight, Tensor):
        raise TypeError(
            "prelu(): argument 'weight' (position 2) must be Tensor, not "
            f"{_arg_parser.tp_name(weight)}"
        )
    n = weight.numel()
    if n != 1:
        if input.dim() == 0:
            raise RuntimeError("Not allow zero-dim input tensor.")
        channels = input.size(1) if input.dim() >= 2 else 1
        if n != channels:
            raise RuntimeError(
                "Mismatch of parameter numbers and input channel size. Found parameter numbers "
                f"= {n} and channel size = {channels}."
            )
    _floating(input, "prelu_cpu", "prelu_cuda")
    w = weight
    if input.dim() >= 2:
        w = weight.reshape([n] + [1] * (input.dim() - 2))
    elif n == 1:
        w = weight.reshape([1] * input.dim()) if input.dim() else weight.reshape([])
    return input.where(input > 0, input * w)


def gumbel_softmax(logits, tau=1, hard=False, eps=1e-10, dim=-1):
    """``softmax((logits + g) / tau)`` with Gumbel(0, 1) noise ``g``; ``hard=True`` returns
    the one-hot of its argmax with the soft sample's gradient (straight-through)."""
    if eps != 1e-10:
        warnings.warn("`eps` parameter is deprecated and has no effect.", stacklevel=2)
    gumbels = -_C._empty_like(logits, None, None).exponential_().log()
    y_soft = ((logits + gumbels) / tau).softmax(dim)
    if not hard:
        return y_soft
    index = y_soft.max(dim, keepdim=True)[1]
    y_hard = (logits.detach() * 0).scatter_(dim, index, 1.0)
    return y_hard - y_soft.detach() + y_soft
