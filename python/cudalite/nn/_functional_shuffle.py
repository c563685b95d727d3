"""Channel rearrangements of ``nn.functional``: ``pixel_shuffle`` (channels into space),
``pixel_unshuffle`` (space into channels) and ``channel_shuffle`` (interleaves channel
groups): views, one permute and a copy, differentiable through them."""

from __future__ import annotations

from cudalite import _arg_parser
from cudalite._C import Tensor

__all__ = ["pixel_shuffle", "pixel_unshuffle", "channel_shuffle", "native_channel_shuffle"]


def _tensor(op, x):
    if not isinstance(x, Tensor):
        raise TypeError(
            f"{op}(): argument 'input' (position 1) must be Tensor, not {_arg_parser.tp_name(x)}"
        )


def pixel_shuffle(input, upscale_factor):
    """``(*, C * r**2, H, W)`` to ``(*, C, H * r, W * r)``."""
    _tensor("pixel_shuffle", input)
    r = int(upscale_factor)
    d = input.dim()
    if d < 3:
        raise RuntimeError(
            "pixel_shuffle expects input to have at least 3 dimensions, but got input with "
            f"{d} dimension(s)"
        )
    if r <= 0:
        raise RuntimeError(f"pixel_shuffle expects a positive upscale_factor, but got {r}")
    c, h, w = input.shape[-3:]
    if c % (r * r):
        raise RuntimeError(
            "pixel_shuffle expects its input's 'channel' dimension to be divisible by the "
            f"square of upscale_factor, but input.size(-3)={c} is not divisible by {r * r}"
        )
    batch = list(input.shape[:-3])
    b = len(batch)
    oc = c // (r * r)
    x = input.reshape(batch + [oc, r, r, h, w])
    x = x.permute(*range(b), b, b + 3, b + 1, b + 4, b + 2)
    return x.reshape(batch + [oc, h * r, w * r])


def pixel_unshuffle(input, downscale_factor):
    """``(*, C, H * r, W * r)`` to ``(*, C * r**2, H, W)``."""
    _tensor("pixel_unshuffle", input)
    r = int(downscale_factor)
    d = input.dim()
    if d < 3:
        raise RuntimeError(
            "pixel_unshuffle expects input to have at least 3 dimensions, but got input with "
            f"{d} dimension(s)"
        )
    if r <= 0:
        raise RuntimeError(f"pixel_unshuffle expects a positive downscale_factor, but got {r}")
    c, h, w = input.shape[-3:]
    if h % r:
        raise RuntimeError(
            "pixel_unshuffle expects height to be divisible by downscale_factor, but "
            f"input.size(-2)={h} is not divisible by {r}"
        )
    if w % r:
        raise RuntimeError(
            "pixel_unshuffle expects width to be divisible by downscale_factor, but "
            f"input.size(-1)={w} is not divisible by {r}"
        )
    batch = list(input.shape[:-3])
    b = len(batch)
    x = input.reshape(batch + [c, h // r, r, w // r, r])
    x = x.permute(*range(b), b, b + 2, b + 4, b + 1, b + 3)
    return x.reshape(batch + [c * r * r, h // r, w // r])


def channel_shuffle(input, groups):
    """``(N, g * k, *)`` viewed as ``(N, g, k, *)``, transposed to ``(N, k, g, *)`` and
    flattened back."""
    _tensor("channel_shuffle", input)
    g = int(groups)
    d = input.dim()
    if d <= 2:
        raise RuntimeError(
            "channel_shuffle expects input with > 2 dims, but got input with sizes "
            f"{list(input.shape)}"
        )
    if g <= 0:
        raise RuntimeError(
            f"Number of groups to divide channels in must be positive. Value of groups:{g}"
        )
    n, c = input.shape[0], input.shape[1]
    if c % g:
        raise RuntimeError(
            f"Number of channels must be divisible by groups. Got {c} channels and {g} groups."
        )
    rest = list(input.shape[2:])
    x = input.reshape([n, g, c // g] + rest).transpose(1, 2)
    return x.reshape(list(input.shape))


def native_channel_shuffle(input, groups):
    """``channel_shuffle`` (torch's name of its native kernel)."""
    return channel_shuffle(input, groups)
