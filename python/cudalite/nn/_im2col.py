"""im2col and col2im for any number of spatial dimensions, composed of strided views, one
copy and in-place adds (so they run on every device the tensor ops run on).

A convolution's columns are the input windows laid out as rows of a matrix: for an input
``(N, C, *spatial)`` (already padded), kernel ``k``, stride ``s`` and dilation ``d``, the
columns have layout ``(g, N, *out, C/g, *k)``, so that each group's columns are one
``(N * L, C/g * K)`` matrix and the convolution is one batched matrix product with the weight
(``L`` the number of output positions, ``K`` the kernel's). col2im is the adjoint: it adds
every window back where it came from (overlapping windows accumulate), one in-place add of a
strided view per kernel offset.
"""

from __future__ import annotations

import itertools
import math

from cudalite import _C

__all__ = [
    "no_grad_call",
    "out_size",
    "im2col",
    "col2im",
    "cols_as_windows",
    "pad_input",
    "windows",
]


def no_grad_call(fn, *args):
    """``fn(*args)`` with grad mode off, restored after (to what it was: the forward of an
    op may run inside ``no_grad`` already)."""
    if not _C._is_grad_enabled():
        return fn(*args)
    _C._set_grad_enabled(False)
    try:
        return fn(*args)
    finally:
        _C._set_grad_enabled(True)


def out_size(size, k, s, d, pad_total):
    """Output length of a convolution (or pooling) window along one dimension."""
    return (size + pad_total - d * (k - 1) - 1) // s + 1


def pad_input(x, pads, value=0):
    """``x`` with ``pads`` (``(before, after)`` per spatial dim) added around its spatial
    dims, filled with ``value``; ``x`` itself when there is nothing to add."""
    if not any(a or b for a, b in pads):
        return x
    lead = list(x.shape[: x.dim() - len(pads)])
    shape = lead + [n + a + b for n, (a, b) in zip(x.shape[len(lead) :], pads, strict=True)]
    xp = _C._full(shape, value, x.dtype, x.device)
    index = (Ellipsis,) + tuple(
        slice(a, a + n) for n, (a, _) in zip(x.shape[len(lead) :], pads, strict=True)
    )
    xp[index] = x
    return xp


def windows(xp, k, s, d, out):
    """The view ``(*lead, *out, *k)`` of ``xp`` (``(*lead, *spatial)``) whose last dims walk
    each window: element ``[..., o, j]`` is ``xp[..., o * s + j * d]`` per spatial dim."""
    nd = len(k)
    st = list(xp.stride())
    lead = xp.dim() - nd
    sp = st[lead:]
    shape = list(xp.shape[:lead]) + list(out) + list(k)
    strides = (
        st[:lead]
        + [si * ss for si, ss in zip(s, sp, strict=True)]
        + [di * ss for di, ss in zip(d, sp, strict=True)]
    )
    return xp.as_strided(shape, strides, xp.storage_offset())


def im2col(xp, groups, k, s, d, out):
    """The columns of padded input ``xp`` ``(N, C, *spatial)``: a contiguous
    ``(groups, N * L, C / groups * K)`` tensor (on the CPU one parallel gather,
    csrc/ops/im2col.cpp)."""
    if not xp.is_cuda:
        return _C._im2col(xp, groups, list(k), list(s), list(d), list(out))
    n, c = xp.shape[0], xp.shape[1]
    nd = len(k)
    w = windows(xp, k, s, d, out)  # (N, C, *out, *k)
    cg = c // groups
    w = w.view([n, groups, cg] + list(out) + list(k))
    # -> (g, N, *out, Cg, *k)
    perm = [1, 0] + [3 + i for i in range(nd)] + [2] + [3 + nd + i for i in range(nd)]
    cols = w.permute(perm).contiguous()
    return cols.view(groups, n * math.prod(out), cg * math.prod(k))


def col2im(src, padded, k, s, d, out):
    """The adjoint of :func:`windows`: ``src`` ``(*lead, *out, *k)`` (any strides) added
    into a new zero tensor ``(*lead, *padded)``, each window where it was read from."""
    nd = len(k)
    lead = list(src.shape[: src.dim() - 2 * nd])
    if not src.is_cuda and src.dtype in (_C.float32, _C.float64):
        return _C._col2im(src, len(lead), list(padded), list(s), list(d))
    res = _C._full(lead + list(padded), 0, src.dtype, src.device)
    st = list(res.stride())
    sp = st[len(lead) :]
    shape = lead + list(out)
    strides = st[: len(lead)] + [si * ss for si, ss in zip(s, sp, strict=True)]
    for kk in itertools.product(*[range(kn) for kn in k]):
        off = sum(j * di * ss for j, di, ss in zip(kk, d, sp, strict=True))
        res.as_strided(shape, strides, off).add_(src[(Ellipsis, *kk)])
    return res


def cols_as_windows(cols, groups, n, out, k):
    """``cols`` ``(groups, N * L, C / groups * K)`` seen as ``(N, groups, C / groups, *out,
    *k)``, the layout :func:`col2im` adds back."""
    nd = len(k)
    cg = cols.shape[2] // max(math.prod(k), 1)
    g6 = cols.view([groups, n] + list(out) + [cg] + list(k))
    perm = [1, 0, 2 + nd] + [2 + i for i in range(nd)] + [3 + nd + i for i in range(nd)]
    return g6.permute(perm)
