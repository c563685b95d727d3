"""Zero-copy exchange with NumPy, torch, CuPy and anything else that speaks DLPack or the
CUDA Array Interface.

The conversions are in C++ (csrc/bindings/bind_interop.cpp); this module gives them
torch's Python signatures, and :func:`install` attaches them to the Tensor class.
"""

from cudalite import _C
from cudalite._tensor import _methods

__all__ = ["from_dlpack", "to_dlpack"]  # and DLDeviceType, made on first use


def _make_dl_device_type():
    import enum  # on first use: enum costs more to import than the rest of this module

    class DLDeviceType(enum.IntEnum):
        """DLPack's device codes (the first item of ``__dlpack_device__()``)."""

        kDLCPU = 1
        kDLCUDA = 2
        kDLCUDAHost = 3
        kDLOpenCL = 4
        kDLVulkan = 7
        kDLMetal = 8
        kDLVPI = 9
        kDLROCM = 10
        kDLROCMHost = 11
        kDLExtDev = 12
        kDLCUDAManaged = 13
        kDLOneAPI = 14
        kDLWebGPU = 15
        kDLHexagon = 16
        kDLMAIA = 17

    DLDeviceType.__module__ = __name__
    return DLDeviceType


_dl_device_type = None


def __getattr__(name):
    global _dl_device_type
    if name == "DLDeviceType":
        if _dl_device_type is None:
            _dl_device_type = _make_dl_device_type()
        return _dl_device_type
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _check_exportable(tensor, what):
    if getattr(tensor, "requires_grad", False):
        if what == "dlpack":
            raise BufferError("Can't export tensors that require gradient, use tensor.detach()")
        raise RuntimeError(
            "Can't get __cuda_array_interface__ on Variable that requires grad. If gradients "
            "aren't required, use var.detach() to get Variable that doesn't require grad."
        )


def __dlpack__(self, *, stream=-1, max_version=None, dl_device=None, copy=None):
    """Creates a DLPack capsule of the current tensor to be exported to other libraries.

    Args:
        stream (int or None): the consumer's CUDA stream, on which the data must be ready:
            1 is the legacy default stream, 2 the per-thread default stream, any other value
            a ``cudaStream_t``. -1 (default) skips synchronisation, as torch does.
        max_version (tuple[int, int] or None): the highest DLPack version the caller
            supports. ``None`` (default) gives a pre-1.0 ``"dltensor"`` capsule.
        dl_device (tuple[DLDeviceType, int] or None): the device to export to; a copy is
            made when it differs from the tensor's.
        copy (bool or None): ``True`` always copies, ``False`` never does (``BufferError``
            when one is needed), ``None`` (default) copies only when needed.
    """
    _check_exportable(self, "dlpack")
    return _C._to_dlpack(self, stream, max_version, dl_device, copy)


def __dlpack_device__(self):
    """The tensor's DLPack device: ``(DLDeviceType, index)``."""
    kind, index = _C._dlpack_device(self)
    return (__getattr__("DLDeviceType")(kind), index)


def _cuda_array_interface(self):
    """Array view description for CUDA tensors (the CUDA Array Interface, version 3).

    See https://numba.readthedocs.io/en/stable/cuda/cuda_array_interface.html. CPU tensors
    raise ``AttributeError``, so ``hasattr(cpu_tensor, "__cuda_array_interface__")`` is False.
    """
    if self.is_cuda:
        _check_exportable(self, "cai")
    return _C._cuda_array_interface(self)


def to_dlpack(tensor):
    """A legacy ``"dltensor"`` capsule of ``tensor`` (``torch.utils.dlpack.to_dlpack``)."""
    return __dlpack__(tensor)


def from_dlpack(ext_tensor, *, device=None, copy=None):
    """Converts a tensor from an external library into a ``cudalite.Tensor``.

    The returned tensor shares memory with the original (no copy), unless a ``device`` or
    ``copy=True`` asks for one, or the producer marks the memory read-only (DLPack 1.0's
    read-only flag: a NumPy array that is not writable, one over ``bytes``, a read-only
    memmap): cudalite tensors are writable, so such memory is copied (``copy=False`` raises
    ``BufferError``).

    Args:
        ext_tensor (object with ``__dlpack__`` attribute, or a DLPack capsule): the tensor
            or DLPack capsule to convert. A capsule can be consumed only once.
        device (cudalite.device or str or None): the device for the result; ``None`` keeps
            the producer's.
        copy (bool or None): ``True`` always copies, ``False`` never does, ``None`` copies
            only when needed.
    """
    target = None if device is None else _C.device(device)
    if hasattr(ext_tensor, "__dlpack__"):
        kwargs = {"max_version": (1, 0)}
        kind, index = ext_tensor.__dlpack_device__()
        if kind in (2, 13):  # kDLCUDA, kDLCUDAManaged
            # Our current stream on that device, as the protocol spells it (1: legacy).
            kwargs["stream"] = _C._dlpack_stream(index)
        try:
            capsule = ext_tensor.__dlpack__(**kwargs)
        except TypeError:  # a producer from before DLPack 1.0
            kwargs.pop("max_version")
            capsule = ext_tensor.__dlpack__(**kwargs)
    elif type(ext_tensor).__name__ == "PyCapsule":
        capsule = ext_tensor
    else:  # torch hands anything else to its capsule reader, which says this
        raise RuntimeError(
            "from_dlpack received an invalid capsule. Note that DLTensor capsules can be "
            "consumed only once, so you might have already constructed a tensor from it once."
        )
    read_only = _C._dlpack_read_only(capsule)
    if read_only and copy is False:
        raise BufferError(
            "from_dlpack: the DLPack tensor is read-only and cudalite tensors are writable, so "
            "it can only be imported by copying it. Set copy=None or copy=True."
        )
    result = _C._from_dlpack(capsule)
    if read_only:
        # Sharing memory the producer marked read-only (a NumPy array that is not writable,
        # one over a bytes object, a read-only memmap) would let writes corrupt an immutable
        # object or fault: the tensor gets a copy.
        copy = True
    moves = target is not None and (
        target.type != result.device.type
        or (target.index is not None and target.index != result.device.index)
    )
    if moves and copy is False:
        raise ValueError(
            f"cannot move DLPack tensor from device {result.device} to {target} without "
            "copying. Set copy=None or copy=True."
        )
    if moves or copy:
        result = _C._to(result, target or result.device, None, False, True)
    return result


_methods["__dlpack__"] = __dlpack__
_methods["__dlpack_device__"] = __dlpack_device__
_methods["__cuda_array_interface__"] = property(_cuda_array_interface)
