"""``nn.functional.layer_norm``: normalisation over the trailing dimensions, one kernel
forward and one backward (``native_layer_norm``, autograd/functions/layer_norm.py); half and
bfloat16 inputs are computed in float32 inside the kernels, as torch's."""

from __future__ import annotations

from cudalite import _arg_parser
from cudalite._C import Tensor
from cudalite.autograd.functions import layer_norm as _ln

__all__ = ["layer_norm"]


def _shape_list(normalized_shape):
    if isinstance(normalized_shape, int) or not isinstance(normalized_shape, (tuple, list)):
        raise TypeError(
            "layer_norm(): argument 'normalized_shape' (position 2) must be tuple of ints, not "
            f"{_arg_parser.tp_name(normalized_shape)}"
        )
    return [int(n) for n in normalized_shape]


def _check(input, shape, weight, bias):
    """torch's _check_layer_norm_inputs, in its order."""
    if not shape:
        raise RuntimeError(
            "Expected normalized_shape to be at least 1-dimensional, i.e., containing at least "
            "one element, but got normalized_shape = []"
        )
    for name, t in (("weight", weight), ("bias", bias)):
        if t is not None and list(t.shape) != shape:
            raise RuntimeError(
                f"Expected {name} to be of same shape as normalized_shape, but got {name} of "
                f"shape {list(t.shape)} and normalized_shape = {shape}"
            )
    ins = list(input.shape)
    k = len(shape)
    if len(ins) < k or ins[len(ins) - k :] != shape:
        raise RuntimeError(
            f"Given normalized_shape={shape}, expected input with shape "
            f"[*, {', '.join(str(n) for n in shape)}], but got input of size{ins}"
        )
    dt = input.dtype
    if not dt.is_floating_point:
        raise NotImplementedError(f"\"LayerNormKernelImpl\" not implemented for '{dt._short_name}'")
    if not input.is_cuda:
        for t in (weight, bias):
            if t is not None and t.dtype is not dt:
                raise RuntimeError(
                    f"mixed dtype (CPU): expect parameter to have scalar type of {dt._short_name}"
                )


def layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-5):
    """``(x - mean) / sqrt(var + eps) * weight + bias`` over the last
    ``len(normalized_shape)`` dimensions (biased variance)."""
    for name, pos, t in (("input", 1, input), ("weight", 3, weight), ("bias", 4, bias)):
        if t is not None and not isinstance(t, Tensor):
            raise TypeError(
                f"layer_norm(): argument '{name}' (position {pos}) must be Tensor, not "
                f"{_arg_parser.tp_name(t)}"
            )
    shape = _shape_list(normalized_shape)
    _check(input, shape, weight, bias)
    return _ln.native_layer_norm(input, shape, weight, bias, eps)
