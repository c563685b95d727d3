"""cudalite.distributed: the single-process subset (no process-group backend yet)."""

from __future__ import annotations

import pytest

import cudalite
import cudalite.distributed as dist
import cudalite.nn as nn

NO_GROUP = "Default process group has not been initialized"


def test_single_process_checks():
    assert not dist.is_available() and not dist.is_initialized()
    assert not dist.is_nccl_available()


@pytest.mark.parametrize(
    "fn", [dist.get_rank, dist.get_world_size, dist.barrier, dist.destroy_process_group]
)
def test_functions_that_need_a_group_raise_torchs_error(fn):
    with pytest.raises(ValueError, match=NO_GROUP):
        fn()


def test_init_process_group_says_why():
    with pytest.raises(RuntimeError, match="no process-group backend"):
        dist.init_process_group(backend="nccl")


def test_ddp_needs_a_group():
    from cudalite.nn.parallel import DistributedDataParallel as DDP

    with pytest.raises(ValueError, match=NO_GROUP):
        DDP(nn.Linear(1, 1))
    assert cudalite.nn.parallel.DistributedDataParallel is DDP
