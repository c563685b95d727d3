"""``nn.functional.alpha_dropout`` and ``feature_alpha_dropout``: dropout that keeps a SELU
network's mean and variance (dropped elements are set to SELU's negative saturation, then
everything is scaled and shifted), per element or per channel; torch's formula and random
stream (a Bernoulli(1 - p) mask drawn as torch draws it)."""

from __future__ import annotations

import math

from cudalite import _C

__all__ = ["alpha_dropout", "feature_alpha_dropout"]

_ALPHA = 1.7580993408473766


def _check_p(p):
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")


def _alpha(input, p, training, inplace, feature):
    if p == 0 or not training or input.numel() == 0:
        return input
    if p == 1:
        out = input * 0
    else:
        if feature:
            if input.dim() < 2:
                raise RuntimeError("Feature dropout requires at least 2 dimensions in the input")
            shape = list(input.shape[:2]) + [1] * (input.dim() - 2)
            noise = _C._empty(shape, input.dtype, input.device, False)
        else:
            noise = _C._empty_like(input, None, None)
        noise.bernoulli_(1 - p)
        a = 1.0 / math.sqrt((_ALPHA * _ALPHA * p + 1) * (1 - p))
        b = noise.add(-1).mul_(_ALPHA * a).add_(_ALPHA * a * p)
        noise.mul_(a)
        out = input * noise + b
    if inplace:
        input.copy_(out)
        return input
    return out


def alpha_dropout(input, p=0.5, training=False, inplace=False):
    """Alpha dropout of each element (identity unless ``training``)."""
    _check_p(p)
    return _alpha(input, p, training, inplace, False)


def feature_alpha_dropout(input, p=0.5, training=False, inplace=False):
    """Alpha dropout of whole channels (one draw per sample and channel)."""
    _check_p(p)
    return _alpha(input, p, training, inplace, True)
