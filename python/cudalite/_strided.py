"""Memory for given strides: torch's storage-size rule (``computeStorageNbytes``), the checks
``as_strided`` makes before it views a storage, and ``empty_strided`` /
``Tensor.new_empty_strided``, which allocate the smallest storage that the strides fit in."""

from __future__ import annotations

from cudalite import _C, _arg_parser
from cudalite._creation import _finish
from cudalite._tensor import method

__all__ = ["empty_strided", "as_strided"]

# The C++ method. It keeps every view inside its storage (check_as_strided in
# csrc/core/tensor.cpp, for every caller, loaded files included); Tensor.as_strided, below,
# adds torch's argument parsing and its order of errors in the corner cases (negative
# offsets, sizes and 0-dim views, where torch's unsigned arithmetic decides the message).
raw_as_strided = _C.Tensor.as_strided

_U64 = 1 << 64
_STORAGE_MAX = (1 << 63) - 1


def storage_nbytes(sizes, strides, itemsize, offset=0):
    """The bytes a storage needs for these sizes and strides (0 when a size is 0), computed
    as torch computes them, in unsigned 64-bit arithmetic: a negative stride over more than
    one element "overflows"."""
    if len(sizes) != len(strides):
        raise RuntimeError(
            f"dimensionality of sizes ({len(sizes)}) must match dimensionality of strides "
            f"({len(strides)})"
        )
    n, overflow = (offset + 1) % _U64, False
    for size, stride in zip(sizes, strides, strict=True):
        if size == 0:
            return 0
        span = (stride % _U64) * ((size - 1) % _U64)
        overflow |= span >= _U64
        n += span % _U64
        overflow |= n >= _U64
        n %= _U64
    n *= itemsize
    if overflow or n > _STORAGE_MAX:
        raise RuntimeError(
            f"Storage size calculation overflowed with sizes={list(sizes)} and "
            f"strides={list(strides)}"
        )
    return n


def _out_of_bounds(t, sizes, strides, offset, need):
    return RuntimeError(
        f"setStorage: sizes {list(sizes)}, strides {list(strides)}, storage offset {offset}, "
        f"and itemsize {t.element_size()} requiring a storage size of {need} are out of bounds "
        f"for storage of size {t._storage_nbytes()}"
    )


def check_as_strided(t, sizes, strides, offset):
    """torch's checks of ``t.as_strided(sizes, strides, offset)`` (``setStrided``): the view
    must lie inside t's storage."""
    if len(sizes) != len(strides):
        raise RuntimeError("mismatch in length of strides and shape")
    last, plain = offset, offset >= 0 and len(sizes) > 0
    for n, s in zip(sizes, strides, strict=True):
        if s < 0:
            raise RuntimeError(
                f"as_strided: Negative strides are not supported at the moment, got strides: "
                f"{list(strides)}"
            )
        if n > 0:
            last += (n - 1) * s
        else:
            plain = False
    item = t.element_size()
    if plain and (last + 1) * item <= _STORAGE_MAX:  # the common case, in plain arithmetic
        if (last + 1) * item > t._storage_nbytes():
            raise _out_of_bounds(t, sizes, strides, offset, (last + 1) * item)
        return
    if sizes:
        span = storage_nbytes(sizes, strides, item)
        need = storage_nbytes(sizes, strides, item, offset)  # (a negative offset wraps around)
    else:  # torch takes the contiguous rule for no dims (an empty strides array)
        span, need = item, (1 + offset % _U64) * item
        if need > _STORAGE_MAX:
            raise RuntimeError("Storage size calculation overflowed with sizes=[]")
    if span and need > t._storage_nbytes():
        raise _out_of_bounds(t, sizes, strides, offset, need)
    if offset < 0:
        raise RuntimeError(f"Tensor: invalid storage offset {offset}")
    if any(s < 0 for s in sizes):
        raise RuntimeError("numel: integer multiplication overflow")


def as_strided_view(t, size, stride, storage_offset=None):
    """The checked view (the arguments already parsed)."""
    off = t.storage_offset() if storage_offset is None else storage_offset
    check_as_strided(t, size, stride, off)
    return raw_as_strided(t, size, stride, off)


@method(name="as_strided")
@_arg_parser.parsed
def _as_strided_method(self, size, stride, storage_offset=None):
    """as_strided(size, stride, storage_offset=None): a view of self's storage with these
    sizes, strides and storage offset (self's offset by default), which must lie inside the
    storage."""
    return as_strided_view(self, size, stride, storage_offset)


_as_strided_method.__name__ = _as_strided_method.__qualname__ = "as_strided"


@_arg_parser.parsed
def as_strided(input, size, stride, storage_offset=None):
    """``input.as_strided(size, stride, storage_offset=None)``."""
    return input.as_strided(size, stride, storage_offset)


def _empty_strided(size, stride, dtype, device, pin_memory, requires_grad):
    for n in size:
        if n < 0:
            raise RuntimeError(f"Trying to create tensor with negative dimension {n}: {size}")
    dtype = dtype or _C.get_default_dtype()
    item = dtype.itemsize
    nbytes = storage_nbytes(size, stride, item)
    buf = _C._empty([nbytes // item], dtype, device, bool(pin_memory))
    # torch's set_sizes_and_strides: a negative stride (possible only over one element or
    # none) becomes the contiguous one.
    stride = list(stride)
    for d in reversed(range(len(size))):
        if stride[d] < 0:
            stride[d] = 1 if d == len(size) - 1 else max(size[d + 1], 1) * stride[d + 1]
    out = raw_as_strided(buf, size, stride, 0)._alias()  # not a view: the tensor itself
    return _finish(out, bool(requires_grad))


@_arg_parser.parsed
def empty_strided(
    size, stride, *, dtype=None, layout=None, device=None, pin_memory=False, requires_grad=False
):
    """empty_strided(size, stride, *, dtype=None, layout=None, device=None,
    requires_grad=False, pin_memory=False): an uninitialized tensor with these strides, in
    the smallest storage they fit in (torch's rule: 1 + sum((size - 1) * stride) elements,
    none when a size is 0)."""
    return _empty_strided(size, stride, dtype, device, pin_memory, requires_grad)


@method
@_arg_parser.parsed
def new_empty_strided(
    self,
    size,
    stride,
    *,
    dtype=None,
    layout=None,
    device=None,
    pin_memory=False,
    requires_grad=False,
):
    """new_empty_strided(size, stride, *, dtype=None, layout=None, device=None,
    requires_grad=False, pin_memory=False): ``empty_strided`` with self's dtype and device
    by default."""
    return _empty_strided(
        size,
        stride,
        dtype or self.dtype,
        self.device if device is None else device,
        pin_memory,
        requires_grad,
    )
