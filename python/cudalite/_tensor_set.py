"""Re-pointing a tensor at other memory in place (``set_``, ``as_strided_``) and comparing
what two tensors are set to (``is_set_to``, ``is_same_size``), as torch has them.

``set_`` and ``as_strided_`` change the tensor object itself (its storage, sizes, strides and
storage offset); its version counter counts them as writes, as torch's does.
"""

from __future__ import annotations

import operator

from cudalite import _C
from cudalite._arg_parser import parsed, tp_name
from cudalite._C import Tensor
from cudalite._strided import check_as_strided, raw_as_strided
from cudalite._tensor import method

__all__ = ["is_same_size", "as_strided_"]


def _check_inplace(t):
    if t.requires_grad:
        from cudalite.autograd.functions._common import check_inplace

        check_inplace(t)


def _tensor_arg(name, arg, other):
    if not isinstance(other, Tensor):
        raise TypeError(
            f"{name}(): argument '{arg}' (position 1) must be Tensor, not {tp_name(other)}"
        )


@method(name="is_same_size")
def _is_same_size(self, other):
    """True when ``other`` has the same sizes."""
    _tensor_arg("is_same_size", "other", other)
    return tuple(self.shape) == tuple(other.shape)


def is_same_size(input, other):
    return input.is_same_size(other)


@method(name="is_set_to")
def _is_set_to(self, tensor):
    """True when ``tensor`` is set to the same memory with the same sizes, strides and storage
    offset."""
    _tensor_arg("is_set_to", "tensor", tensor)
    return (
        self._is_same_storage(tensor)
        and self.storage_offset() == tensor.storage_offset()
        and tuple(self.shape) == tuple(tensor.shape)
        and self.stride() == tensor.stride()
    )


def _dtype_name(dt):
    return {
        _C.float32: "float",
        _C.float64: "double",
        _C.float16: "c10::Half",
        _C.bfloat16: "c10::BFloat16",
        _C.int64: "long int",
        _C.int32: "int",
        _C.int16: "short int",
        _C.int8: "signed char",
        _C.uint8: "unsigned char",
        _C.bool: "bool",
    }[dt]


def _storage_flat(self, storage):
    """A flat tensor of self's dtype over all of ``storage``'s memory."""
    flat = storage._flat
    if flat.device != self.device:
        raise RuntimeError(
            f'Attempted to set the storage of a tensor on device "{self.device}" to a storage '
            f'on different device "{flat.device}".  This is no longer allowed; the devices '
            "must match."
        )
    if flat.dtype == self.dtype:
        return flat
    if flat.element_size() == self.element_size():
        return flat.view(self.dtype)
    raise RuntimeError(
        f"cudalite cannot view a storage of {flat.dtype} as {self.dtype} (different item sizes)"
    )


@method(name="set_")
def _set_(self, source=None, storage_offset=None, size=None, stride=None):
    """Makes ``self`` a tensor of ``source``'s memory: ``set_()`` empty, ``set_(tensor)`` the
    same view as ``tensor``, ``set_(storage)`` all of it, ``set_(storage, storage_offset,
    size, stride=())`` the given view of it (contiguous strides when none)."""
    from cudalite.storage import UntypedStorage

    _check_inplace(self)
    if source is None:
        target = _C._empty([0], self.dtype, self.device, False)
    elif isinstance(source, Tensor):
        if source.dtype != self.dtype:
            raise RuntimeError(
                f"Could not set tensor of type {_dtype_name(source.dtype)} to a tensor of type "
                f"{_dtype_name(self.dtype)}"
            )
        if source.device != self.device:
            _storage_flat(self, UntypedStorage._of(source))  # its error
        target = raw_as_strided(
            source, list(source.shape), list(source.stride()), source.storage_offset()
        )
    elif isinstance(source, UntypedStorage):
        flat = _storage_flat(self, source)
        n = flat.shape[0]
        if storage_offset is None and size is None:
            target = raw_as_strided(flat, [n], [1], 0)
        else:
            if size is None:
                raise TypeError("set_() missing required argument 'size'")
            size = [operator.index(s) for s in size]
            off = 0 if storage_offset is None else operator.index(storage_offset)
            if stride is None or len(stride) == 0:
                stride, step = [0] * len(size), 1
                for d in range(len(size) - 1, -1, -1):
                    stride[d] = step
                    step *= max(size[d], 1)
            stride = [operator.index(s) for s in stride]
            check_as_strided(flat, size, stride, off)
            target = raw_as_strided(flat, size, stride, off)
    else:
        raise TypeError(
            f"set_(): argument 'source' (position 1) must be Storage or Tensor, not "
            f"{tp_name(source)}"
        )
    self._set_data(target)
    self._bump_version()
    return self


@method(name="as_strided_")
@parsed
def _as_strided_(self, size, stride, storage_offset=None):
    """``as_strided`` in place: ``self`` itself gets the sizes, strides and storage offset
    (self's offset by default), which must lie inside its storage."""
    off = storage_offset
    _check_inplace(self)
    off = self.storage_offset() if off is None else off
    check_as_strided(self, list(size), list(stride), off)
    self._set_data(raw_as_strided(self, list(size), list(stride), off))
    self._bump_version()
    return self


def as_strided_(input, size, stride, storage_offset=None):
    return input.as_strided_(size, stride, storage_offset)
