"""``nn.functional.embedding_bag``: the sums, means or maxima of bags of embedding rows
(the rows of a 2-D input, or the segments of a 1-D input that ``offsets`` starts), without
materialising the per-index embeddings of torch's kernel: the bags are laid out as a padded
(bags, longest bag) matrix of positions on the host, the rows gathered by index_select and
reduced with masks, so autograd differentiates it (a max bag's gradient goes to its argmax
row, as torch's)."""

from __future__ import annotations

import warnings

from cudalite import _C, _creation
from cudalite.nn._functional_sparse import _renorm_, embedding

__all__ = ["embedding_bag"]


def _check_indices(t, what):
    if t.dtype not in (_C.int64, _C.int32):
        raise RuntimeError(
            "Expected tensor for argument #1 'indices' to have one of the following scalar "
            f"types: Long, Int; but got {t.type()} instead (while checking arguments for "
            f"{what})"
        )


def embedding_bag(
    input,
    weight,
    offsets=None,
    max_norm=None,
    norm_type=2,
    scale_grad_by_freq=False,
    mode="mean",
    sparse=False,
    per_sample_weights=None,
    include_last_offset=False,
    padding_idx=None,
):
    """One row per bag: ``mode='sum'`` (with optional ``per_sample_weights``), ``'mean'`` or
    ``'max'`` of the rows of ``weight`` its indices name; an empty bag (or one of padding
    indices only) gives zeros."""
    import numpy as np

    if weight.dtype is _C.int64 and input.dtype.is_floating_point:
        warnings.warn(
            "Argument order of nn.functional.embedding_bag was changed. Usage "
            "`embedding_bag(weight, input, ...)` is deprecated, and should now be "
            "`embedding_bag(input, weight, ...)`.",
            stacklevel=2,
        )
        weight, input = input, weight
    if per_sample_weights is not None and tuple(input.shape) != tuple(per_sample_weights.shape):
        raise ValueError(
            f"embedding_bag: If per_sample_weights ({per_sample_weights.shape}) is not None, "
            f"then it must have the same shape as the input ({input.shape})"
        )
    if weight.dim() != 2:
        raise ValueError(
            f"weight has to be a 2D Tensor, but got Tensor of dimension {weight.dim()}"
        )
    if input.dim() == 2:
        if offsets is not None:
            raise ValueError(
                "if input is 2D, then offsets has to be None, as input is treated is a "
                "mini-batch of fixed length sequences. However, found offsets of type "
                f"{type(offsets)}"
            )
        offs = np.arange(0, input.numel(), max(input.size(1), 1))[: input.size(0)]
        include_last_offset = False
        input = input.reshape(-1)
        if per_sample_weights is not None:
            per_sample_weights = per_sample_weights.reshape(-1)
    elif input.dim() == 1:
        if offsets is None:
            raise ValueError("offsets has to be a 1D Tensor but got None")
        if offsets.dim() != 1:
            raise ValueError("offsets has to be a 1D Tensor")
        offs = None
    else:
        raise ValueError(
            f"input has to be 1D or 2D Tensor, but got Tensor of dimension {input.dim()}"
        )
    if mode == "max":
        if scale_grad_by_freq:
            raise ValueError("max mode does not support scaling the gradient by the frequency")
        if sparse:
            raise ValueError("max mode does not support sparse weights")
    elif mode not in ("sum", "mean"):
        raise ValueError("mode has to be one of sum, mean or max")
    _check_indices(input, "embedding_bag")
    n = weight.size(0)
    if padding_idx is not None:
        if not -n <= padding_idx < n:
            raise RuntimeError(
                f"padding_idx must be within the number of embeddings, -{n} through {n - 1}, "
                f"but got {padding_idx}"
            )
        if padding_idx < 0:
            padding_idx += n
    if max_norm is not None:
        _renorm_(weight, input, max_norm, norm_type)
    if per_sample_weights is not None and mode != "sum":
        raise NotImplementedError(
            "embedding_bag: per_sample_weights was not None. per_sample_weights is only "
            f"supported for mode='sum' (got mode='{mode}'). Please open a feature request "
            "on GitHub."
        )
    if sparse:
        raise NotImplementedError(
            "embedding_bag(sparse=True): sparse gradients are not supported by cudalite"
        )
    length = input.numel()
    if offs is None:
        _check_indices(offsets, "embedding_bag")
        offs = offsets.detach().cpu().numpy().astype(np.int64)
        if offs.size and offs[0] != 0:
            raise RuntimeError(
                "offsets[0] has to be 0, i.e., the first sequence in the mini-batch has to "
                f"start from position 0. However, got {offs[0]}\n[ {offsets.type()}{{}} ]"
            )
        if offs.size and offs[-1] > length:
            raise RuntimeError(
                f"offsets[-1] can not be greater than input's length {length} but got "
                f"offsets[-1] of {offs[-1]}"
            )
    idx = input.detach().cpu().numpy().astype(np.int64)
    bad = np.nonzero((idx < 0) | (idx >= n))[0]
    if bad.size:
        i = int(bad[0])
        if weight.dtype is _C.float64 or mode == "max":  # torch's generic CPU kernel
            raise RuntimeError(
                "embedding_bag: Expected idx >= 0 && idx < num_embeddings but found idx to be "
                f"{idx[i]}"
            )
        raise RuntimeError(  # torch's CPU kernel for float, half and bfloat16 sums and means
            f"Index {i} of input takes value {idx[i]} which is not in the valid range [0, {n})"
        )
    if include_last_offset:  # as torch's kernels: the last bag runs to the input's end
        starts, ends = offs[:-1], np.append(offs[1:-1], length)
    else:
        starts, ends = offs, np.append(offs[1:], length)
    bags = len(starts)
    lens = np.maximum(ends - starts, 0)
    longest = max(int(lens.max()) if bags else 0, 1)
    pos = starts[:, None] + np.arange(longest)[None, :]
    inside = np.arange(longest)[None, :] < lens[:, None]
    pos = np.where(inside, pos, 0)
    if length:
        keep = inside & (idx[pos] != (-1 if padding_idx is None else padding_idx))
    else:
        keep = np.zeros_like(inside)
    counts = keep.sum(1)
    dev = weight.device
    dim = weight.size(1)
    if bags == 0 or not keep.any():
        out = _C._full([bags, dim], 0, weight.dtype, dev)
        return out + (weight.sum() * 0 if weight.requires_grad and _C._is_grad_enabled() else 0)
    rows = embedding(input, weight, padding_idx, None, norm_type, scale_grad_by_freq)
    flat_pos = _creation.tensor(pos.reshape(-1), dtype=_C.int64, device=dev)
    vals = rows.index_select(0, flat_pos).view(bags, longest, dim)
    if per_sample_weights is not None:
        w = per_sample_weights.index_select(0, flat_pos).view(bags, longest, 1)
        vals = vals * w
    drop = _creation.tensor(~keep, device=dev).unsqueeze(-1)
    empty = _creation.tensor(counts == 0, device=dev).unsqueeze(-1)
    if mode == "max":
        out = vals.masked_fill(drop, float("-inf")).max(1)[0]
        return out.masked_fill(empty, 0.0)
    total = vals.masked_fill(drop, 0.0).sum(1)
    if mode == "sum":
        return total
    div = _creation.tensor(np.maximum(counts, 1), dtype=weight.dtype, device=dev).unsqueeze(-1)
    return total / div
