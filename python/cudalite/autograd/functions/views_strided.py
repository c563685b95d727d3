"""Backward nodes and recorded forwards of the views made by strides: ``diagonal``
(DiagonalBackward0), ``unfold`` (UnfoldBackward0) and ``movedim`` / ``moveaxis``, which torch
records as the permute they are (PermuteBackward0; AliasBackward0 for a 0-dim tensor)."""

from __future__ import annotations

from cudalite import _C
from cudalite import _tensor_views as tv
from cudalite._arg_parser import MISSING
from cudalite.autograd.functions._common import Node, edge, mark, zeros
from cudalite.autograd.functions.pointwise import AliasBackward0
from cudalite.autograd.functions.views import (
    PermuteBackward0,
    _EmbedBackward,
    _view_mark,
    embed,
    strided_positions,
)

# ---- diagonal ----


class DiagonalBackward0(Node):
    __slots__ = ("shape", "offset", "dim1", "dim2")

    def apply(self, g):
        o, d1, d2 = self.offset, self.dim1, self.dim2
        return (embed(g, self.shape, lambda z: z.diagonal(o, d1, d2), "DiagonalBackwardBackward0"),)


def diagonal(self, offset=0, dim1=0, dim2=1, *, outdim=MISSING):
    tv.named_dims(self, outdim, dim2)
    out = tv.diagonal_view(self, offset, dim1, dim2)
    node = DiagonalBackward0((edge(self),))
    node.shape, node.offset, node.dim1, node.dim2 = self.shape, offset, dim1, dim2
    return _view_mark(out, self, node)


# ---- unfold ----


class UnfoldBackwardBackward0(_EmbedBackward):
    """The backward of UnfoldBackward0's sum of windows: the windows again (recorded when a
    backward pass builds a graph)."""

    __slots__ = ()


class UnfoldBackward0(Node):
    """Each window's gradient added back where the window lies: windows overlap when
    step < size, so the gradient is scattered with accumulation."""

    __slots__ = ("shape", "dim", "size", "step")

    def apply(self, g):
        d, size, step = self.dim, self.size, self.step
        z = zeros(self.shape, g)
        v = tv.unfold_view(z, d, size, step)
        pos = strided_positions(v.shape, v.stride(), v.storage_offset(), g.device)
        _C._scatter_offsets(z, pos, g.contiguous(), True)
        if g._rg and _C._is_grad_enabled():
            node = UnfoldBackwardBackward0((edge(g),))
            node.select = lambda t: t.unfold(d, size, step)
            mark(z, node)
        return (z,)


def unfold(self, dimension, size, step):
    out = tv.unfold_view(self, dimension, size, step)
    node = UnfoldBackward0((edge(self),))
    node.shape, node.size, node.step = self.shape, size, step
    node.dim = _C._wrap_dim(dimension, self.dim())
    return _view_mark(out, self, node)


# ---- movedim / moveaxis ----


def _movedim(name):
    def rec(self, source, destination):
        order = tv.movedim_order(self, *tv.movedim_lists(source, destination))
        out = tv.movedim_view(self, order)
        if order is None:  # a 0-dim tensor: torch's alias()
            return _view_mark(out, self, AliasBackward0((edge(self),)))
        node = PermuteBackward0((edge(self),))
        node.dims = order
        return _view_mark(out, self, node)

    rec.__name__ = name
    return rec


movedim = _movedim("movedim")
moveaxis = _movedim("moveaxis")
