"""``cudalite.UntypedStorage``: the memory under a tensor and its views, as ``torch.storage``.

A storage is what ``cudalite.save`` writes once for all the tensors that share it, and what
``cudalite.load`` hands to a ``map_location`` function. torch's ``UntypedStorage`` is a run of
bytes that any dtype can view; cudalite reinterprets memory only between dtypes of one size
(``Tensor.view(dtype)``), so a cudalite storage remembers the dtype it was made for and holds
it as a flat, one-dimensional tensor of that dtype covering the whole allocation. Sizes are
still counted in bytes, as torch's are.
"""

from __future__ import annotations

from cudalite import _C
from cudalite._lazy import numpy

__all__ = ["UntypedStorage"]


class UntypedStorage:
    """The memory of one or more tensors: ``tensor.untyped_storage()``.

    ``UntypedStorage(size, *, device=None)`` allocates ``size`` bytes (as uint8). Moving a
    storage (``cpu()``, ``cuda()``, ``to()``) copies it; tensors built on the copy share it.
    """

    __slots__ = ("_flat",)

    def __init__(self, size=0, *, device=None):
        if isinstance(size, bool) or not isinstance(size, int):
            raise TypeError(
                f"UntypedStorage(): argument 'size' must be int, not {type(size).__name__}"
            )
        self._flat = _C._empty([size], _C.uint8, "cpu" if device is None else device, False)

    @classmethod
    def _wrap(cls, flat):
        """The storage whose memory is ``flat`` (a flat tensor covering all of it)."""
        self = cls.__new__(cls)
        self._flat = flat
        return self

    @classmethod
    def _of(cls, tensor):
        """The storage under ``tensor``, as a flat tensor of its dtype from offset 0."""
        numel = tensor._storage_nbytes() // tensor.element_size()
        return cls._wrap(tensor.detach().as_strided([numel], [1], 0).detach())

    # ---- what a storage is ----

    @property
    def device(self):
        """The device holding the memory."""
        return self._flat.device

    @property
    def is_cuda(self):
        return self._flat.is_cuda

    @property
    def dtype(self):
        """cudalite's addition: the dtype of the tensors this storage was made for."""
        return self._flat.dtype

    def nbytes(self):
        """The size in bytes."""
        return self._flat.numel() * self._flat.element_size()

    def size(self):
        """The size in bytes (torch's ``UntypedStorage.size()``)."""
        return self.nbytes()

    def __len__(self):
        return self.nbytes()

    def element_size(self):
        return 1

    def data_ptr(self):
        """The address of the first byte."""
        return self._flat._storage_ptr()

    def is_pinned(self, device="cuda"):
        return self._flat.is_pinned()

    def share_memory_(self):
        """Moves the memory to shared memory, in place (see ``Tensor.share_memory_``)."""
        self._flat.share_memory_()
        return self

    def is_shared(self):
        """Whether the memory is shared memory (always True on a GPU)."""
        return self._flat.is_shared()

    # ---- copies ----

    def cpu(self):
        """A copy in host memory (self if already there)."""
        return self if not self.is_cuda else UntypedStorage._wrap(self._flat.cpu())

    def cuda(self, device=None, non_blocking=False):
        """A copy on a CUDA device (self if already there)."""
        out = self._flat.cuda(device, non_blocking)
        return self if out is self._flat else UntypedStorage._wrap(out)

    def to(self, *, device, non_blocking=False):
        """A copy on ``device`` (self if already there)."""
        out = self._flat.to(device, non_blocking=non_blocking)
        return self if out is self._flat else UntypedStorage._wrap(out)

    def clone(self):
        """A copy on the same device."""
        return UntypedStorage._wrap(self._flat.clone())

    def _reinterpret(self, dtype):
        """A copy of these bytes as a storage of ``dtype`` (through host memory)."""
        arr = _host_array(self._flat).view(numpy().uint8).view(_numpy_dtype(dtype)).copy()
        return _from_array(arr, dtype).to(device=self.device)

    def tolist(self):
        """The bytes, as a list of ints."""
        return list(_host_bytes(self._flat))

    def __repr__(self):
        values = "\n".join(f" {b}" for b in _host_bytes(self._flat))
        device = self.device
        desc = f"[cudalite.storage.UntypedStorage(device={device}) of size {self.nbytes()}]"
        return f"{values}\n{desc}" if values else desc

    def __reduce__(self):
        # Plain pickling (pickle.dumps, multiprocessing): the bytes, the dtype and the device.
        # cudalite.save writes storages as records of its archive instead (persistent ids).
        from cudalite import serialization

        return (
            _rebuild_storage,
            (bytes(_host_bytes(self._flat)), self.dtype, serialization.location_tag(self)),
        )


def _host_array(flat):
    """A NumPy array over ``flat``'s values on the host (bfloat16 as int16: same bits)."""
    host = flat.cpu()
    if host.dtype == _C.bfloat16:
        host = host.view(_C.int16)
    return _C._numpy(host)


def _host_bytes(flat):
    """The storage's bytes in host memory, as a memoryview (no copy for CPU storages)."""
    return memoryview(_host_array(flat).view(numpy().uint8))


def _numpy_dtype(dtype):
    return "int16" if dtype == _C.bfloat16 else _C._numpy_dtype_name(dtype)


def _from_array(arr, dtype, owned=True):
    """A CPU storage of ``dtype`` on a 1-D NumPy array's memory (bfloat16 from int16).
    ``owned``: the array is the storage's alone (which may then grow, as torch's own memory);
    otherwise the storage only borrows it (a memory-mapped file)."""
    arr = arr.view(_numpy_dtype(dtype))
    flat = _C._from_numpy_owned(arr) if owned else _C._from_numpy_quiet(arr)
    return UntypedStorage._wrap(flat.view(dtype) if dtype == _C.bfloat16 else flat)


def _storage_from_bytes(data, dtype):
    """A new CPU storage of ``dtype`` holding a copy of ``data`` (in the host's byte order)."""
    return _from_array(numpy().frombuffer(data, dtype=_numpy_dtype(dtype)).copy(), dtype)


def _rebuild_storage(data, dtype, location):
    """Unpickles a storage pickled by ``UntypedStorage.__reduce__``."""
    from cudalite import serialization

    storage = _storage_from_bytes(data, dtype)
    return serialization.default_restore_location(storage, location)
