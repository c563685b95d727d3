"""cudalite.distributed in one process: availability, the errors before init_process_group,
rendezvous arguments, and a world of one over each init method."""

from __future__ import annotations

import os
from datetime import timedelta

import pytest

import cudalite
import cudalite.distributed as dist
import cudalite.nn as nn

NO_GROUP = "Default process group has not been initialized"


@pytest.fixture
def clean_env(monkeypatch):
    for k in ("RANK", "WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT", "LOCAL_RANK"):
        monkeypatch.delenv(k, raising=False)
    yield monkeypatch
    if dist.is_initialized():
        dist.destroy_process_group()


def test_availability():
    assert dist.is_available() and not dist.is_initialized()
    assert dist.is_gloo_available()
    assert dist.is_nccl_available() == cudalite.cuda.nccl._loaded()
    assert dist.is_torchelastic_launched() == ("TORCHELASTIC_RUN_ID" in os.environ)


@pytest.mark.parametrize("fn", [dist.get_rank, dist.get_world_size, dist.barrier, dist.get_backend])
def test_functions_that_need_a_group_raise_torchs_error(fn):
    with pytest.raises(ValueError, match=NO_GROUP):
        fn()


def test_collective_before_init_raises():
    with pytest.raises(ValueError, match=NO_GROUP):
        dist.all_reduce(cudalite.ones(1))
    with pytest.raises(ValueError, match=NO_GROUP):
        dist.new_group([0])


def test_destroy_without_group_is_torchs_assertion():
    with pytest.raises(AssertionError, match="Process group cannot be None"):
        dist.destroy_process_group()


def test_ddp_needs_a_group():
    from cudalite.nn.parallel import DistributedDataParallel as DDP

    with pytest.raises(ValueError, match=NO_GROUP):
        DDP(nn.Linear(1, 1))
    assert cudalite.nn.parallel.DistributedDataParallel is DDP


@pytest.mark.parametrize("missing", ["RANK", "WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT"])
def test_env_rendezvous_names_the_missing_variable(clean_env, missing):
    env = {"RANK": "0", "WORLD_SIZE": "1", "MASTER_ADDR": "127.0.0.1", "MASTER_PORT": "1"}
    for k, v in env.items():
        if k != missing:
            clean_env.setenv(k, v)
    with pytest.raises(ValueError) as e:
        dist.init_process_group("gloo")
    assert str(e.value) == (
        "Error initializing torch.distributed using env:// rendezvous: environment variable "
        f"{missing} expected, but not set"
    )
    assert not dist.is_initialized()


def test_init_arguments_are_checked(clean_env, tmp_path):
    with pytest.raises(ValueError, match="Cannot specify both init_method and store"):
        dist.init_process_group("gloo", init_method="env://", store=dist.HashStore())
    with pytest.raises(ValueError, match="world_size must be positive if using store"):
        dist.init_process_group("gloo", store=dist.HashStore(), rank=0)
    with pytest.raises(ValueError, match="rank must be non-negative if using store"):
        dist.init_process_group("gloo", store=dist.HashStore(), world_size=1)
    with pytest.raises(ValueError, match="rank parameter missing"):
        dist.init_process_group("gloo", init_method="tcp://127.0.0.1:1")
    with pytest.raises(ValueError, match="Invalid backend: 'mpi'"):
        dist.init_process_group("mpi", store=dist.HashStore(), rank=0, world_size=1)
    with pytest.raises(TypeError, match="timedelta"):
        dist.init_process_group("gloo", store=dist.HashStore(), rank=0, world_size=1, timeout=5)


def _world_of_one():
    assert dist.is_initialized()
    assert dist.get_rank() == 0 and dist.get_world_size() == 1
    assert dist.get_backend() == "gloo"
    t = cudalite.tensor([1.0, 2.0])
    dist.all_reduce(t)
    assert t.tolist() == [1.0, 2.0]
    dist.broadcast(t, src=0)
    dist.barrier()
    with pytest.raises(ValueError, match="trying to initialize the default process group twice!"):
        dist.init_process_group("gloo", store=dist.HashStore(), rank=0, world_size=1)
    dist.destroy_process_group()
    assert not dist.is_initialized()


def test_env_init_world_of_one(clean_env):
    port = dist.TCPStore("127.0.0.1", 0, 1, True).port  # a free port, released below
    clean_env.setenv("RANK", "0")
    clean_env.setenv("WORLD_SIZE", "1")
    clean_env.setenv("MASTER_ADDR", "127.0.0.1")
    clean_env.setenv("MASTER_PORT", str(port + 1 if port < 65000 else port - 1))
    dist.init_process_group("gloo", timeout=timedelta(seconds=30))
    _world_of_one()


def test_file_init_world_of_one(clean_env, tmp_path):
    dist.init_process_group("gloo", init_method=f"file://{tmp_path}/store", rank=0, world_size=1)
    _world_of_one()


def test_store_init_world_of_one(clean_env):
    dist.init_process_group("gloo", store=dist.HashStore(), rank=0, world_size=1)
    _world_of_one()


def test_reduce_op_prints_as_torch():
    assert str(dist.ReduceOp.SUM) == "RedOpType.SUM"
    assert dist.ReduceOp.AVG == dist.ReduceOp(dist.ReduceOp.AVG)
    assert dist.Backend("NCCL") == "nccl" and dist.Backend.GLOO == "gloo"
    with pytest.raises(ValueError, match="Invalid backend"):
        dist.Backend("foo")


def test_nccl_backend_without_nccl_says_so(clean_env):
    if cudalite.cuda.nccl._loaded():
        pytest.skip("NCCL is loadable here")
    with pytest.raises(RuntimeError, match="NCCL"):
        dist.init_process_group("nccl", store=dist.HashStore(), rank=0, world_size=1)
    assert not dist.is_initialized()


def test_one_cpu_backend_serves_every_device(clean_env):
    dist.init_process_group("gloo", store=dist.HashStore(), rank=0, world_size=1)
    pg = dist.group.WORLD
    assert pg._backend_for("cpu") is pg._backend_for("cuda")
    dist.destroy_process_group()


def test_nccl_argument_checks_have_torchs_messages():
    from cudalite.distributed import _backend_nccl as nb

    with pytest.raises(ValueError, match="Cannot use ReduceOp.BAND with NCCL"):
        nb.nccl_op(dist.ReduceOp.BAND)
    assert nb.nccl_op(dist.ReduceOp.AVG) == 4 and nb.nccl_op(dist.ReduceOp.SUM) == 0
    with pytest.raises(ValueError, match="Tensors must be CUDA and dense"):
        nb.check_tensor(cudalite.ones(2))


def test_cpu_backend_bitwise_and_bool_reductions(clean_env):
    from cudalite.distributed._backend_store import reduce_tensors

    a, b = cudalite.tensor([6, 3]), cudalite.tensor([3, 5])
    R = dist.ReduceOp
    assert reduce_tensors([a, b], R.BAND, 2).tolist() == [2, 1]
    assert reduce_tensors([a, b], R.BOR, 2).tolist() == [7, 7]
    assert reduce_tensors([a, b], R.BXOR, 2).tolist() == [5, 6]
    assert reduce_tensors([a, b], R.AVG, 2).tolist() == [4, 4]
    t, f = cudalite.tensor([True, False]), cudalite.tensor([False, False])
    assert reduce_tensors([t, f], R.SUM, 2).tolist() == [True, False]
    assert reduce_tensors([t, f], R.PRODUCT, 2).tolist() == [False, False]


def test_node_local_rank(clean_env):
    assert not dist.is_mpi_available() and not dist.is_ucc_available()
    assert dist.get_node_local_rank(fallback_rank=3) == 3
    with pytest.raises(RuntimeError, match="LOCAL_RANK is not in the environment"):
        dist.get_node_local_rank()
    clean_env.setenv("LOCAL_RANK", "1")
    assert dist.get_node_local_rank(fallback_rank=3) == 1
