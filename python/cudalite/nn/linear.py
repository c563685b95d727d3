"""``nn.Linear`` and ``nn.Identity``."""

from __future__ import annotations

import math

from cudalite import _C
from cudalite.nn import init
from cudalite.nn.functional import linear
from cudalite.nn.module import Module
from cudalite.nn.parameter import Parameter

__all__ = ["Linear", "Identity"]


def _empty(shape, device, dtype):
    return _C._empty(list(shape), dtype or _C.get_default_dtype(), device or "cpu", False)


class Linear(Module):
    """``y = x @ weight.T + bias`` with torch's default initialisation: weight from
    kaiming_uniform_(a=sqrt(5)), i.e. U(-1/sqrt(in), 1/sqrt(in)), and bias from the same
    range."""

    __constants__ = ["in_features", "out_features"]

    def __init__(self, in_features, out_features, bias=True, device=None, dtype=None):
        super().__init__()
        self.in_features = in_features
        self.out_features = out_features
        self.weight = Parameter(_empty((out_features, in_features), device, dtype))
        if bias:
            self.bias = Parameter(_empty((out_features,), device, dtype))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self):
        init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if self.bias is not None:
            fan_in, _ = init._calculate_fan_in_and_fan_out(self.weight)
            bound = 1 / math.sqrt(fan_in) if fan_in > 0 else 0
            init.uniform_(self.bias, -bound, bound)

    def forward(self, input):
        p = self._parameters  # one dict read instead of two __getattr__ fallbacks
        return linear(input, p["weight"], p["bias"])

    def extra_repr(self):
        return (
            f"in_features={self.in_features}, out_features={self.out_features}, "
            f"bias={self.bias is not None}"
        )


class Identity(Module):
    """Returns its input; accepts and ignores any constructor arguments."""

    def __init__(self, *args, **kwargs):
        super().__init__()

    def forward(self, input):
        return input
