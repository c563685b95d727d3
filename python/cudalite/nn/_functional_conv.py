"""``nn.functional`` convolutions: conv1d/2d/3d, conv_transpose1d/2d/3d, unfold and fold.

On the CPU (float32 and float64) a convolution is torch's: the input's windows as columns
``(C/g * K, N * L)`` per group (``_C._unfold_rows``, padding read as zeros, one contiguous
row at a time over the host threads) and one BLAS product per group, the weight times the
columns; its input gradient is the weight's transpose times the output gradient, added back
into place (``_C._fold_rows``), and its weight gradient the output gradient times the
recomputed columns. On CUDA without cuDNN (and for float16 / bfloat16 on the CPU) it is
im2col and one batched matrix product per group (``_im2col.py``: the windows as a
``(N * L, C/g * K)`` matrix times the weight), with the adjoint (col2im) for the input
gradient. A transposed convolution is the same pieces the
other way round. On CUDA, when cuDNN is available and ``backends.cudnn.enabled``, the three
products go to cuDNN instead (``_cudnn_conv.py``). Every form records ``ConvolutionBackward0``
as torch's.
"""

from __future__ import annotations

import math

from cudalite import _C, _arg_parser, _linalg
from cudalite._C import Tensor
from cudalite.autograd.functions._common import Node, edge, mark
from cudalite.nn import _cudnn_conv
from cudalite.nn import _im2col as ic

__all__ = [
    "conv1d",
    "conv2d",
    "conv3d",
    "conv_transpose1d",
    "conv_transpose2d",
    "conv_transpose3d",
    "unfold",
    "fold",
]

_grad_on = _C._is_grad_enabled


def _expand(name, value, nd):
    """torch's expand_param_if_needed: an int, or a list of ``nd`` ints (one int is
    repeated)."""
    v = [value] if isinstance(value, int) else [int(i) for i in value]
    if len(v) == 1:
        return v * nd
    if len(v) != nd:
        raise RuntimeError(
            f"expected {name} to be a single integer value or a list of {nd} values to match "
            f"the convolution dimensions, but got {name}={v}"
        )
    return v


def _param(name, value, nd, wnd):
    """A parameter as the Python function passes it (an int becomes ``nd`` ints, as torch's
    ``_pair``), then expanded to the weight's ``wnd`` spatial dims."""
    v = [value] * nd if isinstance(value, int) else [int(i) for i in value]
    return _expand(name, v, wnd)


def _sizes(t):
    return "[" + ", ".join(str(n) for n in t.shape) + "]"


def _check_args(fname, input, weight, bias):
    for name, pos, t in (("input", 1, input), ("weight", 2, weight)):
        if not isinstance(t, Tensor):
            raise TypeError(
                f"{fname}(): argument '{name}' (position {pos}) must be Tensor, not "
                f"{_arg_parser.tp_name(t)}"
            )
    if bias is not None and not isinstance(bias, Tensor):
        raise TypeError(
            f"{fname}(): argument 'bias' (position 3) must be Tensor, not "
            f"{_arg_parser.tp_name(bias)}"
        )


def _batchify(input, nd, fname):
    """torch's unbatched-input handling: ``(C, *spatial)`` gets a batch dim of 1."""
    d = input.dim()
    if d == nd + 1:
        return input.unsqueeze(0), True
    if d == nd + 2:
        return input, False
    raise RuntimeError(
        f"Expected {nd + 1}D (unbatched) or {nd + 2}D (batched) input to {fname}, but got "
        f"input of size: {_sizes(input)}"
    )


def _check_shape(x, w, bias, stride, padding, dilation, groups, transposed, totals=None):
    """torch's check_shape_forward, in its order (``totals``: the padding added to each
    spatial dim, both sides, where it is not twice ``padding``, as for 'same')."""
    if any(p < 0 for p in padding):
        raise RuntimeError("negative padding is not supported")
    if any(s <= 0 for s in stride):
        raise RuntimeError("non-positive stride is not supported")
    if any(d <= 0 for d in dilation):
        raise RuntimeError(f"dilation should be greater than zero, but got {list(dilation)}")
    if groups <= 0:
        raise RuntimeError("non-positive groups is not supported")
    wd = w.dim()
    if x.dim() != wd:
        raise RuntimeError(
            f"Expected {wd}-dimensional input for {wd}-dimensional weight {_sizes(w)}, but got "
            f"{x.dim()}-dimensional input of size {_sizes(x)} instead"
        )
    c = x.shape[1]
    if not transposed:
        o = w.shape[0]
        if o < 1:
            raise RuntimeError(
                f"Given groups={groups}, expected weight to be at least {groups} at dimension 0, "
                f"but got weight of size {_sizes(w)} instead"
            )
        if o % groups:
            raise RuntimeError(
                f"Given groups={groups}, expected weight to be divisible by {groups} at "
                f"dimension 0, but got weight of size [{_sizes(w)}] instead"
            )
        if c != w.shape[1] * groups:
            raise RuntimeError(
                f"Given groups={groups}, weight of size {_sizes(w)}, expected input{_sizes(x)} "
                f"to have {w.shape[1] * groups} channels, but got {c} channels instead"
            )
        if bias is not None and (bias.dim() != 1 or bias.shape[0] != o):
            raise RuntimeError(
                f"Given weight of size {_sizes(w)}, expected bias to be 1-dimensional with {o} "
                f"elements, but got bias of size {_sizes(bias)} instead"
            )
        nd = wd - 2
        if totals is None:
            totals = [2 * p for p in padding]
        ins = [x.shape[2 + i] + totals[i] for i in range(nd)]
        ks = [dilation[i] * (w.shape[2 + i] - 1) + 1 for i in range(nd)]
        if any(a < b for a, b in zip(ins, ks, strict=True)):
            raise RuntimeError(
                "Calculated padded input size per channel: ("
                + " x ".join(str(a) for a in ins)
                + "). Kernel size: ("
                + " x ".join(str(b) for b in ks)
                + "). Kernel size can't be greater than actual input size"
            )
    else:
        if c != w.shape[0]:
            raise RuntimeError(
                f"Given transposed=1, weight of size {_sizes(w)}, expected input{_sizes(x)} to "
                f"have {w.shape[0]} channels, but got {c} channels instead"
            )
        o = w.shape[1] * groups
        if bias is not None and (bias.dim() != 1 or bias.shape[0] != o):
            raise RuntimeError(
                f"Given transposed=1, weight of size {_sizes(w)}, expected bias to be "
                f"1-dimensional with {o} elements, but got bias of size {_sizes(bias)} instead"
            )


def _check_types(x, w, bias):
    if x.dtype is not w.dtype:
        raise RuntimeError(
            f"expected scalar type {x.dtype._short_name} but found {w.dtype._short_name}"
        )
    if x.device != w.device:
        raise RuntimeError(
            f"Input type ({_type_name(x)}) and weight type ({_type_name(w)}) should be the same"
        )
    if bias is not None and bias.dtype is not x.dtype:
        raise RuntimeError(
            f"Input type ({_linalg.cpp_name(x.dtype)}) and bias type "
            f"({_linalg.cpp_name(bias.dtype)}) should be the same"
        )
    if bias is not None and bias.device != x.device:
        raise RuntimeError(
            f"Input type ({_type_name(x)}) and bias type ({_type_name(bias)}) should be the same"
        )
    if not x.dtype.is_floating_point:
        kernel = "slow_conv2d_cpu" if not x.is_cuda else "cudnn_convolution"
        raise NotImplementedError(f"\"{kernel}\" not implemented for '{x.dtype._short_name}'")


def _type_name(t):
    """torch's tensor type names in conv's type mismatch message."""
    base = {
        "float32": "FloatTensor",
        "float64": "DoubleTensor",
        "float16": "HalfTensor",
        "bfloat16": "BFloat16Tensor",
    }.get(t.dtype._name, t.type().rsplit(".", 1)[-1])
    return f"torch.cuda.{base}" if t.is_cuda else f"torch.{base}"


def _bias_add_(y, bias):
    shape = [1, bias.shape[0]] + [1] * (y.dim() - 2)
    y.add_(bias.view(shape))


# ---- the products (im2col path) ----


def _gmm(a, b):
    """Per-group products of (g, m, k) and (g, k, n); one plain matrix product when g is 1
    (BLAS takes transposed operands of a 2-D product as they are)."""
    if a.shape[0] == 1:
        return a[0].matmul(b[0]).unsqueeze(0)
    return a.matmul(b)


def _conv_fwd(x, w, bias, s, pads, d, g):
    n = x.shape[0]
    k = list(w.shape[2:])
    xp = ic.pad_input(x, pads)
    out = [ic.out_size(xp.shape[2 + i], k[i], s[i], d[i], 0) for i in range(len(k))]
    cols = ic.im2col(xp, g, k, s, d, out)  # (g, N*L, CgK)
    wm = _wmat(w, g).transpose(1, 2)  # (g, CgK, Og)
    y = _gmm(cols, wm)  # (g, N*L, Og)
    y = _from_group_rows(y, n, out)
    if bias is not None:
        _bias_add_(y, bias)
    return y


def _from_group_rows(y, n, out):
    """(g, N*L, Cg) -> a contiguous (N, g*Cg, *out)."""
    g, cg = y.shape[0], y.shape[2]
    nd = len(out)
    y = y.view([g, n] + list(out) + [cg])
    perm = [1, 0, 2 + nd] + [2 + i for i in range(nd)]
    return y.permute(perm).reshape([n, g * cg] + list(out))


def _to_group_rows(t, g):
    """(N, g*Cg, *sp) -> a contiguous (g, N*L, Cg)."""
    n, c = t.shape[0], t.shape[1]
    n_l = math.prod(t.shape[2:])
    return t.reshape(n, g, c // g, n_l).permute(1, 0, 3, 2).reshape(g, n * n_l, c // g)


def _wmat(w, g):
    """The weight (O, Cg, *k) as (g, O/g, Cg*K)."""
    return w.reshape(g, w.shape[0] // g, math.prod(w.shape[1:]))


def _conv_bwd(gy, x, w, s, pads, d, g, need):
    n, c = x.shape[0], x.shape[1]
    k = list(w.shape[2:])
    nd = len(k)
    out = list(gy.shape[2:])
    gr = _to_group_rows(gy, g)  # (g, N*L, Og)
    gx = gw = gb = None
    if need[0]:
        gcols = _gmm(gr, _wmat(w, g))  # (g, N*L, CgK)
        src = ic.cols_as_windows(gcols, g, n, out, k)  # (N, g, Cg, *out, *k)
        padded = [x.shape[2 + i] + pads[i][0] + pads[i][1] for i in range(nd)]
        gxp = ic.col2im(src, padded, k, s, d, out).view([n, c] + padded)
        index = (Ellipsis,) + tuple(
            slice(pads[i][0], pads[i][0] + x.shape[2 + i]) for i in range(nd)
        )
        gx = gxp[index] if any(a or b for a, b in pads) else gxp
        gx = gx.contiguous()
    if need[1]:
        cols = ic.im2col(ic.pad_input(x, pads), g, k, s, d, out)
        gw = _gmm(gr.transpose(1, 2).contiguous(), cols).reshape(w.shape)
    if len(need) > 2 and need[2]:
        gb = gy.sum([0] + list(range(2, gy.dim())))
    return gx, gw, gb


def _convt_fwd(x, w, bias, s, p, op, d, g):
    n = x.shape[0]
    k = list(w.shape[2:])
    nd = len(k)
    ins = list(x.shape[2:])
    xr = _to_group_rows(x, g)  # (g, N*Lin, Cig)
    cols = _gmm(xr, _wmat(w, g))  # (g, N*Lin, CogK)
    src = ic.cols_as_windows(cols, g, n, ins, k)  # (N, g, Cog, *in, *k)
    full = [(ins[i] - 1) * s[i] + d[i] * (k[i] - 1) + 1 + op[i] for i in range(nd)]
    y = ic.col2im(src, full, k, s, d, ins)
    y = y.view([n, g * w.shape[1]] + full)
    if any(p):
        index = (Ellipsis,) + tuple(slice(p[i], full[i] - p[i]) for i in range(nd))
        y = y[index].contiguous()
    if bias is not None:
        _bias_add_(y, bias)
    return y


def _convt_bwd(gy, x, w, s, p, op, d, g, need):
    n = x.shape[0]
    k = list(w.shape[2:])
    nd = len(k)
    ins = list(x.shape[2:])
    gyp = ic.pad_input(gy, [(p[i], p[i]) for i in range(nd)])
    cols = ic.im2col(gyp, g, k, s, d, ins)  # (g, N*Lin, CogK)
    gx = gw = gb = None
    if need[0]:
        r = _gmm(cols, _wmat(w, g).transpose(1, 2))  # (g, N*Lin, Cig)
        gx = _from_group_rows(r, n, ins)
    if need[1]:
        gw = _gmm(_to_group_rows(x, g).transpose(1, 2), cols).reshape(w.shape)
    if len(need) > 2 and need[2]:
        gb = gy.sum([0] + list(range(2, gy.dim())))
    return gx, gw, gb


# ---- the products on the CPU (torch's column layout) ----


def _rows_ok(x, stride):
    """Whether the CPU path in torch's column layout takes a gradient of ``x``: float32 /
    float64 on the CPU (its col2im adds in those two) with unit strides, where its rows are
    contiguous copies. (Measured on one core of an x86-64 machine, NumPy's OpenBLAS: 1.6
    times faster than the im2col path for 16 channels of 32x32, as fast for 64 of 8x8, and
    slower with stride 2 (rows of a few strided elements) and for the forward, whose product
    BLAS runs faster as (N * L, C * K) times (C * K, O), the im2col path's.)"""
    return not x.is_cuda and x.dtype in (_C.float32, _C.float64) and all(v == 1 for v in stride)


def _mm(a, b):
    """Per-group products of (g, m, k) and (g, k, n) through BLAS; a 2-D product when g is 1
    (BLAS takes transposed operands of a 2-D product as they are)."""
    if a.shape[0] == 1:
        return _linalg._np_matmul(a[0], b[0]).unsqueeze(0)
    return _linalg._np_matmul(a, b)


def _out_sizes(x, k, s, pads, d):
    return [
        ic.out_size(x.shape[2 + i], k[i], s[i], d[i], pads[i][0] + pads[i][1])
        for i in range(len(k))
    ]


def _rows_cols(x, k, s, pads, d, out, g):
    """The columns (g, C/g * K, N * L) of ``x`` (padding read as zeros, csrc/ops/im2col.cpp)."""
    cols = _C._unfold_rows(x, k, s, d, [a for a, _ in pads], out, True)  # (C*K, N, L)
    return cols.view(g, cols.shape[0] // g, cols.shape[1] * cols.shape[2])


def _conv_bwd_rows(gy, x, w, s, pads, d, g, need):
    n, c, o = x.shape[0], x.shape[1], w.shape[0]
    k = list(w.shape[2:])
    out = list(gy.shape[2:])
    ell = math.prod(out)
    gyt = gy.reshape(n, o, ell).transpose(0, 1).contiguous().view(g, o // g, n * ell)
    gx = gw = gb = None
    if need[0]:
        gcols = _mm(_wmat(w, g).transpose(1, 2), gyt)  # (g, C/g * K, N * L)
        gcols = gcols.view(c * math.prod(k), n, ell)
        gx = _C._fold_rows(gcols, list(x.shape[2:]), n, k, s, d, [a for a, _ in pads], out, True)
    if need[1]:
        cols = _rows_cols(x, k, s, pads, d, out, g)
        gw = _mm(gyt, cols.transpose(1, 2)).reshape(w.shape)
    if len(need) > 2 and need[2]:
        gb = gy.sum([0] + list(range(2, gy.dim())))
    return gx, gw, gb


# ---- dispatch ----


class ConvolutionBackward0(Node):
    __slots__ = (
        "input",
        "weight",
        "stride",
        "pads",
        "dilation",
        "groups",
        "transposed",
        "op",
        "cudnn",
    )
    _saved = ("input", "weight")

    def apply(self, g):
        nx = self._next
        need = [e is not None for e in nx]
        x, w = self.input, self.weight
        g = g.contiguous()
        if self.cudnn:
            gx, gw, gb = _cudnn_conv.backward(self, g, x, w, need)
        elif not self.transposed and _rows_ok(x, self.stride) and not _grad_on():
            gx, gw, gb = _conv_bwd_rows(
                g, x, w, self.stride, self.pads, self.dilation, self.groups, need
            )
        elif self.transposed:
            p = [a for a, _ in self.pads]
            gx, gw, gb = _convt_bwd(
                g, x, w, self.stride, p, self.op, self.dilation, self.groups, need
            )
        else:
            gx, gw, gb = _conv_bwd(
                g, x, w, self.stride, self.pads, self.dilation, self.groups, need
            )
        return (gx, gw, gb)[: len(nx)]


def _channels_last(t):
    """The channels-last format ``t``'s strides suggest (torch's suggest_memory_format), or
    None."""
    from cudalite._memory_format import channels_last, channels_last_3d

    fmt = {4: channels_last, 5: channels_last_3d}.get(t.dim())
    if fmt is None or t.is_contiguous() or not t.is_contiguous(memory_format=fmt):
        return None
    return fmt


def _out_format(x, w):
    """torch's output layout of a convolution: channels-last when the input or the weight
    is (its cuDNN, oneDNN and CPU backends agree)."""
    return _channels_last(x) or _channels_last(w)


def _convolution(x, w, bias, stride, pads, dilation, groups, transposed, op):
    """Runs the forward (grad mode off) on cuDNN or im2col and records the node; the output
    has torch's memory format (channels-last for a channels-last input or weight)."""
    fmt = _out_format(x, w)
    cudnn = _cudnn_conv.usable(x, pads)
    if cudnn:
        fwd, args = (
            _cudnn_conv.forward,
            (x, w, bias, stride, pads, dilation, groups, transposed, op),
        )
    elif transposed:
        fwd, args = _convt_fwd, (x, w, bias, stride, [a for a, _ in pads], op, dilation, groups)
    else:
        fwd, args = _conv_fwd, (x, w, bias, stride, pads, dilation, groups)
    y = ic.no_grad_call(fwd, *args)
    if fmt is not None and _channels_last(y) is None and y.dim() == x.dim():
        y = ic.no_grad_call(lambda: y.contiguous(memory_format=fmt))
    elif fmt is None and not y.is_contiguous():  # im2col's (N, *out, O) product, as NCHW
        y = ic.no_grad_call(y.contiguous)
    if _grad_on() and (x._rg or w._rg or (bias is not None and bias._rg)):
        edges = (edge(x), edge(w)) + ((edge(bias),) if bias is not None else (None,))
        node = ConvolutionBackward0(edges)
        node.input, node.weight = x, w
        node.stride, node.pads, node.dilation, node.groups = stride, pads, dilation, groups
        node.transposed, node.op, node.cudnn = transposed, op, cudnn
        mark(y, node)
    return y


def _same_pads(w, dilation, nd):
    pads = []
    for i in range(nd):
        total = dilation[i] * (w.shape[2 + i] - 1)
        left = total // 2
        pads.append((left, total - left))
    return pads


def _conv(fname, nd, input, weight, bias, stride, padding, dilation, groups):
    _check_args(fname, input, weight, bias)
    x, unbatched = _batchify(input, nd, fname)
    wnd = weight.dim() - 2
    stride = _param("stride", stride, nd, wnd)
    dilation = _param("dilation", dilation, nd, wnd)
    if isinstance(padding, str):
        if padding == "valid":
            pads = [(0, 0)] * wnd
            padding = [0] * wnd
        elif padding == "same":
            if any(s != 1 for s in stride):
                raise RuntimeError("padding='same' is not supported for strided convolutions")
            pads = None
            padding = [0] * wnd
        else:
            raise RuntimeError(f"Invalid padding string: '{padding}'")
    else:
        padding = _param("padding", padding, nd, wnd)
        pads = [(p, p) for p in padding]
    if pads is None and weight.dim() == x.dim():
        pads = _same_pads(weight, dilation, wnd)
    totals = [a + b for a, b in pads] if pads is not None else None
    _check_shape(x, weight, bias, stride, padding, dilation, groups, False, totals)
    _check_types(x, weight, bias)
    y = _convolution(x, weight, bias, stride, pads, dilation, groups, False, [0] * wnd)
    return y.squeeze(0) if unbatched else y


def conv1d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """1-D convolution over ``(N, C, L)`` (or unbatched ``(C, L)``) with weight
    ``(out_channels, C / groups, kW)``; ``padding`` may be ``'valid'`` or ``'same'``."""
    return _conv("conv1d", 1, input, weight, bias, stride, padding, dilation, groups)


def conv2d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """2-D convolution over ``(N, C, H, W)`` (or unbatched ``(C, H, W)``) with weight
    ``(out_channels, C / groups, kH, kW)``; ``padding`` may be ``'valid'`` or ``'same'``."""
    return _conv("conv2d", 2, input, weight, bias, stride, padding, dilation, groups)


def conv3d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """3-D convolution over ``(N, C, D, H, W)`` (or unbatched ``(C, D, H, W)``)."""
    return _conv("conv3d", 3, input, weight, bias, stride, padding, dilation, groups)


def _conv_t(fname, nd, input, weight, bias, stride, padding, output_padding, groups, dilation):
    _check_args(fname, input, weight, bias)
    x, unbatched = _batchify(input, nd, fname)
    wnd = weight.dim() - 2
    stride = _param("stride", stride, nd, wnd)
    padding = _param("padding", padding, nd, wnd)
    dilation = _param("dilation", dilation, nd, wnd)
    op = _param("output_padding", output_padding, nd, wnd)
    _check_shape(x, weight, bias, stride, padding, dilation, groups, True)
    for i in range(wnd):
        if op[i] < 0:
            raise RuntimeError("negative output_padding is not supported")
        if op[i] >= stride[i] and op[i] >= dilation[i]:
            raise RuntimeError(
                "output padding must be smaller than either stride or dilation, but got "
                f"output_padding_height: {op[0]} output_padding_width: {op[-1]} stride_height: "
                f"{stride[0]} stride_width: {stride[-1]} dilation_height: {dilation[0]} "
                f"dilation_width: {dilation[-1]}"
            )
    _check_types(x, weight, bias)
    pads = [(p, p) for p in padding]
    y = _convolution(x, weight, bias, stride, pads, dilation, groups, True, op)
    return y.squeeze(0) if unbatched else y


def conv_transpose1d(
    input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1
):
    """1-D transposed convolution ("deconvolution"), the gradient of conv1d with respect
    to its input; weight ``(in_channels, out_channels / groups, kW)``."""
    return _conv_t(
        "conv_transpose1d",
        1,
        input,
        weight,
        bias,
        stride,
        padding,
        output_padding,
        groups,
        dilation,
    )


def conv_transpose2d(
    input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1
):
    """2-D transposed convolution; weight ``(in_channels, out_channels / groups, kH, kW)``."""
    return _conv_t(
        "conv_transpose2d",
        2,
        input,
        weight,
        bias,
        stride,
        padding,
        output_padding,
        groups,
        dilation,
    )


def conv_transpose3d(
    input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1
):
    """3-D transposed convolution; weight ``(in_channels, out_channels / groups, kD, kH,
    kW)``."""
    return _conv_t(
        "conv_transpose3d",
        3,
        input,
        weight,
        bias,
        stride,
        padding,
        output_padding,
        groups,
        dilation,
    )


# ---- unfold / fold (im2col / col2im as functions) ----


def _pair(name, v):
    return _expand(name, v, 2)


class Im2ColBackward0(Node):
    __slots__ = ("size", "k", "s", "d", "p")

    def apply(self, g):
        return (_fold_raw(g, self.size, self.k, self.d, self.p, self.s),)


class Col2ImBackward0(Node):
    __slots__ = ("k", "s", "d", "p")

    def apply(self, g):
        return (_unfold_raw(g, self.k, self.d, self.p, self.s),)


def _unfold_raw(x, k, d, p, s):
    n, c = x.shape[0], x.shape[1]
    if not x.is_cuda:  # torch's layout is unfold's: one contiguous row at a time
        out = [ic.out_size(x.shape[2 + i] + 2 * p[i], k[i], s[i], d[i], 0) for i in range(2)]
        return _C._unfold_rows(x, k, s, d, p, out, False).view(n, c * k[0] * k[1], -1)
    xp = ic.pad_input(x, [(p[0], p[0]), (p[1], p[1])])
    out = [ic.out_size(xp.shape[2 + i], k[i], s[i], d[i], 0) for i in range(2)]
    w = ic.windows(xp, k, s, d, out)  # (N, C, oh, ow, kh, kw)
    return w.permute(0, 1, 4, 5, 2, 3).reshape(n, c * k[0] * k[1], out[0] * out[1])


def _fold_raw(cols, size, k, d, p, s):
    n = cols.shape[0]
    c = cols.shape[1] // (k[0] * k[1])
    padded = [size[i] + 2 * p[i] for i in range(2)]
    out = [ic.out_size(padded[i], k[i], s[i], d[i], 0) for i in range(2)]
    if _rows_ok(cols, [1]):
        return _C._fold_rows(cols, list(size), n, k, s, d, p, out, False)
    src = cols.view(n, c, k[0], k[1], out[0], out[1]).permute(0, 1, 4, 5, 2, 3)
    res = ic.col2im(src, padded, k, s, d, out)
    if p[0] or p[1]:
        res = res[..., p[0] : p[0] + size[0], p[1] : p[1] + size[1]].contiguous()
    return res


def unfold(input, kernel_size, dilation=1, padding=0, stride=1):
    """Extracts sliding local blocks (im2col): ``(N, C, H, W)`` -> ``(N, C * kH * kW, L)``."""
    _check_args("unfold", input, input, None)
    k, d = _pair("kernel_size", kernel_size), _pair("dilation", dilation)
    p, s = _pair("padding", padding), _pair("stride", stride)
    unbatched = input.dim() == 3
    if input.dim() < 3:
        n = max(input.dim(), 1)
        raise IndexError(
            f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], but got 2)"
        )
    if input.dim() not in (3, 4) or input.numel() == 0 and input.shape[-1] == 0:
        raise RuntimeError(
            "Expected 3D or 4D (batch mode) tensor with optional 0 dim batch size for input, "
            f"but got: {_sizes(input)}"
        )
    _check_window("im2col", k, d, p, s)
    x = input.unsqueeze(0) if unbatched else input
    for i in range(2):
        o = ic.out_size(x.shape[2 + i] + 2 * p[i], k[i], s[i], d[i], 0)
        if o < 1:
            raise RuntimeError(
                f"Given input with spatial size ({x.shape[2]}, {x.shape[3]}), "
                f"kernel_size=({k[0]}, {k[1]}), dilation=({d[0]}, {d[1]}), "
                f"padding=({p[0]}, {p[1]}), calculated shape of the array of sliding blocks as "
                f"({ic.out_size(x.shape[2] + 2 * p[0], k[0], s[0], d[0], 0)}, "
                f"{ic.out_size(x.shape[3] + 2 * p[1], k[1], s[1], d[1], 0)}), but its "
                "components must be at least one."
            )
    r = ic.no_grad_call(_unfold_raw, x, k, d, p, s)
    if _grad_on() and x._rg:
        node = Im2ColBackward0((edge(x),))
        node.size, node.k, node.s, node.d, node.p = list(x.shape[2:]), k, s, d, p
        mark(r, node)
    return r.squeeze(0) if unbatched else r


def _check_window(name, k, d, p, s):
    if any(v <= 0 for v in k):
        raise RuntimeError(
            f"kernel size should be greater than zero, but got kernel_height: {k[0]} "
            f"kernel_width: {k[1]}"
        )
    if any(v <= 0 for v in d):
        raise RuntimeError(
            f"dilation should be greater than zero, but got dilation_height: {d[0]} "
            f"dilation_width: {d[1]}"
        )
    if any(v < 0 for v in p):
        raise RuntimeError(
            f"padding should be non-negative, but got pad_height: {p[0]} pad_width: {p[1]}"
        )
    if any(v <= 0 for v in s):
        raise RuntimeError(
            f"stride should be greater than zero, but got stride_height: {s[0]} "
            f"stride_width: {s[1]}"
        )


def fold(input, output_size, kernel_size, dilation=1, padding=0, stride=1):
    """Combines sliding local blocks into a tensor (col2im, overlaps summed):
    ``(N, C * kH * kW, L)`` -> ``(N, C, *output_size)``."""
    _check_args("fold", input, input, None)
    size = _pair("output_size", output_size)
    k, d = _pair("kernel_size", kernel_size), _pair("dilation", dilation)
    p, s = _pair("padding", padding), _pair("stride", stride)
    unbatched = input.dim() == 2
    if input.dim() not in (2, 3):
        raise RuntimeError(
            "Expected 2D or 3D (batch mode) tensor for input with possibly 0 batch size and "
            f"non-zero dimensions for input, but got: {_sizes(input)}"
        )
    _check_window("col2im", k, d, p, s)
    x = input.unsqueeze(0) if unbatched else input
    kk = k[0] * k[1]
    if x.shape[1] % kk:
        raise RuntimeError(
            "Expected size of input's dimension 1 to be divisible by the product of "
            f"kernel_size, but got input.size(1)={x.shape[1]} and kernel_size=({k[0]}, {k[1]})."
        )
    out = [ic.out_size(size[i] + 2 * p[i], k[i], s[i], d[i], 0) for i in range(2)]
    if x.shape[2] != math.prod(out):
        raise RuntimeError(
            f"Given output_size=({size[0]}, {size[1]}), kernel_size=({k[0]}, {k[1]}), "
            f"dilation=({d[0]}, {d[1]}), padding=({p[0]}, {p[1]}), stride=({s[0]}, {s[1]}), "
            f"expected size of input's dimension 2 to match the calculated number of sliding "
            f"blocks {out[0]} * {out[1]} = {math.prod(out)}, but got input.size(2)="
            f"{x.shape[2]}."
        )
    r = ic.no_grad_call(_fold_raw, x.contiguous(), size, k, d, p, s)
    if _grad_on() and x._rg:
        node = Col2ImBackward0((edge(x),))
        node.k, node.s, node.d, node.p = k, s, d, p
        mark(r, node)
    return r.squeeze(0) if unbatched else r
