"""``nn.functional.pad``: constant padding as concatenation with filled blocks (negative
padding narrows), and reflect / replicate / circular padding as an index_select of computed
source positions per padded dimension; all differentiable through their parts."""

from __future__ import annotations

from cudalite import _C, _arg_parser
from cudalite._C import Tensor

__all__ = ["pad"]

_MODES = ("constant", "reflect", "replicate", "circular")


def _pad_list(pad):
    if not isinstance(pad, (tuple, list)):
        raise TypeError(
            f"pad(): argument 'pad' (position 2) must be tuple of ints, not "
            f"{_arg_parser.tp_name(pad)}"
        )
    out = []
    for i, p in enumerate(pad):
        if isinstance(p, bool) or not (isinstance(p, int) or hasattr(p, "__index__")):
            raise TypeError(
                "pad(): argument 'pad' (position 2) must be tuple of ints, but found element "
                f"of type {_arg_parser.tp_name(p)} at pos {i}"
            )
        out.append(int(p.__index__()))
    return out


def _constant(x, pads, value):
    for k in range(len(pads) // 2):
        dim = x.dim() - 1 - k
        lo, hi = pads[2 * k], pads[2 * k + 1]
        if lo < 0 or hi < 0:
            n = x.size(dim)
            start = -lo if lo < 0 else 0
            length = n - start + min(hi, 0)
            if length < 0:  # checked here too: the recorded narrow does not check it
                raise RuntimeError("narrow(): length must be non-negative.")
            x = x.narrow(dim, start, length)
        parts = []
        for width in (lo, hi):
            if width > 0:
                shape = list(x.shape)
                shape[dim] = width
                parts.append(x.new_full(shape, value))
            else:
                parts.append(None)
        if parts[0] is not None or parts[1] is not None:
            blocks = [b for b in (parts[0], x, parts[1]) if b is not None]
            x = _cat(blocks, dim)
    return x


def _cat(blocks, dim):
    from cudalite import cat

    return cat(blocks, dim)


def _source(mode, n, lo, hi):
    """Source positions along one dimension of size ``n`` for padding ``(lo, hi)``."""
    idx = []
    for o in range(n + lo + hi):
        j = o - lo
        if mode == "reflect":
            j = -j if j < 0 else (2 * (n - 1) - j if j >= n else j)
        elif mode == "replicate":
            j = min(max(j, 0), n - 1)
        else:
            j %= n
        idx.append(j)
    return idx


def _check_nonconstant(x, pads, mode):
    k = len(pads) // 2
    d = x.dim()
    if not (1 <= k <= 3) or d not in (k + 1, k + 2):
        raise NotImplementedError(
            f"Padding size {len(pads)} is not supported for {d}D input tensor.\n"
            "Supported combinations for non-constant padding:\n"
            "  - 2D or 3D input: padding size = 2 (pads last dimension)\n"
            "  - 3D or 4D input: padding size = 4 (pads last 2 dimensions)\n"
            "  - 4D or 5D input: padding size = 6 (pads last 3 dimensions)"
        )
    out_shape = list(x.shape)
    for i in range(k):
        out_shape[d - 1 - i] += pads[2 * i] + pads[2 * i + 1]
    if mode == "circular":
        for i in range(k):
            n = x.size(d - 1 - i)
            if pads[2 * i] > n or pads[2 * i + 1] > n:
                raise RuntimeError("Padding value causes wrapping around more than once.")
            if out_shape[d - 1 - i] < 0:
                raise RuntimeError("Negative padding value is resulting in an empty dimension")
        return
    shape = list(x.shape)
    first = 1 if d == k + 2 else 0
    if 0 in shape[first:]:
        raise RuntimeError(
            f"Expected {k + 1}D or {k + 2}D (batch mode) tensor with possibly 0 batch size and "
            f"other non-zero dimensions for input, but got: {shape}"
        )
    if k == 1 and out_shape[-1] < 1:
        raise RuntimeError(
            f"input (W: {shape[-1]}) is too small. Calculated output W: {out_shape[-1]}"
        )
    for n in out_shape:
        if n < 0:
            raise RuntimeError(f"Trying to create tensor with negative dimension {n}: {out_shape}")
    if mode == "reflect":
        for i in range(k):
            dim = d - 1 - i
            lo, hi = pads[2 * i], pads[2 * i + 1]
            if lo >= shape[dim] or hi >= shape[dim]:
                raise RuntimeError(
                    f"Argument #{4 + 2 * i}: Padding size should be less than the "
                    "corresponding input dimension, but got: padding "
                    f"({lo}, {hi}) at dimension {dim} of input {shape}"
                )


def pad(input, pad, mode="constant", value=None):
    """Pads the last ``len(pad) // 2`` dimensions: ``pad`` is ``(last_lo, last_hi,
    second_last_lo, ...)``; negative entries remove elements. ``mode`` is 'constant' (with
    ``value``, default 0), 'reflect', 'replicate' or 'circular'."""
    if not isinstance(input, Tensor):
        raise TypeError(
            f"pad(): argument 'input' (position 1) must be Tensor, not {_arg_parser.tp_name(input)}"
        )
    pads = _pad_list(pad)
    if mode not in _MODES:
        raise NotImplementedError(f"Unrecognised padding mode {mode}")
    if mode != "constant" and value is not None and value != 0:
        raise RuntimeError(f'Padding mode "{mode}" doesn\'t take in value argument')
    if len(pads) % 2:
        raise RuntimeError("Padding length must be divisible by 2")
    if len(pads) > 2 * input.dim():
        raise RuntimeError(
            "Padding length should be less than or equal to two times the input dimension but "
            f"got padding length {len(pads)} and input of dimension {input.dim()}"
        )
    if mode == "constant":
        return _constant(input, pads, 0 if value is None else value)
    _check_nonconstant(input, pads, mode)
    x = input
    k = len(pads) // 2
    if (mode == "reflect" and k < 3) or (mode == "replicate" and k < 4):
        # torch's reflection_pad1d/2d and replication_pad1d/2d/3d are in the CPU's
        # autocast float32 list
        from cudalite.amp import autocast_mode

        x = autocast_mode.fp32_if_listed("cpu", x)
    for i in range(len(pads) // 2):
        dim = x.dim() - 1 - i
        src = _source(mode, x.size(dim), pads[2 * i], pads[2 * i + 1])
        from cudalite import tensor

        x = x.index_select(dim, tensor(src, dtype=_C.int64, device=x.device))
    return x
