"""Margin and embedding losses of ``nn.functional``: margin_ranking_loss,
hinge_embedding_loss, soft_margin_loss, multilabel_soft_margin_loss,
multilabel_margin_loss, multi_margin_loss, cosine_embedding_loss, triplet_margin_loss and
triplet_margin_with_distance_loss, composed of tensor ops with torch's formulas, checks and
reductions."""

from __future__ import annotations

from cudalite import _C
from cudalite.autograd.functions import nn as _nn
from cudalite.nn._functional_activation import logsigmoid
from cudalite.nn._functional_distance import pairwise_distance
from cudalite.nn._functional_loss import _legacy, _not_differentiable, _reduce, _tensors

__all__ = [
    "margin_ranking_loss",
    "hinge_embedding_loss",
    "soft_margin_loss",
    "multilabel_soft_margin_loss",
    "multilabel_margin_loss",
    "multi_margin_loss",
    "cosine_embedding_loss",
    "triplet_margin_loss",
    "triplet_margin_with_distance_loss",
]


def _reduce_kernel(loss, reduction):
    """The reduction of torch's multi-margin kernels: the mean of no samples is 0."""
    if reduction == "mean" and loss.numel() == 0:
        return loss.sum()
    return _reduce(loss, reduction)


def _reduction(size_average, reduce, reduction):
    reduction = _legacy(size_average, reduce, reduction)
    _nn._check_reduction(reduction)
    return reduction


def margin_ranking_loss(
    input1, input2, target, margin=0, size_average=None, reduce=None, reduction="mean"
):
    """``max(0, -target * (input1 - input2) + margin)``."""
    reduction = _reduction(size_average, reduce, reduction)
    _tensors(
        "margin_ranking_loss",
        ("input1", 1, input1),
        ("input2", 2, input2),
        ("target", 3, target),
    )
    if input1.dim() != input2.dim() or input1.dim() != target.dim():
        raise RuntimeError(
            "margin_ranking_loss : All input tensors should have same dimension but got sizes: "
            f"input1: {input1.shape}, input2: {input2.shape}, target: {target.shape} "
        )
    loss = (-target * (input1 - input2) + float(margin)).clamp(min=0)
    return _reduce(loss, reduction)


def hinge_embedding_loss(
    input, target, margin=1.0, size_average=None, reduce=None, reduction="mean"
):
    """``x`` where ``target == 1``, ``max(0, margin - x)`` where ``target == -1``."""
    reduction = _reduction(size_average, reduce, reduction)
    _tensors("hinge_embedding_loss", ("input", 1, input), ("target", 2, target))
    from cudalite import full_like

    zeros = input * 0
    margin_clamp = (full_like(input, margin) - input).clamp(min=0)  # in input's dtype
    loss = margin_clamp.where(target != 1, zeros) + input.where(target != -1, zeros)
    return _reduce(loss, reduction)


def soft_margin_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    """``log(1 + exp(-target * input))``."""
    reduction = _reduction(size_average, reduce, reduction)
    _tensors("soft_margin_loss", ("input", 1, input), ("target", 2, target))
    _not_differentiable("soft_margin_loss", target=target)
    if not input.dtype.is_floating_point:
        raise RuntimeError(
            f"result type Float can't be cast to the desired output type {input.dtype._short_name}"
        )
    loss = (-input * target).exp().log1p()
    return _reduce(loss, reduction)


def multilabel_soft_margin_loss(
    input, target, weight=None, size_average=None, reduce=None, reduction="mean"
):
    """The binary cross entropy of each class's logit, averaged over the classes."""
    if size_average is not None or reduce is not None:
        reduction = _legacy(size_average, reduce, reduction)
    if input.dim() == 0:
        raise IndexError("Dimension specified as -1 but tensor has no dimensions")
    loss = -(target * logsigmoid(input) + (1 - target) * logsigmoid(-input))
    if weight is not None:
        loss = loss * weight
    class_dim = input.dim() - 1
    c = input.size(class_dim)
    loss = loss.sum(class_dim) / c
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(reduction + " is not valid")
    return _reduce(loss, reduction)


def _class_targets(fname, input, target):
    """(input as 2-D, target as 2-D, whether the input was 1-D) after torch's checks of a
    class-index target for a (C,) or (N, C) input."""
    d = input.dim()
    if d > 2 or (d == 2 and input.size(1) == 0) or (d == 1 and input.size(0) == 0) or d == 0:
        if not (d == 0 and fname == "multi_margin_loss"):
            raise RuntimeError(
                f"{'Expected' if fname == 'multi_margin_loss' else 'Expected'} non-empty vector "
                "or matrix with optional 0-dim batch size, but got: "
                f"{list(input.shape)}"
            )
    if target.dtype is not _C.int64:
        raise RuntimeError(f"expected scalar type Long but found {target.dtype._short_name}")
    return d <= 1


def multilabel_margin_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    """``sum over targets j and non-targets i of max(0, 1 - (x[j] - x[i])) / C``; a row's
    targets are its class indices up to the first -1."""
    import numpy as np

    reduction = _reduction(size_average, reduce, reduction)
    _tensors("multilabel_margin_loss", ("input", 1, input), ("target", 2, target))
    d = input.dim()
    if d > 2 or (d >= 1 and input.size(-1) == 0 and not (d == 2 and input.size(0) == 0)):
        raise RuntimeError(
            "Expected non-empty vector or matrix with optional 0-dim batch size, but got: "
            f"{list(input.shape)}"
        )
    c = input.size(-1) if d else 1
    exp_t = [c] if d <= 1 else [input.size(0), c]
    if list(target.shape) != exp_t and not (d == 0 and target.numel() == 1):
        raise RuntimeError(
            f"inconsistent target size: {list(target.shape)} for input of size: {list(input.shape)}"
        )
    if target.dtype is not _C.int64:
        raise RuntimeError(f"expected scalar type Long but found {target.dtype._short_name}")
    x = input.reshape(-1, c)
    t = target.detach().cpu().numpy().reshape(-1, c)
    valid = np.zeros(t.shape, dtype=bool)
    is_target = np.zeros(t.shape, dtype=bool)
    for r in range(t.shape[0]):
        for k in range(c):
            j = int(t[r, k])
            if j < 0:
                break
            if j >= c:
                raise RuntimeError("argument #2 'target' is out of range")
            valid[r, k] = True
            is_target[r, j] = True
    from cudalite import tensor

    dev = input.device
    idx = tensor(np.where(valid, t, 0).astype(np.int64), device=dev)
    xj = x.gather(1, idx)  # (N, C): the target classes' values, by position
    pair = (1 - xj.unsqueeze(2) + x.unsqueeze(1)).clamp(min=0)
    keep = tensor(valid[:, :, None] & ~is_target[:, None, :], device=dev)
    loss = (pair * keep.to(x.dtype)).sum((1, 2)) / c
    if d <= 1:
        loss = loss.reshape([])
    return _reduce_kernel(loss, reduction)


def multi_margin_loss(
    input,
    target,
    p=1,
    margin=1.0,
    weight=None,
    size_average=None,
    reduce=None,
    reduction="mean",
):
    """``sum over i != y of max(0, margin - x[y] + x[i]) ** p * weight[y] / C``."""
    reduction = _reduction(size_average, reduce, reduction)
    if p not in (1, 2):
        raise ValueError("only p == 1 and p == 2 supported")
    if weight is not None and weight.dim() != 1:
        raise ValueError("weight must be one-dimensional")
    _tensors("multi_margin_loss", ("input", 1, input), ("target", 2, target))
    d = input.dim()
    c = input.size(-1) if d else 1
    if d > 2 or (d >= 1 and c == 0):
        raise RuntimeError(
            "Expected non-empty vector or matrix with optional 0-dim batch size, but got: "
            f"{list(input.shape)}"
        )
    n = input.size(0) if d == 2 else 1
    if target.dim() > 1 or target.numel() != n:
        raise RuntimeError(f"inconsistent target size, expected {n} but got {list(target.shape)}")
    if target.dtype is not _C.int64:
        raise RuntimeError(f"expected scalar type Long but found {target.dtype._short_name}")
    if weight is not None and weight.numel() != c:
        raise RuntimeError(f"inconsistent weight size, expected {c} but got {list(weight.shape)}")
    t = target.reshape(n, 1)
    tv = t.detach().cpu().numpy()
    if tv.size and (tv.min() < 0 or tv.max() >= c):
        raise RuntimeError("target out of range")
    x = input.reshape(n, c)
    xy = x.gather(1, t)
    z = (margin - xy + x).clamp(min=0)
    if p == 2:
        z = z * z
    from cudalite import arange

    own = arange(c, device=input.device).unsqueeze(0) == t
    z = z.masked_fill(own, 0.0)
    if weight is not None:
        z = z * weight.index_select(0, t.reshape(n)).unsqueeze(1)
    loss = z.sum(1) / c
    if target.dim() == 0:  # torch's shape for 'none' follows the target's
        loss = loss.reshape([])
    return _reduce_kernel(loss, reduction)


def cosine_embedding_loss(
    input1, input2, target, margin=0, size_average=None, reduce=None, reduction="mean"
):
    """``1 - cos(x1, x2)`` where ``target == 1``, ``max(0, cos(x1, x2) - margin)`` where
    ``target == -1`` (the squared norms are offset by 1e-12, as torch's)."""
    reduction = _reduction(size_average, reduce, reduction)
    _tensors(
        "cosine_embedding_loss",
        ("input1", 1, input1),
        ("input2", 2, input2),
        ("target", 3, target),
    )
    td = target.dim()
    if td not in (0, 1):
        raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
    if td == 1:
        if input1.dim() != 2 or input2.dim() != 2:
            raise RuntimeError(
                "1D target tensor expects 2D input tensors, but found inputs with sizes "
                f"{list(input1.shape)} and {list(input2.shape)}."
            )
    elif input1.dim() != 1 or input2.dim() != 1:
        raise RuntimeError(
            "0D target tensor expects 1D input tensors, but found inputs with sizes "
            f"{list(input1.shape)} and {list(input2.shape)}."
        )
    prod_sum = (input1 * input2).sum(td)
    mag1 = (input1 * input1).sum(td) + 1e-12
    mag2 = (input2 * input2).sum(td) + 1e-12
    cos = prod_sum / (mag1 * mag2).sqrt()
    zeros = cos * 0
    pos = (1 - cos).where(target == 1, zeros)
    neg = (cos - margin).clamp(min=0).where(target == -1, zeros)
    return _reduce(pos + neg, reduction)


def _triplet_dims(anchor, positive, negative):
    a, p, n = anchor.dim(), positive.dim(), negative.dim()
    if not (a == p and p == n):
        raise RuntimeError(
            "The anchor, positive, and negative tensors are expected to have the same number "
            f"of dimensions, but got: anchor {a}D, positive {p}D, and negative {n}D inputs"
        )


def _triplet(dist_pos, dist_neg, margin):
    return (margin + dist_pos - dist_neg).clamp(min=0)


def triplet_margin_loss(
    anchor,
    positive,
    negative,
    margin=1.0,
    p=2,
    eps=1e-6,
    swap=False,
    size_average=None,
    reduce=None,
    reduction="mean",
):
    """``max(0, margin + d(a, p) - d(a, n))`` with the pairwise ``p``-norm distance ``d``;
    ``swap`` uses ``min(d(a, n), d(p, n))``."""
    reduction = _reduction(size_average, reduce, reduction)
    if margin <= 0:
        raise ValueError(f"margin must be greater than 0, got {margin}")
    _tensors(
        "triplet_margin_loss",
        ("anchor", 1, anchor),
        ("positive", 2, positive),
        ("negative", 3, negative),
    )
    _triplet_dims(anchor, positive, negative)
    dist_pos = pairwise_distance(anchor, positive, p, eps)
    dist_neg = pairwise_distance(anchor, negative, p, eps)
    if swap:
        dist_neg = dist_neg.minimum(pairwise_distance(positive, negative, p, eps))
    return _reduce(_triplet(dist_pos, dist_neg, margin), reduction)


def triplet_margin_with_distance_loss(
    anchor, positive, negative, *, distance_function=None, margin=1.0, swap=False, reduction="mean"
):
    """triplet_margin_loss with any distance (``pairwise_distance`` by default)."""
    if reduction not in ("mean", "sum", "none"):
        raise ValueError(f"{reduction} is not a valid value for reduction")
    if margin <= 0:
        raise ValueError(f"margin must be greater than 0, got {margin}")
    _triplet_dims(anchor, positive, negative)
    dist = pairwise_distance if distance_function is None else distance_function
    dist_pos = dist(anchor, positive)
    dist_neg = dist(anchor, negative)
    if swap:
        dist_neg = dist_neg.minimum(dist(positive, negative))
    return _reduce(_triplet(dist_pos, dist_neg, margin), reduction)
