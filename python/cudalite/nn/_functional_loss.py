"""Losses of ``nn.functional`` composed of tensor ops: smooth_l1_loss, huber_loss,
binary_cross_entropy and binary_cross_entropy_with_logits (torch's formulas and checks)."""

from __future__ import annotations

import warnings

from cudalite import _C, _arg_parser
from cudalite._C import Tensor
from cudalite.autograd.functions import nn as _nn

__all__ = [
    "smooth_l1_loss",
    "huber_loss",
    "binary_cross_entropy",
    "binary_cross_entropy_with_logits",
]


def _tensors(op, *named):
    for name, pos, value in named:
        if value is not None and not isinstance(value, Tensor):
            raise TypeError(
                f"{op}(): argument '{name}' (position {pos}) must be Tensor, not "
                f"{_arg_parser.tp_name(value)}"
            )


def _legacy(size_average, reduce, reduction):
    if size_average is None and reduce is None:
        return reduction
    from cudalite.nn.functional import _reduction

    return _reduction(size_average, reduce, reduction)


def _warn_size(input, target):
    if tuple(target.shape) != tuple(input.shape):
        warnings.warn(
            f"Using a target size ({target.shape}) that is different to the input size "
            f"({input.shape}). This will likely lead to incorrect results due to "
            "broadcasting. Please ensure they have the same size.",
            stacklevel=3,
        )


def _not_differentiable(op, **named):
    """torch's error for a weight that requires grad (its formulas have none for them)."""
    for name, t in named.items():
        if t is not None and t.requires_grad and _C._is_grad_enabled():
            raise RuntimeError(
                f"The function '{op}' is not differentiable with respect to argument "
                f"'{name}'. This input cannot have requires_grad True."
            )


def _reduce(loss, reduction):
    if reduction == "none":
        return loss
    return loss.sum() if reduction == "sum" else loss.mean()


def smooth_l1_loss(input, target, size_average=None, reduce=None, reduction="mean", beta=1.0):
    """``0.5 * d**2 / beta`` where ``|d| < beta``, else ``|d| - 0.5 * beta`` (``d = input -
    target``); ``beta = 0`` is the L1 loss."""
    _tensors("smooth_l1_loss", ("input", 1, input), ("target", 2, target))
    _warn_size(input, target)
    reduction = _legacy(size_average, reduce, reduction)
    _nn._check_reduction(reduction)
    if beta < 0:
        raise RuntimeError("smooth_l1_loss does not support negative values for beta.")
    d = (input - target).abs()
    if beta == 0:
        return _reduce(d, reduction)
    loss = (d * d * (0.5 / beta)).where(d < beta, d - 0.5 * beta)
    return _reduce(loss, reduction)


def huber_loss(input, target, reduction="mean", delta=1.0, weight=None):
    """``0.5 * d**2`` where ``|d| < delta``, else ``delta * (|d| - 0.5 * delta)``."""
    _tensors("huber_loss", ("input", 1, input), ("target", 2, target), ("weight", 5, weight))
    _warn_size(input, target)
    _nn._check_reduction(reduction)
    if delta <= 0:
        raise RuntimeError("huber_loss does not support non-positive values for delta.")
    if weight is not None and tuple(weight.shape) != tuple(input.shape):
        raise ValueError("Weights and input must have the same size.")
    d = (input - target).abs()
    loss = (d * d * 0.5).where(d < delta, (d - 0.5 * delta) * delta)
    if weight is not None:
        loss = loss * weight
    return _reduce(loss, reduction)


def binary_cross_entropy(
    input, target, weight=None, size_average=None, reduce=None, reduction="mean"
):
    """``-w * (t * log(x) + (1 - t) * log(1 - x))`` with each log clamped to >= -100, as
    torch's. ``input`` holds probabilities in [0, 1]."""
    _tensors(
        "binary_cross_entropy",
        ("input", 1, input),
        ("target", 2, target),
        ("weight", 3, weight),
    )
    reduction = _legacy(size_average, reduce, reduction)
    if tuple(target.shape) != tuple(input.shape):
        raise ValueError(
            f"Using a target size ({target.shape}) that is different to the input size "
            f"({input.shape}) is deprecated. Please ensure they have the same size."
        )
    _nn._check_reduction(reduction)
    _not_differentiable("binary_cross_entropy", weight=weight)
    dt = input.dtype
    if not dt.is_floating_point:
        raise NotImplementedError(
            f"\"binary_cross_entropy\" not implemented for '{dt._short_name}'"
        )
    if target.dtype is not dt:
        raise RuntimeError(f"Found dtype {target.dtype._short_name} but expected {dt._short_name}")
    if input.numel() and not ((input >= 0).logical_and(input <= 1)).all().item():
        raise RuntimeError("all elements of input should be between 0 and 1")
    log_x = input.log().clamp(min=-100)
    log_1mx = (1 - input).log().clamp(min=-100)
    loss = -(target * log_x + (1 - target) * log_1mx)
    if weight is not None:
        loss = loss * weight
    return _reduce(loss, reduction)


def binary_cross_entropy_with_logits(
    input,
    target,
    weight=None,
    size_average=None,
    reduce=None,
    reduction="mean",
    pos_weight=None,
):
    """``binary_cross_entropy(sigmoid(x), t)`` computed stably from the logits:
    ``(1 - t) * x + (1 + (pos_weight - 1) * t) * softplus(-x)``, then ``weight``."""
    _tensors(
        "binary_cross_entropy_with_logits",
        ("input", 1, input),
        ("target", 2, target),
        ("weight", 3, weight),
        ("pos_weight", 7, pos_weight),
    )
    reduction = _legacy(size_average, reduce, reduction)
    if tuple(target.shape) != tuple(input.shape):
        raise ValueError(
            f"Target size ({target.shape}) must be the same as input size ({input.shape})"
        )
    _nn._check_reduction(reduction)
    _not_differentiable("binary_cross_entropy_with_logits", weight=weight, pos_weight=pos_weight)
    if not target.dtype.is_floating_point and input.dtype.is_floating_point:
        raise RuntimeError(
            f"result type {input.dtype._short_name} can't be cast to the desired output type "
            f"{target.dtype._short_name}"
        )
    # -log(sigmoid(x)) = log1p(exp(-|x|)) + max(-x, 0), each branch with a finite gradient
    pos, neg = input.clamp(min=0), input.clamp(max=0)
    sp = (-pos).exp().log1p().where(input >= 0, neg.exp().log1p() - neg)
    if pos_weight is not None:
        loss = (1 - target) * input + ((pos_weight - 1) * target + 1) * sp
    else:
        loss = (1 - target) * input + sp
    if weight is not None:
        loss = loss * weight
    return _reduce(loss, reduction)
