"""``cudalite.nn``: modules, parameters, losses and ``nn.functional`` / ``nn.init``, shaped
like ``torch.nn``. See docs/nn.md."""

from __future__ import annotations

from cudalite.nn import attention, functional, init, parallel, utils  # noqa: F401  (torch.nn.parallel)
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

# ---- CNN layers ----
from cudalite.nn.batchnorm import (
    BatchNorm1d,
    BatchNorm2d,
    BatchNorm3d,
)
from cudalite.nn.container import (
    ModuleDict,
    ModuleList,
    ParameterDict,
    ParameterList,
    Sequential,
)
from cudalite.nn.conv import (
    Conv1d,
    Conv2d,
    Conv3d,
    ConvTranspose1d,
    ConvTranspose2d,
    ConvTranspose3d,
)
from cudalite.nn.dropout import (
    Dropout1d,
    Dropout2d,
    Dropout3d,
)
from cudalite.nn.flatten import Flatten, Unflatten
from cudalite.nn.instancenorm import (
    InstanceNorm1d,
    InstanceNorm2d,
    InstanceNorm3d,
)
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
from cudalite.nn.normalization import GroupNorm, LayerNorm
from cudalite.nn.parallel import DataParallel
from cudalite.nn.parameter import Parameter, UninitializedParameter
from cudalite.nn.pooling import (
    AdaptiveAvgPool1d,
    AdaptiveAvgPool2d,
    AdaptiveMaxPool1d,
    AdaptiveMaxPool2d,
    AvgPool1d,
    AvgPool2d,
    MaxPool1d,
    MaxPool2d,
)
from cudalite.nn.sparse import Embedding
from cudalite.nn.upsampling import (
    Upsample,
    UpsamplingBilinear2d,
    UpsamplingNearest2d,
)

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
    # ---- CNN layers: convolutions, pooling, batch/instance/group norm, upsampling ----
    "BatchNorm1d",
    "BatchNorm2d",
    "BatchNorm3d",
    "Conv1d",
    "Conv2d",
    "Conv3d",
    "ConvTranspose1d",
    "ConvTranspose2d",
    "ConvTranspose3d",
    "Dropout1d",
    "Dropout2d",
    "Dropout3d",
    "InstanceNorm1d",
    "InstanceNorm2d",
    "InstanceNorm3d",
    "AdaptiveAvgPool1d",
    "AdaptiveAvgPool2d",
    "AdaptiveMaxPool1d",
    "AdaptiveMaxPool2d",
    "AvgPool1d",
    "AvgPool2d",
    "MaxPool1d",
    "MaxPool2d",
    "Upsample",
    "UpsamplingBilinear2d",
    "UpsamplingNearest2d",
    "GroupNorm",
]
