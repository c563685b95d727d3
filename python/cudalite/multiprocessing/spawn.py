"""``spawn`` and ``start_processes``: run ``fn(i, *args)`` in ``nprocs`` new processes and wait
for them, raising the first failure in the parent, as ``torch.multiprocessing.spawn``.

Each child reports an exception by pickling its traceback into a file of its own (a file is
a one-shot message that can't deadlock the way a queue can); a child that dies without one
(a signal, ``sys.exit(n)``) is reported by its exit code. On the first failure the others are
terminated (SIGTERM, then SIGKILL after a grace period).
"""

from __future__ import annotations

import logging
import multiprocessing
import multiprocessing.connection
import os
import pickle
import signal
import sys
import tempfile
import time
import warnings

__all__ = [
    "ProcessContext",
    "ProcessExitedException",
    "ProcessRaisedException",
    "SpawnContext",
    "spawn",
    "start_processes",
]

log = logging.getLogger(__name__)


class ProcessException(Exception):
    __slots__ = ["error_index", "error_pid"]

    def __init__(self, msg: str, error_index: int, error_pid: int):
        super().__init__(msg)
        self.msg = msg
        self.error_index = error_index
        self.error_pid = error_pid

    def __reduce__(self):
        return type(self), (self.msg, self.error_index, self.error_pid)


class ProcessRaisedException(ProcessException):
    """A process failed with an exception raised by the code it ran."""


class ProcessExitedException(ProcessException):
    """A process ended by a signal or with a non-zero exit code."""

    __slots__ = ["exit_code"]

    def __init__(
        self,
        msg: str,
        error_index: int,
        error_pid: int,
        exit_code: int,
        signal_name: str | None = None,
    ):
        super().__init__(msg, error_index, error_pid)
        self.exit_code = exit_code
        self.signal_name = signal_name

    def __reduce__(self):
        args = (self.msg, self.error_index, self.error_pid, self.exit_code, self.signal_name)
        return type(self), args


def _set_parent_death_signal(sig):
    """Linux: the child gets ``sig`` when its parent dies (prctl PR_SET_PDEATHSIG)."""
    if not sys.platform.startswith("linux"):
        return
    import ctypes

    try:
        ctypes.CDLL("libc.so.6").prctl(1, int(sig))  # PR_SET_PDEATHSIG
    except OSError:
        pass


def _wrap(fn, i, args, error_file):
    _set_parent_death_signal(signal.SIGINT)
    try:
        fn(i, *args)
    except KeyboardInterrupt:
        pass  # stopped by the parent
    except Exception:
        import traceback

        with open(error_file, "wb") as fh:
            pickle.dump(traceback.format_exc(), fh)
        sys.exit(1)


class ProcessContext:
    """The processes ``start_processes(join=False)`` started; ``join()`` waits for them."""

    def __init__(self, processes, error_files):
        self.error_files = error_files
        self.processes = processes
        self.sentinels = {p.sentinel: index for index, p in enumerate(processes)}

    def pids(self):
        return [int(p.pid) for p in self.processes]

    def _join_procs_with_timeout(self, timeout: float):
        end = time.monotonic() + timeout
        for p in self.processes:
            p.join(max(0, end - time.monotonic()))

    def join(self, timeout: float | None = None, grace_period: float | None = None):
        """Waits up to ``timeout`` seconds for a process to end. Returns True once all have
        ended successfully, False while some still run; raises ``ProcessRaisedException`` or
        ``ProcessExitedException`` for the first that failed, after ending the others."""
        if not self.sentinels:
            return True
        ready = multiprocessing.connection.wait(self.sentinels.keys(), timeout=timeout)
        error_index = None
        for sentinel in ready:
            index = self.sentinels.pop(sentinel)
            p = self.processes[index]
            p.join()
            if p.exitcode != 0:
                error_index = index
                break
        if error_index is None:
            return not self.sentinels
        if grace_period is not None:
            self._join_procs_with_timeout(grace_period)
        for p in self.processes:
            if p.is_alive():
                log.warning("Terminating process %s via signal SIGTERM", p.pid)
                p.terminate()
        self._join_procs_with_timeout(30 if grace_period is None else grace_period)
        for p in self.processes:
            if p.is_alive():
                log.warning(
                    "Unable to shutdown process %s via SIGTERM , forcefully exiting via SIGKILL",
                    p.pid,
                )
                p.kill()
            p.join()
        failed = self.processes[error_index]
        if not os.access(self.error_files[error_index], os.R_OK):
            exitcode = failed.exitcode
            if exitcode < 0:
                try:
                    name = signal.Signals(-exitcode).name
                except ValueError:
                    name = f"<Unknown signal {-exitcode}>"
                raise ProcessExitedException(
                    f"process {error_index:d} terminated with signal {name}",
                    error_index=error_index,
                    error_pid=failed.pid,
                    exit_code=exitcode,
                    signal_name=name,
                )
            raise ProcessExitedException(
                f"process {error_index:d} terminated with exit code {exitcode:d}",
                error_index=error_index,
                error_pid=failed.pid,
                exit_code=exitcode,
            )
        with open(self.error_files[error_index], "rb") as fh:
            original_trace = pickle.load(fh)
        os.unlink(self.error_files[error_index])
        msg = f"\n\n-- Process {error_index:d} terminated with the following error:\n"
        msg += original_trace
        raise ProcessRaisedException(msg, error_index, failed.pid)


class SpawnContext(ProcessContext):
    def __init__(self, processes, error_files):
        warnings.warn("SpawnContext is renamed to ProcessContext since 1.4 release.", stacklevel=2)
        super().__init__(processes, error_files)


def start_processes(fn, args=(), nprocs=1, join=True, daemon=False, start_method="spawn"):
    """Starts ``nprocs`` processes running ``fn(i, *args)`` with ``start_method``; waits for
    them when ``join``, else returns their ``ProcessContext``."""
    mp = multiprocessing.get_context(start_method)
    error_files, processes = [], []
    for i in range(nprocs):
        # An unused name: the child creates the file only when it fails.
        fd, name = tempfile.mkstemp(prefix="cudalite-errorfile-", suffix=".pickle")
        os.close(fd)
        os.unlink(name)
        p = mp.Process(target=_wrap, args=(fn, i, args, name), daemon=daemon)
        p.start()
        error_files.append(name)
        processes.append(p)
    context = ProcessContext(processes, error_files)
    if not join:
        return context
    while not context.join():
        pass


def spawn(fn, args=(), nprocs=1, join=True, daemon=False, start_method="spawn"):
    """``start_processes`` with the ``spawn`` start method, the one CUDA works with: each
    process runs ``fn(i, *args)`` for its index ``i``."""
    if start_method != "spawn":
        msg = (
            f"This method only supports start_method=spawn (got: {start_method}).\n"
            "To use a different start_method use:\n\t\t"
            " cudalite.multiprocessing.start_processes(...)"
        )
        warnings.warn(msg, FutureWarning, stacklevel=2)
    return start_processes(fn, args, nprocs, join, daemon, start_method="spawn")
