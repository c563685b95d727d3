"""``slice_scatter``, ``select_scatter``, ``diagonal_scatter`` and ``as_strided_scatter``: a
copy of the tensor whose slice, selected slice, diagonal or strided view is replaced by
``src`` (the out-of-place forms of writing into a view, as torch has them).

Each is a ``clone`` and an index assignment (``out[idx] = src``) of the elements of the view,
so autograd records it through those (the gradient of ``src`` is the view of the gradient,
that of ``self`` the gradient with the view zeroed), also when only ``src`` requires grad.
"""

from __future__ import annotations

from cudalite import _C
from cudalite._tensor import method

__all__ = ["slice_scatter", "select_scatter", "diagonal_scatter", "as_strided_scatter"]


def _check(view, src):
    if tuple(src.shape) != tuple(view.shape):
        raise RuntimeError(
            "expected src to have a size equal to the slice of self. src size = "
            f"{list(src.shape)}, slice size = {list(view.shape)}"
        )


def _embed(out, view, src, idx=None, order=None):
    """``out[idx] = src`` where ``out[idx]`` holds ``view``'s elements (``order``: src's dims
    as the index lays them out)."""
    _check(view, src)
    if view.numel() == 0:
        return out
    if src.dtype != out.dtype:
        src = src.to(out.dtype)
    out[idx] = src if order is None else src.permute(order)
    return out


def _diagonal_index(t, offset, d1, d2):
    """The index tuple of ``t.diagonal(offset, d1, d2)``'s elements, and the order of the
    diagonal's dims in the result of indexing with it."""
    n = t.diagonal(offset, d1, d2).shape[-1]
    rows = _C._arange(max(-offset, 0), max(-offset, 0) + n, 1, _C.int64, t.device)
    cols = _C._arange(max(offset, 0), max(offset, 0) + n, 1, _C.int64, t.device)
    idx = [slice(None)] * t.dim()
    idx[d1], idx[d2] = rows, cols
    nb = t.dim() - 2  # the batch dims keep their order; the diagonal goes where indexing puts it
    pos = min(d1, d2) if abs(d1 - d2) == 1 else 0
    order = list(range(nb))
    order.insert(pos, nb)
    return tuple(idx), order


def _strided_index(t, size, stride, offset):
    """The index tuple (one tensor per dim of ``t``, contiguous) of the elements of
    ``t.as_strided(size, stride, offset)``."""
    pos = _C._arange(0, 1, 1, _C.int64, t.device).expand(list(size)) * 0 + offset
    for d, (n, st) in enumerate(zip(size, stride, strict=True)):
        view = [-1 if e == d else 1 for e in range(len(size))]
        pos = pos + _C._arange(0, n, 1, _C.int64, t.device).view(view) * st
    parts, step = [], 1
    for n in reversed(list(t.shape)):
        parts.append((pos // step).remainder(n) if n != 1 else pos * 0)
        step *= n
    return tuple(reversed(parts))


def _bound(i, n, default):
    if i is None:
        return default
    if i < 0:
        i += n
    return min(max(i, 0), n)


@method(name="slice_scatter")
def _slice_scatter(self, src, dim=0, start=None, end=None, step=1):
    """A copy of ``self`` with ``self[..., start:end:step, ...]`` (along ``dim``) set to
    ``src``."""
    dim = _C._wrap_dim(dim, self.dim())
    if step <= 0:
        raise RuntimeError("slice step must be positive")
    out = self.clone()
    n = self.shape[dim] if self.dim() else 1
    s = _bound(start, n, 0)
    e = max(_bound(end, n, n), s)
    idx = (slice(None),) * dim + (slice(s, e, step),)
    return _embed(out, out[idx], src, idx)


def slice_scatter(input, src, dim=0, start=None, end=None, step=1):
    return input.slice_scatter(src, dim, start, end, step)


@method(name="select_scatter")
def _select_scatter(self, src, dim, index):
    """A copy of ``self`` with ``self.select(dim, index)`` set to ``src``."""
    out = self.clone()
    view = out.select(dim, index)  # (its checks)
    dim = _C._wrap_dim(dim, self.dim())
    index = index + self.shape[dim] if index < 0 else index
    return _embed(out, view, src, (slice(None),) * dim + (index,))


def select_scatter(input, src, dim, index):
    return input.select_scatter(src, dim, index)


@method(name="diagonal_scatter")
def _diagonal_scatter(self, src, offset=0, dim1=0, dim2=1):
    """A copy of ``self`` with ``self.diagonal(offset, dim1, dim2)`` set to ``src``."""
    out = self.clone()
    view = out.diagonal(offset, dim1, dim2)  # (its checks)
    _check(view, src)
    d1, d2 = _C._wrap_dim(dim1, self.dim()), _C._wrap_dim(dim2, self.dim())
    idx, order = _diagonal_index(out, offset, d1, d2)
    return _embed(out, view, src, idx, order)


def diagonal_scatter(input, src, offset=0, dim1=0, dim2=1):
    return input.diagonal_scatter(src, offset, dim1, dim2)


@method(name="as_strided_scatter")
def _as_strided_scatter(self, src, size, stride, storage_offset=None):
    """A copy of ``self`` (same strides) with ``as_strided(size, stride, storage_offset)``
    of it set to ``src``."""
    out = self.clone()
    view = out.as_strided(size, stride, storage_offset)  # (its checks)
    _check(view, src)
    if not out.is_contiguous():  # the storage's order is not out's row-major order:
        view.copy_(src)  # (through the view)
        return out
    idx = _strided_index(out, list(view.shape), list(view.stride()), view.storage_offset())
    return _embed(out, view, src, idx)


def as_strided_scatter(input, src, size, stride, storage_offset=None):
    return input.as_strided_scatter(src, size, stride, storage_offset)
