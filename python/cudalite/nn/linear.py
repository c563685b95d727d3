"""``nn.Linear``, ``nn.LazyLinear``, ``nn.Identity`` and ``nn.Bilinear``."""

from __future__ import annotations

import math

from cudalite import _C
from cudalite.autograd import no_grad
from cudalite.nn import functional as F
from cudalite.nn import init
from cudalite.nn.functional import linear
from cudalite.nn.module import Module
from cudalite.nn.parameter import Parameter, UninitializedParameter

__all__ = ["Linear", "LazyLinear", "NonDynamicallyQuantizableLinear", "Identity", "Bilinear"]


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
        if "weight" in p:
            return linear(input, p["weight"], p["bias"])
        # a DataParallel replica or a reparametrised module holds plain attributes
        return linear(input, self.weight, self.bias)

    def extra_repr(self):
        return (
            f"in_features={self.in_features}, out_features={self.out_features}, "
            f"bias={self.bias is not None}"
        )


class NonDynamicallyQuantizableLinear(Linear):
    """A Linear by another name (MultiheadAttention's out_proj, as torch's)."""


class LazyLinear(Linear):
    """A Linear whose ``in_features`` is taken from its first input's last dimension: the
    parameters are materialised and initialised then, and the module becomes a Linear."""

    cls_to_become = Linear

    def __init__(self, out_features, bias=True, device=None, dtype=None):
        Module.__init__(self)
        self.in_features = 0
        self.out_features = out_features
        self.weight = UninitializedParameter(device=device, dtype=dtype)
        if bias:
            self.bias = UninitializedParameter(device=device, dtype=dtype)
        else:
            self.register_parameter("bias", None)

    def has_uninitialized_params(self):
        return any(isinstance(p, UninitializedParameter) for p in self._parameters.values())

    def reset_parameters(self):
        if not self.has_uninitialized_params() and self.in_features != 0:
            super().reset_parameters()

    def initialize_parameters(self, input):
        """Sets ``in_features`` from ``input`` and materialises and initialises the
        parameters."""
        if self.has_uninitialized_params():
            with no_grad():
                self.in_features = input.shape[-1]
                self.weight.materialize((self.out_features, self.in_features))
                if self.bias is not None:
                    self.bias.materialize((self.out_features,))
                self.reset_parameters()

    def forward(self, input):
        self.initialize_parameters(input)
        self.__class__ = self.cls_to_become
        return self.forward(input)


class Identity(Module):
    """Returns its input; accepts and ignores any constructor arguments."""

    def __init__(self, *args, **kwargs):
        super().__init__()

    def forward(self, input):
        return input


class Bilinear(Module):
    """``y = x1^T A x2 + b``: ``weight`` (out, in1, in2) and ``bias`` (out) from
    U(-1/sqrt(in1), 1/sqrt(in1)), as torch's."""

    __constants__ = ["in1_features", "in2_features", "out_features"]

    def __init__(
        self, in1_features, in2_features, out_features, bias=True, device=None, dtype=None
    ):
        super().__init__()
        self.in1_features = in1_features
        self.in2_features = in2_features
        self.out_features = out_features
        self.weight = Parameter(_empty((out_features, in1_features, in2_features), device, dtype))
        if bias:
            self.bias = Parameter(_empty((out_features,), device, dtype))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self):
        bound = 1 / math.sqrt(self.weight.size(1))
        init.uniform_(self.weight, -bound, bound)
        if self.bias is not None:
            init.uniform_(self.bias, -bound, bound)

    def forward(self, input1, input2):
        return F.bilinear(input1, input2, self.weight, self.bias)

    def extra_repr(self):
        return (
            f"in1_features={self.in1_features}, in2_features={self.in2_features}, "
            f"out_features={self.out_features}, bias={self.bias is not None}"
        )
