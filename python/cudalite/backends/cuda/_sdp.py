"""The switches of ``scaled_dot_product_attention``'s backends (torch.backends.cuda's
``enable_flash_sdp`` family). cudalite has two: the fused kernel ("flash", CUDA float16 /
bfloat16) and the composition of tensor ops ("math"). The memory-efficient and cuDNN switches
are kept as torch keeps them; while either is on, the composition stands in for its kernel.
See docs/attention.md."""

from __future__ import annotations

__all__ = [
    "cudnn_sdp_enabled",
    "enable_cudnn_sdp",
    "enable_flash_sdp",
    "enable_math_sdp",
    "enable_mem_efficient_sdp",
    "flash_sdp_enabled",
    "math_sdp_enabled",
    "mem_efficient_sdp_enabled",
]

# One flag per backend, all on by default as in torch.
_DEFAULTS = {"flash": True, "mem_efficient": True, "math": True, "cudnn": True}
_enabled = dict(_DEFAULTS)


def flash_sdp_enabled():
    r"""Returns whether flash scaled dot product attention is enabled or not."""
    return _enabled["flash"]


def enable_flash_sdp(enabled: bool):
    r"""Enables or disables flash scaled dot product attention."""
    _enabled["flash"] = bool(enabled)


def mem_efficient_sdp_enabled():
    r"""Returns whether memory efficient scaled dot product attention is enabled or not."""
    return _enabled["mem_efficient"]


def enable_mem_efficient_sdp(enabled: bool):
    r"""Enables or disables memory efficient scaled dot product attention."""
    _enabled["mem_efficient"] = bool(enabled)


def math_sdp_enabled():
    r"""Returns whether math scaled dot product attention is enabled or not."""
    return _enabled["math"]


def enable_math_sdp(enabled: bool):
    r"""Enables or disables math scaled dot product attention."""
    _enabled["math"] = bool(enabled)


def cudnn_sdp_enabled():
    r"""Returns whether cuDNN scaled dot product attention is enabled or not."""
    return _enabled["cudnn"]


def enable_cudnn_sdp(enabled: bool):
    r"""Enables or disables cuDNN scaled dot product attention."""
    _enabled["cudnn"] = bool(enabled)
