"""3-D pooling of ``nn.functional``: max_pool3d (with indices), avg_pool3d and the adaptive
forms, over ``(N, C, D, H, W)`` (or ``(C, D, H, W)``) inputs.

Composed of tensor ops, so autograd differentiates them through their parts: a window is a
view of the padded input made by ``Tensor.unfold`` along the three dimensions; max pooling
reduces the flattened windows with max (its argmax gives torch's indices, flat in each input
volume), average pooling sums them and divides by torch's divisor. Adaptive average pooling
is three products with averaging matrices; adaptive max pooling gathers each window's
elements by index."""

from __future__ import annotations

from cudalite import _C, _creation
from cudalite.nn._functional_pooling import (
    _adaptive_size,
    _avg_matrix,
    _bounds,
    _check_tensor,
    _divisor,
    _ends,
    _lowest,
    _out_len,
    _sizes,
)

__all__ = [
    "max_pool3d",
    "max_pool3d_with_indices",
    "avg_pool3d",
    "adaptive_avg_pool3d",
    "adaptive_max_pool3d",
    "adaptive_max_pool3d_with_indices",
]

_TRIPLE_MSG = {
    "kernel_size": "kernel_size must either be a single int, or a tuple of three ints",
    "stride": "stride must either be omitted, a single int, or a tuple of three ints",
    "padding": "padding must either be a single int, or a tuple of three ints",
    "dilation": "dilation must be either a single int, or a tuple of three ints",
}


def _triple(v, default, fname, name):
    if v is None or (isinstance(v, (list, tuple)) and len(v) == 0 and name == "stride"):
        v = default
    if isinstance(v, int):
        return [v, v, v]
    v = [int(i) for i in v]
    if len(v) not in (1, 3):
        raise RuntimeError(f"{fname}: {_TRIPLE_MSG[name]}")
    return v * 3 if len(v) == 1 else v


def _params(fname, input, kernel_size, stride, padding, dilation, ceil_mode):
    _check_tensor(fname, input)
    k = _triple(kernel_size, None, fname, "kernel_size")
    s = _triple(stride, k, fname, "stride")
    p = _triple(padding, None, fname, "padding")
    d = _triple(dilation, None, fname, "dilation")
    if fname == "avg_pool3d" and 0 in s:
        raise RuntimeError("stride should not be zero")
    if any(v <= 0 for v in k):
        raise RuntimeError(
            f"kernel size should be greater than zero, but got kT: {k[0]} kH: {k[1]} kW: {k[2]}"
        )
    if any(v <= 0 for v in s):
        raise RuntimeError(
            f"stride should be greater than zero, but got dT: {s[0]} dH: {s[1]} dW: {s[2]}"
        )
    if any(v <= 0 for v in d):
        raise RuntimeError(
            "dilation should be greater than zero, but got "
            f"dilationT: {d[0]} dilationH: {d[1]} dilationW: {d[2]}"
        )
    if input.dim() not in (4, 5):
        raise RuntimeError(
            f"non-empty 4D or 5D (batch mode) tensor expected for input, but got: {_sizes(input)}"
            if fname == "avg_pool3d"
            else "non-empty 4D or 5D (batch mode) tensor expected for input"
        )
    for i in range(3):
        if p[i] > (d[i] * (k[i] - 1) + 1) // 2 or p[i] * 2 > k[i] * d[i] - d[i] + 1:
            raise RuntimeError(
                f"pad should be at most half of effective kernel size, but got pad={p[i]}, "
                f"kernel_size={k[i]} and dilation={d[i]}"
            )
    x = input.unsqueeze(0) if input.dim() == 4 else input
    size = list(x.shape[2:])
    out = [_out_len(size[i], k[i], p[i], s[i], d[i], ceil_mode) for i in range(3)]
    if any(o < 1 for o in out):
        c = x.shape[1]
        raise RuntimeError(
            f"Given input size: ({c}x{size[0]}x{size[1]}x{size[2]}). Calculated output size: "
            f"({c}x{out[0]}x{out[1]}x{out[2]}). Output size is too small"
        )
    return x, input.dim() == 4, k, s, p, d, out


def _windows(x, k, s, p, d, out, fill):
    """(N, C, oD, oH, oW, kD, kH, kW): the windows of ``x`` padded with ``fill``."""
    from cudalite.nn._functional_pad import pad

    size = list(x.shape[2:])
    pads = []
    for i in (2, 1, 0):
        pads += [p[i], _ends(size[i], out[i], k[i], s[i], p[i], d[i])]
    xp = pad(x, pads, value=fill) if any(pads) else x
    w = xp
    for i in range(3):
        w = w.unfold(2 + i, d[i] * (k[i] - 1) + 1, s[i])
    w = w[:, :, : out[0], : out[1], : out[2]]
    if any(v > 1 for v in d):
        w = w[..., :: d[0], :: d[1], :: d[2]]
    return w


def max_pool3d_with_indices(
    input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False
):
    """3-D max pooling; returns ``(output, indices)``, the indices flat in each input
    volume."""
    x, unb, k, s, p, d, out = _params(
        "max_pool3d", input, kernel_size, stride, padding, dilation, ceil_mode
    )
    if input.dtype is _C.bool:
        raise NotImplementedError("\"max_pool3d\" not implemented for 'Bool'")
    n, c = x.shape[0], x.shape[1]
    win = _windows(x, k, s, p, d, out, _lowest(x.dtype))
    kk = k[0] * k[1] * k[2]
    vals, j = win.reshape(n, c, out[0], out[1], out[2], kk).max(-1)
    dev = x.device
    size = list(x.shape[2:])
    pos = []
    for i, step in enumerate((k[1] * k[2], k[2], 1)):
        o = _C._arange(0, out[i], 1, _C.int64, dev) * s[i] - p[i]
        o = o.view([out[i] if a == i else 1 for a in range(3)])
        pos.append(o + (j // step % k[i]) * d[i])
    idx = (pos[0] * size[1] + pos[1]) * size[2] + pos[2]
    if unb:
        return vals.squeeze(0), idx.squeeze(0)
    return vals, idx


def max_pool3d(
    input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False
):
    """3-D max pooling over ``(N, C, D, H, W)``; ``stride`` defaults to the kernel size; pads
    with -inf; ``return_indices`` also returns the argmax positions."""
    r = max_pool3d_with_indices(input, kernel_size, stride, padding, dilation, ceil_mode)
    return r if return_indices else r[0]


def _int_div(total, d):
    """Integer averages truncated toward zero, as torch's kernels divide."""
    return total.div(d, rounding_mode="trunc").to(total.dtype)


def avg_pool3d(
    input,
    kernel_size,
    stride=None,
    padding=0,
    ceil_mode=False,
    count_include_pad=True,
    divisor_override=None,
):
    """3-D average pooling; ``count_include_pad`` counts the zero padding in the divisor,
    ``divisor_override`` replaces the divisor."""
    import numpy as np

    x, unb, k, s, p, d, out = _params(
        "avg_pool3d", input, kernel_size, stride, padding, 1, ceil_mode
    )
    if divisor_override is not None and divisor_override == 0:
        raise RuntimeError("divisor must be not zero")
    if input.dtype is _C.bool:
        raise NotImplementedError("\"avg_pool3d_out_frame\" not implemented for 'Bool'")
    total = _windows(x, k, s, p, d, out, 0.0).sum([-3, -2, -1])
    floating = x.dtype.is_floating_point
    if divisor_override:
        y = total / float(divisor_override) if floating else _int_div(total, divisor_override)
    else:
        sel = 0 if count_include_pad else 1
        size = list(x.shape[2:])
        parts = [np.array(_divisor(size[i], k[i], s[i], p[i], out[i], None)[sel]) for i in range(3)]
        div = parts[0][:, None, None] * parts[1][None, :, None] * parts[2][None, None, :]
        if (div == div.flat[0]).all():
            d = div.flat[0]
            y = total / float(d) if floating else _int_div(total, int(d))
        else:
            dt = x.dtype if floating else _C.int64
            d = _creation.tensor(div.astype(np.float64), dtype=dt, device=x.device)
            y = total / d if floating else _int_div(total, d)
    return y.squeeze(0) if unb else y


def _adaptive_check(fname, input, output_size):
    _check_tensor(fname, input)
    if input.dim() not in (4, 5):
        sep = ":" if fname == "adaptive_max_pool3d" else ""
        raise RuntimeError(f"{fname}(): Expected 4D or 5D tensor, but got{sep} {_sizes(input)}")
    for i in range(1 if input.dim() == 5 else 0, input.dim()):
        if input.shape[i] == 0:
            raise RuntimeError(
                f"{fname}(): Expected input to have non-zero size for non-batch dimensions, "
                f"but input has sizes {_sizes(input)} with dimension {i} being empty"
            )
    out = _adaptive_size(output_size, input, 3)
    x = input.unsqueeze(0) if input.dim() == 4 else input
    return x, input.dim() == 4, out


def adaptive_avg_pool3d(input, output_size):
    """Average pooling to ``output_size`` (an int, or (D, H, W) with None keeping that size):
    window ``i`` covers ``[floor(i * n / o), ceil((i + 1) * n / o))`` in each dimension."""
    x, unb, out = _adaptive_check("adaptive_avg_pool3d", input, output_size)
    if not input.dtype.is_floating_point:
        raise NotImplementedError(
            f"\"adaptive_avg_pool3d_cpu\" not implemented for '{input.dtype._short_name}'"
        )
    dd, hh, ww = x.shape[2:]
    md = _avg_matrix(dd, out[0], x)
    mh = _avg_matrix(hh, out[1], x)
    mw = _avg_matrix(ww, out[2], x)
    y = mh.matmul(x.matmul(mw.t()))  # (N, C, D, oH, oW)
    y = md.matmul(y.transpose(2, 3)).transpose(2, 3)  # (N, C, oD, oH, oW)
    return y.squeeze(0) if unb else y


def adaptive_max_pool3d_with_indices(input, output_size, return_indices=False):
    """Adaptive 3-D max pooling; returns ``(output, indices)``."""
    import numpy as np

    x, unb, out = _adaptive_check("adaptive_max_pool3d", input, output_size)
    if not input.dtype.is_floating_point:
        kernel = "adaptive_max_pool3d_cuda" if input.is_cuda else "adaptive_max_pool3d_cpu"
        raise NotImplementedError(f"\"{kernel}\" not implemented for '{input.dtype._short_name}'")
    n, c, dd, hh, ww = x.shape
    bounds = [_bounds(m, o) for m, o in zip((dd, hh, ww), out, strict=True)]
    ks = [max(b - a for a, b in bs) for bs in bounds]
    # each window's positions along each dim; short windows repeat their last element
    axes = [
        np.array([[min(a + j, b - 1) for j in range(kk)] for a, b in bs])
        for bs, kk in zip(bounds, ks, strict=True)
    ]
    flat = (
        axes[0][:, None, None, :, None, None] * (hh * ww)
        + axes[1][None, :, None, None, :, None] * ww
        + axes[2][None, None, :, None, None, :]
    ).reshape(out[0], out[1], out[2], -1)
    fi = _creation.tensor(flat.reshape(-1), dtype=_C.int64, device=x.device)
    kk = flat.shape[-1]
    vals = x.reshape(n, c, dd * hh * ww).index_select(2, fi).view(n, c, *out, kk)
    v, j = vals.max(-1)
    idx = fi.view(*out, kk).expand(n, c, *out, kk).gather(5, j.unsqueeze(-1)).squeeze(-1)
    if unb:
        return v.squeeze(0), idx.squeeze(0)
    return v, idx


def adaptive_max_pool3d(input, output_size, return_indices=False):
    """Adaptive max pooling to ``output_size``; ``return_indices`` also returns the flat
    argmax positions."""
    r = adaptive_max_pool3d_with_indices(input, output_size)
    return r if return_indices else r[0]
