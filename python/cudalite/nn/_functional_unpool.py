"""``nn.functional.max_unpool1d/2d/3d``: the partial inverses of max pooling. Each input
value goes to its index (flat in its output plane or volume), every other output element is
zero; a scatter into a zero tensor, differentiable through it (the gradient gathers the
output gradient at the indices)."""

from __future__ import annotations

from cudalite import _C, _arg_parser
from cudalite._C import Tensor

__all__ = ["max_unpool1d", "max_unpool2d", "max_unpool3d"]


def _tuple(v, n):
    if isinstance(v, int):
        return [v] * n
    v = [int(i) for i in v]
    return v * n if len(v) == 1 else v


def _unpool_output_size(input, kernel_size, stride, padding, output_size):
    """torch's: ``(in - 1) * stride + kernel - 2 * padding`` per dimension, or
    ``output_size`` (its last dims) within a stride of that."""
    k = len(kernel_size)
    default = [
        (input.shape[input.dim() - k + d] - 1) * stride[d] + kernel_size[d] - 2 * padding[d]
        for d in range(k)
    ]
    if output_size is None:
        return default
    if len(output_size) == k + 2:
        output_size = output_size[2:]
    if len(output_size) != k:
        raise ValueError(
            f"output_size should be a sequence containing {k} or {k + 2} elements, but it has "
            f"a length of '{len(output_size)}'"
        )
    for d in range(k):
        lo, hi = default[d] - stride[d], default[d] + stride[d]
        if not lo < output_size[d] < hi:
            raise ValueError(
                f'invalid output_size "{output_size}" (dim {d} must be between {lo} and {hi})'
            )
    return list(output_size)


def _unpool(fname, input, indices, out, nd):
    for name, pos, t in (("input", 1, input), ("indices", 2, indices)):
        if not isinstance(t, Tensor):
            raise TypeError(
                f"{fname}(): argument '{name}' (position {pos}) must be Tensor, not "
                f"{_arg_parser.tp_name(t)}"
            )
    if indices.dtype is not _C.int64:
        raise RuntimeError(
            f"elements in indices should be type int64 but got: {indices.dtype._short_name}"
        )
    if tuple(input.shape) != tuple(indices.shape):
        raise RuntimeError(
            "Expected shape of indices to be same as that of the input tensor "
            f"({list(indices.shape)}) but got indices tensor with shape: {list(input.shape)}"
        )
    if input.dim() not in (nd + 1, nd + 2):
        raise RuntimeError(
            f"Input to max_unpooling{nd}d should be a {nd + 1}d or {nd + 2}d Tensor, but got a "
            f"tensor with {input.dim()} dimensions."
        )
    size = 1
    for o in out:
        size *= o
    lead = list(input.shape[: input.dim() - nd])
    flat_in = input.reshape(lead + [-1])
    flat_idx = indices.reshape(lead + [-1])
    if flat_idx.numel():
        lo, hi = int(flat_idx.min().item()), int(flat_idx.max().item())
        if lo < 0 or hi >= size:
            bad = hi if hi >= size else lo
            dims = "x".join(str(o) for o in out)
            raise RuntimeError(
                f"Found an invalid max index: {bad} (output volumes are of size {dims})"
            )
    res = _C._full(lead + [size], 0, input.dtype, input.device)
    res = res.scatter(len(lead), flat_idx, flat_in)
    return res.view(lead + list(out))


def max_unpool1d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    """The inverse of ``max_pool1d``: ``(N, C, L)`` values placed at their indices."""
    k = _tuple(kernel_size, 1)
    s = k if stride is None else _tuple(stride, 1)
    p = _tuple(padding, 1)
    out = _unpool_output_size(input, k, s, p, output_size)
    return _unpool(
        "max_unpool2d", input.unsqueeze(-1), indices.unsqueeze(-1), out + [1], 2
    ).squeeze(-1)


def max_unpool2d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    """The inverse of ``max_pool2d``: ``(N, C, H, W)`` values placed at their indices."""
    k = _tuple(kernel_size, 2)
    s = k if stride is None else _tuple(stride, 2)
    p = _tuple(padding, 2)
    out = _unpool_output_size(input, k, s, p, output_size)
    return _unpool("max_unpool2d", input, indices, out, 2)


def max_unpool3d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    """The inverse of ``max_pool3d``: ``(N, C, D, H, W)`` values placed at their indices."""
    k = _tuple(kernel_size, 3)
    s = k if stride is None else _tuple(stride, 3)
    p = _tuple(padding, 3)
    out = _unpool_output_size(input, k, s, p, output_size)
    return _unpool("max_unpool3d", input, indices, out, 3)
