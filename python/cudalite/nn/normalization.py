"""``nn.LayerNorm`` and ``nn.RMSNorm``: normalisation over the trailing ``normalized_shape``
dimensions; ``nn.GroupNorm``; ``nn.LocalResponseNorm`` across channels."""

from __future__ import annotations

import numbers

from cudalite import _C
from cudalite.nn import functional as F
from cudalite.nn import init
from cudalite.nn.module import Module
from cudalite.nn.parameter import Parameter

__all__ = ["LayerNorm", "GroupNorm", "RMSNorm", "LocalResponseNorm"]


class LayerNorm(Module):
    """``(x - mean) / sqrt(var + eps) * weight + bias`` over the last dimensions; ``weight``
    starts at ones and ``bias`` at zeros (``elementwise_affine=False``: neither;
    ``bias=False``: no bias)."""

    __constants__ = ["normalized_shape", "eps", "elementwise_affine"]

    def __init__(
        self,
        normalized_shape,
        eps=1e-5,
        elementwise_affine=True,
        bias=True,
        device=None,
        dtype=None,
    ):
        super().__init__()
        if isinstance(normalized_shape, numbers.Integral):
            normalized_shape = (normalized_shape,)
        self.normalized_shape = tuple(normalized_shape)
        self.eps = eps
        self.elementwise_affine = elementwise_affine
        if elementwise_affine:
            dt, dev = dtype or _C.get_default_dtype(), device or "cpu"
            shape = list(self.normalized_shape)
            self.weight = Parameter(_C._empty(shape, dt, dev, False))
            if bias:
                self.bias = Parameter(_C._empty(shape, dt, dev, False))
            else:
                self.register_parameter("bias", None)
        else:
            self.register_parameter("weight", None)
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self):
        if self.elementwise_affine:
            init.ones_(self.weight)
            if self.bias is not None:
                init.zeros_(self.bias)

    def forward(self, input):
        return F.layer_norm(input, self.normalized_shape, self.weight, self.bias, self.eps)

    def extra_repr(self):
        return (
            f"{self.normalized_shape}, eps={self.eps}, elementwise_affine={self.elementwise_affine}"
        )


# ---- group norm (CNNs) ----


class GroupNorm(Module):
    """Normalisation over groups of ``num_channels // num_groups`` channels of each sample;
    per-channel ``weight`` (ones) and ``bias`` (zeros) when ``affine``."""

    __constants__ = ["num_groups", "num_channels", "eps", "affine"]

    def __init__(self, num_groups, num_channels, eps=1e-5, affine=True, device=None, dtype=None):
        super().__init__()
        if num_channels % num_groups != 0:
            raise ValueError(
                f"num_channels ({num_channels}) must be divisible by num_groups ({num_groups})"
            )
        self.num_groups, self.num_channels = num_groups, num_channels
        self.eps, self.affine = eps, affine
        if affine:
            dt, dev = dtype or _C.get_default_dtype(), device or "cpu"
            self.weight = Parameter(_C._empty([num_channels], dt, dev, False))
            self.bias = Parameter(_C._empty([num_channels], dt, dev, False))
        else:
            self.register_parameter("weight", None)
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self):
        if self.affine:
            init.ones_(self.weight)
            init.zeros_(self.bias)

    def forward(self, input):
        return F.group_norm(input, self.num_groups, self.weight, self.bias, self.eps)

    def extra_repr(self):
        return "{num_groups}, {num_channels}, eps={eps}, affine={affine}".format(**self.__dict__)


# ---- RMS and local response normalisation ----


class RMSNorm(Module):
    """``x / sqrt(mean(x**2) + eps) * weight`` over the last dimensions; ``weight`` starts at
    ones; ``eps=None`` is the machine epsilon of the input's dtype."""

    __constants__ = ["normalized_shape", "eps", "elementwise_affine"]

    def __init__(
        self, normalized_shape, eps=None, elementwise_affine=True, device=None, dtype=None
    ):
        super().__init__()
        if isinstance(normalized_shape, numbers.Integral):
            normalized_shape = (normalized_shape,)
        self.normalized_shape = tuple(normalized_shape)
        self.eps = eps
        self.elementwise_affine = elementwise_affine
        if elementwise_affine:
            dt, dev = dtype or _C.get_default_dtype(), device or "cpu"
            self.weight = Parameter(_C._empty(list(self.normalized_shape), dt, dev, False))
        else:
            self.register_parameter("weight", None)
        self.reset_parameters()

    def reset_parameters(self):
        if self.elementwise_affine:
            init.ones_(self.weight)

    def forward(self, x):
        return F.rms_norm(x, self.normalized_shape, self.weight, self.eps)

    def extra_repr(self):
        return (
            f"{self.normalized_shape}, eps={self.eps}, elementwise_affine={self.elementwise_affine}"
        )


class LocalResponseNorm(Module):
    """Normalises each channel by the mean square over ``size`` neighbouring channels."""

    __constants__ = ["size", "alpha", "beta", "k"]

    def __init__(self, size, alpha=1e-4, beta=0.75, k=1.0):
        super().__init__()
        self.size, self.alpha, self.beta, self.k = size, alpha, beta, k

    def forward(self, input):
        return F.local_response_norm(input, self.size, self.alpha, self.beta, self.k)

    def extra_repr(self):
        return f"{self.size}, alpha={self.alpha}, beta={self.beta}, k={self.k}"
