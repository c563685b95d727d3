"""Splits of a tensor into pieces along one dimension beyond ``split`` and ``chunk``:
``tensor_split`` (sections or indices), ``hsplit`` / ``vsplit`` / ``dsplit``,
``split_with_sizes`` and the ``unsafe_`` forms, with torch's errors.

Every piece is a view of the tensor (``narrow``); autograd records them through the views.
The ``unsafe_`` forms share the memory too but are not views (torch's, which autograd does
not track as views, so an in-place change of one piece is not checked against the others).
"""

from __future__ import annotations

import operator

from cudalite import _C
from cudalite._C import Tensor
from cudalite._tensor import method

__all__ = [
    "tensor_split",
    "hsplit",
    "vsplit",
    "dsplit",
    "split_with_sizes",
    "unsafe_chunk",
    "unsafe_split",
    "unsafe_split_with_sizes",
]


_MAX_PIECES = 1 << 24


def _slice_bounds(i, n):
    """A Python slice bound: negative counts from the end, then clamped to [0, n]."""
    if i < 0:
        i += n
    return min(max(i, 0), n)


def _pieces_at(t, dim, indices):
    """Views of ``t`` between consecutive ``indices`` (slice semantics, as torch's)."""
    n = t.shape[dim]
    out, start = [], 0
    for i in [*indices, n]:
        end = _slice_bounds(i, n) if i is not n else n
        s = min(start, n)
        out.append(t.narrow(dim, s, max(end, s) - s))
        start = end
    return tuple(out)


def _sections(t, dim, sections):
    if sections <= 0:
        raise RuntimeError(f"number of sections must be larger than 0, got {sections}")
    if sections >= 1 << 63:
        raise RuntimeError("Overflow when unpacking long")
    if sections > _MAX_PIECES:  # (torch runs out of memory making them)
        raise RuntimeError(
            f"tensor_split: {sections} sections would make more tensors than memory can hold"
        )
    n = t.shape[dim]
    small, extra = divmod(n, sections)
    out, start = [], 0
    for k in range(sections):
        size = small + (1 if k < extra else 0)
        out.append(t.narrow(dim, start, size))
        start += size
    return tuple(out)


def _tensor_arg(arg):
    """A tensor of split points or sections: an int (0-dim) or a list of ints (1-dim)."""
    if arg.is_cuda:
        raise RuntimeError(
            "tensor_split expected tensor_indices_or_sections to be on cpu, but it's on "
            f"{arg.device}"
        )
    if arg.dtype != _C.int64:
        raise RuntimeError(
            "tensor_split expected tensor_indices_or_sections to have dtype of long, but got "
            f"{arg.dtype._short_name}"
        )
    if arg.dim() > 1:
        raise RuntimeError(
            "tensor_split expected tensor_indices_or_sections to be a zero-dimensional or "
            f"one-dimensional tensor, but got a tensor with {arg.dim()} dims"
        )
    return arg.item() if arg.dim() == 0 else arg.tolist()


def _is_int(v):
    return not isinstance(v, bool) and hasattr(type(v), "__index__")


@method(name="tensor_split")
def _tensor_split(
    self,
    indices_or_sections=None,
    dim=0,
    *,
    sections=None,
    indices=None,
    tensor_indices_or_sections=None,
):
    """Views of ``self`` along ``dim``: ``sections`` pieces as equal as can be (the first
    ``size % sections`` one longer), or the pieces between the ``indices``."""
    arg = next(
        (
            a
            for a in (indices_or_sections, sections, indices, tensor_indices_or_sections)
            if a is not None
        ),
        None,
    )
    if arg is None:
        raise TypeError("tensor_split() missing 1 required positional argument: 'sections'")
    if self.dim() == 0:
        raise RuntimeError(
            "tensor_split expected at least a 1-dimensional tensor, but got a tensor with 0 dims"
        )
    dim = _C._wrap_dim(dim, self.dim())
    if isinstance(arg, Tensor):
        arg = _tensor_arg(arg)
    elif hasattr(arg, "__len__"):
        arg = list(arg)
    if _is_int(arg):
        return _sections(self, dim, operator.index(arg))
    return _pieces_at(self, dim, [operator.index(i) for i in arg])


def tensor_split(input, indices_or_sections=None, dim=0, **kwargs):
    return input.tensor_split(indices_or_sections, dim, **kwargs)


def _directional(name, dim_of, least):
    def split(self, indices_or_sections=None, *, sections=None, indices=None):
        arg = next((a for a in (indices_or_sections, sections, indices) if a is not None), None)
        if self.dim() < least:
            raise RuntimeError(
                f"torch.{name} requires a tensor with at least {least} dimension, but got a "
                f"tensor with {self.dim()} dimensions!"
            )
        dim = dim_of(self)
        if _is_int(arg) and not isinstance(arg, Tensor):
            n = self.shape[dim]
            arg = operator.index(arg)
            if arg != 0 and n % abs(arg) == 0:
                return _sections(self, dim, arg)  # (a negative count: its error)
            raise RuntimeError(
                f"torch.{name} attempted to split along dimension {dim}, but the size of the "
                f"dimension {n} is not divisible by the split_size {arg}!"
            )
        return self.tensor_split(arg, dim)

    split.__name__ = name
    split.__doc__ = f"``tensor_split`` along dim {name[0]} (torch's ``{name}``)."
    return split


_hsplit = method(name="hsplit")(_directional("hsplit", lambda t: 0 if t.dim() == 1 else 1, 1))
_vsplit = method(name="vsplit")(_directional("vsplit", lambda t: 0, 2))
_dsplit = method(name="dsplit")(_directional("dsplit", lambda t: 2, 3))


def hsplit(input, indices_or_sections):
    return input.hsplit(indices_or_sections)


def vsplit(input, indices_or_sections):
    return input.vsplit(indices_or_sections)


def dsplit(input, indices_or_sections):
    return input.dsplit(indices_or_sections)


@method(name="split_with_sizes")
def _split_with_sizes(self, split_sizes, dim=0):
    """Views of ``self`` along ``dim`` of the given sizes (they must add up to its size)."""
    if isinstance(split_sizes, Tensor) or _is_int(split_sizes):
        raise TypeError(
            "split_with_sizes(): argument 'split_sizes' (position 1) must be tuple of ints, "
            f"not {type(split_sizes).__name__}"
        )
    return self.split(list(split_sizes), dim)


def split_with_sizes(input, split_sizes, dim=0):
    return input.split_with_sizes(split_sizes, dim)


def _not_views(fn):
    def unsafe(self, *args, **kwargs):
        pieces = fn(self, *args, **kwargs)
        if _C._is_grad_enabled() and self.requires_grad:
            return pieces  # differentiable through the views (UnsafeSplitBackward0's sums)
        return tuple(p._alias() for p in pieces)

    return unsafe


@method(name="unsafe_split")
def _unsafe_split(self, split_size, dim=0):
    """``split`` whose pieces are not tracked as views of ``self``."""
    return _not_views(Tensor.split)(self, split_size, dim)


@method(name="unsafe_chunk")
def _unsafe_chunk(self, chunks, dim=0):
    """``chunk`` whose pieces are not tracked as views of ``self``."""
    return _not_views(Tensor.chunk)(self, chunks, dim)


@method(name="unsafe_split_with_sizes")
def _unsafe_split_with_sizes(self, split_sizes, dim=0):
    """``split_with_sizes`` whose pieces are not tracked as views of ``self``."""
    return _not_views(Tensor.split_with_sizes)(self, split_sizes, dim)


def unsafe_split(input, split_size, dim=0):
    return input.unsafe_split(split_size, dim)


def unsafe_chunk(input, chunks, dim=0):
    return input.unsafe_chunk(chunks, dim)


def unsafe_split_with_sizes(input, split_sizes, dim=0):
    return input.unsafe_split_with_sizes(split_sizes, dim)
