"""Diagonals as tensors of their own: trace, diag, diagflat and diag_embed.

``diagonal`` is a view (``_tensor_views``); these copy, sum or build a tensor around the
values, with ordinary recorded ops so that autograd differentiates them.
"""

from __future__ import annotations

from cudalite import _C
from cudalite._reductions import _out
from cudalite._tensor import method
from cudalite._tensor_scatter import out_no_grad

__all__ = ["trace", "diag", "diagflat", "diag_embed"]


_NO_CPU_TRACE = (_C.float16, _C.bfloat16)  # torch's CPU kernel has no 16-bit floats


def _trace(input):
    if input.dim() != 2:
        raise RuntimeError(f"trace: expected a matrix, but got tensor with dim {input.dim()}")
    if input.dtype == _C.bool or (not input.is_cuda and input.dtype in _NO_CPU_TRACE):
        raise NotImplementedError(f"\"trace\" not implemented for '{input.dtype._short_name}'")
    return input.diagonal().sum()


def trace(input):
    """The sum of the main diagonal of a matrix."""
    return _trace(input)


method(name="trace")(_trace)


def _diag_embed(input, offset=0, dim1=-2, dim2=-1):
    """Zeros with one more dim whose (dim1, dim2) matrices carry ``input``'s last dim on their
    ``offset`` diagonal (``diagonal_scatter``, so autograd records it through that)."""
    nd = input.dim() + 1
    d1, d2 = _C._wrap_dim(dim1, nd), _C._wrap_dim(dim2, nd)
    if d1 == d2:
        raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    x = input if input.dim() else input.reshape(1)
    n = x.shape[-1] + abs(offset)
    batch = iter(x.shape[:-1])
    shape = [n if d in (d1, d2) else next(batch) for d in range(nd)]
    return _C._full(shape, 0, input.dtype, input.device).diagonal_scatter(x, offset, d1, d2)


def diag_embed(input, offset=0, dim1=-2, dim2=-1):
    """A tensor whose diagonals (``offset``, over dims ``dim1`` and ``dim2``) hold the last
    dimension of ``input``; zeros elsewhere."""
    return _diag_embed(input, offset, dim1, dim2)


method(name="diag_embed")(_diag_embed)


def _diag(input, diagonal=0):
    if input.dim() == 1:
        return _diag_embed(input, diagonal)
    if input.dim() == 2:  # a new contiguous vector (clone would keep the view's stride)
        d = input.diagonal(diagonal)
        return _C._empty([d.shape[0]], input.dtype, input.device, False).copy_(d)
    raise RuntimeError(f"diag(): Supports 1D or 2D tensors. Got {input.dim()}D")


def diag(input, diagonal=0, *, out=None):
    """A vector's square matrix with it on a diagonal, or a matrix's diagonal as a vector."""
    out_no_grad("diag", out, input)
    return _out(_diag(input, diagonal), out)


method(name="diag")(_diag)


def _diagflat(input, offset=0):
    return _diag_embed(input.reshape(-1), offset)


def diagflat(input, offset=0):
    """The square matrix with ``input``'s elements (flattened) on its ``offset`` diagonal."""
    return _diagflat(input, offset)


method(name="diagflat")(_diagflat)
