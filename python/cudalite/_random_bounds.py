"""torch's bounds checks for random integers: ``random_(from, to)``, ``random_(from, None)``,
``random_()``, ``randint`` and ``randint_like``, for every dtype.

Floating dtypes follow torch's DistributionTemplates: the bounds are first moved to values
the dtype can represent (``update_from`` / ``update_to``), then checked against the dtype's
finite range, with a UserWarning when they pass 2^digits (where integers stop being exact).
Every function returns the inclusive range ``(lo, hi_inc)`` to draw from."""

from __future__ import annotations

import os
import sys
import warnings

_INT64_MIN, _INT64_MAX = -(2**63), 2**63 - 1

_INT_BOUNDS = {
    "uint8": (0, 255, "unsigned char"),
    "int8": (-128, 127, "signed char"),
    "int16": (-(2**15), 2**15 - 1, "short int"),
    "int32": (-(2**31), 2**31 - 1, "int"),
    "int64": (_INT64_MIN, _INT64_MAX, "long int"),
    "bool": (0, 1, "bool"),
}

# Floating dtypes: mantissa digits, the largest finite value and the C++ name.
_FLOAT = {
    "float16": (11, 65504.0, "c10::Half"),
    "bfloat16": (8, 3.3895313892515355e38, "c10::BFloat16"),
    "float32": (24, 3.4028234663852886e38, "float"),
    "float64": (53, 1.7976931348623157e308, "double"),
}


def _wrap(x):
    """x as a C++ int64_t (two's complement wrap-around)."""
    return (x + 2**63) % 2**64 - 2**63


def _round_bits(x, bits):
    """The integer x rounded to `bits` significant bits, to nearest, ties to even."""
    n = abs(x).bit_length()
    if n <= bits:
        return x
    shift = n - bits
    q, r = divmod(abs(x), 1 << shift)
    half = 1 << (shift - 1)
    if r > half or (r == half and q & 1):
        q += 1
    return (q << shift) if x > 0 else -(q << shift)


def _through_dtype(x, name):
    """static_cast<int64_t>(static_cast<scalar_t>(x)) on x86-64: the int64 rounded to the
    dtype (half types through float, as c10 converts), and INT64_MIN for what int64 cannot
    hold (infinity included)."""
    digits, limit, _ = _FLOAT[name]
    v = _round_bits(x, 53 if name == "float64" else 24)
    if name in ("float16", "bfloat16"):
        v = _round_bits(v, digits)
        if abs(v) > limit:
            return _INT64_MIN  # infinity
    return v if _INT64_MIN <= v <= _INT64_MAX else _INT64_MIN


def _shift(x, digits):
    n = max(abs(x).bit_length() - 1, 0)
    return 1 << max(n - digits + 1, 0)


def _update_from(x, name):
    """torch's update_from: the first value at or above `from` that the dtype holds."""
    plus_1 = _through_dtype(_wrap(x + 1), name)
    if plus_1 < x:
        x = _wrap(plus_1 + _shift(_wrap(x + 1), _FLOAT[name][0]))
    return x


def _update_to(x, name):
    """torch's update_to: the first value below `to` that the dtype holds, plus one."""
    minus_1 = _through_dtype(_wrap(x - 1), name)
    if minus_1 >= x:
        x = _wrap(minus_1 - _shift(_wrap(x - 1), _FLOAT[name][0]))
    return x


_PACKAGE = os.path.dirname(os.path.abspath(__file__))


def _user_stacklevel():
    """The stacklevel, for the caller of this function, of the first frame outside cudalite
    (the wrappers between the user and here vary)."""
    frame, level = sys._getframe(1), 1
    while frame is not None and frame.f_code.co_filename.startswith(_PACKAGE):
        frame, level = frame.f_back, level + 1
    return level


def _check_in_range(name, lo, hi_inc):
    """torch's check_from_to_in_range for a floating dtype."""
    digits, limit, cpp = _FLOAT[name]
    if not -limit <= lo <= limit:
        raise RuntimeError(f"from is out of bounds for {cpp}")
    if not -limit <= hi_inc <= limit:
        raise RuntimeError(f"to - 1 is out of bounds for {cpp}")
    for value, what in ((lo, "from"), (hi_inc, "to - 1")):
        if value < -(1 << digits) or value > (1 << digits):
            warnings.warn(
                f"{what} is out of bounds [-(2^{digits}), 2^{digits}]. Due to precision "
                f"limitations {cpp} can support discrete uniform distribution only within "
                "this range. This warning will become an error in version 1.7 release, please "
                "fix the code in advance",
                UserWarning,
                stacklevel=_user_stacklevel(),
            )


def check_random_bounds(dtype, low, high):
    """random_(from, to) and randint(low, high): [low, high) checked as torch does; returns
    the inclusive range to draw from (moved inside the dtype's values for floating dtypes)."""
    if low >= high:
        raise RuntimeError(
            f"random_ expects 'from' to be less than 'to', but got from={low} >= to={high}"
        )
    name = dtype._name
    if name in _FLOAT:
        low, high = _update_from(low, name), _update_to(high, name)
        if low >= high:
            raise RuntimeError(
                "random_ expects 'from' casted to dtype to be less than 'to' casted to dtype, "
                f"but got from={low} >= to={high}"
            )
        _check_in_range(name, low, high - 1)
    else:
        lo, hi, cpp = _INT_BOUNDS[name]
        if not lo <= low <= hi:
            raise RuntimeError(f"from is out of bounds for {cpp}")
        if not lo <= high - 1 <= hi:
            raise RuntimeError(f"to - 1 is out of bounds for {cpp}")
    return low, high - 1


def random_max(dtype):
    """The largest value torch's random_() draws without bounds (inclusive): 2^digits for
    floating dtypes (every integer up to it is exact), the dtype's maximum for integers."""
    if dtype._name in _FLOAT:
        return 2 ** _FLOAT[dtype._name][0]
    return _INT_BOUNDS[dtype._name][1]


def random_from_bounds(dtype, low, device_type="cpu"):
    """random_(from, None): [from, random_max] inclusive, with torch's checks; from =
    INT64_MIN draws from the whole int64 range (int64, float64, float32 and bfloat16)."""
    name = dtype._name
    if low == _INT64_MIN:
        kernel = f"random_full_64_bits_range_kernel_{device_type}"
        if name == "bool" or (name == "float16" and device_type == "cpu"):
            raise NotImplementedError(f"\"{kernel}\" not implemented for '{dtype._short_name}'")
        if name not in ("int64", "float64", "float32", "bfloat16"):
            raise RuntimeError(f"{kernel} handles only int64, double, float and bfloat16")
        return _INT64_MIN, _INT64_MAX
    high = random_max(dtype)
    if name in _FLOAT:
        low = _update_from(low, name)
        if low >= high:
            raise RuntimeError(
                "random_ expects 'from' casted to dtype to be less than or equal to 'to_inc' "
                f"casted to dtype, but got from={low} > to_inc={high}"
            )
        _check_in_range(name, low, high)
    elif not _INT_BOUNDS[name][0] <= low <= high:
        raise RuntimeError(f"from is out of bounds for {_INT_BOUNDS[name][2]}")
    return low, high
