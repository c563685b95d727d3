"""``nn.functional.layer_norm``: normalisation over the trailing dimensions, one kernel
forward and one backward (``native_layer_norm``, autograd/functions/layer_norm.py; half and
bfloat16 inputs are computed in float32 inside the kernels, as torch's); ``rms_norm``,
composed of mean, rsqrt and the weight; ``local_response_norm`` across channels."""

from __future__ import annotations

from cudalite import _C, _arg_parser
from cudalite._C import Tensor
from cudalite.autograd.functions import layer_norm as _ln

__all__ = ["layer_norm", "rms_norm", "local_response_norm"]


def _shape_list(normalized_shape, op="layer_norm"):
    if isinstance(normalized_shape, int) or not isinstance(normalized_shape, (tuple, list)):
        raise TypeError(
            f"{op}(): argument 'normalized_shape' (position 2) must be tuple of ints, not "
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
    if input.is_cuda:
        return False
    params = [t for t in (weight, bias) if t is not None]
    if params and params[0].dtype is not dt:
        # torch's mixed type: a bfloat16 or float16 input with float32 weight and bias
        if any(t.dtype is not _C.float32 for t in params):
            raise RuntimeError("mixed dtype (CPU): expect parameter to have scalar type of Float")
        if dt not in (_C.bfloat16, _C.float16):
            raise RuntimeError("mixed dtype (CPU): all inputs must share same datatype.")
        return True
    for t in params:
        if t.dtype is not dt:
            raise RuntimeError(
                f"expected scalar type {dt._short_name} but found {t.dtype._short_name}"
            )
    return False


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
    if _check(input, shape, weight, bias):  # float32 statistics and parameters, as torch's
        return _ln.native_layer_norm(input.float(), shape, weight, bias, eps).to(input.dtype)
    return _ln.native_layer_norm(input, shape, weight, bias, eps)


def rms_norm(input, normalized_shape, weight=None, eps=None):
    """``x / sqrt(mean(x**2) + eps) * weight`` over the last ``len(normalized_shape)``
    dimensions; ``eps=None`` is the machine epsilon of the input's dtype, as torch's."""
    for name, pos, t in (("input", 1, input), ("weight", 3, weight)):
        if t is not None and not isinstance(t, Tensor):
            raise TypeError(
                f"rms_norm(): argument '{name}' (position {pos}) must be Tensor, not "
                f"{_arg_parser.tp_name(t)}"
            )
    shape = _shape_list(normalized_shape, "rms_norm")
    if not shape:
        raise RuntimeError(
            "Expected normalized_shape to be at least 1-dimensional, i.e., containing at least "
            "one element, but got normalized_shape = []"
        )
    if weight is not None and list(weight.shape) != shape:
        raise RuntimeError(
            "Expected weight to be of same shape as normalized_shape, but got weight of "
            f"shape {list(weight.shape)} and normalized_shape = {shape}"
        )
    ins = list(input.shape)
    k = len(shape)
    if len(ins) < k or ins[len(ins) - k :] != shape:
        raise RuntimeError(
            f"Given normalized_shape={shape}, expected input with shape "
            f"[*{', '.join(str(n) for n in shape)}], but got input of size{ins}"
        )
    dt = input.dtype
    if not dt.is_floating_point:
        raise NotImplementedError(f"\"rms_norm\" not implemented for '{dt._short_name}'")
    if eps is None:
        from cudalite import finfo

        eps = finfo(dt).eps
    low = dt in (_C.float16, _C.bfloat16)
    x = input.float() if low else input
    dims = list(range(x.dim() - k, x.dim()))
    y = x * ((x * x).mean(dims, keepdim=True) + eps).rsqrt()
    if weight is not None:
        y = y.to(dt) * weight if low else y * weight
        return y
    return y.to(dt) if low else y


def local_response_norm(input, size, alpha=1e-4, beta=0.75, k=1.0):
    """``x / (k + alpha * mean of x**2 over a window of size channels) ** beta``; the window
    is centred on each channel (``size // 2`` before, ``(size - 1) // 2`` after) and padded
    with zeros."""
    if not isinstance(input, Tensor):
        raise TypeError(
            "local_response_norm(): argument 'input' must be Tensor, not "
            f"{_arg_parser.tp_name(input)}"
        )
    d = input.dim()
    if d < 3:
        raise ValueError(
            "Expected 3D or higher dimensionality" + " " * 26 + f"input (got {d} dimensions)"
        )
    if input.numel() == 0:
        return input
    from cudalite.nn._functional_pad import pad

    sq = input * input
    c = input.size(1)
    padded = pad(sq.movedim(1, -1), (size // 2, (size - 1) // 2)).movedim(-1, 1)
    total = padded.narrow(1, 0, c)
    for i in range(1, size):
        total = total + padded.narrow(1, i, c)
    div = (total / size * alpha + k).pow(beta)
    return input / div
