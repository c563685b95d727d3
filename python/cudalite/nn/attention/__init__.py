"""``cudalite.nn.attention``: which backend ``scaled_dot_product_attention`` may use
(torch.nn.attention). See docs/attention.md."""

from __future__ import annotations

import contextlib
import enum

from cudalite.backends.cuda import _sdp

__all__ = ["WARN_FOR_UNFUSED_KERNELS", "SDPBackend", "sdpa_kernel"]

WARN_FOR_UNFUSED_KERNELS = False


class SDPBackend(int, enum.Enum):
    """The backends of ``scaled_dot_product_attention``. cudalite runs FLASH_ATTENTION (a fused
    kernel on CUDA) and MATH (the composition); EFFICIENT_ATTENTION and CUDNN_ATTENTION are
    served by the composition."""

    ERROR = -1
    MATH = 0
    FLASH_ATTENTION = 1
    EFFICIENT_ATTENTION = 2
    CUDNN_ATTENTION = 3
    OVERRIDEABLE = 4

    def __str__(self):
        return f"SDPBackend.{self.name}"


# The flag of each backend that has one, as torch's _backend_names.
_backend_names = {
    "cudnn": "CUDNN_ATTENTION",
    "flash": "FLASH_ATTENTION",
    "mem_efficient": "EFFICIENT_ATTENTION",
    "math": "MATH",
}


def _cur_sdpa_kernel_backends():
    return [getattr(SDPBackend, v) for k, v in _backend_names.items() if _sdp._enabled[k]]


def _sdpa_kernel(backends):
    for name, val in _backend_names.items():
        _sdp._enabled[name] = getattr(SDPBackend, val) in backends


@contextlib.contextmanager
def sdpa_kernel(backends, set_priority: bool = False):
    r"""Context manager to select which backends scaled dot product attention may use: one
    ``SDPBackend`` or a list of them. The previous flags come back on exit.

    Example::

        from cudalite.nn.attention import SDPBackend, sdpa_kernel

        with sdpa_kernel(SDPBackend.MATH):  # the composition, never the fused kernel
            F.scaled_dot_product_attention(q, k, v)
    """
    if not isinstance(backends, (list, SDPBackend)):
        raise AssertionError(
            "Backend must be an instance of SDPBackend or a list of SDPBackend instances, "
            f"got {type(backends).__name__}"
        )
    if isinstance(backends, SDPBackend):
        backends = [backends]
    backends = list(dict.fromkeys(backends))
    previous = _cur_sdpa_kernel_backends()
    try:
        _sdpa_kernel(backends)
        yield {}
    finally:
        _sdpa_kernel(previous)
