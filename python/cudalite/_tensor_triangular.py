"""tril and triu: the lower or upper triangle of the last two dims (batched), the rest zero.

The kept region is a broadcast [rows, cols] mask from two aranges (diagonal ``k``:
``col - row <= k`` for tril, ``>= k`` for triu), applied by ``where`` on any device.
"""

from __future__ import annotations

import operator

from cudalite import _C
from cudalite._reductions import _out
from cudalite._tensor import method
from cudalite._tensor_scatter import out_no_grad

__all__ = ["tril", "triu"]


def _keep(name, self, diagonal):
    if self.dim() < 2:
        raise RuntimeError(f"{name}: input tensor must have at least 2 dimensions")
    rows, cols = self.shape[-2], self.shape[-1]
    r = _C._arange(0, rows, 1, _C.int64, self.device).reshape([rows, 1])
    c = _C._arange(0, cols, 1, _C.int64, self.device)
    d = c - r
    return d <= diagonal if name == "tril" else d >= diagonal


def _triangle(name, self, diagonal):
    zero = _C._empty([], self.dtype, self.device, False)
    _C._fill_(zero, 0, bump_version=False)
    return _C._where(_keep(name, self, operator.index(diagonal)), self, zero)


def _triangle_(name, self, diagonal):
    keep = _keep(name, self, operator.index(diagonal))
    return self.masked_fill_(~keep, 0)


@method(name="tril")
def _tril(self, diagonal=0):
    return _triangle("tril", self, diagonal)


@method(name="triu")
def _triu(self, diagonal=0):
    return _triangle("triu", self, diagonal)


@method(name="tril_")
def _tril_(self, diagonal=0):
    return _triangle_("tril", self, diagonal)


@method(name="triu_")
def _triu_(self, diagonal=0):
    return _triangle_("triu", self, diagonal)


def tril(input, diagonal=0, *, out=None):
    out_no_grad("tril", out, input)
    return _out(input.tril(diagonal), out, exact=True)


def triu(input, diagonal=0, *, out=None):
    out_no_grad("triu", out, input)
    return _out(input.triu(diagonal), out, exact=True)
