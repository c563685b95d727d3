"""``make_tensor``, as ``torch.testing``'s.

Values are drawn with cudalite's own generator (``randint`` and ``Tensor.uniform_``), so a
seed gives different numbers than in torch; the ranges, argument checks and messages are
torch's.
"""

from __future__ import annotations

import collections.abc
import math
import warnings

import cudalite

__all__ = ["make_tensor"]

# (lowest, highest + 1) of the integer dtypes; int64 stops one short, as torch's: randint's
# bounds are int64, so its exclusive high cannot be 2**63.
_INTEGER_RANGES = {
    cudalite.bool: (0, 2),
    cudalite.uint8: (0, 256),
    cudalite.int8: (-128, 128),
    cudalite.int16: (-(2**15), 2**15),
    cudalite.int32: (-(2**31), 2**31),
    cudalite.int64: (-(2**63), 2**63 - 1),
}
# (finfo.max, finfo.tiny) of the floating dtypes.
_FLOAT_LIMITS = {
    cudalite.float16: (65504.0, 6.103515625e-05),
    cudalite.bfloat16: (3.3895313892515355e38, 1.1754943508222875e-38),
    cudalite.float32: (3.4028234663852886e38, 1.1754943508222875e-38),
    cudalite.float64: (1.7976931348623157e308, 2.2250738585072014e-308),
}


def _is_integral(dtype):
    return isinstance(dtype, cudalite.dtype) and dtype in _INTEGER_RANGES


def _is_floating(dtype):
    return isinstance(dtype, cudalite.dtype) and dtype in _FLOAT_LIMITS


def _low_high(low, high, dtype, lowest, highest, default_low, default_high):
    """torch's checks of ``low`` / ``high``; clamped into the dtype's range, ceiled for integers."""
    low = default_low if low is None else low
    high = default_high if high is None else high
    if any(isinstance(value, float) and math.isnan(value) for value in (low, high)):
        raise ValueError(f"`low` and `high` cannot be NaN, but got {low=} and {high=}")
    elif low == high and _is_floating(dtype):
        warnings.warn(
            "Passing `low==high` to `cudalite.testing.make_tensor` for floating or complex types "
            "is deprecated since 2.1 and will be removed in 2.3. "
            "Use `cudalite.full(...)` instead.",
            FutureWarning,
            stacklevel=3,
        )
    elif low >= high:
        raise ValueError(f"`low` must be less than `high`, but got {low} >= {high}")
    elif high < lowest or low >= highest:
        raise ValueError(
            f"The value interval specified by `low` and `high` is [{low}, {high}), "
            f"but {dtype} only supports [{lowest}, {highest})"
        )
    low, high = min(max(low, lowest), highest), min(max(high, lowest), highest)
    if _is_integral(dtype):
        # low is ceiled to stay inside the interval; randint's high is exclusive, so ceiled too.
        return math.ceil(low), math.ceil(high)
    return low, high


def make_tensor(
    *shape,
    dtype,
    device,
    low=None,
    high=None,
    requires_grad=False,
    noncontiguous=False,
    exclude_zero=False,
    memory_format=None,
):
    """A tensor of ``shape`` with values drawn uniformly from ``[low, high)``.

    The default range is [-9, 9) for floating dtypes, [-9, 10) for signed integers, [0, 10)
    for uint8 and [0, 2) for bool; ``low`` / ``high`` outside the dtype's finite range are
    clamped to it. ``shape`` is given as ints or as one sequence.

    Args:
        dtype, device: of the result (both required, keyword-only).
        low, high: bounds of the range (``high`` exclusive).
        requires_grad: for floating dtypes only.
        noncontiguous: a strided view (every other element of the last dim) when the tensor
            has more than one element. Mutually exclusive with ``memory_format``.
        exclude_zero: zeros become 1 (integers, bool) or the dtype's smallest normal number.
        memory_format: the memory format of the result.

    The numbers differ from torch's for the same seed (cudalite has its own Philox streams).
    """
    if len(shape) == 1 and isinstance(shape[0], collections.abc.Sequence):
        shape = shape[0]
    shape = tuple(shape)
    if noncontiguous and memory_format is not None:
        raise ValueError(
            "The parameters `noncontiguous` and `memory_format` are mutually exclusive, "
            f"but got {noncontiguous=} and {memory_format=}"
        )
    if requires_grad and _is_integral(dtype):
        raise ValueError(
            "`requires_grad=True` is not supported for boolean and integral dtypes, "
            f"but got {dtype=}"
        )
    noncontiguous = noncontiguous and math.prod(shape) > 1
    if noncontiguous:
        # Twice as long in the last dim, so that the strided view holds distinct values.
        shape = (*shape[:-1], 2 * shape[-1])

    if _is_integral(dtype):
        lowest, highest = _INTEGER_RANGES[dtype]
        default = (0, 2) if dtype == cudalite.bool else (-9, 10)
        low, high = _low_high(low, high, dtype, lowest, highest, *default)
        result = cudalite.randint(low, high, shape, device=device, dtype=dtype)
    elif _is_floating(dtype):
        finfo_max = _FLOAT_LIMITS[dtype][0]
        low, high = _low_high(low, high, dtype, -finfo_max, finfo_max, -9, 9)
        result = cudalite.empty(shape, device=device, dtype=dtype)
        if high - low >= finfo_max:  # uniform_ needs high - low to be finite in the dtype
            result.uniform_(low / 2, high / 2).mul_(2)
        else:
            result.uniform_(low, high)
    else:
        raise TypeError(
            f"The requested dtype '{dtype}' is not supported by cudalite.testing.make_tensor()."
            " To request support, file an issue at: https://github.com/pytorch/pytorch/issues"
        )

    if noncontiguous:
        result = result[..., 1::2]  # offset by one, to also catch offset bugs
    elif memory_format is not None:
        result = result.clone(memory_format=memory_format)
    if exclude_zero:
        result[result == 0] = 1 if _is_integral(dtype) else _FLOAT_LIMITS[dtype][1]
    if _is_floating(dtype):
        result.requires_grad = requires_grad
    return result
