"""``cudalite.cuda.amp``: torch's deprecated spellings of ``cudalite.amp`` for CUDA, each
with torch's FutureWarning."""

from __future__ import annotations

import functools
import warnings

from cudalite import amp as _amp

__all__ = ["GradScaler", "autocast", "custom_bwd", "custom_fwd"]


class autocast(_amp.autocast):  # noqa: N801 (torch's name)
    """``cudalite.cuda.amp.autocast(args...)``: ``cudalite.amp.autocast('cuda', args...)``."""

    def __init__(self, enabled=True, dtype=None, cache_enabled=True):
        from cudalite import _C

        warnings.warn(
            "`torch.cuda.amp.autocast(args...)` is deprecated. Please use "
            "`torch.amp.autocast('cuda', args...)` instead.",
            FutureWarning,
            stacklevel=2,
        )
        super().__init__(
            "cuda",
            enabled=enabled,
            dtype=_C.float16 if dtype is None else dtype,
            cache_enabled=cache_enabled,
        )


class GradScaler(_amp.GradScaler):
    """``cudalite.cuda.amp.GradScaler(args...)``: ``cudalite.amp.GradScaler('cuda', args...)``."""

    def __init__(
        self,
        init_scale=2.0**16,
        growth_factor=2.0,
        backoff_factor=0.5,
        growth_interval=2000,
        enabled=True,
    ):
        warnings.warn(
            "`torch.cuda.amp.GradScaler(args...)` is deprecated. Please use "
            "`torch.amp.GradScaler('cuda', args...)` instead.",
            FutureWarning,
            stacklevel=2,
        )
        super().__init__(
            "cuda", init_scale, growth_factor, backoff_factor, growth_interval, enabled
        )


def custom_fwd(fwd=None, *, cast_inputs=None):
    """Deprecated: ``cudalite.amp.custom_fwd(device_type='cuda')``."""
    warnings.warn(
        "`torch.cuda.amp.custom_fwd(args...)` is deprecated. Please use "
        "`torch.amp.custom_fwd(args..., device_type='cuda')` instead.",
        FutureWarning,
        stacklevel=2,
    )
    return functools.partial(_amp.custom_fwd, device_type="cuda")(fwd=fwd, cast_inputs=cast_inputs)


def custom_bwd(bwd):
    """Deprecated: ``cudalite.amp.custom_bwd(device_type='cuda')``."""
    warnings.warn(
        "`torch.cuda.amp.custom_bwd(args...)` is deprecated. Please use "
        "`torch.amp.custom_bwd(args..., device_type='cuda')` instead.",
        FutureWarning,
        stacklevel=2,
    )
    return _amp.custom_bwd(bwd, device_type="cuda")
