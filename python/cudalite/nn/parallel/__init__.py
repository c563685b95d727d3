"""``cudalite.nn.parallel``: ``DataParallel`` (several GPUs, one process) and
``DistributedDataParallel`` (one process per GPU, over cudalite.distributed)."""

from __future__ import annotations

from cudalite.nn.parallel.data_parallel import DataParallel, data_parallel
from cudalite.nn.parallel.distributed import DistributedDataParallel
from cudalite.nn.parallel.parallel_apply import parallel_apply
from cudalite.nn.parallel.replicate import replicate
from cudalite.nn.parallel.scatter_gather import gather, scatter

__all__ = [
    "DataParallel",
    "DistributedDataParallel",
    "data_parallel",
    "gather",
    "parallel_apply",
    "replicate",
    "scatter",
]
