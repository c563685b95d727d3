"""Reference counts of CUDA memory shared with other processes (the producer's side) and the
mappings of counters a consumer decrements.

Note [IPC reference counts]
A process that sends a CUDA tensor keeps its memory until every consumer has released it, as
torch does (``torch/csrc/CudaIPCTypes.cpp``). Each send takes a slot of a counter file (a
small file in ``/dev/shm`` of ``REF_COUNTER_FILE_SIZE`` int64 slots) and sets it to 1; the
consumer maps the file and decrements the slot when its tensor dies (in C++, after
synchronising its stream: ``csrc/cuda/ipc.cpp``). The producer's storage holds the slots of
its sends: when it dies with a slot above 0, its memory waits in limbo instead of returning to
the caching allocator (Note [Shared memory in limbo] in ``csrc/cuda/ipc.cpp``), and
``collect()`` (``cudalite.cuda.ipc_collect()``, and every new send) frees what the consumers
have released since. This module keeps one record per send (its slot and the event the
consumer waits on) until the slot reaches 0; slots are never reused, and a file is removed
once all its slots are done. A consumer that dies without releasing (SIGKILL) leaves its slot
at 1: that memory stays reserved until the producer exits, which then warns once.

Counter files are mapped with libc's ``mmap`` and never unmapped: a consumer's tensor may die
during interpreter shutdown, after Python objects such as ``mmap.mmap`` are gone.
"""

from __future__ import annotations

import atexit
import ctypes
import os
import threading
import uuid
import warnings

REF_COUNTER_FILE_SIZE = 10000  # int64 slots per file (torch's CUDA_IPC_REF_COUNTER_FILE_SIZE)
_SLOT = ctypes.sizeof(ctypes.c_int64)
_SHM_DIR = "/dev/shm"

_libc = ctypes.CDLL(None, use_errno=True)
_libc.mmap.restype = ctypes.c_void_p
_libc.mmap.argtypes = [
    ctypes.c_void_p,
    ctypes.c_size_t,
    ctypes.c_int,
    ctypes.c_int,
    ctypes.c_int,
    ctypes.c_long,
]
_PROT_RW = 0x1 | 0x2  # PROT_READ | PROT_WRITE
_MAP_SHARED = 0x01
_MAP_FAILED = ctypes.c_void_p(-1).value


def _map(path: str, create: bool) -> int:
    """The address of the counter file at ``path``, mapped shared for the process lifetime."""
    flags = os.O_RDWR | (os.O_CREAT | os.O_EXCL if create else 0)
    fd = os.open(path, flags, 0o600)
    try:
        if create:
            os.ftruncate(fd, REF_COUNTER_FILE_SIZE * _SLOT)
        addr = _libc.mmap(None, REF_COUNTER_FILE_SIZE * _SLOT, _PROT_RW, _MAP_SHARED, fd, 0)
    finally:
        os.close(fd)
    if addr is None or addr == _MAP_FAILED:
        err = ctypes.get_errno()
        raise OSError(err, f"mmap of the CUDA IPC counter file {path}: {os.strerror(err)}")
    return addr


class _CounterFile:
    """A counter file this process created: slots handed out once each, in order."""

    def __init__(self):
        self.name = f"cudalite_ipc_{os.getpid()}_{uuid.uuid4().hex[:12]}"
        self.path = os.path.join(_SHM_DIR, self.name)
        self.addr = _map(self.path, create=True)
        self.next = 0  # the next free slot
        self.live = 0  # slots whose count has not been collected yet

    def slot(self, i):
        return ctypes.c_int64.from_address(self.addr + i * _SLOT)

    def unlink(self):
        try:
            os.unlink(self.path)
        except FileNotFoundError:
            pass


class _Sent:
    """One send: its counter slot, the event the consumer waits on and, for pages of an
    expandable segment, their exported descriptors (open until the consumer is done)."""

    __slots__ = ("event", "fds", "file", "index")

    def __init__(self, file, index, event):
        self.file = file
        self.index = index
        self.event = event
        self.fds = ()

    def close_fds(self):
        for fd in self.fds:
            try:
                os.close(fd)
            except OSError:
                pass
        self.fds = ()

    def count(self):
        return self.file.slot(self.index).value


_lock = threading.Lock()
_current: _CounterFile | None = None
_sent: list[_Sent] = []
_received: dict[str, int] = {}  # counter file name -> mapped address (consumer side)
_warned = False


def _collect_locked() -> int:
    global _sent
    keep, freed = [], 0
    for s in _sent:
        if s.count() <= 0:
            s.close_fds()
            s.file.live -= 1
            if s.file.live == 0 and s.file is not _current:
                s.file.unlink()
            freed += 1
        else:
            keep.append(s)
    _sent = keep
    return freed


def collect() -> int:
    """Forgets the sends every consumer has released and frees the producer's memory in limbo
    that they held; returns how many storages were freed."""
    from cudalite import _C

    with _lock:
        _collect_locked()
    return _C._cuda._ipc_collect()


def track(event) -> tuple[str, int, int]:
    """Takes a counter slot for one send (set to 1: the consumer's reference) and keeps
    ``event`` for the consumer; returns the counter file's name, the slot and its address."""
    global _current
    with _lock:
        _collect_locked()
        if _current is None or _current.next == REF_COUNTER_FILE_SIZE:
            old = _current
            _current = _CounterFile()
            if old is not None and old.live == 0:
                old.unlink()
        f = _current
        index = f.next
        f.next += 1
        f.live += 1
        f.slot(index).value = 1
        _sent.append(_Sent(f, index, event))
        return f.name, index, f.addr + index * _SLOT


def keep_fds(name: str, index: int, fds) -> None:
    """The descriptors exported for a send, closed once its consumer is done with them."""
    with _lock:
        for s in _sent:
            if s.file.name == name and s.index == index:
                s.fds = tuple(fds)
                return
    for fd in fds:  # the send is gone already
        os.close(fd)


def untrack(name: str, index: int) -> None:
    """Gives up a slot whose send failed."""
    with _lock:
        for s in _sent:
            if s.file.name == name and s.index == index:
                s.file.slot(index).value = 0
        _collect_locked()


def pending() -> int:
    """Sends whose memory is still held for a consumer (tests, the exit warning)."""
    with _lock:
        return len(_sent)


def counter_address(name: str, index: int) -> int:
    """The address of slot ``index`` of the producer's counter file ``name`` (consumer side);
    0 when the file is gone (the producer exited), in which case nothing is counted."""
    if "/" in name or not name.startswith("cudalite_ipc_"):
        raise ValueError(f"invalid CUDA IPC counter file name: {name!r}")
    if not 0 <= index < REF_COUNTER_FILE_SIZE:
        raise ValueError(f"invalid CUDA IPC counter slot: {index}")
    with _lock:
        addr = _received.get(name)
        if addr is None:
            try:
                addr = _map(os.path.join(_SHM_DIR, name), create=False)
            except FileNotFoundError:
                return 0
            _received[name] = addr
    return addr + index * _SLOT


@atexit.register
def _at_exit():
    global _warned
    with _lock:
        _collect_locked()
        held = len(_sent)
        files = {id(s.file): s.file for s in _sent}
        if _current is not None:
            files[id(_current)] = _current
        for f in files.values():
            f.unlink()
    if held and not _warned:
        _warned = True
        warnings.warn(
            "Producer process has been terminated before all shared CUDA tensors released. "
            "See Note [Sharing CUDA tensors]",
            stacklevel=1,
        )
