"""The NCCL process group: one NCCL communicator per device this process uses, created at
the first collective on that device (or at ``init_process_group(device_id=...)``) from a
unique id that rank 0 publishes in the store.

Ordering, as torch's ProcessGroupNCCL: with ``async_op=False`` a collective is queued on
the caller's current stream, so later work on that stream sees its result and the host does
not wait. With ``async_op=True`` it runs on an internal stream of the device that first
waits for the current stream; ``Work.wait()`` makes the current stream wait for it.

Timeouts: every collective records an event; a watchdog thread checks the oldest pending
ones and NCCL's asynchronous errors. A collective still running after the group's timeout
(10 minutes by default) aborts the communicators and, as torch does, ends the process with
the reason on stderr; with ``TORCH_NCCL_ASYNC_ERROR_HANDLING=0`` the process stays up and
the next call on the group raises the error.
"""

from __future__ import annotations

import collections
import os
import sys
import threading
import time
import warnings
from datetime import timedelta

import cudalite
from cudalite.cuda import nccl as _nccl
from cudalite.distributed._store import DistBackendError
from cudalite.distributed._work import RedOpType, Work

# _C._nccl.collective's kinds and NCCL's reduction codes.
ALL_REDUCE, REDUCE, BROADCAST, ALL_GATHER, REDUCE_SCATTER, SEND, RECV = range(7)
_OP_NAMES = ["ALLREDUCE", "REDUCE", "BROADCAST", "ALLGATHER", "REDUCE_SCATTER", "SEND", "RECV"]
_NCCL_OPS = {
    RedOpType.SUM: 0,
    RedOpType.PRODUCT: 1,
    RedOpType.MAX: 2,
    RedOpType.MIN: 3,
    RedOpType.AVG: 4,
}


def nccl_op(op: RedOpType) -> int:
    code = _NCCL_OPS.get(op)
    if code is None:
        raise ValueError(f"Cannot use ReduceOp.{op.name} with NCCL")
    return code


def check_tensor(t) -> None:
    if not t.is_cuda:
        raise ValueError("Tensors must be CUDA and dense")
    if not t.is_contiguous():
        raise ValueError("Tensors must be contiguous")


class ProcessGroupNCCL:
    """The NCCL backend of one process group (ranks 0..size-1 of the group)."""

    backend = "nccl"

    def __init__(self, store, rank: int, size: int, timeout, device_id=None):
        self.store = store
        self._rank = rank
        self._size = size
        self._timeout = timeout.total_seconds()
        self._comms: dict[int, int] = {}
        self._streams: dict[int, object] = {}
        self._comm_counter = 0
        self._seq = 0
        self._pending: collections.deque = collections.deque()
        self._error: Exception | None = None
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._watchdog: threading.Thread | None = None
        self.bound_device = device_id.index if device_id is not None else None
        if not _nccl._loaded():
            raise RuntimeError(_nccl._lib().load_error() or "NCCL is not available")
        if self.bound_device is not None:
            self._comm(self.bound_device)

    def rank(self) -> int:
        return self._rank

    def size(self) -> int:
        return self._size

    # ---- communicators ----

    def _comm(self, device: int) -> int:
        comm = self._comms.get(device)
        if comm is not None:
            return comm
        lib = _nccl._lib()
        key = f"nccl_unique_id/{self._comm_counter}"
        self._comm_counter += 1
        if self._rank == 0:
            uid = lib.unique_id()
            self.store.set(key, uid)
        else:
            uid = self._store_wait(key, "its NCCL unique id from rank 0")
        # ncclCommInitRank waits for every rank without a timeout: meet in the store first,
        # so that a rank that never comes ends in an error instead of a hang.
        if self.store.add(f"{key}/joined", 1) == self._size:
            self.store.set(f"{key}/all", b"1")
        self._store_wait(f"{key}/all", "the other ranks to create the NCCL communicator")
        comm = lib.comm_init_rank(self._size, uid, self._rank, device)
        self._comms[device] = comm
        if self._watchdog is None:
            self._watchdog = threading.Thread(
                target=self._watch, daemon=True, name="cudalite-nccl-watchdog"
            )
            self._watchdog.start()
        return comm

    def _store_wait(self, key, what) -> bytes:
        """The store's value for key, waiting at most the group's timeout."""
        from cudalite.distributed._store import DistStoreError

        try:
            self.store.wait([key], timedelta(seconds=self._timeout))
        except DistStoreError:
            raise DistBackendError(
                f"[Rank {self._rank}] timed out after {int(self._timeout * 1000)} ms waiting "
                f"for {what} (a rank that crashed or never reached this collective)"
            ) from None
        return self.store.get(key)

    def _stream(self, device: int):
        s = self._streams.get(device)
        if s is None:
            s = cudalite.cuda.Stream(device=device)
            self._streams[device] = s
        return s

    def guess_device(self, device_ids=None) -> int:
        """The device of a collective with no tensor (barrier): device_ids[0], the bound
        device, the device of the first communicator, else rank % device_count (with torch's
        warning that the guess can hang)."""
        if device_ids:
            return int(device_ids[0])
        if self.bound_device is not None:
            return self.bound_device
        if self._comms:
            return next(iter(self._comms))
        device = self._rank % max(cudalite.cuda.device_count(), 1)
        warnings.warn(
            f"using GPU {device} as device used by this process is currently unknown. This "
            "can potentially cause a hang if this rank to GPU mapping is incorrect. You can "
            "specify device_id in init_process_group() to force use of a particular device.",
            stacklevel=3,
        )
        return device

    # ---- collectives ----

    def launch(self, kind, send, recv, op=0, peer=0, async_op=False, keep=()):
        """Queues one collective; returns a Work for async_op, else None."""
        if self._error is not None:
            raise self._error
        t = send if send is not None else recv
        device = t.get_device()
        comm = self._comms.get(device)
        if comm is None:
            comm = self._comm(device)
        lib = _nccl._C._nccl
        self._seq += 1
        ev = cudalite.cuda.Event()
        if async_op:
            s = self._stream(device)
            s.wait_stream(cudalite.cuda.current_stream(device))
            count = lib.collective(kind, comm, send, recv, op, peer, s.cuda_stream, ev)
            for x in keep:
                x.record_stream(s)
        else:  # on the current stream; ev is recorded there after it
            count = lib.collective(kind, comm, send, recv, op, peer, 0, ev)
        self._pending.append((ev, time.monotonic(), self._seq, kind, count))
        if async_op:
            return Work(ev, device, tuple(keep), self)
        return None

    def launch_group(self, calls, async_op=False, keep=()):
        """Several collectives in one NCCL group (one device): calls are
        (kind, send, recv, op, peer) tuples."""
        lib = _nccl._C._nccl
        lib.group_start()
        work = None
        try:
            for kind, send, recv, op, peer in calls:
                work = self.launch(kind, send, recv, op, peer, async_op, keep) or work
        finally:
            lib.group_end()
        return work

    # ---- errors and timeouts ----

    def _watch(self):
        lib = _nccl._C._nccl
        while not self._stop.wait(0.1):
            while self._pending and self._pending[0][0].query():
                self._pending.popleft()
            err = None
            for comm in list(self._comms.values()):
                code = lib.comm_async_error(comm)
                if code not in (0, 7):
                    err = DistBackendError(
                        f"[Rank {self._rank}] NCCL communicator encountered an error: "
                        f"{lib.error_string(code)}. {lib.last_error(comm)}"
                    )
                    break
            if err is None and self._pending:
                ev, t0, seq, kind, numel = self._pending[0]
                elapsed = time.monotonic() - t0
                if elapsed > self._timeout:
                    err = DistBackendError(
                        f"[Rank {self._rank}] Watchdog caught collective operation timeout: "
                        f"WorkNCCL(SeqNum={seq}, OpType={_OP_NAMES[kind]}, NumelIn={numel}, "
                        f"NumelOut={numel}, Timeout(ms)={int(self._timeout * 1000)}) ran for "
                        f"{int(elapsed * 1000)} milliseconds before timing out. Some ranks did "
                        "not join the collective (a rank that crashed, skipped a collective or "
                        "called them in another order)."
                    )
            if err is not None:
                self._fail(err)
                return

    def _fail(self, err: Exception) -> None:
        self._error = err
        self._pending.clear()
        print(err, file=sys.stderr, flush=True)
        if os.environ.get("TORCH_NCCL_ASYNC_ERROR_HANDLING", "3") not in ("0", "2"):
            # Down before the communicators are aborted: the abort would release the main
            # thread's hung wait, which could then end the process with status 0.
            print(
                f"[Rank {self._rank}] To avoid data inconsistency, we are taking the entire "
                "process down.",
                file=sys.stderr,
                flush=True,
            )
            os._exit(1)
        self.abort()

    def abort(self) -> None:
        lib = _nccl._C._nccl
        comms, self._comms = list(self._comms.values()), {}
        for comm in comms:
            try:
                lib.comm_abort(comm)
            except Exception:
                pass

    def shutdown(self) -> None:
        """Destroys the communicators once their queued work is done."""
        self._stop.set()
        if self._watchdog is not None and self._watchdog is not threading.current_thread():
            self._watchdog.join(5)  # it polls the communicators destroyed below
        lib = _nccl._C._nccl
        comms, self._comms = dict(self._comms), {}
        for device, comm in comms.items():
            if self._error is None:
                cudalite.cuda.synchronize(device)
                lib.comm_destroy(comm)
        self._pending.clear()
