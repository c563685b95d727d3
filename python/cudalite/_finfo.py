"""``finfo`` and ``iinfo``: the numerical properties of floating and integer dtypes, as
torch's (same attributes, same printed form, same errors)."""

import math

from cudalite import _C

__all__ = ["finfo", "iinfo"]

# (bits, eps, max, smallest normal) of each floating dtype; min is -max.
_FLOATS = {
    "float16": (16, 2.0**-10, 65504.0, 2.0**-14),
    "bfloat16": (16, 2.0**-7, (2 - 2.0**-7) * 2.0**127, 2.0**-126),
    "float32": (32, 2.0**-23, (2 - 2.0**-23) * 2.0**127, 2.0**-126),
    "float64": (64, 2.0**-52, (2 - 2.0**-52) * 2.0**1023, 2.0**-1022),
}
_INTS = {
    "uint8": (8, False),
    "int8": (8, True),
    "int16": (16, True),
    "int32": (32, True),
    "int64": (64, True),
}


def _dtype_arg(cls, args, kwargs):
    """The dtype of ``finfo(type)`` / ``iinfo(type)``, checked as torch's argument parser does."""
    name = cls.__name__
    if kwargs.keys() - {"type"}:
        raise TypeError(f'{name}() missing 1 required positional arguments: "type"')
    if len(args) + len(kwargs) > 1:
        if cls is finfo:
            got = ", ".join(_type_name(a) for a in (*args, *kwargs.values()))
            raise TypeError(
                f"finfo() received an invalid combination of arguments - got ({got}), but "
                "expected one of:\n * (cudalite.dtype type)\n * ()\n"
            )
        raise TypeError(f"iinfo() takes 1 positional argument but {len(args)} were given")
    if not args and not kwargs:
        if cls is iinfo:
            raise TypeError('iinfo() missing 1 required positional arguments: "type"')
        return _C.get_default_dtype()
    t = args[0] if args else kwargs["type"]
    if not isinstance(t, _C.dtype):
        raise TypeError(
            f"{name}(): argument 'type' (position 1) must be cudalite.dtype, not {_type_name(t)}"
        )
    return t


def _type_name(v):
    return "cudalite.dtype" if isinstance(v, _C.dtype) else type(v).__name__


class finfo:  # noqa: N801  (torch's name)
    """Machine limits of a floating dtype (the default dtype when none is given).

    Attributes: ``bits``, ``eps`` (the gap between 1 and the next number), ``max``, ``min``,
    ``tiny`` / ``smallest_normal`` (the smallest positive normal number), ``resolution``
    (about the decimal precision, 10 ** -digits) and ``dtype`` (its name, a str).

        >>> cudalite.finfo(cudalite.float16).max
        65504.0
    """

    __slots__ = ("bits", "eps", "max", "min", "tiny", "smallest_normal", "resolution", "dtype")

    def __init__(self, *args, **kwargs):
        dt = _dtype_arg(finfo, args, kwargs)
        name = str(dt).rsplit(".", 1)[-1]
        if name not in _FLOATS:
            raise TypeError(
                "cudalite.finfo() requires a floating point input type. Use cudalite.iinfo to "
                "handle 'cudalite.finfo'"
            )
        self.bits, self.eps, self.max, self.tiny = _FLOATS[name]
        self.min = -self.max
        self.smallest_normal = self.tiny
        self.resolution = float(f"1e-{math.floor(-math.log10(self.eps))}")
        self.dtype = name

    def __eq__(self, other):
        return isinstance(other, finfo) and self.dtype == other.dtype

    __hash__ = None  # torch's finfo is unhashable too

    def __repr__(self):
        return (
            f"finfo(resolution={self.resolution:g}, min={self.min:g}, max={self.max:g}, "
            f"eps={self.eps:g}, smallest_normal={self.smallest_normal:g}, tiny={self.tiny:g}, "
            f"dtype={self.dtype})"
        )

    __str__ = __repr__


finfo.__module__ = "cudalite"


class iinfo:  # noqa: N801  (torch's name)
    """Limits of an integer dtype: ``bits``, ``min``, ``max`` and ``dtype`` (its name, a str).

    >>> cudalite.iinfo(cudalite.uint8).max
    255
    """

    __slots__ = ("bits", "min", "max", "dtype")

    def __init__(self, *args, **kwargs):
        dt = _dtype_arg(iinfo, args, kwargs)
        name = str(dt).rsplit(".", 1)[-1]
        if name == "bool":
            raise TypeError("cudalite.bool is not supported by cudalite.iinfo")
        if name not in _INTS:
            raise TypeError(
                "cudalite.iinfo() requires an integer input type. Use cudalite.finfo to handle "
                "'cudalite.iinfo'"
            )
        self.bits, signed = _INTS[name]
        self.min = -(1 << (self.bits - 1)) if signed else 0
        self.max = (1 << (self.bits - 1)) - 1 if signed else (1 << self.bits) - 1
        self.dtype = name

    def __eq__(self, other):
        return isinstance(other, iinfo) and self.dtype == other.dtype

    __hash__ = None

    def __repr__(self):
        return f"iinfo(min={self.min:g}, max={self.max:g}, dtype={self.dtype})"

    __str__ = __repr__


iinfo.__module__ = "cudalite"
