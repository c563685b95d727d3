"""``slice_scatter``, ``select_scatter``, ``diagonal_scatter`` and ``as_strided_scatter``: a
copy of the tensor whose slice, selected slice, diagonal or strided view is replaced by
``src`` (the out-of-place forms of writing into a view, as torch has them).

Each is a ``clone`` and a ``copy_`` into the view of the clone, so autograd records it
through those (the gradient of ``src`` is the view of the gradient, that of ``self`` the
gradient with the view zeroed).
"""

from __future__ import annotations

from cudalite import _C
from cudalite._tensor import method

__all__ = ["slice_scatter", "select_scatter", "diagonal_scatter", "as_strided_scatter"]


def _embed(out, view, src):
    if tuple(src.shape) != tuple(view.shape):
        raise RuntimeError(
            "expected src to have a size equal to the slice of self. src size = "
            f"{list(src.shape)}, slice size = {list(view.shape)}"
        )
    view.copy_(src)
    return out


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
    return _embed(out, out[(slice(None),) * dim + (slice(s, e, step),)], src)


def slice_scatter(input, src, dim=0, start=None, end=None, step=1):
    return input.slice_scatter(src, dim, start, end, step)


@method(name="select_scatter")
def _select_scatter(self, src, dim, index):
    """A copy of ``self`` with ``self.select(dim, index)`` set to ``src``."""
    out = self.clone()
    return _embed(out, out.select(dim, index), src)


def select_scatter(input, src, dim, index):
    return input.select_scatter(src, dim, index)


@method(name="diagonal_scatter")
def _diagonal_scatter(self, src, offset=0, dim1=0, dim2=1):
    """A copy of ``self`` with ``self.diagonal(offset, dim1, dim2)`` set to ``src``."""
    out = self.clone()
    return _embed(out, out.diagonal(offset, dim1, dim2), src)


def diagonal_scatter(input, src, offset=0, dim1=0, dim2=1):
    return input.diagonal_scatter(src, offset, dim1, dim2)


@method(name="as_strided_scatter")
def _as_strided_scatter(self, src, size, stride, storage_offset=None):
    """A copy of ``self`` (same strides) with ``as_strided(size, stride, storage_offset)``
    of it set to ``src``."""
    out = self.clone()
    return _embed(out, out.as_strided(size, stride, storage_offset), src)


def as_strided_scatter(input, src, size, stride, storage_offset=None):
    return input.as_strided_scatter(src, size, stride, storage_offset)
