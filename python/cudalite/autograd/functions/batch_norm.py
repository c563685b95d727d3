"""``native_batch_norm``: batch_norm's forward as one call (``_C._native_batch_norm``: each
channel's statistics, the running statistics' update and the affine normalisation) recorded
as one node, ``NativeBatchNormBackward0``, whose backward is one call as well (each channel's
sums of ``g`` and ``g * (x - mean)``, then grad_input). When the backward builds a graph
(``create_graph=True``) the gradients are composed of recorded ops instead, so that they can
be differentiated again."""

from __future__ import annotations

from cudalite import _C
from cudalite._C import Tensor
from cudalite.autograd.functions._common import Node, edge, mark

_grad_on = _C._is_grad_enabled


def _requires(t):
    return isinstance(t, Tensor) and t._rg


class NativeBatchNormBackward0(Node):
    """Saves input, weight, the two statistics (result1: the batch's mean, result2: its
    1 / sqrt(var + eps); in evaluation the running statistics' ones), training and eps. (torch
    also saves the running statistics, which this backward does not read: they are updated in
    place by later forwards.)"""

    __slots__ = ("input", "weight", "result1", "result2", "training", "eps")
    _saved = ("input", "weight", "result1", "result2")

    def apply(self, g):
        nx = self._next
        need = tuple(len(nx) > i and nx[i] is not None for i in range(3))
        if _grad_on():
            return _composed_backward(self, g, need)
        x, w = self.input, self.weight
        gi, gw, gb = _C._native_batch_norm_backward(
            g, x, w, self.result1, self.result2, self.training, *need
        )
        return (gi, gw, gb)[: len(nx)]


class CudnnBatchNormBackward0(NativeBatchNormBackward0):
    """The same node under the name torch's graph has where torch runs cuDNN's batch norm
    (cudalite's own kernels compute it either way)."""

    __slots__ = ()


_INT_MAX = (1 << 31) - 1


def _torch_uses_cudnn(x, w, b, rm, rv, training):
    """torch's _select_batch_norm_backend choosing cuDNN (its node name follows)."""
    from cudalite.backends import cudnn

    return (
        x.is_cuda
        and cudnn.enabled
        and w is not None
        and b is not None
        and x.dtype in (_C.float32, _C.float16)
        and w.dtype is not _C.bfloat16
        and (x.dtype is not _C.float16 or w.dtype is _C.float32)
        and ((rm is not None and rv is not None) or (rm is None and rv is None and training))
        and x.dim() >= 3
        and x.shape[0] <= (880801 if training else 65535)
        and x.numel() < _INT_MAX
    )


def _cshape(x):
    return [1, x.shape[1]] + [1] * (x.dim() - 2)


def _composed_backward(node, g, need):
    """The same gradients through recorded ops (in training the statistics recomputed from
    the input, so that second derivatives see them depend on it)."""
    x, w = node.input, node.weight
    low = x.dtype in (_C.float16, _C.bfloat16)
    xf, gf = (x.float(), g.float()) if low else (x, g)
    dims = [0] + list(range(2, x.dim()))
    shape = _cshape(x)
    if node.training:
        mu = xf.mean(dims, keepdim=True)
        xc = xf - mu
        invstd = ((xc * xc).mean(dims, keepdim=True) + node.eps).rsqrt()
    else:
        xc = xf - node.result1.to(xf.dtype).view(shape)
        invstd = node.result2.to(xf.dtype).view(shape)
    xhat = xc * invstd
    gi = gw = gb = None
    if need[0]:
        scale = invstd * w.to(xf.dtype).view(shape) if w is not None else invstd
        if node.training:
            gi = scale * (
                gf - gf.mean(dims, keepdim=True) - xhat * (gf * xhat).mean(dims, keepdim=True)
            )
        else:
            gi = gf * scale
        gi = gi.to(x.dtype) if low else gi
    pdt = w.dtype if w is not None else x.dtype
    if need[1]:
        gw = (gf * xhat).sum(dims).to(pdt)
    if need[2]:
        gb = gf.sum(dims).to(pdt)
    return (gi, gw, gb)


def native_batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps):
    """batch_norm of an input with at least one element (checked by the caller)."""
    y, mean, invstd = _C._native_batch_norm(
        input, weight, bias, running_mean, running_var, training, float(momentum), float(eps)
    )
    if (_requires(input) or _requires(weight) or _requires(bias)) and _grad_on():
        cudnn = _torch_uses_cudnn(input, weight, bias, running_mean, running_var, training)
        node = (CudnnBatchNormBackward0 if cudnn else NativeBatchNormBackward0)(
            (
                edge(input),
                edge(weight) if weight is not None else None,
                edge(bias) if bias is not None else None,
            )
        )
        node.input, node.weight = input, weight
        node.result1, node.result2 = mean, invstd
        node.training, node.eps = bool(training), float(eps)
        mark(y, node)
    return y
