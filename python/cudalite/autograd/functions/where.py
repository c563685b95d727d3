"""Backward nodes and recorded forwards for where, clamp, lerp and the in-place fills
(fill_, zero_, uniform_ ...)."""

from __future__ import annotations

from cudalite import _C, _ops
from cudalite._C import Tensor
from cudalite.autograd.functions._common import (
    Node,
    adopt,
    check_inplace,
    edge,
    edges2,
    fix,
    mark,
    meta,
    metas,
    no_out,
    nograd,
    remark,
    twin,
)


def _where(c, a, b):
    """``where`` inside formulas: recorded only when building a graph of the backward."""
    if _C._is_grad_enabled() and (
        (isinstance(a, Tensor) and a._rg) or (isinstance(b, Tensor) and b._rg)
    ):
        return where(c, a, b)
    return _C._where(c, a, b)


# ---- where, clamp, lerp ----


class WhereBackward0(Node):
    __slots__ = ("condition", "m0", "m1")
    _saved = ("condition",)

    def apply(self, g):
        n = self._next
        c = self.condition
        ga = fix(_where(c, g, 0.0), self.m0) if n[0] is not None else None
        gb = fix(_where(c, 0.0, g), self.m1) if n[1] is not None else None
        return (ga, gb)


def where(condition, input=None, other=None):
    if input is None and other is None:
        return _ops.where(condition)
    r = _C._where(condition, input, other)
    node = WhereBackward0(edges2(input, other))
    node.condition = condition
    metas(node, input, other, r)
    return mark(r, node)


class ClampBackward1(Node):
    __slots__ = ("self_", "min", "max")
    _saved = ("self_",)

    def apply(self, g):
        x = self.self_
        if self.min is not None and self.max is not None:
            mask = (x >= self.min) & (x <= self.max)
        elif self.min is not None:
            mask = x >= self.min
        else:
            mask = x <= self.max
        return (_where(mask, g, 0.0),)  # 0, not nan * 0, where clamped (torch)


class ClampBackward0(Node):
    """clamp with tensor bounds: the gradient goes to whichever of self/min/max is chosen."""

    __slots__ = ("self_", "min", "max", "m0", "m1", "m2")
    _saved = ("max", "min", "self_")  # torch's order: its names, sorted

    def apply(self, g):
        n = self._next
        x, lo, hi = self.self_, self.min, self.max
        keep = None
        glo = ghi = None
        if lo is not None:
            below = x < lo
            keep = ~below
            if n[1] is not None:
                glo = fix(_where(below, g, 0.0), self.m1)
        if hi is not None:
            above = x > hi
            keep = ~above if keep is None else keep & ~above
            if n[2] is not None:
                sel = above if lo is None else above & ~(x < lo)
                ghi = fix(_where(sel, g, 0.0), self.m2)
        gx = fix(_where(keep, g, 0.0), self.m0) if n[0] is not None else None
        return (gx, glo, ghi)


def clamp(input, min=None, max=None, *, out=None):
    no_out(out, "clamp")
    if isinstance(min, Tensor) or isinstance(max, Tensor):
        r = nograd(_ops.clamp, input, min, max)
        node = ClampBackward0(
            (
                edge(input),
                edge(min) if isinstance(min, Tensor) else None,
                edge(max) if isinstance(max, Tensor) else None,
            )
        )
        node.self_, node.min, node.max = input, min, max
        node.m0, node.m1, node.m2 = meta(input, r), meta(min, r), meta(max, r)
        return mark(r, node)
    if min is None and max is None:
        raise RuntimeError("cudalite.clamp: At least one of 'min' or 'max' must not be None")
    r = _C._clamp(input, min, max, None)
    node = ClampBackward1((edge(input),))
    node.self_, node.min, node.max = input, min, max
    return mark(r, node)


def clamp_(self, min=None, max=None):
    check_inplace(self)
    return adopt(self, clamp(twin(self), min, max))


class LerpBackward0(Node):
    __slots__ = ("weight", "m0", "m1")

    def apply(self, g):
        n = self._next
        w = self.weight
        ga = fix(g * (1 - w), self.m0) if n[0] is not None else None
        gb = fix(g * w, self.m1) if n[1] is not None else None
        return (ga, gb)


class LerpBackward1(Node):
    __slots__ = ("self_", "end", "weight", "m0", "m1", "m2")
    _saved = ("end", "self_", "weight")

    def apply(self, g):
        n = self._next
        w = self.weight
        ga = fix(g * (1 - w), self.m0) if n[0] is not None else None
        gb = fix(g * w, self.m1) if n[1] is not None else None
        gw = fix(g * (self.end - self.self_), self.m2) if n[2] is not None else None
        return (ga, gb, gw)


def lerp(input, end, weight, *, out=None):
    no_out(out, "lerp")
    r = nograd(_ops.lerp, input, end, weight)
    if isinstance(weight, Tensor):
        node = LerpBackward1((*edges2(input, end), edge(weight)))
        node.self_, node.end, node.weight = input, end, weight
        node.m2 = meta(weight, r)
    else:
        node = LerpBackward0(edges2(input, end))
        node.weight = weight
    node.m0, node.m1 = meta(input, r), meta(end, r)
    return mark(r, node)


# ---- fills ----


def fill_like(cls, fn):
    """Recorded in-place fill (``fill_``, ``zero_``, ``uniform_`` ...): the old values get a
    zero gradient."""

    def rec(self, *args, **kwargs):
        check_inplace(self)
        e = edge(self)
        fn(self, *args, **kwargs)
        if e is not None:
            remark(self, cls((e,)))
            if "_base_" in self.__dict__:
                from cudalite.autograd.functions.views import rebase_view

                rebase_view(self)
        return self

    return rec
