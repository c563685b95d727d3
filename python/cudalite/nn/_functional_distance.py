"""Distances of ``nn.functional``: ``normalize``, ``cosine_similarity``,
``pairwise_distance`` and ``pdist``, composed of norms and tensor ops (torch's formulas:
the norms are clamped by ``eps`` without changing their gradient, as torch clamps them under
no_grad)."""

from __future__ import annotations

from cudalite import _C, _arg_parser
from cudalite._C import Tensor

__all__ = ["normalize", "cosine_similarity", "pairwise_distance", "pdist"]


def _tensors(op, *named):
    for name, pos, value in named:
        if not isinstance(value, Tensor):
            raise TypeError(
                f"{op}(): argument '{name}' (position {pos}) must be Tensor, not "
                f"{_arg_parser.tp_name(value)}"
            )


def _clamped(n, eps):
    """``n`` clamped to ``>= eps`` in value, with ``n``'s gradient."""
    if n.requires_grad and _C._is_grad_enabled():
        return n + (n.clamp(min=eps) - n).detach()
    return n.clamp(min=eps)


def normalize(input, p=2.0, dim=1, eps=1e-12, out=None):
    """``input / max(||input||_p, eps)`` along ``dim``."""
    _tensors("normalize", ("input", 1, input))
    denom = input.norm(p, dim, keepdim=True).clamp(min=eps).expand_as(input)
    if out is None:
        return input / denom
    from cudalite import div

    return div(input, denom, out=out)


def cosine_similarity(x1, x2, dim=1, eps=1e-8):
    """``sum(x1 / max(||x1||, eps) * x2 / max(||x2||, eps))`` along ``dim`` (broadcast)."""
    _tensors("cosine_similarity", ("x1", 1, x1), ("x2", 2, x2))
    dt = _C._result_type(x1, x2)
    if not dt.is_floating_point:
        raise RuntimeError(
            f"expected common dtype to be floating point, yet common dtype is {dt._short_name}"
        )
    a, b = x1.to(dt), x2.to(dt)
    shape = _broadcast_shape(a.shape, b.shape)
    a, b = a.expand(*shape), b.expand(*shape)
    na = _clamped(a.norm(2, dim, keepdim=True), eps)
    nb = _clamped(b.norm(2, dim, keepdim=True), eps)
    return ((a / na) * (b / nb)).sum(dim)


def _broadcast_shape(s1, s2):
    s1, s2 = list(s1), list(s2)
    n = max(len(s1), len(s2))
    s1 = [1] * (n - len(s1)) + s1
    s2 = [1] * (n - len(s2)) + s2
    out = []
    for i, (a, b) in enumerate(zip(s1, s2, strict=True)):
        if a != b and a != 1 and b != 1:
            raise RuntimeError(
                f"The size of tensor a ({a}) must match the size of tensor b ({b}) at "
                f"non-singleton dimension {i}"
            )
        out.append(b if a == 1 else a)
    return out


def pairwise_distance(x1, x2, p=2.0, eps=1e-6, keepdim=False):
    """``||x1 - x2 + eps||_p`` over the last dimension."""
    _tensors("pairwise_distance", ("x1", 1, x1), ("x2", 2, x2))
    d = max(x1.dim(), x2.dim())
    diff = x1 - x2 + eps
    if d == 0:
        return diff.abs() if p else (diff != 0).to(diff.dtype)
    return diff.norm(p, d - 1, keepdim=keepdim)


def pdist(input, p=2):
    """The ``p``-norm distances between the rows of a 2-D input, for the pairs ``i < j`` in
    row-major order (``N * (N - 1) / 2`` values)."""
    import numpy as np

    _tensors("pdist", ("input", 1, input))
    if input.dim() != 2:
        raise RuntimeError(f"pdist only supports 2D tensors, got: {input.dim()}D")
    if not input.dtype.is_floating_point:
        raise RuntimeError("pdist only supports floating-point dtypes")
    if p < 0:
        raise RuntimeError("pdist only supports non-negative p values")
    n = input.size(0)
    i, j = np.triu_indices(n, 1)
    if len(i) == 0:
        return input.narrow(0, 0, 0).sum(1)  # empty, with a (zero) gradient as torch's
    from cudalite import tensor

    ii = tensor(i.astype(np.int64), device=input.device)
    jj = tensor(j.astype(np.int64), device=input.device)
    diff = input.index_select(0, ii) - input.index_select(0, jj)
    if p == 2 and diff.requires_grad and _C._is_grad_enabled():
        # torch's gradient is zero where a distance is zero (sqrt's would be nan)
        sq = (diff * diff).sum(1)
        zero = sq == 0
        return sq.masked_fill(zero, 1.0).sqrt().masked_fill(zero, 0.0)
    return diff.norm(p, 1)
