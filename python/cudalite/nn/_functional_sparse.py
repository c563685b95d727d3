"""``nn.functional.embedding`` and ``one_hot``: lookups by class index, composed of
index_select and comparisons (the gradient of a lookup accumulates into the weight's rows)."""

from __future__ import annotations

from cudalite import _C, _arg_parser
from cudalite._C import Tensor
from cudalite.autograd import no_grad

__all__ = ["embedding", "one_hot"]


def _check_padding_idx(padding_idx, num_embeddings):
    """torch's check and wrapping of a negative padding_idx (an AssertionError, as torch's)."""
    if padding_idx is None:
        return None
    if padding_idx > 0:
        if padding_idx >= num_embeddings:
            raise AssertionError("Padding_idx must be within num_embeddings")
    elif padding_idx < 0:
        if padding_idx < -num_embeddings:
            raise AssertionError("Padding_idx must be within num_embeddings")
        padding_idx = num_embeddings + padding_idx
    return padding_idx


def _renorm_(weight, idx, max_norm, norm_type):
    """torch's embedding_renorm_: rows looked up whose ``norm_type``-norm exceeds ``max_norm``
    are scaled (in place, without recording) to norm ``max_norm`` (with torch's 1e-7)."""
    with no_grad():
        rows = weight.index_select(0, idx)
        norms = rows.norm(norm_type, 1, keepdim=True)
        scale = (norms + 1e-7).reciprocal() * max_norm
        scale = scale.where(norms > max_norm, 1.0)
        weight.index_put_((idx,), rows * scale)


def embedding(
    input,
    weight,
    padding_idx=None,
    max_norm=None,
    norm_type=2.0,
    scale_grad_by_freq=False,
    sparse=False,
):
    """Rows of ``weight`` at the indices ``input``: the result has shape
    ``input.shape + (embedding_dim,)``. The row at ``padding_idx`` gets no gradient;
    ``scale_grad_by_freq`` divides each row's gradient by its index's count in ``input``;
    ``max_norm`` renormalises the rows looked up, in place, before the lookup."""
    for name, pos, t in (("input", 1, input), ("weight", 2, weight)):
        if not isinstance(t, Tensor):
            raise TypeError(
                f"embedding(): argument '{name}' (position {pos}) must be Tensor, not "
                f"{_arg_parser.tp_name(t)}"
            )
    padding_idx = _check_padding_idx(padding_idx, weight.size(0) if weight.dim() else 0)
    if padding_idx is None:
        padding_idx = -1
    if weight.dim() != 2:
        raise RuntimeError("'weight' must be 2-D")
    if input.dtype not in (_C.int64, _C.int32):
        raise RuntimeError(
            "Expected tensor for argument #1 'indices' to have one of the following scalar "
            f"types: Long, Int; but got {input.type()} instead (while checking arguments for "
            "embedding)"
        )
    if sparse:
        raise NotImplementedError(
            "embedding(sparse=True): sparse gradients are not supported by cudalite"
        )
    idx = input.reshape(-1)
    if max_norm is not None:
        _renorm_(weight, idx, max_norm, norm_type)
    rows = weight.index_select(0, idx)
    if rows.requires_grad and (padding_idx >= 0 or scale_grad_by_freq):
        scale = None
        if scale_grad_by_freq:
            counts = (idx.unsqueeze(1) == idx.unsqueeze(0)).sum(1, dtype=rows.dtype)
            scale = counts.reciprocal().unsqueeze(1)
        if padding_idx >= 0:
            keep = (idx != padding_idx).unsqueeze(1)
            scale = keep.to(rows.dtype) if scale is None else scale * keep
        rows.register_hook(lambda g: g * scale)
    return rows.view(*input.shape, weight.size(1))


def one_hot(tensor, num_classes=-1):
    """An int64 tensor of shape ``tensor.shape + (num_classes,)``, 1 at each index."""
    if not isinstance(tensor, Tensor):
        raise TypeError(
            f"one_hot(): argument 'input' (position 1) must be Tensor, not "
            f"{_arg_parser.tp_name(tensor)}"
        )
    if tensor.dtype is not _C.int64:
        raise RuntimeError("one_hot is only applicable to index tensor of type LongTensor.")
    if tensor.numel() == 0:
        if num_classes == -1:
            raise RuntimeError("Can not infer total number of classes from empty tensor.")
        return _C._empty([*tensor.shape, num_classes], _C.int64, tensor.device, False).zero_()
    if tensor.min().item() < 0:
        raise RuntimeError("Class values must be non-negative.")
    if num_classes == -1:
        num_classes = tensor.max().item() + 1
    elif tensor.max().item() >= num_classes:
        raise RuntimeError("Class values must be smaller than num_classes.")
    from cudalite import arange

    return (tensor.unsqueeze(-1) == arange(num_classes, device=tensor.device)).long()
