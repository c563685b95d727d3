"""``cudalite.multiprocessing``: Python's :mod:`multiprocessing` with reducers for tensors, as
``torch.multiprocessing``.

Everything of :mod:`multiprocessing` is re-exported (``Process``, ``Queue``, ``Pipe``,
``get_context``...); importing this module registers ``reductions.reduce_tensor`` with
multiprocessing's pickler, so a CUDA tensor put on a queue reaches the other process as a
view of the same GPU memory (CUDA IPC), not a copy. Processes that use CUDA must be started
with ``spawn`` (or ``forkserver``): ``spawn(fn, args, nprocs)`` runs ``fn(i, *args)`` in
``nprocs`` of them. A CPU tensor moves to shared memory (``Tensor.share_memory_()``) and the
receiver maps the same memory. See docs/multi_gpu.md.
"""

from __future__ import annotations

import multiprocessing
from multiprocessing import *  # noqa: F403

from cudalite.multiprocessing.reductions import init_reductions
from cudalite.multiprocessing.spawn import (
    ProcessContext,
    ProcessExitedException,
    ProcessRaisedException,
    SpawnContext,
    spawn,
    start_processes,
)

__all__ = [
    "ProcessContext",
    "ProcessExitedException",
    "ProcessRaisedException",
    "SpawnContext",
    "get_all_sharing_strategies",
    "get_sharing_strategy",
    "set_sharing_strategy",
    "spawn",
    "start_processes",
]
__all__ += multiprocessing.__all__  # type: ignore[attr-defined]

# How CPU tensors are shared: cudalite always passes the shared memory's file descriptor
# ("file_descriptor"); the setting is kept for code that reads or sets it.
_sharing_strategy = "file_descriptor"
_all_sharing_strategies = {"file_descriptor", "file_system"}


def set_sharing_strategy(new_strategy):
    """Sets the strategy for sharing CPU tensors (one of ``get_all_sharing_strategies()``)."""
    global _sharing_strategy
    if new_strategy not in _all_sharing_strategies:
        raise AssertionError(
            f"invalid sharing strategy {new_strategy!r}, expected one of {_all_sharing_strategies}"
        )
    _sharing_strategy = new_strategy


def get_sharing_strategy():
    """The strategy for sharing CPU tensors."""
    return _sharing_strategy


def get_all_sharing_strategies():
    """The sharing strategies this system supports."""
    return _all_sharing_strategies


init_reductions()
