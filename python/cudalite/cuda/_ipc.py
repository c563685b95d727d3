"""``torch.cuda.ipc_collect``: the producer's side of CUDA IPC memory release
(Note [IPC reference counts] in cudalite/multiprocessing/_cuda_ipc.py)."""

from __future__ import annotations

import sys

from cudalite.cuda._lazy import _lazy_init

__all__ = ["ipc_collect"]


def ipc_collect() -> None:
    r"""Force collects GPU memory after it has been released by CUDA IPC.

    The memory of a CUDA tensor sent to another process stays reserved until that process
    releases it; this returns to the caching allocator the memory that every consumer has
    released since (sending another tensor does the same).
    """
    _lazy_init()
    ipc = sys.modules.get("cudalite.multiprocessing._cuda_ipc")
    if ipc is not None:  # nothing was ever shared otherwise
        ipc.collect()
