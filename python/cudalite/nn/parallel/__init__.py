"""``cudalite.nn.parallel``: ``DataParallel`` (several GPUs, one process) and
``DistributedDataParallel`` (one process per GPU, over cudalite.distributed)."""

from __future__ import annotations

from cudalite.nn.parallel.distributed import DistributedDataParallel

__all__ = ["DistributedDataParallel"]
