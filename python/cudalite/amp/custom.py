"""``custom_fwd`` / ``custom_bwd``: autocast for the forward and backward of a custom
``autograd.Function``, as ``torch.amp.custom_fwd`` / ``custom_bwd``."""

from __future__ import annotations

import functools

from cudalite import _C
from cudalite.amp import autocast_mode as _am

__all__ = ["custom_bwd", "custom_fwd"]


def _cast(value, device_type, dtype):
    if isinstance(value, _C.Tensor):
        eligible = value.is_floating_point() and value.device.type == device_type
        return value.to(dtype) if eligible and value.dtype != _C.float64 else value
    if isinstance(value, (list, tuple)):
        return type(value)(_cast(v, device_type, dtype) for v in value)
    if isinstance(value, dict):
        return {k: _cast(v, device_type, dtype) for k, v in value.items()}
    return value


def custom_fwd(fwd=None, *, device_type, cast_inputs=None):
    """Decorates a custom Function's ``forward``: it runs with the autocast state of the
    caller (recorded for ``backward``), or, with ``cast_inputs``, with its floating inputs
    cast to that dtype and autocast disabled inside."""
    if not isinstance(device_type, str):
        raise ValueError(f"Expected `device_type` of type `str`, got: `{type(device_type)}`")
    if fwd is None:
        return functools.partial(custom_fwd, device_type=device_type, cast_inputs=cast_inputs)

    @functools.wraps(fwd)
    def decorate_fwd(*args, **kwargs):
        ctx = args[0]
        ctx._dtype = _am.get_autocast_dtype(device_type)
        if cast_inputs is None:
            ctx._fwd_used_autocast = _am.is_autocast_enabled(device_type)
            return fwd(*args, **kwargs)
        autocast_context = _am.is_autocast_enabled(device_type)
        ctx._fwd_used_autocast = False
        if autocast_context:
            with _am.autocast(device_type=device_type, enabled=False):
                return fwd(
                    *_cast(args, device_type, cast_inputs),
                    **_cast(kwargs, device_type, cast_inputs),
                )
        return fwd(*args, **kwargs)

    return decorate_fwd


def custom_bwd(bwd=None, *, device_type):
    """Decorates a custom Function's ``backward``: it runs with the autocast state its
    ``forward`` ran with."""
    if not isinstance(device_type, str):
        raise ValueError(f"Expected `device_type` of type `str`, got: `{type(device_type)}`")
    if bwd is None:
        return functools.partial(custom_bwd, device_type=device_type)

    @functools.wraps(bwd)
    def decorate_bwd(*args, **kwargs):
        ctx = args[0]
        with _am.autocast(
            device_type=device_type, enabled=ctx._fwd_used_autocast, dtype=ctx._dtype
        ):
            return bwd(*args, **kwargs)

    return decorate_bwd
