"""Norms of differences and of slices: dist and renorm (vector norms from ``_reductions``)."""

from __future__ import annotations

from cudalite import _C
from cudalite._tensor import method

__all__ = ["dist", "renorm"]


def _dist(input, other, p=2):
    return (input - other).norm(p)


def dist(input, other, p=2):
    """The ``p``-norm of ``input - other``."""
    return _dist(input, other, p)


method(name="dist")(_dist)


def _renorm(input, p, dim, maxnorm):
    if p <= 0:
        raise RuntimeError("renorm: non-positive-norm not supported")
    if maxnorm < 0:
        raise RuntimeError(f"renorm: expected maxnorm to be >= 0 but got {maxnorm:g}")
    if not input.dtype.is_floating_point:
        raise RuntimeError(
            "linalg.vector_norm: Expected a floating point or complex tensor as input. Got "
            f"{input.dtype._short_name}"
        )
    if input.dim() < 2:
        raise RuntimeError(
            f"renorm: input needs at least 2 dimensions, got {input.dim()} dimensions"
        )
    d = _C._wrap_dim(dim, input.dim())
    others = [k for k in range(input.dim()) if k != d]
    norms = input.norm(p, others, True) if others else input.abs()
    # torch's factor: slices over maxnorm are scaled to it, with 1e-7 guarding the division
    factor = (maxnorm / (norms + 1e-7)).masked_fill(norms <= maxnorm, 1.0)
    return input * factor


def renorm(input, p, dim, maxnorm, *, out=None):
    """``input`` with each slice along ``dim`` whose ``p``-norm exceeds ``maxnorm`` scaled
    down to norm ``maxnorm``."""
    from cudalite._reductions import _out

    return _out(_renorm(input, p, dim, maxnorm), out)


method(name="renorm")(_renorm)
method(name="renorm_")(lambda self, p, dim, maxnorm: self.copy_(_renorm(self, p, dim, maxnorm)))
