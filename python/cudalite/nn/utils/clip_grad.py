"""Gradient clipping: ``clip_grad_norm_`` (``get_total_norm`` then ``clip_grads_with_norm_``)
and ``clip_grad_value_``, with torch's arguments, results and errors. As in torch, the
gradients go through the ``_foreach_*`` ops by device and dtype (on CUDA: one
``_foreach_norm`` and one ``_foreach_mul_`` pass over up to 160 tensors per launch; on the
CPU the per-tensor ops), unless ``foreach=False``; nothing waits for the GPU unless
``error_if_nonfinite`` asks to check the norm."""

from __future__ import annotations

import functools
import types
import warnings

from cudalite import _C
from cudalite._C import Tensor

__all__ = [
    "clip_grad_norm",
    "clip_grad_norm_",
    "clip_grad_value_",
    "clip_grads_with_norm_",
    "get_total_norm",
]


def _no_grad(fn):
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        prev = _C._is_grad_enabled()
        _C._set_grad_enabled(False)
        try:
            return fn(*args, **kwargs)
        finally:
            _C._set_grad_enabled(prev)

    return wrapper


def _by_device_and_dtype(tensors):
    """The tensors grouped by (device, dtype), in order of first appearance."""
    groups = {}
    for t in tensors:
        groups.setdefault((t.device, t.dtype), []).append(t)
    return groups


@_no_grad
def get_total_norm(tensors, norm_type=2.0, error_if_nonfinite=False, foreach=None):
    """The ``norm_type``-norm of all the tensors' elements together (the norm of their
    norms), as a 0-dim tensor on the first tensor's device."""
    import cudalite

    tensors = [tensors] if isinstance(tensors, Tensor) else list(tensors)
    norm_type = float(norm_type)
    if len(tensors) == 0:
        return cudalite.tensor(0.0)
    first_device = tensors[0].device
    norms = []
    for group in _by_device_and_dtype(tensors).values():
        if foreach is False:
            norms.extend(cudalite.norm(t, norm_type) for t in group)
        else:
            norms.extend(cudalite._foreach_norm(group, norm_type))
    total_norm = cudalite.norm(cudalite.stack([n.to(first_device) for n in norms]), norm_type)
    if error_if_nonfinite and (total_norm.isnan() | total_norm.isinf()).item():
        raise RuntimeError(
            f"The total norm of order {norm_type} for gradients from `parameters` is "
            "non-finite, so it cannot be clipped. To disable this error and scale the "
            "gradients by the non-finite norm anyway, set `error_if_nonfinite=False`"
        )
    return total_norm


@_no_grad
def clip_grads_with_norm_(parameters, max_norm, total_norm, foreach=None):
    """Scales the gradients by ``min(1, max_norm / (total_norm + 1e-6))`` in place."""
    import cudalite

    if isinstance(parameters, Tensor):
        parameters = [parameters]
    grads = [p.grad for p in parameters if p.grad is not None]
    max_norm = float(max_norm)
    if len(grads) == 0:
        return
    clip_coef = max_norm / (total_norm + 1e-6)
    clip_coef_clamped = cudalite.clamp(clip_coef, max=1.0)
    for (device, _), group in _by_device_and_dtype(grads).items():
        coef = clip_coef_clamped.to(device)
        if foreach is False:
            for g in group:
                g.mul_(coef)
        else:
            cudalite._foreach_mul_(group, coef)


@_no_grad
def clip_grad_norm_(parameters, max_norm, norm_type=2.0, error_if_nonfinite=False, foreach=None):
    """Rescales the gradients of ``parameters`` so that their total ``norm_type``-norm is at
    most ``max_norm``; returns the total norm before clipping."""
    if isinstance(parameters, Tensor):
        parameters = [parameters]
    else:
        is_generator = isinstance(parameters, types.GeneratorType)
        parameters = list(parameters)
        if is_generator and len(parameters) == 0:
            warnings.warn(
                "`parameters` is an empty generator, no gradient clipping will occur.",
                stacklevel=3,
            )
    grads = [p.grad for p in parameters if p.grad is not None]
    total_norm = get_total_norm(grads, norm_type, error_if_nonfinite, foreach)
    clip_grads_with_norm_(parameters, max_norm, total_norm, foreach)
    return total_norm


def clip_grad_norm(parameters, max_norm, norm_type=2.0, error_if_nonfinite=False, foreach=None):
    """Deprecated alias of :func:`clip_grad_norm_`."""
    warnings.warn(
        "`torch.nn.utils.clip_grad_norm` is now deprecated in favor of "
        "`torch.nn.utils.clip_grad_norm_`.",
        FutureWarning,
        stacklevel=2,
    )
    return clip_grad_norm_(parameters, max_norm, norm_type, error_if_nonfinite, foreach)


@_no_grad
def clip_grad_value_(parameters, clip_value, foreach=None):
    """Clamps every gradient into ``[-clip_value, clip_value]`` in place."""
    if isinstance(parameters, Tensor):
        parameters = [parameters]
    clip_value = float(clip_value)
    grads = [p.grad for p in parameters if p.grad is not None]
    for group in _by_device_and_dtype(grads).values():
        if foreach is False:
            for g in group:
                g.clamp_(min=-clip_value, max=clip_value)
        else:
            import cudalite

            cudalite._foreach_clamp_min_(group, -clip_value)
            cudalite._foreach_clamp_max_(group, clip_value)
