"""The derivatives of the registry's elementwise ops: one formula per op (Note [The op
registry], ``csrc/ops/ops.def``), as torch's ``derivatives.yaml``.

A unary formula is ``(saved, grad)``: ``saved`` names what the backward reads, ``"self_"`` (the
input) or ``"_result"`` (the output, read as ``n.result``), and ``grad(n, g)`` maps the incoming
gradient ``g`` to the input's. A binary formula is ``(saved, grad_self, grad_other)`` over
``n.self_``, ``n.other`` and ``n.result``; a gradient is reduced to its operand's shape where
it was broadcast, and computed only for an operand that requires grad. The backward nodes are
named as torch's (``"log1p"`` -> ``Log1PBackward0``, see ``node_name``).

Formulas are written with ordinary tensor ops, so with ``create_graph=True`` they record a
graph themselves and gradients can be differentiated again. The ops whose recording needs more
than a formula (``add``/``sub`` with alpha, ``mul``, ``div`` with its rounding modes, ``pow``
with a number on either side, ``remainder``, ``floor_divide``, ``square``) are recorded in
``functions/pointwise.py``.
"""

from __future__ import annotations

import math

from cudalite.autograd.functions._common import zeros_like
from cudalite.autograd.functions.where import _where

_LN2, _LN10 = math.log(2.0), math.log(10.0)
_TWO_OVER_SQRT_PI = 2.0 / math.sqrt(math.pi)
_SQRT_PI_OVER_2 = math.sqrt(math.pi) / 2.0


def _zero(n, g):
    return zeros_like(g)


def _trigamma(x):
    from cudalite._pointwise import trigamma

    return trigamma(x)


def _sinc_grad(x):
    p = x * math.pi
    d = (p * p.cos() - p.sin()) / (p * x)
    return _where(x == 0, 0.0, d)


def _zeta_self_grad(n, g):
    raise NotImplementedError("the derivative for 'zeta' is not implemented.")


def _no_input_grad(name):
    def grad(n, g):
        raise NotImplementedError(f"the derivative for '{name}: input' is not implemented.")

    return grad


def _igamma_density(a, x):
    """d/dx P(a, x) = x^(a - 1) e^-x / Gamma(a)."""
    return ((a - 1) * x.log() - x - a.lgamma()).exp()


def _erf_grad(x):
    return (x * x).neg().exp() * _TWO_OVER_SQRT_PI


# Nodes torch numbers otherwise (its overload for a tensor operand).
_NODE_NAMES = {"fmod": "FmodBackward1", "_zeta": "SpecialZetaBackward0"}


def node_name(op):
    """torch's name of ``op``'s backward node: ``atan2`` -> ``Atan2Backward0``."""
    return _NODE_NAMES.get(op) or op.title().replace("_", "") + "Backward0"


SELF, RESULT = ("self_",), ("_result",)

UNARY = {
    "neg": ((), lambda n, g: -g),
    "abs": (SELF, lambda n, g: g * n.self_.sign()),
    "sign": ((), _zero),
    "relu": (RESULT, lambda n, g: _where(n.result > 0, g, 0.0)),  # torch's threshold
    "exp": (RESULT, lambda n, g: g * n.result),
    "log": (SELF, lambda n, g: g / n.self_),
    "log2": (SELF, lambda n, g: g / (n.self_ * _LN2)),
    "log10": (SELF, lambda n, g: g / (n.self_ * _LN10)),
    "log1p": (SELF, lambda n, g: g / (n.self_ + 1)),
    "expm1": (RESULT, lambda n, g: g * (n.result + 1)),
    "sqrt": (RESULT, lambda n, g: g / (2 * n.result)),
    "rsqrt": (RESULT, lambda n, g: g * n.result**3 * -0.5),
    "sin": (SELF, lambda n, g: g * n.self_.cos()),
    "cos": (SELF, lambda n, g: g * -n.self_.sin()),
    "tan": (RESULT, lambda n, g: g * (1 + n.result * n.result)),
    "tanh": (RESULT, lambda n, g: g * (1 - n.result * n.result)),
    "sigmoid": (RESULT, lambda n, g: g * (n.result * (1 - n.result))),
    "erf": (SELF, lambda n, g: g * _erf_grad(n.self_)),
    "erfc": (SELF, lambda n, g: g * -_erf_grad(n.self_)),
    "sinh": (SELF, lambda n, g: g * n.self_.cosh()),
    "cosh": (SELF, lambda n, g: g * n.self_.sinh()),
    "asin": (SELF, lambda n, g: g * (-n.self_ * n.self_ + 1).rsqrt()),
    "acos": (SELF, lambda n, g: g * -((-n.self_ * n.self_ + 1).rsqrt())),
    "atan": (SELF, lambda n, g: g / (n.self_ * n.self_ + 1)),
    "asinh": (SELF, lambda n, g: g * (n.self_ * n.self_ + 1).rsqrt()),
    "acosh": (SELF, lambda n, g: g * (n.self_ * n.self_ - 1).rsqrt()),
    "atanh": (SELF, lambda n, g: g * (1 / (1 - n.self_ * n.self_))),
    "exp2": (RESULT, lambda n, g: g * n.result * _LN2),
    "frac": ((), lambda n, g: g),
    "deg2rad": ((), lambda n, g: g * (math.pi / 180)),
    "rad2deg": ((), lambda n, g: g * (180 / math.pi)),
    "reciprocal": (RESULT, lambda n, g: g * -(n.result * n.result)),
    # ---- special functions ----
    "erfinv": (RESULT, lambda n, g: g * (n.result * n.result).exp() * _SQRT_PI_OVER_2),
    "floor": ((), _zero),
    "ceil": ((), _zero),
    "round": ((), _zero),
    "trunc": ((), _zero),
    # ---- more math: gamma functions, Bessel, sinc ----
    "lgamma": (SELF, lambda n, g: g * n.self_.digamma()),
    "digamma": (SELF, lambda n, g: g * _trigamma(n.self_)),
    "i0": (SELF, lambda n, g: g * n.self_._i1()),
    "sinc": (SELF, lambda n, g: g * _sinc_grad(n.self_)),
    "angle": ((), _zero),  # of real numbers
}

# maximum/minimum split the gradient evenly where the operands are equal, as torch.
BINARY = {
    "maximum": (
        ("other", "self_"),
        lambda n, g: _where(n.self_ == n.other, g * 0.5, _where(n.self_ > n.other, g, 0.0)),
        lambda n, g: _where(n.self_ == n.other, g * 0.5, _where(n.other > n.self_, g, 0.0)),
    ),
    "minimum": (
        ("other", "self_"),
        lambda n, g: _where(n.self_ == n.other, g * 0.5, _where(n.self_ < n.other, g, 0.0)),
        lambda n, g: _where(n.self_ == n.other, g * 0.5, _where(n.other < n.self_, g, 0.0)),
    ),
    "atan2": (
        ("other", "self_"),
        lambda n, g: g * n.other * (n.self_ * n.self_ + n.other * n.other).reciprocal(),
        lambda n, g: g * -n.self_ * (n.self_ * n.self_ + n.other * n.other).reciprocal(),
    ),
    "copysign": (
        ("other", "self_", "_result"),
        lambda n, g: g * _where(n.self_ == 0, 0.0, n.result / n.self_),
        lambda n, g: zeros_like(g),
    ),
    "fmod": (
        ("other", "self_"),
        lambda n, g: g,
        lambda n, g: -g * n.self_.div(n.other, rounding_mode="trunc"),
    ),
    "fmax": (
        ("other", "self_"),
        lambda n, g: _where((n.self_ >= n.other) | n.other.isnan(), g, 0.0),
        lambda n, g: _where((n.self_ >= n.other) | n.other.isnan(), 0.0, g),
    ),
    "fmin": (
        ("other", "self_"),
        lambda n, g: _where((n.self_ <= n.other) | n.other.isnan(), g, 0.0),
        lambda n, g: _where((n.self_ <= n.other) | n.other.isnan(), 0.0, g),
    ),
    "logaddexp": (
        ("other", "self_"),
        lambda n, g: g / (1 + (n.other - n.self_).exp()),
        lambda n, g: g / (1 + (n.self_ - n.other).exp()),
    ),
    "xlogy": (
        ("other", "self_"),
        lambda n, g: g * _where(n.self_ == 0, 0.0, n.other.log()),
        lambda n, g: g * n.self_ / n.other,
    ),
    "hypot": (
        ("other", "self_", "_result"),
        lambda n, g: g * n.self_ / n.result,
        lambda n, g: g * n.other / n.result,
    ),
    # ---- more math ----
    "logaddexp2": (
        ("other", "self_"),
        lambda n, g: g / (1 + (n.other - n.self_).exp2()),
        lambda n, g: g / (1 + (n.self_ - n.other).exp2()),
    ),
    "_zeta": (
        ("other", "self_"),
        _zeta_self_grad,
        lambda n, g: g * -n.self_ * (n.self_ + 1)._zeta(n.other),
    ),
    "igamma": (
        ("other", "self_"),
        _no_input_grad("igamma"),
        lambda n, g: g * _igamma_density(n.self_, n.other),
    ),
    "igammac": (
        ("other", "self_"),
        _no_input_grad("igammac"),
        lambda n, g: -g * _igamma_density(n.self_, n.other),
    ),
}
