r"""cudalite.accelerator: the device-agnostic API over the current accelerator (torch.accelerator).

cudalite's only accelerator is CUDA: in a build with CUDA these functions act on
:mod:`cudalite.cuda`; in a CPU-only build :func:`current_accelerator` is ``None``,
:func:`is_available` is ``False`` and :func:`device_count` is 0.
"""

from typing import Any

from cudalite import _C

__all__ = [
    "current_accelerator",
    "current_device_idx",  # deprecated
    "current_device_index",
    "current_stream",
    "device_count",
    "device_index",
    "empty_cache",
    "is_available",
    "max_memory_allocated",
    "max_memory_reserved",
    "memory_allocated",
    "memory_reserved",
    "memory_stats",
    "reset_accumulated_memory_stats",
    "reset_peak_memory_stats",
    "set_device_idx",  # deprecated
    "set_device_index",
    "set_stream",
    "synchronize",
]


def _cuda():
    if not _C._cuda.is_compiled():
        raise RuntimeError("Accelerator expected")
    from cudalite import cuda

    return cuda


def _get_device_index(device, optional: bool = False) -> int:
    if isinstance(device, int):
        return device
    if isinstance(device, str):
        device = _C.device(device)
    device_index = None
    if isinstance(device, _C.device):
        acc = current_accelerator()
        if acc is None:
            raise RuntimeError("Accelerator expected")
        if acc.type != device.type:
            raise ValueError(f"{device.type} doesn't match the current accelerator {acc}.")
        device_index = device.index
    if device_index is None:
        if not optional:
            raise ValueError(
                f"Expected a cudalite.device with a specified index or an integer, but got:{device}"
            )
        return current_device_index()
    return device_index


def current_accelerator(check_available: bool = False) -> _C.device | None:
    r"""Return the device of the accelerator available at compilation time.

    If no accelerator was available at compilation time, returns None.

    Args:
        check_available (bool, optional): if True, will also do a runtime check to see if
            the device :func:`cudalite.accelerator.is_available` on top of the compile-time
            check. Default: ``False``

    Returns:
        cudalite.device: the current accelerator, without an index (see
        :func:`current_device_index`).
    """
    if not _C._cuda.is_compiled():
        return None
    if check_available and not is_available():
        return None
    return _C.device("cuda")


def device_count() -> int:
    r"""Return the number of current accelerators available (0 when there is none)."""
    if current_accelerator() is None:
        return 0
    return _cuda().device_count()


def is_available() -> bool:
    r"""Check if the current accelerator is available at runtime: it was built, all the
    required drivers are available and at least one device is visible.
    """
    if current_accelerator() is None:
        return False
    return _cuda().is_available()


def current_device_index() -> int:
    r"""Return the index of a currently selected device for the current accelerator."""
    return _cuda().current_device()


def set_device_index(device, /) -> None:
    r"""Set the current device index to a given device.

    Args:
        device (:class:`cudalite.device`, str, int): a given device that must match the
            current accelerator's device type.
    """
    _cuda().set_device(_get_device_index(device, optional=False))


def current_device_idx() -> int:
    r"""(Deprecated) Return the index of a currently selected device for the current
    accelerator; use :func:`current_device_index`.
    """
    import warnings

    warnings.warn("Use `current_device_index` instead.", FutureWarning, stacklevel=2)
    return current_device_index()


def set_device_idx(device, /) -> None:
    r"""(Deprecated) Set the current device index; use :func:`set_device_index`."""
    import warnings

    warnings.warn("Use `set_device_index` instead.", FutureWarning, stacklevel=2)
    set_device_index(device)


def current_stream(device=None, /):
    r"""Return the currently selected stream for a given device (the current device if
    ``None``)."""
    return _cuda().current_stream(_get_device_index(device, optional=True))


def set_stream(stream) -> None:
    r"""Set the current stream to a given stream."""
    _cuda().set_stream(stream)


def synchronize(device=None, /) -> None:
    r"""Wait for all kernels in all streams on the given device (the current device if
    ``None``) to complete."""
    _cuda().synchronize(_get_device_index(device, optional=True))


class device_index:
    r"""Context manager to set the current device index for the current accelerator.

    Args:
        device (Optional[int]): a given device index to temporarily set. If None, no device
            index switching occurs.
    """

    def __init__(self, device: int | None, /) -> None:
        self.idx = device
        self.prev_idx = -1

    def __enter__(self) -> None:
        if self.idx is not None:
            self.prev_idx = _cuda()._exchange_device(self.idx)

    def __exit__(self, *exc_info: object) -> None:
        if self.idx is not None:
            _cuda()._maybe_exchange_device(self.prev_idx)


def empty_cache() -> None:
    r"""Release all unoccupied cached memory held by the caching allocator."""
    if not is_available():
        return
    _cuda().empty_cache()


def memory_stats(device_index=None, /) -> dict[str, Any]:
    r"""Return a dictionary of accelerator memory allocator statistics for a given device."""
    if not is_available():
        return {}
    return _cuda().memory_stats(_get_device_index(device_index, optional=True))


def memory_allocated(device_index=None, /) -> int:
    r"""Return the memory occupied by tensors, in bytes, for a given device."""
    return memory_stats(device_index).get("allocated_bytes.all.current", 0)


def max_memory_allocated(device_index=None, /) -> int:
    r"""Return the peak memory occupied by tensors, in bytes, for a given device."""
    return memory_stats(device_index).get("allocated_bytes.all.peak", 0)


def memory_reserved(device_index=None, /) -> int:
    r"""Return the memory held by the caching allocator, in bytes, for a given device."""
    return memory_stats(device_index).get("reserved_bytes.all.current", 0)


def max_memory_reserved(device_index=None, /) -> int:
    r"""Return the peak memory held by the caching allocator, in bytes, for a given device."""
    return memory_stats(device_index).get("reserved_bytes.all.peak", 0)


def reset_accumulated_memory_stats(device_index=None, /) -> None:
    r"""Reset the "accumulated" (historical) stats tracked by the caching allocator."""
    _cuda().reset_accumulated_memory_stats(_get_device_index(device_index, optional=True))


def reset_peak_memory_stats(device_index=None, /) -> None:
    r"""Reset the "peak" stats tracked by the caching allocator."""
    _cuda().reset_peak_memory_stats(_get_device_index(device_index, optional=True))
