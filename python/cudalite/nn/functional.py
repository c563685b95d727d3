"""``nn.functional``: linear, activations, softmax and losses, recorded for autograd with
torch's node names (``AddmmBackward0``, ``MseLossBackward0``, ``NllLossBackward0`` ...)."""

from __future__ import annotations

import warnings

from cudalite import _C, _arg_parser, _linalg, _ops
from cudalite._C import Tensor
from cudalite.autograd import function as _autograd
from cudalite.autograd.functions import nn as _nn
from cudalite.nn import (
    _functional_activation,
    _functional_attention,
    _functional_batchnorm,
    _functional_bilinear,
    _functional_conv,
    _functional_distance,
    _functional_dropout,
    _functional_embedding_bag,
    _functional_grid,
    _functional_interpolate,
    _functional_loss,
    _functional_loss_likelihood,
    _functional_loss_margin,
    _functional_lppool,
    _functional_mha,
    _functional_norm,
    _functional_pad,
    _functional_pooling,
    _functional_pooling3d,
    _functional_shuffle,
    _functional_sparse,
    _functional_unpool,
)
from cudalite.nn._functional_activation import *  # noqa: F403
from cudalite.nn._functional_attention import *  # noqa: F403
from cudalite.nn._functional_batchnorm import *  # noqa: F403
from cudalite.nn._functional_bilinear import *  # noqa: F403
from cudalite.nn._functional_conv import *  # noqa: F403
from cudalite.nn._functional_distance import *  # noqa: F403
from cudalite.nn._functional_dropout import *  # noqa: F403
from cudalite.nn._functional_embedding_bag import *  # noqa: F403
from cudalite.nn._functional_grid import *  # noqa: F403
from cudalite.nn._functional_interpolate import *  # noqa: F403
from cudalite.nn._functional_loss import *  # noqa: F403
from cudalite.nn._functional_loss_likelihood import *  # noqa: F403
from cudalite.nn._functional_loss_margin import *  # noqa: F403
from cudalite.nn._functional_lppool import *  # noqa: F403
from cudalite.nn._functional_mha import *  # noqa: F403
from cudalite.nn._functional_norm import *  # noqa: F403
from cudalite.nn._functional_pad import *  # noqa: F403
from cudalite.nn._functional_pooling import *  # noqa: F403
from cudalite.nn._functional_pooling3d import *  # noqa: F403
from cudalite.nn._functional_shuffle import *  # noqa: F403
from cudalite.nn._functional_sparse import *  # noqa: F403
from cudalite.nn._functional_unpool import *  # noqa: F403

# The functions written here, then every part's own __all__ (each name is listed once, in
# the module that defines it).
__all__ = [
    "linear",
    "relu",
    "relu_",
    "sigmoid",
    "tanh",
    "softmax",
    "log_softmax",
    "mse_loss",
    "l1_loss",
    "nll_loss",
    "cross_entropy",
    "dropout",
]
for _part in (
    _functional_activation,
    _functional_attention,
    _functional_batchnorm,
    _functional_bilinear,
    _functional_conv,
    _functional_distance,
    _functional_dropout,
    _functional_embedding_bag,
    _functional_grid,
    _functional_interpolate,
    _functional_loss,
    _functional_loss_likelihood,
    _functional_loss_margin,
    _functional_lppool,
    _functional_mha,
    _functional_norm,
    _functional_pad,
    _functional_pooling,
    _functional_pooling3d,
    _functional_shuffle,
    _functional_sparse,
    _functional_unpool,
):
    __all__ += _part.__all__
del _part

_ADD = _ops.BINARY["add"]
_grad_on = _C._is_grad_enabled


def _check_devices(args, method):
    """torch's device check for a CUDA kernel's arguments (the first one sets the device)."""
    common = args[0][1].device
    for name, t in args[1:]:
        dev = t.device
        if dev != common and t.dim() != 0:
            raise RuntimeError(
                "Expected all tensors to be on the same device, but got "
                f"{name} is on {dev}, different from other tensors on {common} "
                f"(when checking argument in method {method})"
            )


def _tensor_args(op, *named):
    """torch's TypeError for the first of ``named`` ((name, position, value) triples) that is
    not a Tensor; ``op`` is the name of the torch op whose argument parser reports it."""
    for name, pos, value in named:
        if not isinstance(value, Tensor):
            raise TypeError(
                f"{op}(): argument '{name}' (position {pos}) must be Tensor, not "
                f"{_arg_parser.tp_name(value)}"
            )


def _linear_checks(input, weight, bias):
    """torch's checks, in its order: devices (the CUDA kernel's wrapper), then dtypes.
    Returns whether the input is on the GPU."""
    _tensor_args("linear", ("input", 1, input), ("weight", 2, weight))
    if bias is not None:
        _tensor_args("linear", ("bias", 3, bias))
    cuda = input.is_cuda
    wcuda = weight.is_cuda
    if cuda != wcuda or (bias is not None and bias.is_cuda != wcuda):
        if bias is not None and input.dim() == 2:
            _check_devices(
                [("self", bias), ("mat1", input), ("mat2", weight)], "wrapper_CUDA_addmm"
            )
        _check_devices([("self", input), ("mat2", weight)], "wrapper_CUDA_mm")
    wdt = weight.dtype
    if input.dtype is not wdt:
        raise RuntimeError(
            f"mat1 and mat2 must have the same dtype, but got {input.dtype._short_name} and "
            f"{wdt._short_name}"
        )
    if bias is not None and bias.dtype is not wdt:
        raise RuntimeError(
            f"self and mat2 must have the same dtype, but got {bias.dtype._short_name} and "
            f"{wdt._short_name}"
        )
    return cuda


_record_addmm = []  # loaded on the first recorded call (keeps autograd's formulas lazy)


def linear(input, weight, bias=None):
    """``input @ weight.T + bias``. As in torch, a 2-D input with a bias is one addmm, and so
    is a contiguous input with a 1-D bias (flattened to 2-D); other inputs are a matmul
    followed by an in-place add of the bias."""
    cuda = _linear_checks(input, weight, bias)
    wt = weight.t()
    d = input.dim()
    if bias is not None and (d == 2 or (input.is_contiguous() and bias.dim() == 1)):
        if d == 2:
            x = input
        else:
            rows = 1
            for n in input.shape[:-1]:
                rows *= n
            x = input.reshape(rows, input.size(-1))
        if x.size(1) != wt.size(0):
            _ops.mm(x, wt)  # raises torch's shape error
        if bias.dim() != 1 or bias.size(0) != wt.size(1):
            bias.expand(x.size(0), wt.size(1))  # raises addmm's error for a bias that can't expand
        if cuda:
            r = _C._cuda_addmm(bias, x, wt, 1.0, 1.0)  # cuBLAS adds the bias
        else:
            r = _linalg._product(x, wt)
            # the bias is added in place (one allocation); r is new, at version 0 as torch's
            _C._binary(_ADD, r, bias, r, bump_version=False)
        if (x._rg or wt._rg or bias._rg) and _grad_on():
            if not _record_addmm:
                from cudalite.autograd.functions.linalg import record_addmm

                _record_addmm.append(record_addmm)
            _record_addmm[0](
                r, bias, x, wt, bias_rows=bias.dim() == 1 and bias.size(0) == r.size(1)
            )
        if d != 2:
            r = r.view(*input.shape[:-1], weight.shape[0])
        return r
    r = input.mm(wt) if d == 2 else input.matmul(wt)
    if bias is None:
        return r
    out = r + bias
    if tuple(out.shape) != tuple(r.shape):  # torch adds the bias in place
        raise RuntimeError(
            f"output with shape {list(r.shape)} doesn't match the broadcast shape {list(out.shape)}"
        )
    return out


def relu(input, inplace=False):
    _tensor_args("relu_" if inplace else "relu", ("input", 1, input))
    return input.relu_() if inplace else input.relu()


def relu_(input):
    _tensor_args("relu_", ("input", 1, input))
    return input.relu_()


def sigmoid(input):
    return input.sigmoid()


def tanh(input):
    return input.tanh()


def _softmax_dim(ndim):
    warnings.warn(
        "Implicit dimension choice for softmax has been deprecated. Change the call to include "
        "dim=X as an argument.",
        stacklevel=3,
    )
    return 0 if ndim in (0, 1, 3) else 1


def softmax(input, dim=None, _stacklevel=3, dtype=None):
    if dim is None:
        dim = _softmax_dim(input.dim())
    return _nn.softmax(input, dim, dtype)


def log_softmax(input, dim=None, _stacklevel=3, dtype=None):
    if dim is None:
        dim = _softmax_dim(input.dim())
    return _nn.log_softmax(input, dim, dtype)


def _reduction(size_average, reduce, reduction, emit_warning=True):
    """The reduction string from torch's legacy ``size_average`` / ``reduce`` arguments
    (``_Reduction.legacy_get_string``): when either is given it wins over ``reduction``,
    with torch's deprecation warning."""
    if size_average is None and reduce is None:
        return reduction
    size_average = True if size_average is None else size_average
    reduce = True if reduce is None else reduce
    if size_average and reduce:
        ret = "mean"
    elif reduce:
        ret = "sum"
    else:
        ret = "none"
    if emit_warning:
        warnings.warn(
            f"size_average and reduce args will be deprecated, please use reduction='{ret}' "
            "instead.",
            stacklevel=2,
        )
    return ret


def _warn_size(input, target):
    if tuple(target.shape) != tuple(input.shape):
        warnings.warn(
            f"Using a target size ({target.shape}) that is different to the input size "
            f"({input.shape}). This will likely lead to incorrect results due to "
            "broadcasting. Please ensure they have the same size.",
            stacklevel=3,
        )


def mse_loss(input, target, size_average=None, reduce=None, reduction="mean", weight=None):
    """Mean squared error (one node, MseLossBackward0)."""
    _warn_size(input, target)
    if size_average is not None or reduce is not None:
        reduction = _reduction(size_average, reduce, reduction)
    if weight is not None:
        loss = weight * (input - target) ** 2
        return loss if reduction == "none" else loss.sum() if reduction == "sum" else loss.mean()
    return _nn.mse_loss(input, target, reduction)


def l1_loss(input, target, size_average=None, reduce=None, reduction="mean", weight=None):
    """Mean absolute error: ``(input - target).abs()`` then the reduction, as torch records."""
    _warn_size(input, target)
    if size_average is not None or reduce is not None:
        reduction = _reduction(size_average, reduce, reduction)
    _nn._check_reduction(reduction)
    loss = (input - target).abs()
    if weight is not None:
        loss = loss * weight
    if reduction == "none":
        return loss
    return loss.sum() if reduction == "sum" else loss.mean()


def _nll_checks(input, target, weight):
    """torch's nll_loss_nd checks, in its order; the target's dtype is checked last (Long, or
    Byte for inputs of up to 2 dimensions)."""
    d, ts = input.dim(), tuple(target.shape)
    if d < 1:
        raise ValueError(f"Expected 1 or more dimensions (got {d})")
    tb = ts[0] if ts else 0
    if d != 1 and input.shape[0] != tb:
        raise ValueError(
            f"Expected input batch_size ({input.shape[0]}) to match target batch_size ({tb})."
        )
    if d == 1 and len(ts) == 1 and ts[0] != 1:
        raise ValueError(f"For 1D input, 1D target must have size 1, but got target size: {ts[0]}")
    if d <= 2:
        if len(ts) > 1:
            raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
        classes = input.shape[-1]
        if weight is not None and (weight.dim() != 1 or weight.numel() != classes):
            raise RuntimeError(
                f"weight tensor should be defined either for all {classes} classes or no "
                f"classes but got weight tensor of shape: {list(weight.shape)}"
            )
        ok = (_C.int64, _C.uint8)
    else:
        shape = list(input.shape)
        if d != 4 and ts[1:] != tuple(shape[2:]):
            raise RuntimeError(f"Expected target size {shape[:1] + shape[2:]}, got {list(ts)}")
        if d == 4 and len(ts) != 3:
            raise RuntimeError(
                "only batches of spatial targets supported (3D tensors) but got targets of "
                f"dimension: {len(ts)}"
            )
        if weight is not None and weight.numel() != shape[1]:
            raise RuntimeError("weight tensor should be defined either for all or no classes")
        if d == 4 and ts != (shape[0], shape[2], shape[3]):
            raise RuntimeError(f"size mismatch (got input: {shape} , target: {list(ts)}")
        ok = (_C.int64,)
    if target.dtype not in ok:
        raise RuntimeError(f"expected scalar type Long but found {target.dtype._short_name}")


def nll_loss(
    input, target, weight=None, size_average=None, ignore_index=-100, reduce=None, reduction="mean"
):
    """Negative log likelihood of class indices given log-probabilities."""
    _tensor_args("nll_loss_nd", ("input", 1, input), ("target", 2, target))
    if size_average is not None or reduce is not None:
        reduction = _reduction(size_average, reduce, reduction)
    _nn._check_reduction(reduction)
    _nll_checks(input, target, weight)
    return _nn.nll_loss(input, target, weight, ignore_index, reduction)


def _ce_prob_checks(input, target, weight, ignore_index, label_smoothing):
    """torch's checks of cross_entropy with class probabilities (target shaped as input)."""
    if not target.dtype.is_floating_point:
        raise RuntimeError(
            "Expected floating point type for target with class probabilities, got "
            f"{target.dtype._short_name}"
        )
    if ignore_index >= 0:
        raise RuntimeError("ignore_index is not supported for floating point target")
    if input.dim() == 0:
        raise IndexError("Dimension specified as 1 but tensor has no dimensions")
    classes = input.shape[0 if input.dim() == 1 else 1]
    if weight is not None and (weight.dim() != 1 or weight.numel() != classes):
        raise RuntimeError(
            f"cross_entropy: weight tensor should be defined either for all {classes} classes "
            f"or no classes but got weight tensor of shape: {list(weight.shape)}"
        )
    _check_smoothing(label_smoothing)


def _check_smoothing(label_smoothing):
    """Only a positive smoothing is checked (and used) by torch."""
    if label_smoothing > 1.0:
        raise RuntimeError(
            f"label_smoothing must be between 0.0 and 1.0. Got: {float(label_smoothing):g}"
        )


def cross_entropy(
    input,
    target,
    weight=None,
    size_average=None,
    ignore_index=-100,
    reduce=None,
    reduction="mean",
    label_smoothing=0.0,
):
    """log_softmax over the class dim followed by nll_loss (class indices), or the
    cross entropy with class probabilities when ``target`` has the shape of ``input``
    (torch decides by the shapes, then checks the dtype)."""
    _tensor_args("cross_entropy_loss", ("input", 1, input), ("target", 2, target))
    if size_average is not None or reduce is not None:
        reduction = _reduction(size_average, reduce, reduction)
    _nn._check_reduction(reduction)
    prob = tuple(target.shape) == tuple(input.shape)
    if prob:
        _ce_prob_checks(input, target, weight, ignore_index, label_smoothing)
    else:
        _check_smoothing(label_smoothing)
    cdim = 0 if input.dim() == 1 else 1
    _nn._check_softmax(input, cdim, "log_softmax")
    if not prob:
        _nll_checks(input, target, weight)
    # log_softmax's entry: under CUDA autocast it runs in float32, as torch's decomposition
    # of cross_entropy does (Note [Autocast at the entry]).
    logp = log_softmax(input, cdim)
    classes = input.shape[cdim]
    if prob:
        if label_smoothing > 0:
            target = target * (1 - label_smoothing) + label_smoothing / classes
        prod = logp * target
        if weight is not None:
            prod = prod * weight.reshape([classes] + [1] * (input.dim() - cdim - 1))
        loss = -prod.sum(cdim)
        if reduction == "none":
            return loss
        if reduction == "sum":
            return loss.sum()
        return loss.sum() / (input.numel() // classes if classes else 0)  # per sample and position
    nll = _nn.nll_loss(logp, target, weight, ignore_index, reduction)
    if label_smoothing <= 0:
        return nll
    # torch: (1 - eps) * nll + eps / C * (sum over classes of -logp, weighted)
    w = 1 if weight is None else weight.reshape([classes] + [1] * (input.dim() - cdim - 1))
    smooth = -(logp * w).sum(cdim)
    valid = target != ignore_index
    smooth = smooth.masked_fill(~valid, 0.0)  # a nan gradient stays out of ignored entries
    if reduction == "none":
        red = smooth
    elif reduction == "sum":
        red = smooth.sum()
    elif weight is None:
        red = smooth.sum() / valid.sum()
    else:
        red = smooth.sum() / (weight[target.clamp(0, classes - 1)] * valid).sum()
    return nll * (1 - label_smoothing) + red * (label_smoothing / classes)


class _NativeDropout(_autograd.Function):
    """torch's native_dropout on CUDA: the output and the kept mask from one kernel; the
    gradient is the incoming one times the mask and 1 / (1 - p)."""

    @staticmethod
    def forward(ctx, input, p):
        out, mask = _C._fused_dropout(input, p)
        ctx.save_for_backward(mask)
        ctx.scale = 1.0 / (1.0 - p)
        return out

    @staticmethod
    def backward(ctx, grad):
        (mask,) = ctx.saved_tensors
        return grad * mask * ctx.scale, None


_NativeDropout.__name__ = "NativeDropout"  # grad_fn: NativeDropoutBackward (torch: ...Backward0)


def dropout(input, p=0.5, training=True, inplace=False):
    """Zeroes elements with probability ``p`` and scales the rest by 1 / (1 - p)."""
    _tensor_args("dropout", ("input", 1, input))
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
    if not training or p == 0:
        return input
    if p == 1:
        return input * 0
    if input.is_cuda and not inplace and input.numel() > 0:
        # torch's fused CUDA kernel (native_dropout): its own Philox layout, so the mask is
        # torch's for the same seed.
        return _NativeDropout.apply(input, float(p))
    # torch's CPU (and in-place) dropout: a Bernoulli(1 - p) mask divided by 1 - p, times
    # the input.
    noise = _C._empty_like(input, None, None).bernoulli_(1 - p)  # laid out like input
    noise.div_(1 - p)
    out = input * noise
    if inplace:
        input.copy_(out)
        return input
    return out


# The functions in autocast's lists are entries, as Tensor's methods and cudalite's
# functions are (Note [Autocast at the entry]); this stays the last statement of the module.
from cudalite.amp import autocast_mode as _autocast_mode  # noqa: E402

_autocast_mode.make_entries(globals())
