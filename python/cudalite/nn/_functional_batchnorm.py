"""``nn.functional`` batch_norm, instance_norm and group_norm, and the channel dropouts
(dropout1d/2d/3d).

batch_norm normalises each channel (dim 1) over the batch and spatial dims: in training with
the batch's statistics (biased variance), updating the running statistics in place with the
unbiased variance (``(1 - momentum) * running + momentum * batch``), in evaluation with the
running statistics. Forward and backward are each one fused call (``native_batch_norm``,
autograd/functions/batch_norm.py) recorded as ``NativeBatchNormBackward0``; half and
bfloat16 inputs are normalised in float32.
"""

from __future__ import annotations

import math
import warnings

from cudalite import _C, _arg_parser
from cudalite._C import Tensor
from cudalite.autograd.functions import batch_norm as _bn

__all__ = [
    "batch_norm",
    "instance_norm",
    "group_norm",
    "dropout1d",
    "dropout2d",
    "dropout3d",
]

_grad_on = _C._is_grad_enabled


def _cshape(x):
    """(1, C, 1, ...): a per-channel vector shaped to broadcast against ``x``."""
    return [1, x.shape[1]] + [1] * (x.dim() - 2)


def _check_numel(name, t, c):
    if t is not None and t.numel() != c:
        raise RuntimeError(f"{name} should contain {c} elements not {t.numel()}")


def batch_norm(
    input,
    running_mean,
    running_var,
    weight=None,
    bias=None,
    training=False,
    momentum=0.1,
    eps=1e-5,
):
    """Per-channel normalisation over every dim but dim 1, then ``* weight + bias``."""
    if not isinstance(input, Tensor):
        raise TypeError(
            f"batch_norm(): argument 'input' (position 1) must be Tensor, not "
            f"{_arg_parser.tp_name(input)}"
        )
    if training:
        size = list(input.shape)
        n = 1
        for i, v in enumerate(size):
            if i != 1:
                n *= v
        if n == 1:
            raise ValueError(
                "Expected more than 1 value per channel when training, got input size "
                f"{input.shape}"
            )
    if input.dim() < 2:
        raise RuntimeError(
            f"batch_norm(): Expected input to have at least 2 dimensions, but got {input.dim()}"
        )
    c = input.shape[1]
    for name, t in (
        ("running_mean", running_mean),
        ("running_var", running_var),
        ("weight", weight),
        ("bias", bias),
    ):
        _check_numel(name, t, c)
    if _grad_on():
        for name, t in (("running_mean", running_mean), ("running_var", running_var)):
            if t is not None and t.requires_grad:
                raise RuntimeError(
                    f"The function 'native_batch_norm' is not differentiable with respect to "
                    f"argument '{name}'. This input cannot have requires_grad True."
                )
    if momentum is None or isinstance(momentum, str):
        raise TypeError(
            "batch_norm(): argument 'momentum' (position 7) must be float, not "
            f"{_arg_parser.tp_name(momentum)}"
        )
    if not training and (running_mean is None or running_var is None):
        which = "running_mean" if running_mean is None else "running_var"
        raise RuntimeError(f"{which} must be defined in evaluation mode")
    if input.numel() == 0:
        # torch's batch_norm of an empty input: the input scaled and shifted by the first
        # channel's parameters (so that gradients reach them), the statistics untouched.
        out = input.clone()
        if weight is not None:
            out = out * weight[0]
        if bias is not None:
            out = out + bias[0]
        return out
    return _bn.native_batch_norm(
        input, weight, bias, running_mean, running_var, training, momentum, eps
    )


def instance_norm(
    input,
    running_mean=None,
    running_var=None,
    weight=None,
    bias=None,
    use_input_stats=True,
    momentum=0.1,
    eps=1e-5,
):
    """Normalisation of each (sample, channel) plane: batch_norm of the input seen as
    ``(1, N * C, *spatial)``; running statistics are averaged over the batch."""
    n, c = input.shape[0], input.shape[1]
    shape = [1, n * c] + list(input.shape[2:])
    rm = running_mean.repeat(n) if running_mean is not None else None
    rv = running_var.repeat(n) if running_var is not None else None
    w = weight.repeat(n) if weight is not None else None
    b = bias.repeat(n) if bias is not None else None
    y = batch_norm(input.reshape(shape), rm, rv, w, b, use_input_stats, momentum, eps)
    if use_input_stats:
        from cudalite.autograd import no_grad

        with no_grad():
            if running_mean is not None:
                running_mean.copy_(rm.view(n, c).mean(0))
            if running_var is not None:
                running_var.copy_(rv.view(n, c).mean(0))
    return y.view(input.shape)


def group_norm(input, num_groups, weight=None, bias=None, eps=1e-5):
    """Normalisation over groups of channels (and the spatial dims) of each sample, then a
    per-channel ``* weight + bias``."""
    if not isinstance(input, Tensor):
        raise TypeError(
            f"group_norm(): argument 'input' (position 1) must be Tensor, not "
            f"{_arg_parser.tp_name(input)}"
        )
    if input.dim() < 2:
        raise RuntimeError(
            f"Expected at least 2 dimensions for input tensor but received {input.dim()}"
        )
    n, c = input.shape[0], input.shape[1]
    size = [n * c // num_groups, num_groups] + list(input.shape[2:])
    if math.prod(size) // num_groups == 1:
        raise ValueError(
            f"Expected more than 1 value per channel when training, got input size {size}"
        )
    if c % num_groups:
        raise RuntimeError(
            "Expected number of channels in input to be divisible by num_groups, but got input "
            f"of shape {list(input.shape)} and num_groups={num_groups}"
        )
    for name, t in (("weight", weight), ("bias", bias)):
        if t is not None and (t.dim() != 1 or t.numel() != c):
            raise RuntimeError(
                f"Expected {name} to be a vector of size equal to the number of channels in "
                f"input, but got {name} of shape {list(t.shape)} and input of shape "
                f"{list(input.shape)}"
            )
    dt = input.dtype
    low = dt in (_C.float16, _C.bfloat16)
    x = input.float() if low else input
    xg = x.reshape(n, num_groups, x.numel() // max(n * num_groups, 1))
    mean = xg.mean(-1, keepdim=True)
    centered = xg - mean
    var = (centered * centered).mean(-1, keepdim=True)
    y = (centered * (var + eps).rsqrt()).view(input.shape)
    shape = _cshape(x)
    if weight is not None:
        y = y * weight.to(x.dtype).view(shape)
    if bias is not None:
        y = y + bias.to(x.dtype).view(shape)
    return y.to(dt) if low else y


# ---- channel dropout ----


def _feature_dropout(input, p, training, inplace, batched_dim, name):
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
    if not isinstance(input, Tensor):
        raise TypeError(
            f"{name}(): argument 'input' (position 1) must be Tensor, not "
            f"{_arg_parser.tp_name(input)}"
        )
    if not training or p == 0:
        return input
    unbatched = input.dim() == batched_dim - 1
    x = input.unsqueeze(0) if unbatched else input
    # torch's feature noise: one Bernoulli(1 - p) draw per (sample, channel).
    shape = list(x.shape[:2]) + [1] * (x.dim() - 2)
    if p == 1:
        noise = _C._full(shape, 0, x.dtype, x.device)
    else:
        noise = _C._empty(shape, x.dtype, x.device, False).bernoulli_(1 - p)
        noise.div_(1 - p)
    if inplace:
        x.mul_(noise)
        return input
    out = x * noise
    return out.squeeze(0) if unbatched else out


def dropout1d(input, p=0.5, training=True, inplace=False):
    """Zeroes whole channels of ``(N, C, L)`` (or ``(C, L)``) with probability ``p``."""
    if isinstance(input, Tensor) and input.dim() not in (2, 3):
        raise RuntimeError(
            "dropout1d: Expected 2D or 3D input, but received a "
            f"{input.dim()}D input. Note that dropout1d exists to provide channel-wise dropout "
            "on inputs with 1 spatial dimension, a channel dimension, and an optional batch "
            "dimension (i.e. 2D or 3D inputs)."
        )
    return _feature_dropout(input, p, training, inplace, 3, "dropout1d")


def dropout2d(input, p=0.5, training=True, inplace=False):
    """Zeroes whole channels of ``(N, C, H, W)`` (or ``(C, H, W)``) with probability ``p``."""
    if isinstance(input, Tensor):
        d = input.dim()
        if d not in (3, 4):
            warnings.warn(
                f"dropout2d: Received a {d}-D input to dropout2d, which is deprecated and will "
                "result in an error in a future release. To retain the behavior and silence "
                "this warning, please use dropout instead. Note that dropout2d exists to "
                "provide channel-wise dropout on inputs with 2 spatial dimensions, a channel "
                "dimension, and an optional batch dimension (i.e. 3D or 4D inputs).",
                stacklevel=2,
            )
        if d == 3:
            warnings.warn(
                "dropout2d: Received a 3D input to dropout2d and assuming that channel-wise 1D "
                "dropout behavior is desired - input is interpreted as shape (N, C, L), where C "
                "is the channel dim. This behavior will change in a future release to interpret "
                "the input as one without a batch dimension, i.e. shape (C, H, W). To maintain "
                "the 1D channel-wise dropout behavior, please switch to using dropout1d "
                "instead.",
                stacklevel=2,
            )
            return _feature_dropout(input, p, training, inplace, 3, "dropout2d")
    return _feature_dropout(input, p, training, inplace, 4, "dropout2d")


def dropout3d(input, p=0.5, training=True, inplace=False):
    """Zeroes whole channels of ``(N, C, D, H, W)`` (or ``(C, D, H, W)``)."""
    return _feature_dropout(input, p, training, inplace, 5, "dropout3d")
