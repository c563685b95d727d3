"""``nn.functional.lp_pool1d/2d/3d``: the power-average pooling ``(sum of x**p over the
window) ** (1 / p)``, computed as torch's: an average pool of ``x**p`` times the window size,
then the 1/p-th power (negative sums clamped to zero)."""

from __future__ import annotations

from cudalite.nn._functional_pooling import avg_pool1d, avg_pool2d
from cudalite.nn._functional_pooling3d import avg_pool3d

__all__ = ["lp_pool1d", "lp_pool2d", "lp_pool3d"]


def _tuple(v, n):
    if isinstance(v, int):
        return [v] * n
    v = list(v)
    return v * n if len(v) == 1 else v


def _finish(out, window, norm_type):
    return (out.sign() * out.abs().relu()).mul(window).pow(1.0 / norm_type)


def lp_pool1d(input, norm_type, kernel_size, stride=None, ceil_mode=False):
    """Power-average pooling over ``(N, C, L)``."""
    x = input.pow(norm_type)
    if stride is not None:
        out = avg_pool1d(x, kernel_size, stride, 0, ceil_mode)
    else:
        out = avg_pool1d(x, kernel_size, padding=0, ceil_mode=ceil_mode)
    return _finish(out, kernel_size, norm_type)


def lp_pool2d(input, norm_type, kernel_size, stride=None, ceil_mode=False):
    """Power-average pooling over ``(N, C, H, W)``."""
    kh, kw = _tuple(kernel_size, 2)
    x = input.pow(norm_type)
    if stride is not None:
        out = avg_pool2d(x, kernel_size, stride, 0, ceil_mode)
    else:
        out = avg_pool2d(x, kernel_size, padding=0, ceil_mode=ceil_mode)
    return _finish(out, kh * kw, norm_type)


def lp_pool3d(input, norm_type, kernel_size, stride=None, ceil_mode=False):
    """Power-average pooling over ``(N, C, D, H, W)``."""
    kd, kh, kw = _tuple(kernel_size, 3)
    x = input.pow(norm_type)
    if stride is not None:
        out = avg_pool3d(x, kernel_size, stride, 0, ceil_mode)
    else:
        out = avg_pool3d(x, kernel_size, padding=0, ceil_mode=ceil_mode)
    return _finish(out, kd * kh * kw, norm_type)
