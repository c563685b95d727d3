"""``gelu``: one elementwise kernel forward (``_C._gelu``) and one backward
(``_C._gelu_backward``, a binary op of the gradient and the input), recorded as torch's
``GeluBackward0``. When the backward builds a graph (``create_graph=True``) the derivative
is composed of recorded ops instead, so that it can be differentiated again."""

from __future__ import annotations

import math

from cudalite import _C
from cudalite.autograd.functions._common import Node, edge, mark

_grad_on = _C._is_grad_enabled
_SQRT_HALF = math.sqrt(0.5)
_INV_SQRT_2PI = 1.0 / math.sqrt(2.0 * math.pi)
_SQRT_2_OVER_PI = math.sqrt(2.0 / math.pi)
_KAPPA = 0.044715


class GeluBackward0(Node):
    __slots__ = ("self_", "approximate")
    _saved = ("self_",)

    def apply(self, g):
        x, tanh = self.self_, self.approximate == "tanh"
        if not _grad_on():
            return (_C._gelu_backward(g, x, tanh),)
        if tanh:
            inner = (x + x * x * x * _KAPPA) * _SQRT_2_OVER_PI
            t = inner.tanh()
            left = x * 0.5
            d = (t + 1) * 0.5 + left * (1 - t * t) * _SQRT_2_OVER_PI * (x * x * (3 * _KAPPA) + 1)
        else:
            cdf = ((x * _SQRT_HALF).erf() + 1) * 0.5
            d = cdf + x * (x * x * -0.5).exp() * _INV_SQRT_2PI
        return (g * d,)


def gelu(input, approximate):
    """The checked input (floating) and approximate ('none' or 'tanh')."""
    y = _C._gelu(input, approximate == "tanh")
    if input._rg and _grad_on():
        node = GeluBackward0((edge(input),))
        node.self_, node.approximate = input, approximate
        mark(y, node)
    return y
