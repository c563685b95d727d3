"""``nn.functional.interpolate`` (and ``upsample``): ``nearest`` and ``nearest-exact``
through index_select along each spatial dim, ``linear`` and ``bilinear`` as products with
per-dimension interpolation matrices (separable, so ``y = A_h @ x @ A_w^T``), with torch's
source-index rules (``align_corners``, ``scale_factor`` or ``size``) computed in float32 as
torch's kernels do."""

from __future__ import annotations

import math
import warnings

from cudalite import _C, _arg_parser, _creation
from cudalite._C import Tensor

__all__ = ["interpolate", "upsample", "upsample_nearest", "upsample_bilinear"]

_DIMS = {"nearest": None, "nearest-exact": None, "linear": 1, "bilinear": 2}


def _out_sizes(x, nd, size, scale_factor):
    if size is not None and scale_factor is not None:
        raise ValueError("only one of size or scale_factor should be defined")
    if size is not None:
        sizes = [size] * nd if isinstance(size, int) else list(size)
        if len(sizes) != nd:
            raise ValueError(
                "Input and output must have the same number of spatial dimensions, but got "
                f"input with spatial dimensions of {list(x.shape[2:])} and output size of "
                f"{size}. Please provide input tensor in (N, C, d1, d2, ...,dK) format and "
                "output size in (o1, o2, ...,oK) format."
            )
        return [int(s) for s in sizes], None
    if scale_factor is None:
        raise ValueError("either size or scale_factor should be defined")
    scales = (
        [float(scale_factor)] * nd
        if isinstance(scale_factor, (int, float))
        else [float(s) for s in scale_factor]
    )
    if len(scales) != nd:
        raise ValueError(
            "Input and scale_factor must have the same number of spatial dimensions, but got "
            f"input with spatial dimensions of {list(x.shape[2:])} and scale_factor of shape "
            f"{scales}. Please provide input tensor in (N, C, d1, d2, ...,dK) format and "
            "scale_factor in (s1, s2, ...,sK) format."
        )
    return [math.floor(x.shape[2 + i] * scales[i]) for i in range(nd)], scales


def _scale(in_size, out_size, scale, align_corners, f32):
    """torch's area_pixel_compute_scale in ``f32`` (the kernel's accumulation type)."""
    if align_corners:
        return f32(in_size - 1) / f32(out_size - 1) if out_size > 1 else f32(0)
    if scale is not None and scale > 0:
        return f32(1.0) / f32(scale)
    return f32(in_size) / f32(out_size)


def _nearest_index(in_size, out_size, scale, exact):
    import numpy as np  # not at import: `import cudalite.nn` does not load NumPy

    s = _scale(in_size, out_size, scale, False, np.float32)
    dst = np.arange(out_size, dtype=np.float32)
    src = np.floor((dst + np.float32(0.5)) * s) if exact else np.floor(dst * s)
    return np.minimum(src.astype(np.int64), in_size - 1)


def _linear_matrix(in_size, out_size, scale, align_corners, acc):
    """The (out, in) matrix of linear interpolation weights, computed in ``acc`` (float64
    for float64 inputs, else float32, as torch's kernels)."""
    import numpy as np

    s = _scale(in_size, out_size, scale, align_corners, acc)
    dst = np.arange(out_size, dtype=acc)
    if align_corners:
        src = dst * s
    else:
        src = np.maximum((dst + acc(0.5)) * s - acc(0.5), acc(0))
    i0 = np.minimum(np.floor(src).astype(np.int64), in_size - 1)
    i1 = np.minimum(i0 + 1, in_size - 1)
    lam1 = (src - i0.astype(acc)).astype(acc)
    lam0 = acc(1) - lam1
    m = np.zeros((out_size, in_size), dtype=np.float64)
    rows = np.arange(out_size)
    np.add.at(m, (rows, i0), lam0)
    np.add.at(m, (rows, i1), lam1)
    return m


def interpolate(
    input,
    size=None,
    scale_factor=None,
    mode="nearest",
    align_corners=None,
    recompute_scale_factor=None,
    antialias=False,
):
    """Resizes ``(N, C, *spatial)`` to ``size`` or by ``scale_factor``; modes ``nearest``,
    ``nearest-exact``, ``linear`` (3-D input) and ``bilinear`` (4-D input)."""
    if not isinstance(input, Tensor):
        raise TypeError(
            f"interpolate(): argument 'input' (position 1) must be Tensor, not "
            f"{_arg_parser.tp_name(input)}"
        )
    if mode not in _DIMS:
        raise NotImplementedError(
            f"Input Error: Only 3D, 4D and 5D input Tensors supported (got {input.dim()}D) for "
            f"the modes: nearest | linear | bilinear | bicubic | trilinear | area | "
            f"nearest-exact (got {mode})"
        )
    if mode in ("nearest", "nearest-exact") and align_corners is not None:
        raise ValueError(
            "align_corners option can only be set with the interpolating modes: "
            "linear | bilinear | bicubic | trilinear"
        )
    if antialias:
        raise NotImplementedError("interpolate(antialias=True) is not supported by cudalite")
    nd = input.dim() - 2
    want = _DIMS[mode]
    if nd < 1 or nd > 3 or (want is not None and nd != want):
        raise NotImplementedError(
            f"Got {input.dim()}D input, but {mode} mode needs {(want or 1) + 2}D input"
            if want is not None and nd >= 1
            else f"Input Error: Only 3D, 4D and 5D input Tensors supported (got {input.dim()}D) "
            f"for the modes: nearest | linear | bilinear | bicubic | trilinear | area | "
            f"nearest-exact (got {mode})"
        )
    out, scales = _out_sizes(input, nd, size, scale_factor)
    if any(o <= 0 for o in out) or any(n <= 0 for n in input.shape[2:]):
        names = ["D", "H", "W"][3 - nd :]
        ins = ", ".join(f"{a}: {b}" for a, b in zip(names, input.shape[2:], strict=True))
        outs = ", ".join(f"{a}: {b}" for a, b in zip(names, out, strict=True))
        raise RuntimeError(
            f"Input and output sizes should be greater than 0, but got input ({ins}) output "
            f"({outs})"
        )
    if recompute_scale_factor:
        scales = None
    ac = bool(align_corners)
    y = input
    for i in range(nd):
        dim = 2 + i
        n_in = input.shape[dim]
        sc = scales[i] if scales is not None else None
        if want is None:
            idx = _nearest_index(n_in, out[i], sc, mode == "nearest-exact")
            y = y.index_select(dim, _creation.tensor(idx, device=input.device))
        else:
            m = _creation.tensor(
                _linear_matrix(n_in, out[i], sc, ac, _acc(input)),
                dtype=_work(input),
                device=input.device,
            )
            # contract dim `dim` of y with m's columns
            yt = y.transpose(dim, -1) if dim != y.dim() - 1 else y
            yt = yt.to(m.dtype).matmul(m.t())
            y = yt.transpose(dim, -1) if dim != y.dim() - 1 else yt
    if want is not None:
        y = y.to(input.dtype).contiguous()
    return y


def _acc(x):
    import numpy as np

    return np.float64 if x.dtype is _C.float64 else np.float32


def _work(x):
    return x.dtype if x.dtype in (_C.float32, _C.float64) else _C.float32


def upsample(input, size=None, scale_factor=None, mode="nearest", align_corners=None):
    """The deprecated name of :func:`interpolate`."""
    return interpolate(input, size, scale_factor, mode, align_corners)


def upsample_nearest(input, size=None, scale_factor=None):
    """Deprecated: ``interpolate(..., mode='nearest')``, with torch's warning."""
    warnings.warn(
        "`nn.functional.upsample_nearest` is deprecated. Use `nn.functional.interpolate` instead.",
        stacklevel=2,
    )
    return interpolate(input, size, scale_factor, mode="nearest")


def upsample_bilinear(input, size=None, scale_factor=None):
    """Deprecated: ``interpolate(..., mode='bilinear', align_corners=True)``, with torch's
    warning."""
    warnings.warn(
        "`nn.functional.upsample_bilinear` is deprecated. Use `nn.functional.interpolate` instead.",
        stacklevel=2,
    )
    return interpolate(input, size, scale_factor, mode="bilinear", align_corners=True)
