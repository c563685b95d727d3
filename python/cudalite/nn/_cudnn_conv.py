"""Convolutions on cuDNN: the forward and the two gradients of ``_functional_conv``'s
convolutions, for CUDA tensors when cuDNN can be loaded and ``backends.cudnn.enabled``.

cuDNN (csrc/cuda/cudnn_conv.cpp) runs a grouped cross-correlation of contiguous tensors
with symmetric padding; 1-d convolutions go through it as 2-d ones of height 1, and a
transposed convolution is the adjoint pair (its forward is cuDNN's backward data, its input
gradient cuDNN's forward). Asymmetric padding (``padding='same'`` with an even dilated
kernel) stays on the im2col path. The flags ``benchmark``, ``deterministic`` and
``allow_tf32`` of ``backends.cudnn`` are read at each call.
"""

from __future__ import annotations

from cudalite import _C, _deterministic
from cudalite.backends import cudnn as _flags

__all__ = ["usable", "forward", "backward"]

_INT_MAX = 2**31 - 1


def usable(x, pads=None):
    """Whether cuDNN runs this convolution (``x``: its input)."""
    if not (x.is_cuda and _flags.enabled and _flags.is_available()):
        return False
    if x.dtype not in (_C.float32, _C.float64, _C.float16, _C.bfloat16):
        return False
    if x.dim() > 5 or x.numel() > _INT_MAX:
        return False
    return pads is None or all(a == b for a, b in pads)


def _opts():
    """(benchmark, deterministic, allow_tf32) as torch reads them for cuDNN."""
    det = bool(_flags.deterministic) or _deterministic.are_deterministic_algorithms_enabled()
    return bool(_flags.benchmark), det, bool(_flags.allow_tf32)


def _lib():
    """The bound cuDNN entry points (csrc/cuda/cudnn_conv.cpp)."""
    return _C._cuda


def _as2d(t):
    """(N, C, L) -> (N, C, 1, L): cuDNN's descriptors want 4 or more dims."""
    return t.unsqueeze(2)


def _params(stride, pads, dilation, one_d):
    p = [a for a, _ in pads]
    s, d = list(stride), list(dilation)
    if one_d:
        return [0] + p, [1] + s, [1] + d
    return p, s, d


def _bias_add_(y, bias):
    y.add_(bias.view([1, bias.shape[0]] + [1] * (y.dim() - 2)))


def forward(x, w, bias, stride, pads, dilation, groups, transposed, output_padding):
    """The convolution (``transposed``: its adjoint) of ``x`` and ``w``, plus ``bias``."""
    one_d = x.dim() == 3
    p, s, d = _params(stride, pads, dilation, one_d)
    xc, wc = x.contiguous(), w.contiguous()
    if one_d:
        xc, wc = _as2d(xc), _as2d(wc)
    bench, det, tf32 = _opts()
    if transposed:
        n, nd = xc.shape[0], xc.dim() - 2
        k = list(wc.shape[2:])
        out = [
            (xc.shape[2 + i] - 1) * s[i]
            - 2 * p[i]
            + d[i] * (k[i] - 1)
            + 1
            + _op(output_padding, i, one_d)
            for i in range(nd)
        ]
        shape = [n, wc.shape[1] * groups] + out
        y = _lib()._cudnn_convolution_backward_input(
            shape, xc, wc, p, s, d, groups, bench, det, tf32
        )
    else:
        y = _lib()._cudnn_convolution(xc, wc, p, s, d, groups, bench, det, tf32)
    if one_d:
        y = y.squeeze(2)
    if bias is not None:
        _bias_add_(y, bias)
    return y


def _op(output_padding, i, one_d):
    if one_d:
        return 0 if i == 0 else output_padding[i - 1]
    return output_padding[i]


def backward(node, g, x, w, need):
    """(grad input, grad weight, grad bias) of ``node``'s convolution, for ``need``."""
    one_d = x.dim() == 3
    p, s, d = _params(node.stride, node.pads, node.dilation, one_d)
    groups = node.groups
    gc, xc, wc = g.contiguous(), x.contiguous(), w.contiguous()
    if one_d:
        gc, xc, wc = _as2d(gc), _as2d(xc), _as2d(wc)
    bench, det, tf32 = _opts()
    gx = gw = gb = None
    cu = _lib()
    if node.transposed:
        # y = conv^T(x, w): dx = conv(dy, w), dw = the filter gradient of conv(dy) -> x
        if need[0]:
            gx = cu._cudnn_convolution(gc, wc, p, s, d, groups, bench, det, tf32)
        if need[1]:
            gw = cu._cudnn_convolution_backward_weight(
                list(wc.shape), xc, gc, p, s, d, groups, bench, det, tf32
            )
    else:
        if need[0]:
            gx = cu._cudnn_convolution_backward_input(
                list(xc.shape), gc, wc, p, s, d, groups, bench, det, tf32
            )
        if need[1]:
            gw = cu._cudnn_convolution_backward_weight(
                list(wc.shape), gc, xc, p, s, d, groups, bench, det, tf32
            )
    if one_d:
        gx = gx.squeeze(2) if gx is not None else None
        gw = gw.squeeze(2) if gw is not None else None
    if len(need) > 2 and need[2]:
        gb = g.sum([0] + list(range(2, g.dim())))
    return gx, gw, gb
