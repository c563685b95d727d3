"""cudalite.multiprocessing: the re-exported module, spawn, the tensor reducers and CUDA IPC
(next_wave.md §5.3). The CUDA tests run producers in fresh interpreters (tests/_ipc_helpers.py)
that spawn their consumers; they are skipped without a GPU."""

from __future__ import annotations

import ctypes
import functools
import multiprocessing
import os
import pickle
from multiprocessing.reduction import ForkingPickler

import pytest

import _ipc_helpers as helpers
import cudalite
import cudalite.multiprocessing as mp
from cudalite.multiprocessing import _cuda_ipc

needs_cuda = pytest.mark.skipif(not cudalite.cuda.is_available(), reason="needs a CUDA GPU")
needs_two_gpus = pytest.mark.skipif(cudalite.cuda.device_count() < 2, reason="needs two CUDA GPUs")


@pytest.fixture
def spawn_path(monkeypatch):
    """Spawned children find tests/_ipc_helpers.py and cudalite through PYTHONPATH."""
    path = os.pathsep.join([helpers.HERE, helpers.PYTHON_DIR, os.environ.get("PYTHONPATH", "")])
    monkeypatch.setenv("PYTHONPATH", path)


# ---- the module ----


def test_reexports_multiprocessing():
    for name in ("Process", "Queue", "Pipe", "get_context", "SimpleQueue", "cpu_count"):
        assert getattr(mp, name) is getattr(multiprocessing, name)
        assert name in mp.__all__
    for name in ("spawn", "start_processes", "ProcessContext", "get_sharing_strategy"):
        assert name in mp.__all__
    assert cudalite.multiprocessing is mp


def test_sharing_strategies():
    assert mp.get_all_sharing_strategies() == {"file_descriptor", "file_system"}
    assert mp.get_sharing_strategy() == "file_descriptor"
    mp.set_sharing_strategy("file_system")
    try:
        assert mp.get_sharing_strategy() == "file_system"
    finally:
        mp.set_sharing_strategy("file_descriptor")
    with pytest.raises(AssertionError, match="invalid sharing strategy 'shm'"):
        mp.set_sharing_strategy("shm")


def test_reducers_are_registered():
    assert ForkingPickler._extra_reducers[cudalite.Tensor] is mp.reductions.reduce_tensor


# ---- CPU tensors and the reducer's checks ----


def test_share_memory_moves_the_storage_in_place():
    x = cudalite.arange(6.0)
    view = x[2:]
    assert not x.is_shared()
    assert x.share_memory_() is x
    assert x.is_shared() and view.is_shared() and x.untyped_storage().is_shared()
    assert x.tolist() == [0, 1, 2, 3, 4, 5]
    view.add_(10)  # views still see the same memory
    assert x.tolist() == [0, 1, 12, 13, 14, 15]
    x.share_memory_()  # already shared: nothing changes
    assert x.is_shared()
    with pytest.raises(RuntimeError, match="not resizable"):
        x.resize_(100)
    s = cudalite.UntypedStorage(8)
    assert s.share_memory_() is s and s.is_shared()


def test_cpu_tensors_are_sent_as_shared_memory():
    x = cudalite.arange(6.0).reshape(2, 3).t()
    y = pickle.loads(ForkingPickler.dumps(x))  # as a queue does, here in one process
    assert x.is_shared()  # moved in place by the send, as torch's
    assert y.tolist() == x.tolist() and y.stride() == x.stride()
    y.mul_(2)
    assert x.tolist() == [[0, 6], [2, 8], [4, 10]]  # one memory
    w = cudalite.ones(3, requires_grad=True)
    assert pickle.loads(ForkingPickler.dumps(w)).requires_grad
    e = pickle.loads(ForkingPickler.dumps(cudalite.empty(0, 2)))
    assert e.shape == (0, 2)


def test_non_leaf_tensors_that_require_grad_are_refused():
    w = cudalite.ones(3, requires_grad=True)
    with pytest.raises(RuntimeError, match="^Cowardly refusing to serialize non-leaf tensor"):
        ForkingPickler.dumps(w * 2)
    ForkingPickler.dumps((w * 2).detach())


def test_cpu_tensor_through_a_queue_is_shared_with_the_other_process(spawn_path):
    ctx = mp.get_context("spawn")
    inbox, outbox = ctx.Queue(), ctx.Queue()
    p = ctx.Process(target=helpers.consumer_cpu, args=(inbox, outbox))
    p.start()
    x = cudalite.tensor([1.5, 2.5, 3.5])
    inbox.put(x[1:])
    assert outbox.get(timeout=60) == [2.5, 3.5]
    assert x.tolist() == [1.5, -2.5, -3.5]  # written by the other process
    inbox.put("done")
    p.join(60)
    assert p.exitcode == 0


# ---- the reference counts (pure Python) ----


def test_counter_slots_are_released_by_collect():
    before = _cuda_ipc.pending()
    name, index, addr = _cuda_ipc.track(None)
    assert _cuda_ipc.pending() == before + 1
    assert os.path.exists(os.path.join(_cuda_ipc._SHM_DIR, name))
    assert _cuda_ipc.counter_address(name, index) != addr  # a consumer maps it elsewhere
    counter = ctypes.c_int64.from_address(_cuda_ipc.counter_address(name, index))
    assert counter.value == 1 and ctypes.c_int64.from_address(addr).value == 1
    _cuda_ipc.collect()
    assert _cuda_ipc.pending() == before + 1  # still held
    counter.value -= 1  # what the consumer's tensor does when it dies
    assert ctypes.c_int64.from_address(addr).value == 0  # one memory
    _cuda_ipc.collect()
    assert _cuda_ipc.pending() == before


def test_a_failed_send_gives_its_slot_back():
    before = _cuda_ipc.pending()
    name, index, _ = _cuda_ipc.track(None)
    _cuda_ipc.untrack(name, index)
    assert _cuda_ipc.pending() == before


def test_counter_files_fill_up_and_are_replaced(monkeypatch):
    monkeypatch.setattr(_cuda_ipc, "_current", None)
    slots = [_cuda_ipc.track(None)[:2] for _ in range(3)]
    assert len({n for n, _ in slots}) == 1 and [i for _, i in slots] == [0, 1, 2]
    full = _cuda_ipc._current
    full.next = _cuda_ipc.REF_COUNTER_FILE_SIZE  # as if every slot had been used
    name, index, _ = _cuda_ipc.track(None)
    assert name != full.name and index == 0
    before = _cuda_ipc.pending()
    for n, i in [*slots, (name, index)]:
        ctypes.c_int64.from_address(_cuda_ipc.counter_address(n, i)).value = 0
    _cuda_ipc.collect()
    assert _cuda_ipc.pending() == before - 4
    assert not os.path.exists(full.path)  # its last slot released: removed


def test_counter_names_are_checked():
    with pytest.raises(ValueError, match="invalid CUDA IPC counter file name"):
        _cuda_ipc.counter_address("../etc/passwd", 0)
    with pytest.raises(ValueError, match="invalid CUDA IPC counter slot"):
        _cuda_ipc.counter_address("cudalite_ipc_1_x", -1)
    assert _cuda_ipc.counter_address("cudalite_ipc_0_gone", 0) == 0  # producer gone


@pytest.mark.skipif(cudalite.cuda.is_available(), reason="the CPU-only error")
def test_ipc_needs_cuda():
    if cudalite._C._cuda.is_compiled():  # a CUDA build on a machine without a GPU
        with pytest.raises(RuntimeError):
            cudalite.cuda.ipc_collect()
    else:
        with pytest.raises(AssertionError, match="not compiled with CUDA enabled"):
            cudalite.cuda.ipc_collect()


# ---- spawn ----


def test_spawn_runs_each_index(tmp_path, spawn_path):
    mp.spawn(helpers.write_index, args=(str(tmp_path),), nprocs=3)
    assert sorted(p.read_text() for p in tmp_path.iterdir()) == ["0", "10", "20"]


def test_spawn_without_join_returns_the_context(tmp_path, spawn_path):
    ctx = mp.spawn(helpers.write_index, args=(str(tmp_path),), nprocs=2, join=False)
    assert isinstance(ctx, mp.ProcessContext) and len(ctx.pids()) == 2
    while not ctx.join():
        pass
    assert ctx.join()  # joined already


def test_spawn_reports_the_child_exception(spawn_path):
    with pytest.raises(mp.ProcessRaisedException) as info:
        mp.spawn(helpers.raise_in_one, nprocs=2)
    msg = str(info.value)
    assert msg.startswith("\n\n-- Process 1 terminated with the following error:\nTraceback")
    assert "ValueError: boom from process 1" in msg
    assert info.value.error_index == 1


def test_spawn_reports_exit_codes_and_signals(spawn_path):
    with pytest.raises(mp.ProcessExitedException, match="^process 0 terminated with exit code 3$"):
        mp.spawn(helpers.exit_with, args=(3,), nprocs=1)
    with pytest.raises(mp.ProcessExitedException) as info:
        mp.spawn(helpers.kill_self, nprocs=1)
    assert str(info.value) == "process 0 terminated with signal SIGKILL"
    assert info.value.signal_name == "SIGKILL" and info.value.exit_code == -9


def test_spawn_warns_for_other_start_methods(tmp_path, spawn_path):
    with pytest.warns(FutureWarning, match="only supports start_method=spawn"):
        mp.spawn(helpers.write_index, args=(str(tmp_path),), start_method="fork")
    assert (tmp_path / "0.txt").read_text() == "0"


def test_process_exceptions_pickle():
    e = mp.ProcessExitedException("m", 1, 2, -9, "SIGKILL")
    f = pickle.loads(pickle.dumps(e))
    assert (f.msg, f.error_index, f.error_pid, f.exit_code, f.signal_name) == (
        "m",
        1,
        2,
        -9,
        "SIGKILL",
    )


# ---- CUDA IPC (§5.3) ----


@functools.cache
def _expandable_supported():
    """Whether this GPU's allocator makes expandable segments (virtual memory)."""
    if not cudalite.cuda.is_available():
        return False
    out, _ = helpers.run_producer("reports_expandable", **ALLOC["expandable"])
    return out.strip() == "True"


ALLOC = {
    "cudaMalloc": {"CUDALITE_ALLOC_CONF": "expandable_segments:False"},
    "expandable": {"CUDALITE_ALLOC_CONF": "expandable_segments:True"},
}


@pytest.fixture(params=sorted(ALLOC))
def segments(request):
    """Each CUDA IPC test runs on cudaMalloc segments and on expandable segments (pages
    exported as file descriptors)."""
    if not cudalite.cuda.is_available():
        pytest.skip("needs a CUDA GPU")
    if request.param == "expandable" and not _expandable_supported():
        pytest.skip("this GPU has no virtual memory support: no expandable segments")
    return request.param


def _run(name, segments):
    out, err = helpers.run_producer(name, segments == "expandable", **ALLOC[segments])
    assert out.strip() == "ok", out
    return err


def test_cuda_tensor_and_slice_are_shared_not_copied(segments):
    _run("values", segments)


def test_shared_memory_is_kept_until_the_consumer_releases_it(segments):
    _run("hold", segments)


def test_memory_released_by_the_consumer_is_freed_with_the_producers_tensor(segments):
    _run("released_first", segments)


def test_a_killed_consumer_leaves_the_producer_working(segments):
    err = _run("killed_consumer", segments)
    assert err.count("Producer process has been terminated before all shared CUDA tensors") == 1


def test_a_cuda_tensor_as_a_process_argument(segments):
    _run("argument", segments)


@needs_two_gpus
def test_a_consumer_moves_a_shared_tensor_to_another_gpu(segments):
    _run("other_gpu", segments)


@needs_cuda
def test_cuda_tensors_count_as_shared():
    x = cudalite.ones(3, device="cuda")
    assert x.is_shared() and x.share_memory_() is x
    assert x.untyped_storage().is_shared()


@needs_cuda
def test_invalid_ipc_handles_are_refused():
    from cudalite import _C

    with pytest.raises(ValueError, match="invalid CUDA IPC handle: 3 bytes, expected 64"):
        _C._cuda._ipc_open(b"abc", 0, 0, 4, cudalite.float32)
    with pytest.raises(ValueError, match="6 bytes are not a whole number of elements"):
        _C._cuda._ipc_open(bytes(64), 0, 0, 6, cudalite.float32)


def test_parameters_go_through_the_reducer_whatever_the_import_order():
    from cudalite.nn import Parameter

    assert ForkingPickler._extra_reducers[Parameter] is mp.reductions.reduce_tensor
    p = Parameter(cudalite.ones(2))
    q = pickle.loads(ForkingPickler.dumps(p))
    assert type(q) is Parameter and q.requires_grad and p.is_shared()
    out, _ = helpers.run_producer("parameter_after_multiprocessing")
    assert out.strip() == "ok"
