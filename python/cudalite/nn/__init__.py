"""``cudalite.nn``: modules, parameters, losses and ``nn.functional`` / ``nn.init``, shaped
like ``torch.nn``. See docs/nn.md."""

from __future__ import annotations

from cudalite.nn import functional, init, parallel, utils  # noqa: F401  (torch.nn.parallel)
from cudalite.nn.activation import (
    ELU,
    GELU,
    Dropout,
    Hardtanh,
    LeakyReLU,
    LogSoftmax,
    Mish,
    MultiheadAttention,
    ReLU,
    ReLU6,
    Sigmoid,
    SiLU,
    Softmax,
    Softplus,
    Tanh,
)
from cudalite.nn.container import (
    ModuleDict,
    ModuleList,
    ParameterDict,
    ParameterList,
    Sequential,
)
from cudalite.nn.flatten import Flatten, Unflatten
from cudalite.nn.linear import Identity, LazyLinear, Linear
from cudalite.nn.loss import (
    BCELoss,
    BCEWithLogitsLoss,
    CrossEntropyLoss,
    HuberLoss,
    L1Loss,
    MSELoss,
    NLLLoss,
    SmoothL1Loss,
)
from cudalite.nn.module import Module
from cudalite.nn.normalization import LayerNorm
from cudalite.nn.parallel import DataParallel
from cudalite.nn.parameter import Parameter, UninitializedParameter
from cudalite.nn.sparse import Embedding

__all__ = [
    "DataParallel",
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
    # ---- layers, activations, containers and losses for transformers and CNNs ----
    "UninitializedParameter",
    "LazyLinear",
    "Embedding",
    "LayerNorm",
    "Flatten",
    "Unflatten",
    "ModuleDict",
    "ParameterList",
    "ParameterDict",
    "GELU",
    "SiLU",
    "Mish",
    "Softplus",
    "ELU",
    "LeakyReLU",
    "Hardtanh",
    "ReLU6",
    "SmoothL1Loss",
    "HuberLoss",
    "BCELoss",
    "BCEWithLogitsLoss",
    "MultiheadAttention",
]
