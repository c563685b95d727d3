"""Diagonal matrices from vectors and back: ``diag``, ``diag_embed``, ``diagflat``, and the
matrix view ``H`` (a real matrix's conjugate transpose is its transpose), as torch has them.

The new matrices are zeros whose diagonal takes the input (``diagonal_scatter``), so autograd
records them through that; ``diag`` of a matrix is a copy of its diagonal.
"""

from __future__ import annotations

import warnings

from cudalite import _C
from cudalite._tensor import _methods, method

__all__ = ["diag", "diag_embed", "diagflat"]


@method(name="diag_embed")
def _diag_embed(self, offset=0, dim1=-2, dim2=-1):
    """A tensor with one more dim whose (dim1, dim2) matrices carry ``self``'s last dim on
    their ``offset`` diagonal, zeros elsewhere."""
    nd = self.dim() + 1
    d1, d2 = _C._wrap_dim(dim1, nd), _C._wrap_dim(dim2, nd)
    if d1 == d2:
        raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    n = self.shape[-1] + abs(offset)
    batch = iter(self.shape[:-1])
    shape = [n if d in (d1, d2) else next(batch) for d in range(nd)]
    return _C._full(shape, 0, self.dtype, self.device).diagonal_scatter(self, offset, d1, d2)


def diag_embed(input, offset=0, dim1=-2, dim2=-1):
    return input.diag_embed(offset, dim1, dim2)


@method(name="diag")
def _diag(self, diagonal=0):
    """Of a vector: the square matrix with it on the ``diagonal``-th diagonal; of a matrix: a
    copy of that diagonal."""
    if self.dim() == 1:
        return self.diag_embed(diagonal, 0, 1)
    if self.dim() == 2:
        d = self.diagonal(diagonal)
        return _C._empty([d.shape[0]], self.dtype, self.device, False).copy_(d)
    raise RuntimeError(f"diag(): Supports 1D or 2D tensors. Got {self.dim()}D")


def diag(input, diagonal=0, *, out=None):
    from cudalite._reductions import _out
    from cudalite._tensor_scatter import out_no_grad

    out_no_grad("diag", out, input)
    return _out(input.diag(diagonal), out, exact=True)


@method(name="diagflat")
def _diagflat(self, offset=0):
    """The square matrix with ``self``'s elements (flattened) on its ``offset`` diagonal."""
    return self.reshape(-1).diag_embed(offset, 0, 1)


def diagflat(input, offset=0):
    return input.diagflat(offset)


def _h(self):
    """The conjugate transpose of a matrix: its transpose (a view)."""
    if self.dim() == 2:
        return self.transpose(0, 1)
    if self.dim() == 0:
        warnings.warn(
            "Tensor.H is deprecated on 0-D tensors. Consider using x.conj().",
            UserWarning,
            stacklevel=2,
        )
        return self
    extra = ". For batches of matrices, consider using tensor.mH" if self.dim() > 2 else "."
    raise RuntimeError(
        f"tensor.H is only supported on matrices (2-D tensors). Got {self.dim()}-D tensor{extra}"
    )


_methods["H"] = property(_h)
