"""``native_layer_norm``: layer_norm's forward as one kernel (``_C._native_layer_norm``: the
rows' mean and rstd, then the affine transform) recorded as one node,
``NativeLayerNormBackward0``, whose backward is one kernel for grad_input and one column
reduction for grad_weight and grad_bias. When the backward builds a graph
(``create_graph=True``) the gradients are composed of recorded ops instead, so that they can
be differentiated again."""

from __future__ import annotations

from cudalite import _C
from cudalite._C import Tensor
from cudalite.autograd.functions._common import Node, edge, mark

_grad_on = _C._is_grad_enabled


def _requires(t):
    return isinstance(t, Tensor) and t._rg


class NativeLayerNormBackward0(Node):
    """torch saves input, normalized_shape, weight, bias and the two statistics (result1:
    mean, result2: rstd, shaped as the input with the normalised dims of size 1)."""

    __slots__ = ("input", "weight", "bias", "result1", "result2", "normalized_shape", "eps")
    _saved = ("input", "weight", "bias", "result1", "result2")

    def apply(self, g):
        nx = self._next
        need = (nx[0] is not None, nx[1] is not None, nx[2] is not None)
        if _grad_on():
            return _composed_backward(self, g, need)
        x, w, b = self.input, self.weight, self.bias
        k = len(self.normalized_shape)
        gi, gw, gb = _C._native_layer_norm_backward(
            g, x, k, self.result1, self.result2, w, need[0], need[1] and w is not None, need[2]
        )
        if gi is not None:
            gi = gi.view(x.shape)
        if gw is not None:
            gw = gw.view(w.shape)
        if gb is not None:
            gb = gb.view(b.shape)
            if gb.dtype != b.dtype:
                gb = gb.to(b.dtype)
        return (gi, gw, gb)


def _composed_backward(node, g, need):
    """The same gradients through recorded ops (mean and rstd recomputed from the input, so
    that second derivatives see them depend on it)."""
    x, w, b = node.input, node.weight, node.bias
    k = len(node.normalized_shape)
    dims = list(range(x.dim() - k, x.dim()))
    low = x.dtype in (_C.float16, _C.bfloat16)
    xf, gf = (x.float(), g.float()) if low else (x, g)
    mu = xf.mean(dims, keepdim=True)
    xc = xf - mu
    rstd = ((xc * xc).mean(dims, keepdim=True) + node.eps).rsqrt()
    xhat = xc * rstd
    lead = list(range(x.dim() - k))
    gi = gw = gb = None
    if need[0]:
        gwx = gf * w.to(gf.dtype) if w is not None else gf
        gi = rstd * (
            gwx - gwx.mean(dims, keepdim=True) - xhat * (gwx * xhat).mean(dims, keepdim=True)
        )
        gi = gi.to(x.dtype) if low else gi
    if need[1] and w is not None:
        gw = (gf * xhat).sum(lead) if lead else gf * xhat
        gw = gw.to(w.dtype)
    if need[2] and b is not None:
        gb = gf.sum(lead) if lead else gf
        gb = gb.to(b.dtype)
    return (gi, gw, gb)


def native_layer_norm(input, normalized_shape, weight, bias, eps):
    """layer_norm over the trailing ``normalized_shape`` (checked by the caller)."""
    shape = list(normalized_shape)
    y, mean, rstd = _C._native_layer_norm(input, len(shape), weight, bias, float(eps))
    y = y.view(input.shape)
    if (_requires(input) or _requires(weight) or _requires(bias)) and _grad_on():
        stat = list(input.shape[: input.dim() - len(shape)]) + [1] * len(shape)
        node = NativeLayerNormBackward0(
            (
                edge(input),
                edge(weight) if weight is not None else None,
                edge(bias) if bias is not None else None,
            )
        )
        node.input, node.weight, node.bias = input, weight, bias
        node.result1, node.result2 = mean.view(stat), rstd.view(stat)
        node.normalized_shape, node.eps = shape, float(eps)
        mark(y, node)
    return y
