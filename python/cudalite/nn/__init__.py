"""``cudalite.nn``: modules, parameters, losses and ``nn.functional`` / ``nn.init``, shaped
like ``torch.nn``. See docs/nn.md."""

from __future__ import annotations

from cudalite.nn import functional, init, utils
from cudalite.nn.activation import Dropout, LogSoftmax, ReLU, Sigmoid, Softmax, Tanh
from cudalite.nn.container import ModuleList, Sequential
from cudalite.nn.linear import Identity, Linear
from cudalite.nn.loss import CrossEntropyLoss, L1Loss, MSELoss, NLLLoss
from cudalite.nn.module import Module
from cudalite.nn.parameter import Parameter

__all__ = [
    "Module",
    "Parameter",
    "Linear",
    "Identity",
    "Sequential",
    "ModuleList",
    "ReLU",
    "Sigmoid",
    "Tanh",
    "Softmax",
    "LogSoftmax",
    "Dropout",
    "MSELoss",
    "L1Loss",
    "CrossEntropyLoss",
    "NLLLoss",
    "functional",
    "init",
    "utils",
]
