"""Tensor printing that matches PyTorch 2.11's ``torch/_tensor_str.py`` character for character.

The tensor class hands :func:`tensor_repr` its values as a NumPy array (already on the host)
plus the metadata torch prints after them (device, dtype, autograd state).  Everything here is
pure Python + NumPy so that it can be tested without the compiled extension.

The rules, in the order torch applies them:

* More than ``threshold`` elements: only ``edgeitems`` rows/columns at each end of every
  dimension are shown, with ``...`` in between, and the element format is chosen from the
  shown values only.
* Floating values: if every non-zero finite value is an integer they print as ``1.``;
  otherwise with ``precision`` decimals.  Scientific notation is used when the largest
  non-zero finite magnitude exceeds 1e8 or is more than 1000 times the smallest one, or the
  smallest is below 1e-4 (``sci_mode`` overrides the choice).
* Every element is right-aligned to the widest non-zero finite element, nan/inf included in
  the alignment only through that width; rows wrap at ``linewidth``.
"""

from __future__ import annotations

import contextlib
import dataclasses
import math
from collections.abc import Iterator
from typing import Any

import numpy as np

__all__ = ["get_printoptions", "printoptions", "set_printoptions", "tensor_repr"]


@dataclasses.dataclass
class _PrintOptions:
    precision: int = 4
    threshold: float = 1000
    edgeitems: int = 3
    linewidth: int = 80
    sci_mode: bool | None = None


PRINT_OPTS = _PrintOptions()

_PROFILES: dict[str, dict[str, Any]] = {
    "default": {"precision": 4, "threshold": 1000, "edgeitems": 3, "linewidth": 80},
    "short": {"precision": 2, "threshold": 1000, "edgeitems": 2, "linewidth": 80},
    "full": {"precision": 4, "threshold": math.inf, "edgeitems": 3, "linewidth": 80},
}


def set_printoptions(
    precision: int | None = None,
    threshold: float | None = None,
    edgeitems: int | None = None,
    linewidth: int | None = None,
    profile: str | None = None,
    sci_mode: bool | None = None,
) -> None:
    """Set options for printing tensors, with ``torch.set_printoptions``'s semantics.

    Args:
        precision: digits after the decimal point for floating values (default 4).
        threshold: element count above which a tensor is summarised (default 1000).
        edgeitems: items shown at each end of a summarised dimension (default 3).
        linewidth: characters per line before wrapping (default 80).
        profile: ``"default"``, ``"short"`` or ``"full"``; applied first, so the other
            arguments override it.  Unknown names are ignored, as in torch.
        sci_mode: ``True``/``False`` forces or forbids scientific notation; ``None`` lets the
            formatter choose.  Like torch, every call sets it (omitting it resets to ``None``).
    """
    if profile is not None and profile in _PROFILES:
        for name, value in _PROFILES[profile].items():
            setattr(PRINT_OPTS, name, value)
    if precision is not None:
        PRINT_OPTS.precision = precision
    if threshold is not None:
        PRINT_OPTS.threshold = threshold
    if edgeitems is not None:
        PRINT_OPTS.edgeitems = edgeitems
    if linewidth is not None:
        PRINT_OPTS.linewidth = linewidth
    PRINT_OPTS.sci_mode = sci_mode


def get_printoptions() -> dict[str, Any]:
    """The current print options, as keyword arguments for :func:`set_printoptions`."""
    return dataclasses.asdict(PRINT_OPTS)


@contextlib.contextmanager
def printoptions(**kwargs: Any) -> Iterator[None]:
    """Temporarily change the print options (same arguments as :func:`set_printoptions`)."""
    saved = get_printoptions()
    set_printoptions(**kwargs)
    try:
        yield
    finally:
        set_printoptions(**saved)


# --------------------------------------------------------------------------------------------
# dtypes

_FLOATING = ("float16", "bfloat16", "float32", "float64")
_NUMPY_INT = {
    "bool": np.bool_,
    "uint8": np.uint8,
    "int8": np.int8,
    "int16": np.int16,
    "int32": np.int32,
    "int64": np.int64,
    "uint16": np.uint16,
    "uint32": np.uint32,
    "uint64": np.uint64,
}
# torch's short aliases; str(torch.half) is "torch.float16", so print the canonical name.
_ALIASES = {
    "half": "float16",
    "float": "float32",
    "double": "float64",
    "short": "int16",
    "int": "int32",
    "long": "int64",
}


def _canonical_dtype(name: Any) -> str:
    text = str(name)
    for prefix in ("cudalite.", "torch."):
        if text.startswith(prefix):
            text = text[len(prefix) :]
    text = _ALIASES.get(text, text)
    if text not in _FLOATING and text not in _NUMPY_INT:
        raise ValueError(f"cannot print tensors of dtype {name!r}")
    return text


def _round_to_bfloat16(a: np.ndarray) -> np.ndarray:
    """Round float32 values to the nearest bfloat16 (ties to even), returned as float32.

    A no-op for values that already are bfloat16; it makes a sloppy caller print what torch
    would print after ``.to(torch.bfloat16)``.
    """
    bits = np.array(a, dtype=np.float32).view(np.uint32)  # a copy, 0-dim kept 0-dim
    rounded = bits + (np.uint32(0x7FFF) + ((bits >> np.uint32(16)) & np.uint32(1)))
    rounded &= np.uint32(0xFFFF0000)
    out = rounded.view(np.float32)
    return np.where(np.isnan(a), np.float32(np.nan), out)


def _host_values(values: Any, dtype: str) -> np.ndarray:
    """The values as exact float64 (floating dtypes) or Python-int-friendly integers."""
    arr = np.asarray(values)
    # Out-of-range values become inf, as in torch's own conversion; no warning for that.
    with np.errstate(over="ignore", invalid="ignore"):
        if dtype == "bfloat16":
            return _round_to_bfloat16(arr.astype(np.float32)).astype(np.float64)
        if dtype in _FLOATING:
            # Casting through the tensor's own precision is exact for values it holds.
            return arr.astype(np.dtype(dtype)).astype(np.float64)
    return arr.astype(_NUMPY_INT[dtype])


# --------------------------------------------------------------------------------------------
# element formatting


class _Formatter:
    """Chooses one text width and style for all elements, from the values that get shown."""

    def __init__(self, shown: np.ndarray, dtype: str):
        self.dtype = dtype
        self.floating = floating = dtype in _FLOATING
        self.int_mode = True
        self.sci_mode = False
        self.max_width = 1
        flat = _host_values(shown, dtype).reshape(-1)
        if not floating:
            if flat.size:
                # str() of an int (or bool) grows with its magnitude, per sign: the extremes
                # have the widest text.
                ends = (flat.min().item(), flat.max().item())
                self.max_width = max(self.max_width, *(len(str(v)) for v in ends))
            return

        vals = flat[np.isfinite(flat) & (flat != 0)]
        if vals.size == 0:
            return  # only zeros and non-finite values: defaults print "0.", "nan", "inf"
        mags = np.abs(vals)
        smallest, largest = float(mags.min()), float(mags.max())
        self.int_mode = bool(np.all(vals == np.ceil(vals)))
        if PRINT_OPTS.sci_mode is None:
            self.sci_mode = largest / smallest > 1000.0 or largest > 1.0e8 or smallest < 1.0e-4
        else:
            self.sci_mode = PRINT_OPTS.sci_mode

        # Torch formats every value to measure it.  The text width of "%.pf", "%.0f" and
        # "%.pe" is non-decreasing in |value| for a given sign (rounding is monotonic; the
        # exponent field widens only at the extremes), so measuring the smallest and largest
        # value of each sign gives the same maximum.
        extremes: list[float] = []
        for part in (vals[vals > 0], vals[vals < 0]):
            if part.size:
                extremes += [float(part.min()), float(part.max())]
        precision = PRINT_OPTS.precision
        for v in extremes:
            if self.sci_mode:
                width = len(f"{v:.{precision}e}")
            elif self.int_mode:
                width = len(f"{v:.0f}") + 1  # room for the trailing "."
            else:
                width = len(f"{v:.{precision}f}")
            self.max_width = max(self.max_width, width)

    def format(self, value: Any) -> str:
        if self.floating:
            if self.sci_mode:
                text = f"{value:{self.max_width}.{PRINT_OPTS.precision}e}"
            elif self.int_mode:
                text = f"{value:.0f}"
                if not (math.isinf(value) or math.isnan(value)):
                    text += "."
            else:
                text = f"{value:.{PRINT_OPTS.precision}f}"
        else:
            text = f"{value}"
        return text.rjust(self.max_width)

    def texts(self, a: np.ndarray) -> list[str]:
        # Converting only what is printed keeps a summarised print of a huge tensor cheap.
        return [self.format(v) for v in _host_values(a, self.dtype).reshape(-1).tolist()]


# --------------------------------------------------------------------------------------------
# layout


def _summarized(a: np.ndarray) -> np.ndarray:
    """The values a summarised print shows, in the order torch gathers them."""
    edge = PRINT_OPTS.edgeitems
    if a.ndim == 0:
        return a
    if a.ndim == 1:
        # Like torch, edgeitems == 0 keeps the whole vector (a[-0:] is all of it).
        return np.concatenate((a[:edge], a[-edge:])) if a.shape[0] > 2 * edge else a
    if not edge:
        return a[tuple(slice(0, 0) for _ in range(a.ndim))]
    if a.shape[0] > 2 * edge:
        rows = list(range(edge)) + list(range(a.shape[0] - edge, a.shape[0]))
    else:
        rows = list(range(a.shape[0]))
    return np.stack([_summarized(a[i]) for i in rows])


def _vector_str(a: np.ndarray, indent: int, summarize: bool, fmt: _Formatter) -> str:
    element_length = fmt.max_width + 2  # the element plus ", "
    per_line = max(1, math.floor((PRINT_OPTS.linewidth - indent) / element_length))
    edge = PRINT_OPTS.edgeitems
    if summarize and not edge:
        data = ["..."]
    elif summarize and a.shape[0] > 2 * edge:
        data = fmt.texts(a[:edge]) + [" ..."] + fmt.texts(a[-edge:])
    else:
        data = fmt.texts(a)
    lines = [", ".join(data[i : i + per_line]) for i in range(0, len(data), per_line)]
    return "[" + (",\n" + " " * (indent + 1)).join(lines) + "]"


def _nested_str(a: np.ndarray, indent: int, summarize: bool, fmt: _Formatter) -> str:
    if a.ndim == 0:
        return fmt.texts(a)[0]
    if a.ndim == 1:
        return _vector_str(a, indent, summarize, fmt)
    edge = PRINT_OPTS.edgeitems
    n = a.shape[0]
    if summarize and n > 2 * edge:
        slices = (
            [_nested_str(a[i], indent + 1, summarize, fmt) for i in range(edge)]
            + ["..."]
            + [_nested_str(a[i], indent + 1, summarize, fmt) for i in range(n - edge, n)]
        )
    else:
        slices = [_nested_str(a[i], indent + 1, summarize, fmt) for i in range(n)]
    # One blank line between 2-D blocks, two between 3-D blocks, ...
    separator = "," + "\n" * (a.ndim - 1) + " " * (indent + 1)
    return "[" + separator.join(slices) + "]"


def _body_str(a: np.ndarray, indent: int, dtype: str) -> str:
    if a.size == 0:
        return "[]"
    summarize = a.size > PRINT_OPTS.threshold
    fmt = _Formatter(_summarized(a) if summarize else a, dtype)
    return _nested_str(a, indent, summarize, fmt)


def _add_suffixes(text: str, suffixes: list[str], indent: int) -> str:
    parts = [text]
    # Torch's measure of the last line is two more than its length; reproduced because it
    # decides where suffixes wrap.
    last_line_len = len(text) - text.rfind("\n") + 1
    for suffix in suffixes:
        if last_line_len + len(suffix) + 2 > PRINT_OPTS.linewidth:
            parts.append(",\n" + " " * indent + suffix)
            last_line_len = indent + len(suffix)
        else:
            parts.append(", " + suffix)
            last_line_len += len(suffix) + 2
    parts.append(")")
    return "".join(parts)


def tensor_repr(
    values: Any,
    *,
    dtype_name: str,
    default_dtype_name: str = "float32",
    device: str | None = None,
    requires_grad: bool = False,
    grad_fn: str | None = None,
    is_empty_shape: bool | tuple[int, ...] | None = None,
    prefix: str = "tensor(",
) -> str:
    """``repr()`` of a tensor, exactly as PyTorch 2.11 prints it (``cudalite`` for ``torch``).

    Args:
        values: the tensor's values on the host, shaped like the tensor (a NumPy array or
            anything ``np.asarray`` takes).  bfloat16 values may come as float32 and float16
            values as float16 or float32; they are rounded to the dtype first.
        dtype_name: the tensor's dtype, e.g. ``"float32"``, ``"bfloat16"``, ``"int64"``
            (``"cudalite."``/``"torch."`` prefixes and torch's aliases are accepted).
        default_dtype_name: the current default floating dtype; tensors of that dtype, int64
            and bool omit ``dtype=`` (empty tensors show it for all but the default dtype).
        device: ``None`` (or ``"cpu"``) for a CPU tensor, else e.g. ``"cuda:0"``, printed as
            ``device='cuda:0'``.
        requires_grad: prints ``requires_grad=True`` when there is no ``grad_fn``.
        grad_fn: the autograd node's name, e.g. ``"AddmmBackward0"``.
        is_empty_shape: ``None`` infers emptiness from ``values``; a bool overrides it; a
            tuple is the shape of an empty tensor (``values`` is then ignored).
        prefix: text before the values; continuation lines are indented by its length.
    """
    dtype = _canonical_dtype(dtype_name)
    default_dtype = _canonical_dtype(default_dtype_name)
    if isinstance(is_empty_shape, (tuple, list)):
        arr = np.empty(0)  # unused: an empty tensor prints no values
        empty, shape = True, tuple(int(s) for s in is_empty_shape)
    else:
        arr = np.asarray(values)
        empty = arr.size == 0 if is_empty_shape is None else bool(is_empty_shape)
        shape = tuple(int(s) for s in arr.shape)

    indent = len(prefix)
    suffixes = []
    if device is not None and str(device) != "cpu":
        suffixes.append(f"device='{device}'")
    if empty:
        # numpy-style: the shape is spelled out unless it is (0,), and with no elements to
        # hint at the dtype it is shown for everything but the default dtype.
        if len(shape) != 1:
            suffixes.append(f"size={shape}")
        if dtype != default_dtype:
            suffixes.append(f"dtype=cudalite.{dtype}")
        body = "[]"
    else:
        if not PRINT_OPTS.edgeitems:
            suffixes.append(f"size={shape}")
        if dtype not in (default_dtype, "int64", "bool"):
            suffixes.append(f"dtype=cudalite.{dtype}")
        body = _body_str(arr, indent, dtype)
    if grad_fn is not None:
        suffixes.append(f"grad_fn=<{grad_fn}>")
    elif requires_grad:
        suffixes.append("requires_grad=True")
    return _add_suffixes(prefix + body, suffixes, indent)
