"""``nn.functional``: linear, activations, softmax and losses, recorded for autograd with
torch's node names (``AddmmBackward0``, ``MseLossBackward0``, ``NllLossBackward0`` ...)."""

from __future__ import annotations

import warnings

from cudalite import _C, _linalg, _ops
from cudalite._C import Tensor
from cudalite.autograd.functions import nn as _nn

__all__ = [
    "linear",
    "relu",
    "relu_",
    "sigmoid",
    "tanh",
    "softmax",
    "log_softmax",
    "mse_loss",
    "l1_loss",
    "nll_loss",
    "cross_entropy",
    "dropout",
]

_ADD = _ops.BINARY["add"]
_grad_on = _C._is_grad_enabled


def _check_devices(args, method):
    """torch's device check for a CUDA kernel's arguments (the first one sets the device)."""
    common = args[0][1].device
    for name, t in args[1:]:
        dev = t.device
        if dev != common and t.dim() != 0:
            raise RuntimeError(
                "Expected all tensors to be on the same device, but got "
                f"{name} is on {dev}, different from other tensors on {common} "
                f"(when checking argument in method {method})"
            )


def _linear_checks(input, weight, bias):
    """torch's checks, in its order: devices (the CUDA kernel's wrapper), then dtypes.
    Returns whether the input is on the GPU."""
    if not isinstance(input, Tensor):
        raise TypeError(
            f"linear(): argument 'input' (position 1) must be Tensor, not {type(input).__name__}"
        )
    cuda = input.is_cuda
    wcuda = weight.is_cuda
    if cuda != wcuda or (bias is not None and bias.is_cuda != wcuda):
        if bias is not None and input.dim() == 2:
            _check_devices(
                [("self", bias), ("mat1", input), ("mat2", weight)], "wrapper_CUDA_addmm"
            )
        _check_devices([("self", input), ("mat2", weight)], "wrapper_CUDA_mm")
    wdt = weight.dtype
    if input.dtype is not wdt:
        raise RuntimeError(
            f"mat1 and mat2 must have the same dtype, but got {input.dtype._short_name} and "
            f"{wdt._short_name}"
        )
    if bias is not None and bias.dtype is not wdt:
        raise RuntimeError(
            f"self and mat2 must have the same dtype, but got {bias.dtype._short_name} and "
            f"{wdt._short_name}"
        )
    return cuda


_record_addmm = []  # loaded on the first recorded call (keeps autograd's formulas lazy)


def linear(input, weight, bias=None):
    """``input @ weight.T + bias``; 2-D input with a bias is one addmm, as in torch."""
    cuda = _linear_checks(input, weight, bias)
    wt = weight.t()
    d = input.dim()
    if bias is not None and (d == 2 or input.is_contiguous()):
        x = input if d == 2 else input.reshape(-1, input.size(-1))
        if x.size(1) != wt.size(0):
            _ops.mm(x, wt)  # raises torch's shape error
        if cuda:
            r = _C._cuda_addmm(bias, x, wt, 1.0, 1.0)  # cuBLAS adds the bias
        else:
            r = _linalg._product(x, wt)
            _C._binary(_ADD, r, bias, r)  # the bias is added in place: one allocation
        if (x._rg or wt._rg or bias._rg) and _grad_on():
            if not _record_addmm:
                from cudalite.autograd.functions.linalg import record_addmm

                _record_addmm.append(record_addmm)
            _record_addmm[0](r, bias, x, wt, bias_rows=True)
        if d != 2:
            r = r.view(*input.shape[:-1], weight.shape[0])
        return r
    r = input.mm(wt) if d == 2 else input.matmul(wt)
    return r if bias is None else r + bias


def relu(input, inplace=False):
    return input.relu_() if inplace else input.relu()


def relu_(input):
    return input.relu_()


def sigmoid(input):
    return input.sigmoid()


def tanh(input):
    return input.tanh()


def _softmax_dim(ndim):
    warnings.warn(
        "Implicit dimension choice for softmax has been deprecated. Change the call to include "
        "dim=X as an argument.",
        stacklevel=3,
    )
    return 0 if ndim in (0, 1, 3) else 1


def softmax(input, dim=None, _stacklevel=3, dtype=None):
    if dim is None:
        dim = _softmax_dim(input.dim())
    return _nn.softmax(input, dim, dtype)


def log_softmax(input, dim=None, _stacklevel=3, dtype=None):
    if dim is None:
        dim = _softmax_dim(input.dim())
    return _nn.log_softmax(input, dim, dtype)


def _reduction(size_average, reduce, reduction):
    """The reduction string from torch's legacy ``size_average`` / ``reduce`` arguments."""
    if size_average is None and reduce is None:
        return reduction
    size_average = True if size_average is None else size_average
    reduce = True if reduce is None else reduce
    if size_average and reduce:
        return "mean"
    return "sum" if reduce else "none"


def _warn_size(input, target):
    if tuple(target.shape) != tuple(input.shape):
        warnings.warn(
            f"Using a target size ({target.shape}) that is different to the input size "
            f"({input.shape}). This will likely lead to incorrect results due to "
            "broadcasting. Please ensure they have the same size.",
            stacklevel=3,
        )


def mse_loss(input, target, size_average=None, reduce=None, reduction="mean", weight=None):
    """Mean squared error (one node, MseLossBackward0)."""
    _warn_size(input, target)
    reduction = _reduction(size_average, reduce, reduction)
    if weight is not None:
        loss = weight * (input - target) ** 2
        return loss if reduction == "none" else loss.sum() if reduction == "sum" else loss.mean()
    return _nn.mse_loss(input, target, reduction)


def l1_loss(input, target, size_average=None, reduce=None, reduction="mean", weight=None):
    """Mean absolute error: ``(input - target).abs()`` then the reduction, as torch records."""
    _warn_size(input, target)
    reduction = _reduction(size_average, reduce, reduction)
    _nn._check_reduction(reduction)
    loss = (input - target).abs()
    if weight is not None:
        loss = loss * weight
    if reduction == "none":
        return loss
    return loss.sum() if reduction == "sum" else loss.mean()


def nll_loss(
    input, target, weight=None, size_average=None, ignore_index=-100, reduce=None, reduction="mean"
):
    """Negative log likelihood of class indices given log-probabilities."""
    reduction = _reduction(size_average, reduce, reduction)
    return _nn.nll_loss(input, target, weight, ignore_index, reduction)


def cross_entropy(
    input,
    target,
    weight=None,
    size_average=None,
    ignore_index=-100,
    reduce=None,
    reduction="mean",
    label_smoothing=0.0,
):
    """log_softmax over the class dim followed by nll_loss (class indices), or the
    cross entropy with class probabilities when ``target`` is floating point."""
    reduction = _reduction(size_average, reduce, reduction)
    _nn._check_reduction(reduction)
    cdim = 0 if input.dim() == 1 else 1
    logp = _nn.log_softmax(input, cdim)
    classes = input.shape[cdim]
    if target.dtype.is_floating_point:
        if ignore_index != -100:
            raise RuntimeError("ignore_index is not supported for floating point target")
        if tuple(target.shape) != tuple(input.shape):
            raise RuntimeError(
                "Expected floating point type target to have the same shape as input, but got "
                f"target shape {list(target.shape)} and input shape {list(input.shape)}"
            )
        if label_smoothing > 0:
            target = target * (1 - label_smoothing) + label_smoothing / classes
        prod = logp * target
        if weight is not None:
            prod = prod * weight.reshape([classes] + [1] * (input.dim() - cdim - 1))
        loss = -prod.sum(cdim)
        if reduction == "none":
            return loss
        if reduction == "sum":
            return loss.sum()
        return loss.sum() / (input.numel() // classes if classes else 0)  # per sample and position
    nll = _nn.nll_loss(logp, target, weight, ignore_index, reduction)
    if label_smoothing <= 0:
        return nll
    # torch: (1 - eps) * nll + eps / C * (sum over classes of -logp, weighted)
    w = 1 if weight is None else weight.reshape([classes] + [1] * (input.dim() - cdim - 1))
    smooth = -(logp * w).sum(cdim)
    valid = target != ignore_index
    smooth = smooth.masked_fill(~valid, 0.0)  # a nan gradient stays out of ignored entries
    if reduction == "none":
        red = smooth
    elif reduction == "sum":
        red = smooth.sum()
    elif weight is None:
        red = smooth.sum() / valid.sum()
    else:
        red = smooth.sum() / (weight[target.clamp(0, classes - 1)] * valid).sum()
    return nll * (1 - label_smoothing) + red * (label_smoothing / classes)


def dropout(input, p=0.5, training=True, inplace=False):
    """Zeroes elements with probability ``p`` and scales the rest by 1 / (1 - p)."""
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
    if not training or p == 0:
        return input
    if p == 1:
        return input * 0
    keep = _C._empty(list(input.shape), input.dtype, input.device, False).uniform_() >= p
    out = input * keep * (1.0 / (1 - p))
    if inplace:
        input.copy_(out)
        return input
    return out
