"""``cudalite.distributed``: process groups and collectives (the torch.distributed subset
training scripts use), with NCCL for CUDA tensors and a store-based CPU backend ("gloo").

Launch one process per GPU with torchrun or ``python -m cudalite.distributed.run`` (same
flags); each calls ``init_process_group("nccl")``, which reads RANK, WORLD_SIZE,
MASTER_ADDR and MASTER_PORT. See docs/distributed.md.
"""

from __future__ import annotations

from cudalite.distributed._store import (
    DistBackendError,
    DistError,
    DistNetworkError,
    DistStoreError,
    FileStore,
    HashStore,
    PrefixStore,
    Store,
    TCPStore,
)
from cudalite.distributed._work import ReduceOp, Work
from cudalite.distributed.distributed_c10d import *  # noqa: F403 (its __all__)
from cudalite.distributed.distributed_c10d import _NO_GROUP  # noqa: F401
from cudalite.distributed.distributed_c10d import __all__ as _c10d_all

__all__ = [
    "DistBackendError",
    "DistError",
    "DistNetworkError",
    "DistStoreError",
    "FileStore",
    "HashStore",
    "PrefixStore",
    "ReduceOp",
    "Store",
    "TCPStore",
    "Work",
    *_c10d_all,
]
