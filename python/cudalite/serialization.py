"""``cudalite.save`` and ``cudalite.load``: checkpoints in torch's file format.

``save`` writes the zip archive that ``torch.save`` has written since torch 1.6 (see
``_archive.py``): the object is pickled with each storage replaced by a persistent id
``('storage', storage_type, key, location, numel)`` and its bytes stored in the record
``data/<key>``, once however many tensors view it. Tensors pickle as calls of
``torch._utils._rebuild_tensor_v2(storage, offset, size, stride, requires_grad, hooks)``,
under torch's names, so ``torch.load`` reads cudalite's files and ``cudalite.load`` reads
torch's, mapping those names to cudalite's functions (``_torch_names.py``), never importing
torch. See docs/serialization.md.
"""

from __future__ import annotations

import io
import os
import pickle
import sys
import types
import warnings

from cudalite import _C, _archive, _torch_names
from cudalite import _weights_only_unpickler as _wo
from cudalite._lazy import numpy
from cudalite.storage import UntypedStorage, _from_array, _host_array, _host_bytes

__all__ = [
    "add_safe_globals",
    "clear_safe_globals",
    "default_restore_location",
    "get_safe_globals",
    "load",
    "location_tag",
    "safe_globals",
    "save",
    "validate_cuda_device",
]

DEFAULT_PROTOCOL = 2
MAGIC_NUMBER = 0x1950A86A20F9469CFC6C  # first pickle of torch's legacy (pre-zip) format

UNSAFE_MESSAGE = (
    "In PyTorch 2.6, we changed the default value of the `weights_only` argument in "
    "`cudalite.load` from `False` to `True`. Re-running `cudalite.load` with `weights_only` "
    "set to `False` will likely succeed, but it can result in arbitrary code execution. Do it "
    "only if you got the file from a trusted source."
)
_DOCS_MESSAGE = (
    "\n\nCheck the documentation of cudalite.load to learn more about types accepted by "
    "default with weights_only https://pytorch.org/docs/stable/generated/torch.load.html."
)

# ---- the allowlist of weights_only loading ----


def add_safe_globals(safe_globals):
    """Marks the given globals (functions, classes, or ``(global, "full.name")`` pairs) as
    safe for ``weights_only`` loading."""
    _wo._add_safe_globals(safe_globals)


def get_safe_globals():
    """The user-added globals that are safe for ``weights_only`` loading."""
    return _wo._get_safe_globals()


def clear_safe_globals():
    """Clears the user-added globals."""
    _wo._clear_safe_globals()


class safe_globals(_wo._safe_globals):
    """Context manager that allows the given globals for ``weights_only`` loading."""


# ---- locations: where a storage was saved from, and where it is restored to ----


def location_tag(storage):
    """The location a storage is saved with: ``'cpu'`` or ``'cuda:N'``."""
    return str(storage.device)


def validate_cuda_device(location):
    """The index of the CUDA device ``location`` ('cuda' or 'cuda:N') names; raises torch's
    errors when there is no such device."""
    from cudalite import cuda

    if not cuda.is_available():
        raise RuntimeError(
            "Attempting to deserialize object on a CUDA device but "
            "cudalite.cuda.is_available() is False. If you are running on a CPU-only machine, "
            "please use cudalite.load with map_location=cudalite.device('cpu') to map your "
            "storages to the CPU."
        )
    index = _C.device(location).index
    if index is None:
        index = cuda.current_device()
    count = cuda.device_count()
    if index >= count:
        raise RuntimeError(
            f"Attempting to deserialize object on CUDA device {index} but "
            f"cudalite.cuda.device_count() is {count}. Please use cudalite.load with "
            "map_location to map your storages to an existing device."
        )
    return index


def default_restore_location(storage, location):
    """``storage`` (read into host memory) moved to ``location``: 'cpu' keeps it, 'cuda' and
    'cuda:N' copy it to that device."""
    if not isinstance(location, str):  # (torch's, from re.match)
        raise TypeError(f"expected string or bytes-like object, got '{type(location).__name__}'")
    if location == "cpu":
        return storage
    if location == "cuda" or (location.startswith("cuda") and location[4] in ":0123456789"):
        return storage.to(device=_C.device("cuda", validate_cuda_device(location)))
    raise RuntimeError(
        "don't know how to restore data location of cudalite.storage.UntypedStorage (tagged "
        f"with {location})"
    )


def _location_str(location):
    if isinstance(location, bytes):
        return location.decode("ascii")
    return str(location) if isinstance(location, _C.device) else location


def _get_restore_location(map_location):
    """The function ``(storage, location) -> storage`` that ``map_location`` describes."""
    if map_location is None:
        return default_restore_location
    if isinstance(map_location, dict):

        def restore_location(storage, location):
            return default_restore_location(
                storage, _location_str(map_location.get(location, location))
            )

    elif isinstance(map_location, (str, bytes, _C.device)):
        target = _location_str(map_location)

        def restore_location(storage, location):
            return default_restore_location(storage, target)

    else:

        def restore_location(storage, location):
            result = map_location(storage, location)
            if result is None:
                return default_restore_location(storage, location)
            if not isinstance(result, UntypedStorage):
                raise TypeError(
                    "map_location must return None or a cudalite.UntypedStorage, but got "
                    f"{type(result)}"
                )
            return result

    return restore_location


# ---- save ----


def _is_path(f):
    return isinstance(f, (str, os.PathLike))


def _pickler_class(pickle_module):
    """A pickler that writes storages as persistent ids and cudalite's tensor functions,
    dtypes, devices and Size under torch's names.

    It derives from Python's pure-Python pickler (``pickle._Pickler``, or ``pickle_module``'s
    Pickler when that is one): the C pickler checks that a global's module can be imported,
    and ``torch`` is not imported here.
    """
    base = pickle_module.Pickler
    if not (isinstance(base, type) and issubclass(base, pickle._Pickler)):
        base = pickle._Pickler

    class TorchNamesPickler(base):
        dispatch = dict(base.dispatch)

        def __init__(self, file, protocol, storage_id):
            super().__init__(file, protocol)
            self._storage_id = storage_id

        def persistent_id(self, obj):
            return self._storage_id(obj) if type(obj) is UntypedStorage else None

        def save_global(self, obj, name=None):
            torch_name = _torch_names.torch_name(obj)
            if torch_name is None:
                return super().save_global(obj, name)
            self._save_torch_global(obj, *torch_name)

        def _save_torch_global(self, obj, module, name):
            if self.proto >= 4:
                self.save(module)
                self.save(name)
                self.write(pickle.STACK_GLOBAL)
            else:
                self.write(pickle.GLOBAL + f"{module}\n{name}\n".encode())
            self.memoize(obj)

        dispatch[types.FunctionType] = save_global
        dispatch[_C.dtype] = lambda self, obj: self._save_torch_global(obj, "torch", obj._name)
        dispatch[_torch_names.StorageType] = lambda self, obj: self._save_torch_global(
            obj, "torch", obj.name
        )

    return TorchNamesPickler


class _StorageTable:
    """The storages of one save: a key for each, shared by all the tensors viewing it."""

    def __init__(self):
        self.storages = {}  # key -> flat tensor over the storage
        self._by_ptr = {}  # (device, address) -> [(flat, key)]
        self._dtypes = {}  # address -> dtype

    def persistent_id(self, storage):
        flat = storage._flat
        ptr = flat._storage_ptr(False)  # an identity: nothing reads the address
        if ptr and self._dtypes.setdefault(ptr, flat.dtype) != flat.dtype:
            raise RuntimeError(
                "Cannot save multiple tensors or storages that view the same data as different "
                "types"
            )
        group = self._by_ptr.setdefault((str(flat.device), ptr), [])
        key = next((k for other, k in group if other._is_same_storage(flat)), None)
        if key is None:
            key = str(len(self.storages))
            self.storages[key] = flat
            group.append((flat, key))
        st = _torch_names.storage_type(flat.dtype)
        return ("storage", st, key, location_tag(storage), flat.numel())


def save(
    obj,
    f,
    pickle_module=pickle,
    pickle_protocol=DEFAULT_PROTOCOL,
    _use_new_zipfile_serialization=True,
    _disable_byteorder_record=False,
):
    """save(obj, f, pickle_module=pickle, pickle_protocol=2, _use_new_zipfile_serialization=True)

    Saves an object to a disk file, in torch's format: ``torch.load`` reads it.

    Args:
        obj: saved object (tensors, Parameters, state dicts, containers; with a
            ``weights_only=False`` load, any picklable object).
        f: a file-like object (has to implement write and flush) or a string or
            os.PathLike object containing a file name.
        pickle_module: module used for pickling metadata and objects.
        pickle_protocol: can be specified to override the default protocol.
    """
    if not _is_path(f) and not hasattr(f, "write"):
        raise AttributeError(
            "expected 'f' to be string, path, or a file-like object with a 'write' attribute"
        )
    if not _use_new_zipfile_serialization:
        raise NotImplementedError(
            "cudalite.save writes torch's zip format only: _use_new_zipfile_serialization=False "
            "(the legacy format) is not supported"
        )
    if _is_path(f):
        f = os.fspath(f)
        name = _archive.archive_name(f)
        parent = os.path.dirname(f)
        if f.isascii() and parent and not os.path.isdir(parent):  # (others: open() raises)
            raise RuntimeError(f"Parent directory {parent} does not exist.")
    elif not callable(f.write):
        raise TypeError(f"Buffer of {str(type(f)).strip('<>')} has no callable attribute 'write'")

    table = _StorageTable()
    data = io.BytesIO()
    _pickler_class(pickle_module)(data, pickle_protocol, table.persistent_id).dump(obj)

    stream = open(f, "wb") if _is_path(f) else f  # noqa: SIM115 (closed below)
    try:
        writer = _archive.ArchiveWriter(stream, name if _is_path(f) else "archive")
        writer.write_record("data.pkl", data.getbuffer())
        writer.write_record(".format_version", b"1")
        writer.write_record(".storage_alignment", str(_archive.ALIGNMENT).encode())
        if not _disable_byteorder_record:
            writer.write_record("byteorder", sys.byteorder.encode())
        for key, flat in table.storages.items():
            writer.write_record(f"data/{key}", _host_bytes(flat))
        writer.close()
    finally:
        if _is_path(f):
            stream.close()
        else:
            stream.flush()


# ---- load ----


def _get_wo_message(message):
    """torch's explanation around an error of the weights_only unpickler."""
    import re

    if re.search(r"GLOBAL (\S+) was not an allowed global by default.", message):
        return (
            "Weights only load failed. This file can still be loaded, to do so you have two "
            "options, \033[1mdo those steps only if you trust the source of the checkpoint"
            f"\033[0m. \n\t(1) {UNSAFE_MESSAGE}\n\t(2) Alternatively, to load with "
            "`weights_only=True` please check the recommended steps in the following error "
            "message.\n\tWeightsUnpickler error: " + message + _DOCS_MESSAGE
        )
    if re.search(r"(\S+) must be (\S+) to load", message):
        return f"Weights only load failed. {message}\n {UNSAFE_MESSAGE}\n"
    updated = f"Weights only load failed. {UNSAFE_MESSAGE}\n"
    if not re.search(r"whose module (\S+) is blocked", message):
        updated += (
            "Please file an issue with the following so that we can make `weights_only=True` "
            "compatible with your use case: WeightsUnpickler error: "
        )
    return updated + "\n\n" + message + _DOCS_MESSAGE


def _check_seekable(f):
    try:
        f.seek(f.tell())
    except (io.UnsupportedOperation, AttributeError) as e:
        if "seek" in str(e) or "tell" in str(e):
            raise type(e)(
                str(e) + ". You can only cudalite.load from a file that is seekable. Please "
                "pre-load the data into a buffer like io.BytesIO and try to load from it instead."
            ) from None
        raise


def _is_zipfile(f):
    start = f.tell()
    magic = f.read(4)
    f.seek(start)
    return magic == b"PK\x03\x04"


def _remaining_size(f):
    """The bytes from ``f``'s position to its end."""
    start = f.tell()
    end = f.seek(0, os.SEEK_END)
    f.seek(start)
    return end - start


def _maybe_decode_ascii(s):
    return s.decode("ascii") if isinstance(s, bytes) else s


class _StorageLoader:
    """Reads each storage of an archive once, on first use, and restores its location."""

    # Bytes of each pinned staging buffer of loads onto a GPU, at most (two of them, Note
    # [Loading onto a GPU through pinned buffers]).
    STAGE_BYTES = 8 << 20

    def __init__(self, reader, map_location, weights_only, mapped):
        self._reader = reader
        self._map_location = map_location
        self._restore = _get_restore_location(map_location)
        self._stages = None  # [[pinned uint8 tensor, its NumPy view, event or None]] * 2
        self._weights_only = weights_only
        self._mapped = mapped  # the file as a NumPy memmap, for mmap=True
        self._loaded = {}
        byteorder = "little"  # torch's default for files without the record
        if reader.has_record("byteorder"):
            byteorder = reader.get_record("byteorder").decode()
            if byteorder not in ("little", "big"):
                raise ValueError("Unknown endianness type: " + byteorder)
        self._byteorder = byteorder

    def persistent_load(self, saved_id):
        if self._weights_only:
            _wo.check_persistent_id(saved_id)
        if not isinstance(saved_id, tuple):
            raise AssertionError(f"saved_id must be a tuple, got {type(saved_id).__name__}")
        typename = _maybe_decode_ascii(saved_id[0])
        if typename != "storage":
            raise AssertionError(
                f"Unknown typename for persistent_load, expected 'storage' but got '{typename}'"
            )
        storage_type, key, location, numel = saved_id[1:]
        if not isinstance(storage_type, _torch_names.StorageType):
            raise pickle.UnpicklingError(f"unknown storage type {_wo.short_repr(storage_type)}")
        if type(numel) is not int or numel < 0:
            raise pickle.UnpicklingError(f"invalid storage size {_wo.short_repr(numel)}")
        if type(key) is not str or type(location) not in (str, bytes):
            raise pickle.UnpicklingError(
                "a storage's key and location must be str, but got "
                f"{type(key).__name__} and {type(location).__name__}"
            )
        if key not in self._loaded:
            name, location = f"data/{key}", _maybe_decode_ascii(location)
            device = self._staged_device(name, location)
            if device is not None:
                self._loaded[key] = self._read_staged(name, numel, storage_type.dtype, device)
            else:
                storage = self._read(name, numel, storage_type.dtype)
                self._loaded[key] = self._restore(storage, location)
        return self._loaded[key]

    # Note [Loading onto a GPU through pinned buffers]
    # A storage restored to a GPU would otherwise be read into fresh pageable memory (its
    # pages faulted in), then copied again by the CPU into pinned staging buffers for the DMA
    # (Note [Staged pageable copies]). When the storage's location is a CUDA device that
    # map_location names (or the saved one, without map_location), an uncompressed record in
    # the file's byte order is instead read in 8 MiB parts straight into two pinned buffers
    # taking turns, each copied to the GPU storage asynchronously while the next part is
    # read; a buffer is refilled once the event after its last copy has completed. The
    # record's CRC-32 is checked as in every load (a storage whose record fails it is
    # dropped); host memory holds 16 MiB of it at most.

    def _staged_device(self, name, location):
        """The CUDA device a storage goes to, when it can be read through pinned buffers."""
        m = self._map_location
        if m is None:
            target = location
        elif isinstance(m, dict):
            target = _location_str(m.get(location, location))
        elif isinstance(m, (str, bytes, _C.device)):
            target = _location_str(m)
        else:
            return None  # a function chooses from the storage read into host memory
        if not (
            isinstance(target, str)
            and (target == "cuda" or (target.startswith("cuda") and target[4:5] in ":0123456789"))
        ):
            return None
        if self._mapped is not None or self._byteorder != sys.byteorder:
            return None
        if self._reader.data_offset(name) is None:  # a compressed record
            return None
        return _C.device("cuda", validate_cuda_device(target))

    def _read_staged(self, name, numel, dtype, device, pinned=True):
        """A storage on ``device`` with the ``numel`` elements of record ``name``, read
        through pinned buffers (Note [Loading onto a GPU through pinned buffers])."""
        nbytes = self._checked_nbytes(name, numel, dtype)
        flat = _C._empty([numel], dtype, device, False)
        dst = flat.view(_C.uint8)
        stages = self._staging_buffers(nbytes, pinned)
        cuda = device.type == "cuda"
        if cuda:
            from cudalite import cuda as _cuda

            stream = _cuda.current_stream(device)
        crc, pos, turn = 0, 0, 0
        while pos < nbytes:
            stage = stages[turn % len(stages)]
            if stage[2] is not None:
                stage[2].synchronize()  # its last copy has read it
            n = min(len(stage[1]), nbytes - pos)
            crc = self._reader.read_part(name, pos, stage[1][:n], crc)
            dst[pos : pos + n].copy_(stage[0][:n], non_blocking=True)
            if cuda:
                stage[2] = _cuda.Event()
                stage[2].record(stream)
            pos += n
            turn += 1
        self._reader.check_rest(name, pos, crc)
        return UntypedStorage._wrap(flat)

    def _staging_buffers(self, nbytes, pinned):
        """The two staging buffers, of STAGE_BYTES or, while the storages read so far were
        smaller, of the largest of them rounded up to 1 MiB: loading a small file pins
        little memory."""
        size = min(self.STAGE_BYTES, -(-max(nbytes, 1) // (1 << 20)) << 20)
        if self._stages is None or len(self._stages[0][1]) < size:
            self.finish()  # the copies from the smaller buffers are done
            self._stages = []
            for _ in range(2):
                t = _C.empty(size, dtype=_C.uint8, pin_memory=pinned)
                self._stages.append([t, _C._numpy(t), None])
        return self._stages

    def finish(self):
        """Waits for the copies from the staging buffers: the storages are ready for any
        stream when load returns, as after a blocking copy."""
        for stage in self._stages or ():
            if stage[2] is not None:
                stage[2].synchronize()
                stage[2] = None

    def _checked_nbytes(self, name, numel, dtype):
        nbytes = numel * dtype.itemsize
        size = self._reader.record_size(name)
        if size < nbytes:
            raise RuntimeError(
                f"cudalite.load: record {name} holds {size} bytes, but its storage needs {nbytes}"
            )
        return nbytes

    def _read(self, name, numel, dtype):
        """A CPU storage of ``dtype`` with the ``numel`` elements of record ``name``."""
        np = numpy()
        nbytes = self._checked_nbytes(name, numel, dtype)
        native = self._byteorder == sys.byteorder
        if self._mapped is not None and native:
            offset = self._reader.data_offset(name)
            if offset is not None and offset % dtype.itemsize == 0:
                return _from_array(self._mapped[offset : offset + nbytes], dtype, owned=False)
        # Read straight into the storage's memory, from cudalite's allocator: NumPy's asks the
        # kernel for huge pages, whose first touch can stall on memory compaction.
        flat = _C._empty([numel], dtype, "cpu", False)
        values = _host_array(flat)
        self._reader.read_into(name, values.view(np.uint8))
        if not native:
            values.byteswap(inplace=True)
        return UntypedStorage._wrap(flat)


def _full_unpickler_class(pickle_module):
    """``pickle_module``'s unpickler with torch's tensor, storage, dtype, device and Size
    names mapped to cudalite's; other names of torch are refused (torch is not imported)."""

    class TorchNamesUnpickler(pickle_module.Unpickler):
        def find_class(self, module, name):
            obj = _torch_names.lookup(module, name)
            if obj is not None:
                return obj
            if module == "torch" or module.startswith("torch."):
                raise pickle.UnpicklingError(
                    f"cudalite.load: the file needs {module}.{name}, which cudalite does not "
                    "provide (it reads torch's tensors, Parameters, storages, dtypes, devices "
                    "and Size)"
                )
            return super().find_class(module, name)

    return TorchNamesUnpickler


def _load(reader, map_location, unpickler_class, weights_only, mapped, **pickle_load_args):
    if reader.has_record("constants.pkl"):
        raise RuntimeError(
            "cudalite.load: this is a TorchScript archive (torch.jit.save), which cudalite "
            "cannot load"
        )
    storages = _StorageLoader(reader, map_location, weights_only, mapped)

    class StorageUnpickler(unpickler_class):
        def persistent_load(self, saved_id):
            return storages.persistent_load(saved_id)

    data = io.BytesIO(reader.get_record("data.pkl"))
    if weights_only:
        pickle_load_args["max_bytes"] = reader.file_size
    try:
        return StorageUnpickler(data, **pickle_load_args).load()
    finally:
        storages.finish()


def _legacy_load(f, unpickler_class, **pickle_load_args):
    """torch's legacy (pre-zip) format starts with a pickled magic number; cudalite reads
    the number, to tell a legacy file from a corrupt one, and stops there."""
    magic_number = unpickler_class(f, **pickle_load_args).load()
    if magic_number != MAGIC_NUMBER:
        raise RuntimeError("Invalid magic number; corrupt file?")
    raise RuntimeError(
        "cudalite.load: this file is in torch's legacy format (torch < 1.6, or torch.save with "
        "_use_new_zipfile_serialization=False), which cudalite does not read. Load it in torch "
        "and save it again with torch.save's default format."
    )


def load(
    f, map_location=None, pickle_module=None, *, weights_only=None, mmap=None, **pickle_load_args
):
    """load(f, map_location=None, pickle_module=pickle, *, weights_only=True, mmap=None,
    **pickle_load_args)

    Loads an object saved with :func:`cudalite.save` or ``torch.save`` from a file.

    Storages are read into host memory, then moved to the device they were saved from, or
    to the one ``map_location`` names.

    Args:
        f: a file-like object (has to implement read, readline, tell, and seek), or a string
            or os.PathLike object containing a file name.
        map_location: a function ``(storage, location) -> storage or None``, a
            ``cudalite.device``, a string ('cpu', 'cuda', 'cuda:1') or a dict remapping
            locations (``{'cuda:1': 'cuda:0'}``).
        pickle_module: module used for unpickling (only with ``weights_only=False``).
        weights_only: only load tensors, primitive types, dictionaries and the globals added
            with :func:`add_safe_globals` (the default).
        mmap: map the file and build CPU tensors on the mapping (copy-on-write) instead of
            reading the storages into memory; ``f`` must be a path.
        pickle_load_args: keyword arguments for the unpickler, e.g. ``encoding``.
    """
    if weights_only is None:
        weights_only = pickle_module is None
    if weights_only:
        if pickle_module is not None:
            raise RuntimeError(
                "Can not safely load weights when explicit pickle_module is specified"
            )
    elif pickle_module is None:
        pickle_module = pickle
    if pickle_load_args and weights_only:
        warnings.warn("pickle_load_args only works if `weights_only=False`.", stacklevel=2)
    pickle_load_args.setdefault("encoding", "utf-8")
    if weights_only:
        unpickler_class = _wo.Unpickler
    else:
        unpickler_class = _full_unpickler_class(pickle_module)

    opened = open(f, "rb") if _is_path(f) else f  # noqa: SIM115 (closed below)
    try:
        if not _is_path(f):
            _check_seekable(opened)
        try:
            if _is_zipfile(opened):
                reader = _archive.ArchiveReader(opened)
                mapped = None
                if mmap:
                    if not _is_path(f):
                        raise ValueError("f must be a file path in order to use the mmap argument")
                    mapped = numpy().memmap(os.fspath(f), dtype="uint8", mode="c")
                return _load(
                    reader, map_location, unpickler_class, weights_only, mapped, **pickle_load_args
                )
            if mmap:
                name = f"{f}, " if isinstance(f, str) else ""
                raise RuntimeError(
                    "mmap can only be used with files saved with "
                    f"`cudalite.save({name}_use_new_zipfile_serialization=True), please "
                    "cudalite.save your checkpoint with this option in order to use mmap."
                )
            if weights_only:
                pickle_load_args["max_bytes"] = _remaining_size(opened)
            _legacy_load(opened, unpickler_class, **pickle_load_args)
        except pickle.UnpicklingError as e:
            if not weights_only:
                raise
            raise pickle.UnpicklingError(_get_wo_message(str(e))) from None
    finally:
        if _is_path(f):
            opened.close()
