"""Divergence and likelihood losses of ``nn.functional``: kl_div, poisson_nll_loss and
gaussian_nll_loss, composed of tensor ops with torch's formulas, checks and reductions."""

from __future__ import annotations

import math
import warnings

from cudalite import _C
from cudalite.autograd.functions import nn as _nn
from cudalite.nn._functional_loss import _legacy, _reduce, _tensors

__all__ = ["kl_div", "poisson_nll_loss", "gaussian_nll_loss"]


def kl_div(input, target, size_average=None, reduce=None, reduction="mean", log_target=False):
    """``target * (log(target) - input)`` (``input`` holds log-probabilities; with
    ``log_target`` the target does too). ``'batchmean'`` divides the sum by the batch size,
    ``'mean'`` by the number of elements (with torch's warning)."""
    if size_average is not None or reduce is not None:
        reduction_enum = _legacy(size_average, reduce, reduction)
    else:
        if reduction == "mean":
            warnings.warn(
                "reduction: 'mean' divides the total loss by both the batch size and the "
                "support size.'batchmean' divides only by the batch size, and aligns with the "
                "KL div math definition.'mean' will be changed to behave the same as "
                "'batchmean' in the next major release.",
                stacklevel=2,
            )
        reduction_enum = "sum" if reduction == "batchmean" else reduction
    _nn._check_reduction(reduction_enum)
    _tensors("kl_div", ("input", 1, input), ("target", 2, target))
    if not input.dtype.is_floating_point or not target.dtype.is_floating_point:
        if not (input.dtype.is_complex or target.dtype.is_complex):
            raise RuntimeError("kl_div: Integral inputs not supported.")
    if log_target:
        loss = target.exp() * (target - input)
    else:
        loss = target.xlogy(target) - target * input
    out = _reduce(loss, reduction_enum)
    if reduction == "batchmean" and input.dim() != 0:
        out = out / input.size(0)
    return out


def poisson_nll_loss(
    input,
    target,
    log_input=True,
    full=False,
    size_average=None,
    eps=1e-8,
    reduce=None,
    reduction="mean",
):
    """``exp(input) - target * input`` (``log_input``) or ``input - target * log(input +
    eps)``; ``full`` adds Stirling's approximation of ``log(target!)`` where target > 1."""
    if size_average is not None or reduce is not None:
        reduction = _legacy(size_average, reduce, reduction)
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(reduction + " is not a valid value for reduction")
    _tensors("poisson_nll_loss", ("input", 1, input), ("target", 2, target))
    if log_input:
        loss = input.exp() - target * input
    else:
        loss = input - target * (input + eps).log()
    if full:
        stirling = target * target.log() - target + (target * (2 * math.pi)).log() * 0.5
        loss = loss + stirling.masked_fill(target <= 1, 0)
    return _reduce(loss, reduction)


def _any(x):
    from cudalite import any as any_

    return any_(x)  # a TypeError for a non-tensor var, as torch.any's


def gaussian_nll_loss(input, target, var, full=False, eps=1e-6, reduction="mean"):
    """``0.5 * (log(var) + (input - target)**2 / var)`` (plus ``0.5 * log(2 * pi)`` with
    ``full``); ``var`` is clamped to ``>= eps`` without changing its gradient."""
    if isinstance(var, float):
        if var < 0:
            raise ValueError("var has negative entry/entries")
        from cudalite import ones_like

        var = var * ones_like(input)
    elif bool(_any(var < 0)):
        raise ValueError("var has negative entry/entries")
    if tuple(var.shape) != tuple(input.shape):
        if tuple(input.shape[:-1]) == tuple(var.shape):
            var = var.unsqueeze(-1)
        elif input.dim() == var.dim() and (
            sum(y for x, y in zip(input.shape, var.shape, strict=True) if x != y) == 1
        ):
            pass
        else:
            raise ValueError("var is of incorrect size")
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(reduction + " is not valid")
    v = var.clone()
    if v.requires_grad and _C._is_grad_enabled():
        v = v + (v.clamp(min=eps) - v).detach()
    else:
        v = v.clamp(min=eps)
    loss = 0.5 * (v.log() + (input - target) ** 2 / v)
    if full:
        loss = loss + 0.5 * math.log(2 * math.pi)
    return _reduce(loss, reduction)
