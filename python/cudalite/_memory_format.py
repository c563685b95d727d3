"""Memory formats (torch.memory_format): ``contiguous_format``, ``preserve_format``,
``channels_last`` (4-D, NHWC strides) and ``channels_last_3d`` (5-D, NDHWC), for
``contiguous``, ``is_contiguous``, ``clone`` and ``to`` / ``cuda`` / ``cpu`` / the casts.

The fast paths (no memory_format, the default) never come here: the C++ bindings and the
Python methods call these functions only when a format is given.
"""

from __future__ import annotations

from cudalite import _C

__all__ = ["memory_format", "contiguous_format", "preserve_format", "channels_last",
           "channels_last_3d"]  # fmt: skip


class memory_format:  # noqa: N801  (torch's name)
    """A layout request; compare by identity, as torch's singletons."""

    def __init__(self, name):
        self._name = name

    def __repr__(self):
        return f"cudalite.{self._name}"

    def __reduce__(self):
        return self._name


contiguous_format = memory_format("contiguous_format")
preserve_format = memory_format("preserve_format")
channels_last = memory_format("channels_last")
channels_last_3d = memory_format("channels_last_3d")

# rank, the permutation whose contiguous layout a channels-last tensor has, and its inverse
_CHANNELS_LAST = {
    channels_last: (4, (0, 2, 3, 1), (0, 3, 1, 2)),
    channels_last_3d: (5, (0, 2, 3, 4, 1), (0, 4, 1, 2, 3)),
}
_contiguous = _C.Tensor.contiguous  # the C++ method: contiguous_format
_permute = _C.Tensor.permute


def _check(fmt, op):
    if not isinstance(fmt, memory_format):
        raise TypeError(
            f"{op}(): argument 'memory_format' must be torch.memory_format, not "
            f"{type(fmt).__name__}"
        )


def _channels_last_strides(shape, perm):
    strides, step = [0] * len(shape), 1
    for d in reversed(perm):
        strides[d] = step
        step *= shape[d]
    return strides


def is_contiguous(t, fmt):
    """``t.is_contiguous(memory_format=fmt)``: dims of size 1 may have any stride."""
    _check(fmt, "is_contiguous")
    if fmt is contiguous_format or fmt is preserve_format:
        return t.is_contiguous()
    rank, perm, _ = _CHANNELS_LAST[fmt]
    if t.dim() != rank:
        return False
    want = _channels_last_strides(t.shape, perm)
    return all(n == 1 or s == w for n, s, w in zip(t.shape, t.stride(), want, strict=True))


def _to_channels_last(t, fmt):
    rank, perm, inverse = _CHANNELS_LAST[fmt]
    if t.dim() != rank:
        raise RuntimeError(f"required rank {rank} tensor to use {fmt._name} format")
    if is_contiguous(t, fmt):
        return t
    return _permute(_contiguous(_permute(t, list(perm)), None), list(inverse))


def contiguous(t, fmt):
    """``t.contiguous(memory_format=fmt)``: t itself when it already has that layout."""
    _check(fmt, "contiguous")
    if fmt is preserve_format:
        if t.is_contiguous():
            return t
        raise RuntimeError("preserve memory format is unsupported by the contiguous operator")
    if fmt is contiguous_format:
        return _contiguous(t, None)
    return _to_channels_last(t, fmt)


def apply(t, fmt, op):
    """``t`` (a result of ``op``: clone, to, cuda, ...) in the layout ``fmt`` asks for; t
    itself when it has it (preserve_format: always)."""
    if fmt is None or fmt is preserve_format:
        return t
    _check(fmt, op)
    if fmt is contiguous_format:
        return _contiguous(t, None)
    return _to_channels_last(t, fmt)
