"""asarray and frombuffer: tensors that alias Python objects where they can (torch's
``torch.asarray`` / ``torch.frombuffer``; docs/interop.md).

``asarray`` tries, in torch's order: a Tensor, a NumPy array or scalar, an object with
``__dlpack__`` (CuPy, JAX...), an object with the buffer protocol, and last a (nested)
sequence or number, which is always copied. What it can alias, it aliases unless ``copy=True``
or a different dtype or device needs a copy; ``copy=False`` refuses any copy."""

from __future__ import annotations

import warnings

from cudalite import _C
from cudalite._C import Tensor
from cudalite._lazy import is_ndarray, is_np_number, numpy
from cudalite._ops import _type_name

__all__ = ["asarray", "frombuffer"]

_NOT_WRITABLE_WARNED = [False]


def _check_dtype(dtype, fn):
    if dtype is not None and not isinstance(dtype, _C.dtype):
        raise TypeError(f"{fn}(): argument 'dtype' must be cudalite.dtype, not {_type_name(dtype)}")


def frombuffer(buffer, *, dtype=None, count=-1, offset=0, requires_grad=False):
    """A 1-D tensor that shares the memory of a Python buffer (bytes, bytearray,
    array.array, memoryview, mmap...): ``count`` elements of ``dtype`` (``-1``: as many as
    fit) from ``offset`` bytes in. A read-only buffer gives a tensor that must not be written
    (torch's UserWarning, once)."""
    if dtype is None:
        raise TypeError('frombuffer() missing 1 required positional arguments: "dtype"')
    _check_dtype(dtype, "frombuffer")
    try:
        view = memoryview(buffer)
    except TypeError:
        raise ValueError("object does not implement Python buffer protocol.") from None
    length = view.nbytes
    elsize = dtype.itemsize
    if length <= 0 or count == 0:
        raise ValueError(f"both buffer length ({length}) and count ({count}) must not be 0")
    if not 0 <= offset < length:
        raise ValueError(
            f"offset ({offset} bytes) must be non-negative and no greater than buffer length "
            f"({length} bytes) minus 1"
        )
    if count < 0 and (length - offset) % elsize:
        raise ValueError(
            f"buffer length ({length - offset} bytes) after offset ({offset} bytes) must be a "
            f"multiple of element size ({elsize})"
        )
    if count < 0:
        count = (length - offset) // elsize
    if offset + count * elsize > length:
        raise ValueError(
            f"requested buffer length ({count} * {elsize} bytes) after offset ({offset} bytes) "
            f"must not be greater than actual buffer length ({length} bytes)"
        )
    if view.readonly and not _NOT_WRITABLE_WARNED[0]:
        _NOT_WRITABLE_WARNED[0] = True
        warnings.warn(
            "The given buffer is not writable, and cudalite does not support non-writable "
            "tensors. This means you can write to the underlying (supposedly non-writable) "
            "buffer using the tensor. You may want to copy the buffer to protect its data or "
            "make it writable before converting it to a tensor. This type of warning will be "
            "suppressed for the rest of this program.",
            UserWarning,
            stacklevel=2,
        )
    np = numpy()
    raw = np.frombuffer(view.cast("B"), dtype=np.uint8, count=count * elsize, offset=offset)
    if dtype is _C.bfloat16:  # NumPy has no bfloat16: its bits as int16, viewed
        t = _C._from_numpy_quiet(raw.view(np.int16)).view(dtype)
    else:
        t = _C._from_numpy_quiet(raw.view(_C._empty([0], dtype, None, False).numpy().dtype))
    if requires_grad:
        t.requires_grad_(True)
    return t


def asarray(obj, *, dtype=None, device=None, copy=None, requires_grad=False):
    """Converts ``obj`` to a tensor, sharing its memory when it can (torch.asarray).

    Args:
        obj: a Tensor, NumPy array or scalar, DLPack producer, buffer, or a (nested)
            sequence of numbers or tensors.
        dtype, device: of the result; ``None`` keeps obj's (or infers it from a sequence).
        copy: ``None`` copies only when dtype or device differ, ``True`` always copies,
            ``False`` never (a ValueError when a copy would be needed).
        requires_grad: set on the result (on obj itself when that is returned, as torch).
    """
    _check_dtype(dtype, "asarray")
    target = None if device is None else _C.device(device)
    force_alias = copy is False
    force_copy = copy is True
    t = None
    read_only = False  # a read-only NumPy array: torch warns when it is aliased
    if isinstance(obj, Tensor):
        t = obj
    elif is_ndarray(obj) or is_np_number(obj):
        if not is_ndarray(obj):
            if force_alias:
                raise RuntimeError(
                    "can't alias NumPy scalars. Either remove copy=False or transform it in a "
                    "ndarray. "
                )
            t = _C._from_numpy_quiet(numpy().asarray(obj)).clone()
            force_copy = False
        else:
            t = _C._from_numpy_quiet(obj)
            read_only = not obj.flags.writeable
    elif hasattr(obj, "__dlpack__"):
        from cudalite._interop import from_dlpack

        t = from_dlpack(obj)
    elif _has_buffer(obj):
        t = frombuffer(obj, dtype=dtype or _C.get_default_dtype(), requires_grad=False)
    if t is not None:
        wrong_device = target is not None and _resolve(target) != t.device
        wrong_dtype = dtype is not None and dtype is not t.dtype
        if force_copy or (copy is None and (wrong_device or wrong_dtype)):
            if wrong_device or wrong_dtype:
                t = t.to(target if target is not None else t.device, dtype or t.dtype, copy=True)
            else:
                t = t.clone()
        elif wrong_device:
            raise ValueError(f"can't alias tensor from device '{t.device}' to '{target}'.")
        elif wrong_dtype:
            raise ValueError(
                f"can't alias tensor with dtype '{t.dtype._short_name}' into dtype "
                f"'{dtype._short_name}'."
            )
        elif read_only:
            _C._warn_numpy_not_writable(2)
    else:
        if force_alias:
            raise ValueError("can't alias arbitrary sequence into a tensor.")
        from cudalite._creation import tensor

        t = tensor(obj, dtype=dtype, device=target)
    return _set_requires_grad(t, requires_grad)


def _has_buffer(obj):
    try:
        memoryview(obj)
    except TypeError:
        return False
    return True


def _resolve(dev):
    """A device with its index filled in (cuda means the current device), as tensors have."""
    if dev.type == "cuda" and dev.index is None:
        from cudalite import cuda

        return _C.device("cuda", cuda.current_device())
    return dev


def _set_requires_grad(t, requires_grad):
    # torch sets the flag on the result whatever it is: a leaf passed in that required grad
    # comes back (itself) not requiring it; a non-leaf keeps its graph.
    if requires_grad:
        if not t.dtype.is_floating_point:
            raise RuntimeError(
                "Only Tensors of floating point and complex dtype can require gradients"
            )
        t.requires_grad_(True)
    elif t.requires_grad and t.is_leaf:
        t.requires_grad_(False)
    return t
