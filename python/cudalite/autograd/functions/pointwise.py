"""Backward nodes and recorded forwards for elementwise ops (unary, binary, where, clamp).

Formulas are written with ordinary tensor ops, so with ``create_graph=True`` they record a
graph themselves and gradients can be differentiated again.
"""

from __future__ import annotations

import math

from cudalite import _C, _ops
from cudalite._C import Tensor
from cudalite.autograd import derivatives
from cudalite.autograd.functions._common import (
    B,
    Node,
    U,
    adopt,
    check_inplace,
    edge,
    edges2,
    fix,
    mark,
    metas,
    no_out,
    nograd,
    twin,
    zeros_like,
)
from cudalite.autograd.functions.where import _where

# ---- unary ----


class _Unary(Node):
    __slots__ = ("self_", "_result")


def _u(name, saved, formula):
    """A unary node class: ``formula(node, grad)`` is the input's gradient."""

    def apply(self, g):
        return (formula(self, g),)

    return type(name, (_Unary,), {"__slots__": (), "_saved": saved, "apply": apply})


def _zero(n, g):
    return zeros_like(g)


CloneBackward0 = _u("CloneBackward0", (), lambda n, g: g)
AliasBackward0 = _u("AliasBackward0", (), lambda n, g: g)
FillBackward0 = _u("FillBackward0", (), _zero)
FillBackward2 = _u("FillBackward2", (), _zero)
ZeroBackward0 = _u("ZeroBackward0", (), _zero)
UniformBackward0 = _u("UniformBackward0", (), _zero)
NormalBackward0 = _u("NormalBackward0", (), _zero)
RandomBackward0 = _u("RandomBackward0", (), _zero)
# ---- random fills: bernoulli_, exponential_ ----
BernoulliBackward1 = _u("BernoulliBackward1", (), _zero)  # a tensor p
BernoulliBackward2 = _u("BernoulliBackward2", (), _zero)  # a number p
ExponentialBackward0 = _u("ExponentialBackward0", (), _zero)

# The registry's unary ops: name -> node class, from their formulas.
UNARY_NODES = {
    name: _u(derivatives.node_name(name), saved, formula)
    for name, (saved, formula) in derivatives.UNARY.items()
}
globals().update({cls.__name__: cls for cls in UNARY_NODES.values()})


def unary(name, x):
    """Recorded ``name(x)``."""
    if name == "square":
        return pow_(x, 2)
    out = _C._unary(U[name], x, None)
    cls = UNARY_NODES.get(name)
    if cls is None or not out.dtype.is_floating_point:
        return out
    node = cls((edge(x),))
    if cls._saved:
        if cls._saved[0] == "self_":
            node.self_ = x
        else:
            node.result = out
    return mark(out, node)


def unary_out(name, x, out=None):
    """Recorded ``cudalite.name(x)`` (``out=`` is refused with torch's error)."""
    no_out(out, name)
    return unary(name, x)


def unary_(name, x):
    """Recorded in-place ``x.name_()``."""
    check_inplace(x)
    cls = UNARY_NODES.get(name)
    src = twin(x) if cls is not None and cls._saved == ("self_",) else x
    return adopt(x, unary(name, src))


# ---- binary ----


class AddBackward0(Node):
    __slots__ = ("alpha", "m0", "m1")

    def apply(self, g):
        n = self._next
        ga = fix(g, self.m0) if n[0] is not None else None
        gb = None
        if n[1] is not None:
            gb = fix(g if self.alpha == 1 else g * self.alpha, self.m1)
        return (ga, gb)


class SubBackward0(AddBackward0):
    __slots__ = ()

    def apply(self, g):
        n = self._next
        ga = fix(g, self.m0) if n[0] is not None else None
        gb = fix(g * -self.alpha, self.m1) if n[1] is not None else None
        return (ga, gb)


class RsubBackward1(Node):
    __slots__ = ("alpha",)

    def apply(self, g):
        return (g * -self.alpha,)


class MulBackward0(Node):
    __slots__ = ("self_", "other", "m0", "m1")
    _saved = ("other", "self_")  # torch's order: its names, sorted

    def apply(self, g):
        n = self._next
        ga = fix(g * self.other, self.m0) if n[0] is not None else None
        gb = fix(g * self.self_, self.m1) if n[1] is not None else None
        return (ga, gb)


class DivBackward0(MulBackward0):
    __slots__ = ()

    def apply(self, g):
        n = self._next
        b = self.other
        ga = fix(g / b, self.m0) if n[0] is not None else None
        gb = fix(-g * self.self_ / (b * b), self.m1) if n[1] is not None else None
        return (ga, gb)


class PowBackward0(Node):
    """``self ** exponent`` for a number exponent."""

    __slots__ = ("self_", "exponent")
    _saved = ("self_",)

    def apply(self, g):
        p = self.exponent
        if p == 0:
            return (zeros_like(g),)
        return (g * (self.self_ ** (p - 1) * p),)


class PowBackward1(MulBackward0):
    """``self ** exponent`` for a tensor exponent (saved as ``other``)."""

    __slots__ = ("_result",)
    _saved = ("other", "self_", "_result")  # torch's names: exponent, self, result

    def apply(self, g):
        n = self._next
        a, b = self.self_, self.other
        ga = gb = None
        if n[0] is not None:
            ga = fix(_where(b == 0, 0.0, g * b * a ** (b - 1)), self.m0)
        if n[1] is not None:
            # torch's convention: 0 ** b has zero gradient in b for b >= 0
            gb = _where((a == 0) & (b >= 0), 0.0, g * self.result * a.log())
            gb = fix(gb, self.m1)
        return (ga, gb)


class PowBackward2(Node):
    """``base ** exponent`` for a number base."""

    __slots__ = ("base", "exponent", "_result")
    _saved = ("exponent", "_result")

    def apply(self, g):
        if self.base == 0:
            return (_where(self.result >= 0, 0.0, g * self.result * float("-inf")),)
        return (g * self.result * math.log(self.base),)


class _Binary(Node):
    """A binary node from a formula of derivatives.BINARY."""

    __slots__ = ("self_", "other", "_result", "m0", "m1")

    def apply(self, g):
        n = self._next
        ga = fix(self._grad_self(g), self.m0) if n[0] is not None else None
        gb = fix(self._grad_other(g), self.m1) if n[1] is not None else None
        return (ga, gb)


def _b(name, saved, grad_self, grad_other):
    return type(
        name,
        (_Binary,),
        {
            "__slots__": (),
            "_saved": saved,
            "_grad_self": lambda self, g: grad_self(self, g),
            "_grad_other": lambda self, g: grad_other(self, g),
        },
    )


# The registry's binary ops that need only a formula: name -> node class.
BINARY_NODES = {
    name: _b(derivatives.node_name(name), *formula) for name, formula in derivatives.BINARY.items()
}
globals().update({cls.__name__: cls for cls in BINARY_NODES.values()})


class RemainderBackward0(Node):
    __slots__ = ()

    def apply(self, g):
        return (g,)


class RemainderBackward1(MulBackward0):
    __slots__ = ()

    def apply(self, g):
        n = self._next
        ga = fix(g, self.m0) if n[0] is not None else None
        gb = None
        if n[1] is not None:
            q = _ops.div(self.self_, self.other, rounding_mode="floor")
            gb = fix(-g * q, self.m1)
        return (ga, gb)


class _NotImplementedNode(Node):
    __slots__ = ("op",)

    def apply(self, g):
        raise RuntimeError(f"the derivative for '{self.op}' is not implemented.")


# torch names the node of a non-differentiable float op "NotImplemented".
NotImplementedBackward = type("NotImplemented", (_NotImplementedNode,), {"__slots__": ()})


def add(input, other, *, alpha=1, out=None):
    """Recorded ``input + alpha * other``."""
    no_out(out, "add")
    r = _ops.add(input, other, alpha=alpha)
    if not r.dtype.is_floating_point:
        return r
    node = AddBackward0(edges2(input, other))
    node.alpha = alpha
    metas(node, input, other, r)
    return mark(r, node)


def sub(input, other, *, alpha=1, out=None):
    """Recorded ``input - alpha * other``."""
    no_out(out, "sub")
    r = _ops.sub(input, other, alpha=alpha)
    node = SubBackward0(edges2(input, other))
    node.alpha = alpha
    metas(node, input, other, r)
    return mark(r, node)


def rsub(input, other, alpha=1):
    """Recorded ``other - alpha * input`` for a number ``other``."""
    x = input if alpha == 1 else _C._binary(B["mul"], input, alpha, None)
    r = _C._binary(B["sub"], other, x, None)
    node = RsubBackward1((edge(input),))
    node.alpha = alpha
    return mark(r, node)


def mul(input, other, *, out=None):
    no_out(out, "mul")
    r = _C._binary(B["mul"], input, other, None)
    node = MulBackward0(edges2(input, other))
    n = node._next
    node.other = other if n[0] is not None else None
    node.self_ = input if n[1] is not None else None
    metas(node, input, other, r)
    return mark(r, node)


def div(input, other, *, rounding_mode=None, out=None):
    no_out(out, "div")
    if rounding_mode is not None:
        r = _ops.div(input, other, rounding_mode=rounding_mode)
        if not r.dtype.is_floating_point:
            return r
        node = DivBackward0(edges2(input, other))
        metas(node, input, other, r)
        node.self_ = node.other = None
        # floor/trunc division is piecewise constant: a zero gradient everywhere
        return mark(r, DivBackward2(node._next, node.m0, node.m1))
    if not isinstance(input, Tensor):  # number / tensor: torch records reciprocal then mul
        return mul(unary("reciprocal", other), input)
    r = _C._binary(B["div"], input, other, None)
    node = DivBackward0(edges2(input, other))
    node.other = other
    node.self_ = input if node._next[1] is not None else None
    metas(node, input, other, r)
    return mark(r, node)


class _ZeroGrad2(Node):
    __slots__ = ("m0", "m1")

    def __init__(self, edges, m0, m1):
        super().__init__(edges)
        self.m0, self.m1 = m0, m1

    def apply(self, g):
        z = zeros_like(g)
        return (fix(z, self.m0), fix(z, self.m1))


DivBackward2 = type("DivBackward2", (_ZeroGrad2,), {"__slots__": ()})


def pow_(input, exponent, *, out=None):
    """Recorded ``input ** exponent`` (either may be a number)."""
    no_out(out, "pow")
    r = _C._binary(B["pow"], input, exponent, None)
    if not r.dtype.is_floating_point:
        return r
    if not isinstance(input, Tensor):
        node = PowBackward2((edge(exponent),))
        node.base, node.exponent, node.result = input, exponent, r
    elif not isinstance(exponent, Tensor):
        node = PowBackward0((edge(input),))
        node.self_, node.exponent = input, exponent
    else:
        node = PowBackward1(edges2(input, exponent))
        node.self_, node.other, node.result = input, exponent, r
        metas(node, input, exponent, r)
    return mark(r, node)


def _saving_both(cls, opname):
    keeps_result = "_result" in cls._saved

    def rec(input, other, *, out=None):
        no_out(out, opname)
        r = _C._binary(B[opname], input, other, None)
        if not r.dtype.is_floating_point:
            return r
        node = cls(edges2(input, other))
        node.self_, node.other = input, other
        if keeps_result:
            node.result = r
        metas(node, input, other, r)
        return mark(r, node)

    rec.__name__ = opname
    return rec


def remainder(input, other, *, out=None):
    no_out(out, "remainder")
    if not isinstance(other, Tensor) and isinstance(input, Tensor):
        r = _C._binary(B["remainder"], input, other, None)
        return mark(r, RemainderBackward0((edge(input),)))
    return _saving_both(RemainderBackward1, "remainder")(input, other)


def floor_divide(input, other, *, out=None):
    no_out(out, "floor_divide")
    r = _C._binary(B["floor_divide"], input, other, None)
    if not r.dtype.is_floating_point:
        return r
    node = NotImplementedBackward(edges2(input, other))
    node.op = "floor_divide"
    return mark(r, node)


BINARY_RECORDERS = {
    "add": add,
    "sub": sub,
    "mul": mul,
    "div": div,
    "pow": pow_,
    "remainder": remainder,
    "floor_divide": floor_divide,
    **{name: _saving_both(cls, name) for name, cls in BINARY_NODES.items()},
}
# In-place ops whose backward needs the value being overwritten (always, or when the other
# operand requires grad).
_ALWAYS_SAVES_SELF = {"pow", *BINARY_NODES}
_SAVES_SELF = {"mul", "div", "remainder"}


def binary(op, a, b):
    """Recorded ``a OP b``; ops without a derivative (comparisons, bitwise) just compute."""
    rec = BINARY_RECORDERS.get(op)
    if rec is None:
        return _C._binary(B[op], a, b, None)
    return rec(a, b)


def binary_rev(op, a, b):
    """Recorded ``a OP b`` where ``a`` is a number (Python's reflected operators)."""
    if op in ("add", "mul"):
        return binary(op, b, a)
    if op == "sub":
        return rsub(b, a)
    if op not in BINARY_RECORDERS:
        return _C._binary(B[op], a, b, None)
    if op in ("div", "pow"):
        return BINARY_RECORDERS[op](a, b)
    return binary(op, _C._full([], a, b.dtype, b.device), b)


def binary_(op, self, other, **kw):
    """Recorded in-place ``self OP= other``."""
    rec = BINARY_RECORDERS.get(op)
    if rec is None:
        _C._binary(B[op], self, other, self)
        return self
    check_inplace(self)
    # The backward of these needs the value that is about to be overwritten.
    saves_self = op in _ALWAYS_SAVES_SELF or (
        op in _SAVES_SELF and isinstance(other, Tensor) and other._rg
    )
    if other is self:
        # x *= x: both operands are the old value. The other operand is saved as self itself,
        # which the write then modifies: its backward raises, as torch's does.
        return adopt(self, rec(twin(self), self, **kw))
    return adopt(self, rec(twin(self) if saves_self else self, other, **kw))


# ---- logit ----


class LogitBackward0(Node):
    """d/dp log(p / (1 - p)) = 1 / (p (1 - p)); with eps, zero where p was clamped, and
    without, NaN outside [0, 1], as torch's logit_backward."""

    __slots__ = ("self_", "eps")
    _saved = ("self_",)

    def apply(self, g):
        x, eps = self.self_, self.eps
        d = g / (x * (1 - x))
        if eps is None:
            return (_where((x < 0) | (x > 1), math.nan, d),)
        return (_where((x < eps) | (x > 1 - eps), 0.0, d),)


def logit(input, eps=None, *, out=None):
    no_out(out, "logit")
    r = nograd(_ops.logit, input, eps)
    if not input.dtype.is_floating_point:
        return r
    node = LogitBackward0((edge(input),))
    node.self_, node.eps = input, None if eps is None else float(eps)
    return mark(r, node)


def logit_(self, eps=None):
    check_inplace(self)
    return adopt(self, logit(twin(self), eps))
