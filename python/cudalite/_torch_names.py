"""The names torch's checkpoint files give cudalite's objects.

A file from ``torch.save`` names the functions and classes its pickle calls by their torch
paths: ``torch._utils._rebuild_tensor_v2``, ``torch.FloatStorage``, ``torch.float32``,
``torch.Size``, ``torch.nn.parameter.Parameter``... ``cudalite.save`` writes those same names
for cudalite's objects, and ``cudalite.load`` maps them back to cudalite's through the table
here; torch itself is never imported.
"""

from __future__ import annotations

import functools

from cudalite import _C, _utils
from cudalite._size import Size

# dtype -> torch's legacy storage class name (the storage type of a pickled tensor)
_STORAGE_NAMES = {
    "float64": "DoubleStorage",
    "float32": "FloatStorage",
    "float16": "HalfStorage",
    "bfloat16": "BFloat16Storage",
    "int64": "LongStorage",
    "int32": "IntStorage",
    "int16": "ShortStorage",
    "int8": "CharStorage",
    "uint8": "ByteStorage",
    "bool": "BoolStorage",
}

DTYPE_NAMES = tuple(_STORAGE_NAMES)

# torch dtypes and storages cudalite has no dtype for: loading them raises a clear error.
_UNSUPPORTED_DTYPES = (
    "complex32 complex64 complex128 cfloat cdouble uint16 uint32 uint64 float8_e5m2 "
    "float8_e4m3fn float8_e5m2fnuz float8_e4m3fnuz float8_e8m0fnu float4_e2m1fn_x2 qint8 "
    "qint32 quint8 quint4x2 quint2x4 bits8 bits16 bits1x8 bits2x4 bits4x2"
).split()
_UNSUPPORTED_STORAGES = (
    "ComplexFloatStorage ComplexDoubleStorage QInt8Storage QInt32Storage QUInt8Storage "
    "QUInt4x2Storage QUInt2x4Storage"
).split()


class StorageType:
    """A storage class named in a file (``torch.FloatStorage``): the dtype of its data."""

    def __init__(self, name, dtype):
        self.name = name
        self.dtype = dtype

    def __repr__(self):
        return f"StorageType(dtype={self.dtype})"


STORAGE_TYPES = {dt: StorageType(name, getattr(_C, dt)) for dt, name in _STORAGE_NAMES.items()}
# torch.UntypedStorage: bytes (torch saves one when a storage itself, not a tensor, is saved)
UNTYPED = StorageType("UntypedStorage", _C.uint8)


def storage_type(dtype):
    """The StorageType of a storage of ``dtype``."""
    return STORAGE_TYPES[dtype._name]


def storage_type_named(name):
    """The StorageType for a storage class name, or None when cudalite has none by that name."""
    if name == "UntypedStorage":
        return UNTYPED
    for st in STORAGE_TYPES.values():
        if st.name == name:
            return st
    return None


def unsupported(full_name):
    """The error for a torch dtype or storage that cudalite does not have."""
    return RuntimeError(
        f"cudalite.load: the file holds data of type {full_name}, which cudalite does not "
        f"support (cudalite's dtypes: {', '.join(DTYPE_NAMES)})"
    )


@functools.cache
def torch_globals():
    """torch's full name -> the cudalite object it stands for."""
    from cudalite.nn.parameter import Parameter

    table = {
        "torch._utils._rebuild_tensor": _utils._rebuild_tensor,
        "torch._utils._rebuild_tensor_v2": _utils._rebuild_tensor_v2,
        "torch._utils._rebuild_tensor_v3": _utils._rebuild_tensor_v3,
        "torch._utils._rebuild_parameter": _utils._rebuild_parameter,
        "torch._utils._rebuild_parameter_with_state": _utils._rebuild_parameter_with_state,
        "torch._tensor._rebuild_from_type_v2": _utils._rebuild_from_type_v2,
        "torch.nn.parameter.Parameter": Parameter,
        "torch.Tensor": _C.Tensor,
        "torch.Size": Size,
        "torch.device": _C.device,
    }
    for dt in DTYPE_NAMES:
        table[f"torch.{dt}"] = getattr(_C, dt)
    for st in (*STORAGE_TYPES.values(), UNTYPED):
        table[f"torch.{st.name}"] = st
        table[f"torch.cuda.{st.name}"] = st
    return table


@functools.cache
def _by_object():
    out = {}
    for name, obj in torch_globals().items():
        if not name.startswith("torch.cuda."):
            out.setdefault(id(obj), tuple(name.rsplit(".", 1)))
    return out


def torch_name(obj):
    """``(module, name)`` of ``obj`` in torch (``("torch._utils", "_rebuild_tensor_v2")``),
    or None when ``obj`` is not one of the objects torch's files name."""
    return _by_object().get(id(obj))


def lookup(module, name):
    """The cudalite object for the torch global ``module.name``; None if cudalite has none.

    Storage classes are matched by name in any module (old files say ``torch.cuda``), as
    torch's loader does; torch's dtypes and storages that cudalite lacks raise
    ``unsupported``.
    """
    full = f"{module}.{name}"
    obj = torch_globals().get(full)
    if obj is not None:
        return obj
    if isinstance(name, str) and "Storage" in name:
        st = storage_type_named(name)
        if st is not None:
            return st
    if module in ("torch", "torch.cuda") and name in (*_UNSUPPORTED_DTYPES, *_UNSUPPORTED_STORAGES):
        raise unsupported(full)
    return None
