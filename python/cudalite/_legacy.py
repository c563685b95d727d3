"""Legacy constructors and type names: ``Tensor(2, 3)``, ``FloatTensor([1, 2])``,
``x.type()`` == 'cudalite.FloatTensor'."""

from __future__ import annotations

from cudalite import _C
from cudalite._C import Tensor
from cudalite._lazy import is_ndarray, numpy
from cudalite._size import Size

_TYPE_NAMES = {
    "float32": "FloatTensor",
    "float64": "DoubleTensor",
    "float16": "HalfTensor",
    "bfloat16": "BFloat16Tensor",
    "uint8": "ByteTensor",
    "int8": "CharTensor",
    "int16": "ShortTensor",
    "int32": "IntTensor",
    "int64": "LongTensor",
    "bool": "BoolTensor",
}
_BY_TYPE_NAME = {v: k for k, v in _TYPE_NAMES.items()}


def type_name(t):
    prefix = "cudalite.cuda." if t.is_cuda else "cudalite."
    return prefix + _TYPE_NAMES[t.dtype._name]


def convert_to_type_name(t, name):
    cuda = ".cuda." in name
    short = name.rsplit(".", 1)[-1]
    if short not in _BY_TYPE_NAME:
        raise ValueError(f"invalid type: '{name}'")
    dev = "cuda" if cuda else "cpu"
    return _C._to(t, dev, getattr(_C, _BY_TYPE_NAME[short]), False, False)


_CPP_NAMES = {
    "float32": "float",
    "float64": "double",
    "float16": "c10::Half",
    "bfloat16": "c10::BFloat16",
    "uint8": "unsigned char",
    "int8": "signed char",
    "int16": "short int",
    "int32": "int",
    "int64": "long int",
    "bool": "bool",
}


def _options(dtype, device):
    """torch's printed TensorOptions, as its legacy constructors show them in errors."""
    return (
        f"TensorOptions(dtype={_CPP_NAMES[dtype._name]}, device={device}, layout=Strided, "
        "requires_grad=false (default), pinned_memory=false (default), "
        "memory_format=(nullopt))"
    )


def _new_with(dtype, device, args, kwargs, name, check_dtype=True):
    dev = kwargs.pop("device", None)
    if kwargs:
        raise TypeError(f"{name}() got an unexpected keyword argument '{next(iter(kwargs))}'")
    if dev is not None:
        d = _C.device(dev) if not isinstance(dev, _C.device) else dev
        if d.type != device:
            raise RuntimeError(
                f"legacy constructor expects device type: {device} but device type: {d.type} "
                "was passed"
            )
    if not args:
        return _C._empty([0], dtype, device, False)
    if len(args) == 1 and isinstance(args[0], Tensor):
        src = args[0]
        # cudalite.Tensor(t) returns an alias of any tensor; typed constructors check.
        if check_dtype and (src.dtype != dtype or src.device.type != device):
            raise TypeError(
                f"expected {_options(dtype, device)} (got {_options(src.dtype, src.device.type)})"
            )
        return src._alias()
    if len(args) == 1 and isinstance(args[0], Size):
        return _C._empty(list(args[0]), dtype, device, False)
    if all(isinstance(a, int) and not isinstance(a, bool) for a in args):
        return _C._empty(list(args), dtype, device, False)
    if len(args) == 1:
        data = args[0]
        if isinstance(data, (bool, int, float)):
            raise TypeError(f"new(): data must be a sequence (got {type(data).__name__})")
        if is_ndarray(data):
            return _C._to(
                _C._from_numpy_owned(numpy().array(data, copy=True)), device, dtype, False, False
            )
        return _C._tensor_from_data(data, dtype, device)
    if isinstance(args[0], int) and not isinstance(args[0], bool):
        pos = next(i for i, a in enumerate(args) if not isinstance(a, int) or isinstance(a, bool))
        raise TypeError(
            f"new(): argument 'size' failed to unpack the object at pos {pos + 1} with error "
            f'"type must be tuple of ints,but got {type(args[pos]).__name__}"'
        )
    raise TypeError(
        "new() received an invalid combination of arguments - got ("
        f"{', '.join(type(a).__name__ for a in args)}), but expected one of:"
    )


def legacy_new(*args, **kwargs):
    """``cudalite.Tensor(...)``: default dtype on the CPU."""
    return _new_with(_C.get_default_dtype(), "cpu", args, dict(kwargs), "Tensor", check_dtype=False)


class _LegacyMeta(type):
    def __instancecheck__(cls, obj):
        return (
            isinstance(obj, Tensor)
            and obj.dtype._name == cls._dtype_name
            and obj.is_cuda == cls._is_cuda
        )

    def __call__(cls, *args, **kwargs):
        return _new_with(
            getattr(_C, cls._dtype_name),
            "cuda" if cls._is_cuda else "cpu",
            args,
            dict(kwargs),
            cls.__name__,
        )

    def __repr__(cls):
        return f"<class '{'cudalite.cuda.' if cls._is_cuda else 'cudalite.'}{cls.__name__}'>"


def make_legacy_types(is_cuda):
    out = {}
    for dt, name in _TYPE_NAMES.items():
        out[name] = _LegacyMeta(name, (), {"_dtype_name": dt, "_is_cuda": is_cuda})
    return out
