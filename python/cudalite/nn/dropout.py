"""Channel dropout modules: ``Dropout1d/2d/3d`` zero whole channels (``nn.Dropout`` is in
activation.py); ``AlphaDropout`` and ``FeatureAlphaDropout`` (for SELU networks)."""

from __future__ import annotations

from cudalite.nn import functional as F
from cudalite.nn.module import Module

__all__ = ["Dropout1d", "Dropout2d", "Dropout3d", "AlphaDropout", "FeatureAlphaDropout"]


class _DropoutNd(Module):
    __constants__ = ["p", "inplace"]

    def __init__(self, p=0.5, inplace=False):
        super().__init__()
        if p < 0 or p > 1:
            raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
        self.p, self.inplace = p, inplace

    def extra_repr(self):
        return f"p={self.p}, inplace={self.inplace}"


class Dropout1d(_DropoutNd):
    """Zeroes each channel of ``(N, C, L)`` with probability ``p`` in training."""

    def forward(self, input):
        return F.dropout1d(input, self.p, self.training, self.inplace)


class Dropout2d(_DropoutNd):
    """Zeroes each channel of ``(N, C, H, W)`` with probability ``p`` in training."""

    def forward(self, input):
        return F.dropout2d(input, self.p, self.training, self.inplace)


class Dropout3d(_DropoutNd):
    """Zeroes each channel of ``(N, C, D, H, W)`` with probability ``p`` in training."""

    def forward(self, input):
        return F.dropout3d(input, self.p, self.training, self.inplace)


class AlphaDropout(_DropoutNd):
    """Alpha dropout of each element in training (keeps SELU's mean and variance)."""

    def forward(self, input):
        return F.alpha_dropout(input, self.p, self.training)


class FeatureAlphaDropout(_DropoutNd):
    """Alpha dropout of whole channels in training."""

    def forward(self, input):
        return F.feature_alpha_dropout(input, self.p, self.training)
