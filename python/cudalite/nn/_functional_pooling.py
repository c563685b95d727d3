"""``nn.functional`` pooling: max_pool1d/2d (with indices), avg_pool1d/2d, the adaptive
forms and max_unpool-free backward nodes named as torch's.

A pooling window is a strided view of the (padded) input (``_im2col.windows``): max pooling
reduces the view's window dims with max/argmax, average pooling sums them and divides by
torch's divisor. The 1-d forms are the 2-d ones on an unsqueezed input, as torch's are.
Backward: max pooling adds each output's gradient at its argmax (scatter_add over the
flattened plane), average pooling spreads it over the window (col2im).
"""

from __future__ import annotations

from cudalite import _C, _arg_parser, _creation, _finfo
from cudalite._C import Tensor
from cudalite.autograd.functions._common import Node, edge, mark
from cudalite.nn import _im2col as ic

__all__ = [
    "max_pool1d",
    "max_pool2d",
    "max_pool1d_with_indices",
    "max_pool2d_with_indices",
    "avg_pool1d",
    "avg_pool2d",
    "adaptive_avg_pool1d",
    "adaptive_avg_pool2d",
    "adaptive_max_pool1d",
    "adaptive_max_pool2d",
    "adaptive_max_pool1d_with_indices",
    "adaptive_max_pool2d_with_indices",
]

_grad_on = _C._is_grad_enabled


_PAIR_MSG = {
    "kernel_size": "kernel_size must either be a single int, or a tuple of two ints",
    "stride": "stride must either be omitted, a single int, or a tuple of two ints",
    "padding": "padding must either be a single int, or a tuple of two ints",
    "dilation": "dilation must be either a single int, or a tuple of two ints",
}


def _pair(v, default=None, fname=None, name=None):
    """An int or 1 or 2 ints as two ints (``default`` for None); torch's error otherwise."""
    if v is None:
        v = default
    if isinstance(v, int):
        return [v, v]
    v = [int(i) for i in v]
    if len(v) not in (1, 2) and fname is not None:
        raise RuntimeError(f"{fname}: {_PAIR_MSG[name]}")
    return v * 2 if len(v) == 1 else v


def _sizes(t):
    return "[" + ", ".join(str(n) for n in t.shape) + "]"


def _check_tensor(fname, input):
    if not isinstance(input, Tensor):
        raise TypeError(
            f"{fname}(): argument 'input' (position 1) must be Tensor, not "
            f"{_arg_parser.tp_name(input)}"
        )


def _out_len(size, k, pad, s, d, ceil_mode):
    """torch's pooling_output_shape."""
    num = size + 2 * pad - d * (k - 1) - 1 + (s - 1 if ceil_mode else 0)
    out = num // s + 1
    if ceil_mode and (out - 1) * s >= size + pad:
        out -= 1
    return out


def _pool_shape_check(x, k, s, p, d, out, ceil_mode):
    """torch's pool2d_shape_check (after the kernel/stride/pad checks)."""
    for i in range(2):
        if p[i] > (d[i] * (k[i] - 1) + 1) // 2 or p[i] * 2 > k[i] * d[i] - d[i] + 1:
            raise RuntimeError(
                f"pad should be at most half of effective kernel size, but got pad={p[i]}, "
                f"kernel_size={k[i]} and dilation={d[i]}"
            )
    c, h, w = x.shape[-3], x.shape[-2], x.shape[-1]
    if out[0] < 1 or out[1] < 1:
        raise RuntimeError(
            f"Given input size: ({c}x{h}x{w}). Calculated output size: "
            f"({c}x{out[0]}x{out[1]}). Output size is too small"
        )


def _check_params(k, s, d):
    if any(v <= 0 for v in k):
        raise RuntimeError(
            f"kernel size should be greater than zero, but got kH: {k[0]} kW: {k[1]}"
        )
    if any(v <= 0 for v in s):
        raise RuntimeError("stride should not be zero")
    if d is not None and any(v <= 0 for v in d):
        raise RuntimeError(
            f"dilation should be greater than zero, but got dilationH: {d[0]} dilationW: {d[1]}"
        )


def _batched(x):
    return (x.unsqueeze(0), True) if x.dim() == 3 else (x, False)


def _ends(size, out, k, s, p, d):
    """Right padding so that every window of ``out`` outputs lies inside the padded input."""
    return max(0, (out - 1) * s + d * (k - 1) + 1 - (size + p))


# ---- max pooling ----


class MaxPool2DWithIndicesBackward0(Node):
    __slots__ = ("indices", "shape")
    _saved = ("indices",)

    def apply(self, g):
        return (_max_unpool_grad(g, self.indices, self.shape),)


class AdaptiveMaxPool2DBackward0(MaxPool2DWithIndicesBackward0):
    __slots__ = ()


def _max_unpool_grad(g, idx, shape):
    """Adds each output's gradient at its input position (``idx``: flat in the plane)."""
    n, c = shape[0], shape[1]
    res = _C._full([n, c, shape[2] * shape[3]], 0, g.dtype, g.device)
    m = g.numel() // max(n * c, 1)
    res.scatter_add_(2, idx.reshape(n, c, m), g.reshape(n, c, m))
    return res.view(shape)


def _lowest(dtype):
    if dtype.is_floating_point:
        return float("-inf")
    if dtype is _C.bool:
        return False
    return _finfo.iinfo(dtype).min


def _max_pool_raw(x, k, s, p, d, out):
    h, w = x.shape[2], x.shape[3]
    pads = [(p[i], _ends(x.shape[2 + i], out[i], k[i], s[i], p[i], d[i])) for i in range(2)]
    xp = ic.pad_input(x, pads, _lowest(x.dtype))
    win = ic.windows(xp, k, s, d, out)  # (N, C, oh, ow, kh, kw)
    n, c = x.shape[0], x.shape[1]
    flat = win.reshape(n, c, out[0], out[1], k[0] * k[1])
    vals, j = flat.max(-1)
    dev = x.device
    rows = _C._arange(0, out[0], 1, _C.int64, dev).view(out[0], 1) * s[0] - p[0]
    cols = _C._arange(0, out[1], 1, _C.int64, dev).view(1, out[1]) * s[1] - p[1]
    r = rows + (j // k[1]) * d[0]
    q = cols + (j % k[1]) * d[1]
    return vals, r * w + q, h


def _max_values(x, k, s, p, d, out):
    """The maxima alone: one reduction over the windows' view, no copy (inference)."""
    pads = [(p[i], _ends(x.shape[2 + i], out[i], k[i], s[i], p[i], d[i])) for i in range(2)]
    xp = ic.pad_input(x, pads, _lowest(x.dtype))
    return ic.windows(xp, k, s, d, out).amax((-2, -1))


def _max_pool2d(fname, input, kernel_size, stride, padding, dilation, ceil_mode, indices=True):
    _check_tensor(fname, input)
    k = _pair(kernel_size, None, fname, "kernel_size")
    s = _pair(stride if stride not in (None, []) else None, k, fname, "stride")
    p = _pair(padding, None, fname, "padding")
    d = _pair(dilation, None, fname, "dilation")
    _check_params(k, s, d)
    if input.dim() not in (3, 4) or input.numel() == 0 and input.shape[-1] == 0:
        raise RuntimeError("non-empty 3D or 4D (batch mode) tensor expected for input")
    x, unb = _batched(input)
    out = [_out_len(x.shape[2 + i], k[i], p[i], s[i], d[i], ceil_mode) for i in range(2)]
    _pool_shape_check(x, k, s, p, d, out, ceil_mode)
    if input.dtype is _C.bool:
        raise RuntimeError(f"\"max_pool2d\" not implemented for '{input.dtype._short_name}'")
    if not indices and not (_grad_on() and x._rg):
        vals = _max_values(x, k, s, p, d, out)
        return (vals.squeeze(0) if unb else vals), None
    vals, idx, _ = ic.no_grad_call(_max_pool_raw, x.contiguous(), k, s, p, d, out)
    if _grad_on() and x._rg:
        node = MaxPool2DWithIndicesBackward0((edge(x),))
        node.indices, node.shape = idx, list(x.shape)
        mark(vals, node)
    if unb:
        return vals.squeeze(0), idx.squeeze(0)
    return vals, idx


def max_pool2d_with_indices(
    input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False
):
    """2-D max pooling; returns ``(output, indices)``, the indices flat in each input plane."""
    return _max_pool2d("max_pool2d", input, kernel_size, stride, padding, dilation, ceil_mode)


def max_pool2d(
    input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False
):
    """2-D max pooling over ``(N, C, H, W)`` (or ``(C, H, W)``); ``stride`` defaults to the
    kernel size; pads with -inf; ``return_indices`` also returns the argmax positions."""
    r = _max_pool2d(
        "max_pool2d", input, kernel_size, stride, padding, dilation, ceil_mode, return_indices
    )
    return r if return_indices else r[0]


def _one(v, name):
    if isinstance(v, int):
        return v
    v = list(v)
    if len(v) != 1:
        raise RuntimeError(
            f"max_pool1d() {name} must be an int or int list of size 1 but got size {len(v)}"
        )
    return int(v[0])


def max_pool1d_with_indices(
    input,
    kernel_size,
    stride=None,
    padding=0,
    dilation=1,
    ceil_mode=False,
    return_indices=False,
    _indices=True,
):
    """1-D max pooling; returns ``(output, indices)``."""
    _check_tensor("max_pool1d", input)
    if input.dim() not in (2, 3):
        raise RuntimeError(
            "max_pool1d: Expected 2D or 3D (batch mode) tensor with optional 0 dim batch size "
            f"for input, but got:{_sizes(input)}"
        )
    k = _one(kernel_size, "kernel_size")
    s = k if stride is None or stride == [] else _one(stride, "stride")
    p, d = _one(padding, "padding"), _one(dilation, "dilation")
    x = input.unsqueeze(-2)
    v, i = _max_pool2d("max_pool2d", x, [1, k], [1, s], [0, p], [1, d], ceil_mode, _indices)
    return v.squeeze(-2), (i.squeeze(-2) if i is not None else None)


def max_pool1d(
    input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False
):
    """1-D max pooling over ``(N, C, L)`` (or ``(C, L)``)."""
    r = max_pool1d_with_indices(
        input, kernel_size, stride, padding, dilation, ceil_mode, _indices=return_indices
    )
    return r if return_indices else r[0]


# ---- average pooling ----


class AvgPool2DBackward0(Node):
    __slots__ = ("shape", "k", "s", "p", "out", "div", "pads")

    def apply(self, g):
        n, c, h, w = self.shape
        gd = g / self.div
        src = gd.view(n, c, self.out[0], self.out[1], 1, 1).expand(
            n, c, self.out[0], self.out[1], self.k[0], self.k[1]
        )
        padded = [self.shape[2 + i] + self.pads[i][0] + self.pads[i][1] for i in range(2)]
        res = ic.col2im(src, padded, self.k, self.s, [1, 1], self.out)
        p = self.p
        return (res[..., p[0] : p[0] + h, p[1] : p[1] + w].contiguous(),)


def _divisor(size, k, s, p, out, ceil_out_pad):
    """Per output position along one dim: (window length clipped to the padded input, and
    clipped to the input)."""
    with_pad, without = [], []
    for o in range(out):
        start = o * s - p
        end = min(start + k, size + p)
        with_pad.append(end - start)
        without.append(min(end, size) - max(start, 0))
    return with_pad, without


def _avg_divisor(x, k, s, p, out, count_include_pad, divisor_override):
    if divisor_override:
        return float(divisor_override)
    h = _divisor(x.shape[2], k[0], s[0], p[0], out[0], None)
    w = _divisor(x.shape[3], k[1], s[1], p[1], out[1], None)
    sel = 0 if count_include_pad else 1
    vals = [[a * b for b in w[sel]] for a in h[sel]]
    if all(v == vals[0][0] for row in vals for v in row):
        return float(vals[0][0])
    return _creation.tensor(
        vals,
        dtype=x.dtype if x.dtype.is_floating_point else _C.float32,
        device=x.device,
    )


def _avg_pool2d(input, kernel_size, stride, padding, ceil_mode, count_include_pad, div_over):
    _check_tensor("avg_pool2d", input)
    k = _pair(kernel_size, None, "avg_pool2d", "kernel_size")
    s = _pair(stride if stride not in (None, []) else None, k, "avg_pool2d", "stride")
    p = _pair(padding, None, "avg_pool2d", "padding")
    _check_params(k, s, None)
    if div_over is not None and div_over == 0:
        raise RuntimeError("divisor must be not zero")
    if input.dim() not in (3, 4):
        if input.dim() < 3:
            raise IndexError(
                "Dimension out of range (expected to be in range of "
                f"[{-max(input.dim(), 1)}, {max(input.dim(), 1) - 1}], but got -3)"
            )
        raise RuntimeError("non-empty 3D or 4D (batch mode) tensor expected for input")
    x, unb = _batched(input)
    out = [_out_len(x.shape[2 + i], k[i], p[i], s[i], 1, ceil_mode) for i in range(2)]
    _pool_shape_check(x, k, s, p, [1, 1], out, ceil_mode)
    pads = [(p[i], _ends(x.shape[2 + i], out[i], k[i], s[i], p[i], 1)) for i in range(2)]
    div = _avg_divisor(x, k, s, p, out, count_include_pad, div_over)

    def run():
        xp = ic.pad_input(x, pads)
        total = ic.windows(xp, k, s, [1, 1], out).sum([-2, -1])
        if x.dtype.is_floating_point:
            return total / div
        return (total / div).to(x.dtype) if isinstance(div, Tensor) else total // int(div)

    y = ic.no_grad_call(run)
    if _grad_on() and x._rg:
        node = AvgPool2DBackward0((edge(x),))
        node.shape, node.k, node.s, node.p, node.out = list(x.shape), k, s, p, out
        node.div, node.pads = div, pads
        mark(y, node)
    return y.squeeze(0) if unb else y


def avg_pool2d(
    input,
    kernel_size,
    stride=None,
    padding=0,
    ceil_mode=False,
    count_include_pad=True,
    divisor_override=None,
):
    """2-D average pooling; ``count_include_pad`` counts the zero padding in the divisor,
    ``divisor_override`` replaces the divisor."""
    return _avg_pool2d(
        input, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override
    )


def avg_pool1d(input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True):
    """1-D average pooling over ``(N, C, L)`` (or ``(C, L)``)."""
    _check_tensor("avg_pool1d", input)
    if input.dim() not in (2, 3):
        raise RuntimeError(
            f"Expected 2 to 3 dimensions, but got {input.dim()}-dimensional tensor for argument "
            "#1 'self' (while checking arguments for avg_pool1d)"
        )
    k = _one(kernel_size, "kernel_size")
    s = k if stride is None or stride == [] else _one(stride, "stride")
    p = _one(padding, "padding")
    y = _avg_pool2d(input.unsqueeze(-2), [1, k], [1, s], [0, p], ceil_mode, count_include_pad, None)
    return y.squeeze(-2)


# ---- adaptive pooling ----


def _bounds(size, out):
    """torch's adaptive windows: [floor(i * size / out), ceil((i + 1) * size / out))."""
    return [((i * size) // out, -((-(i + 1) * size) // out)) for i in range(out)]


def _adaptive_size(output_size, x, nd):
    if isinstance(output_size, int):
        size = [output_size] * nd
    else:
        size = list(output_size)
        if len(size) == 1:
            size = size * nd
    return [x.shape[x.dim() - nd + i] if v is None else int(v) for i, v in enumerate(size)]


def _avg_matrix(size, out, like):
    """The (out, size) matrix whose rows average each adaptive window."""
    rows = []
    for a, b in _bounds(size, out):
        rows.append([1.0 / (b - a) if a <= j < b else 0.0 for j in range(size)])
    dt = like.dtype if like.dtype.is_floating_point else _C.float32
    return _creation.tensor(rows, dtype=dt, device=like.device)


class AdaptiveAvgPool2DBackward0(Node):
    __slots__ = ("mh", "mw", "k")

    def apply(self, g):
        if self.k is not None:  # regular windows
            n, c, oh, ow = g.shape
            kh, kw = self.k
            src = (g / (kh * kw)).view(n, c, oh, ow, 1, 1).expand(n, c, oh, ow, kh, kw)
            return (ic.col2im(src, [oh * kh, ow * kw], self.k, self.k, [1, 1], [oh, ow]),)
        return (self.mh.t().matmul(g).matmul(self.mw),)


def adaptive_avg_pool2d(input, output_size):
    """Average pooling to ``output_size`` (an int, or (H, W) with None keeping that size):
    window ``i`` covers ``[floor(i * H / oH), ceil((i + 1) * H / oH))``."""
    _check_tensor("adaptive_avg_pool2d", input)
    if input.dim() not in (3, 4):
        raise RuntimeError(
            f"adaptive_avg_pool2d(): Expected 3D or 4D tensor, but got {_sizes(input)}"
        )
    out = _adaptive_size(output_size, input, 2)
    if any(o < 0 for o in out):
        raise RuntimeError(
            "adaptive_avg_pool2d: elements of output_size must be greater than or equal to 0 "
            f"but received {{{out[0]}, {out[1]}}}"
        )
    for i in range(input.dim() - 2):
        if input.shape[i] == 0 and i > 0:
            raise RuntimeError(
                "adaptive_avg_pool2d(): Expected input to have non-zero size for non-batch "
                f"dimensions, but input has sizes {_sizes(input)} with dimension {i} being empty"
            )
    if out == [1, 1] and input.numel():
        return input.mean([-1, -2], keepdim=True)
    x, unb = _batched(input)
    if 0 in out:
        y = _C._full(list(x.shape[:2]) + out, 0, x.dtype, x.device)
        return y.squeeze(0) if unb else y
    h, w = x.shape[2], x.shape[3]
    regular = all(o > 0 and n % o == 0 for n, o in zip((h, w), out, strict=True))
    k = [h // out[0], w // out[1]] if regular else None

    def run():
        if regular:
            return ic.windows(x, k, k, [1, 1], out).sum([-2, -1]) / float(k[0] * k[1])
        mh, mw = _avg_matrix(h, out[0], x), _avg_matrix(w, out[1], x)
        return mh.matmul(x.to(mh.dtype)).matmul(mw.t()).to(x.dtype), mh, mw

    r = ic.no_grad_call(run)
    y, mh, mw = (r, None, None) if regular else r
    if _grad_on() and x._rg:
        node = AdaptiveAvgPool2DBackward0((edge(x),))
        node.mh, node.mw, node.k = mh, mw, k
        mark(y, node)
    return y.squeeze(0) if unb else y


def adaptive_avg_pool1d(input, output_size):
    """Adaptive average pooling over ``(N, C, L)`` (or ``(C, L)``)."""
    _check_tensor("adaptive_avg_pool1d", input)
    if input.dim() not in (2, 3):
        raise RuntimeError(
            f"Expected 2 to 3 dimensions, but got {input.dim()}-dimensional tensor for argument "
            "#1 'self' (while checking arguments for adaptive_avg_pool1d)"
        )
    o = output_size if isinstance(output_size, int) else list(output_size)[0]
    return adaptive_avg_pool2d(input.unsqueeze(-2), (1, o)).squeeze(-2)


def _adaptive_max_raw(x, out):
    n, c, h, w = x.shape
    bh, bw = _bounds(h, out[0]), _bounds(w, out[1])
    kh = max(b - a for a, b in bh)
    kw = max(b - a for a, b in bw)
    # Rows and columns of each window; short windows repeat their last element.
    rows = [[min(a + j, b - 1) for j in range(kh)] for a, b in bh]
    cols = [[min(a + j, b - 1) for j in range(kw)] for a, b in bw]
    flat = [
        [[[r * w + q for q in cr] for r in rr] for cr in cols] for rr in rows
    ]  # (oh, ow, kh, kw)
    fi = _creation.tensor(flat, dtype=_C.int64, device=x.device).view(-1)
    vals = x.reshape(n, c, h * w).index_select(2, fi).view(n, c, out[0], out[1], kh * kw)
    v, j = vals.max(-1)
    idx = fi.view(out[0], out[1], kh * kw).expand(n, c, out[0], out[1], kh * kw)
    return v, idx.gather(4, j.unsqueeze(-1)).squeeze(-1)


def adaptive_max_pool2d_with_indices(input, output_size, return_indices=False):
    """Adaptive max pooling; returns ``(output, indices)``."""
    _check_tensor("adaptive_max_pool2d", input)
    if input.dim() not in (3, 4):
        raise RuntimeError(
            f"adaptive_max_pool2d(): Expected 3D or 4D tensor, but got: {_sizes(input)}"
        )
    out = _adaptive_size(output_size, input, 2)
    x, unb = _batched(input)
    for i in range(1, input.dim()) if input.dim() == 4 else range(input.dim()):
        if input.shape[i] == 0:
            raise RuntimeError(
                "adaptive_max_pool2d(): Expected input to have non-zero size for non-batch "
                f"dimensions, but input has sizes {_sizes(input)} with dimension {i} being "
                "empty"
            )
    if 0 in out:
        v = _C._full(list(x.shape[:2]) + out, 0, x.dtype, x.device)
        idx = _C._full(list(x.shape[:2]) + out, 0, _C.int64, x.device)
        return (v.squeeze(0), idx.squeeze(0)) if unb else (v, idx)
    v, idx = ic.no_grad_call(_adaptive_max_raw, x.contiguous(), out)
    if _grad_on() and x._rg:
        node = AdaptiveMaxPool2DBackward0((edge(x),))
        node.indices, node.shape = idx, list(x.shape)
        mark(v, node)
    if unb:
        return v.squeeze(0), idx.squeeze(0)
    return v, idx


def adaptive_max_pool2d(input, output_size, return_indices=False):
    """Adaptive max pooling to ``output_size``; ``return_indices`` also returns the flat
    argmax positions."""
    r = adaptive_max_pool2d_with_indices(input, output_size)
    return r if return_indices else r[0]


def adaptive_max_pool1d_with_indices(input, output_size, return_indices=False):
    """Adaptive 1-D max pooling; returns ``(output, indices)``."""
    _check_tensor("adaptive_max_pool1d", input)
    if input.dim() not in (2, 3):
        raise RuntimeError(
            f"adaptive_max_pool1d() argument 'input' should have 2 or 3 dimensions, but got "
            f"{input.dim()}"
        )
    o = output_size if isinstance(output_size, int) else list(output_size)[0]
    v, i = adaptive_max_pool2d_with_indices(input.unsqueeze(-2), (1, o))
    return v.squeeze(-2), i.squeeze(-2)


def adaptive_max_pool1d(input, output_size, return_indices=False):
    """Adaptive max pooling over ``(N, C, L)`` (or ``(C, L)``)."""
    r = adaptive_max_pool1d_with_indices(input, output_size)
    return r if return_indices else r[0]
