"""Splitting inputs over GPUs and gathering outputs, through nested tuples, lists and
dicts (torch.nn.parallel.scatter_gather)."""

from __future__ import annotations

import cudalite
from cudalite.nn.parallel._functions import Gather, Scatter

__all__ = ["gather", "scatter", "scatter_kwargs"]


def _is_namedtuple(obj) -> bool:
    return isinstance(obj, tuple) and hasattr(obj, "_asdict") and hasattr(obj, "_fields")


def scatter(inputs, target_gpus, dim=0):
    """Slices tensors into roughly equal chunks, one per GPU; other objects are repeated."""

    def scatter_map(obj):
        if isinstance(obj, cudalite.Tensor):
            return Scatter.apply(target_gpus, None, dim, obj)
        if _is_namedtuple(obj):
            return [type(obj)(*args) for args in zip(*map(scatter_map, obj), strict=False)]
        if isinstance(obj, tuple) and len(obj) > 0:
            return list(zip(*map(scatter_map, obj), strict=False))
        if isinstance(obj, list) and len(obj) > 0:
            return [list(i) for i in zip(*map(scatter_map, obj), strict=False)]
        if isinstance(obj, dict) and len(obj) > 0:
            return [type(obj)(i) for i in zip(*map(scatter_map, obj.items()), strict=False)]
        return [obj for _ in target_gpus]

    try:
        return scatter_map(inputs)
    finally:
        scatter_map = None  # noqa: F841 (breaks the closure's reference cycle)


def scatter_kwargs(inputs, kwargs, target_gpus, dim=0):
    """scatter for positional and keyword arguments, padded to the same length."""
    scattered_inputs = scatter(inputs, target_gpus, dim) if inputs else []
    scattered_kwargs = scatter(kwargs, target_gpus, dim) if kwargs else []
    if len(scattered_inputs) < len(scattered_kwargs):
        scattered_inputs.extend(() for _ in range(len(scattered_kwargs) - len(scattered_inputs)))
    elif len(scattered_kwargs) < len(inputs):
        scattered_kwargs.extend({} for _ in range(len(scattered_inputs) - len(scattered_kwargs)))
    return tuple(scattered_inputs), tuple(scattered_kwargs)


def gather(outputs, target_device, dim=0):
    """Concatenates the GPUs' outputs on ``target_device`` ('cpu' allowed)."""

    def gather_map(outputs):
        out = outputs[0]
        if isinstance(out, cudalite.Tensor):
            return Gather.apply(target_device, dim, *outputs)
        if out is None:
            return None
        if isinstance(out, dict):
            if not all(len(out) == len(d) for d in outputs):
                raise ValueError("All dicts must have the same number of keys")
            return type(out)((k, gather_map([d[k] for d in outputs])) for k in out)
        if _is_namedtuple(out):
            return type(out)._make(map(gather_map, zip(*outputs, strict=False)))
        return type(out)(map(gather_map, zip(*outputs, strict=False)))

    try:
        return gather_map(outputs)
    finally:
        gather_map = None  # noqa: F841
