"""cudalite.cuda.memory: torch.cuda's memory API. GPU tests are skipped without a GPU; the
allocator logic itself is covered everywhere by test_caching_allocator.py."""

import collections
import os
import pickle
import re
import subprocess
import sys
import warnings

import pytest

import cudalite
from cudalite import _C
from cudalite.cuda import memory

MiB = 1 << 20
HAS_GPU = _C._cuda.device_count() > 0
requires_gpu = pytest.mark.skipif(not HAS_GPU, reason="needs a CUDA GPU")
no_gpu = pytest.mark.skipif(HAS_GPU, reason="behaviour without a GPU")
ROOT = os.path.join(os.path.dirname(__file__), "..")


def _subprocess(code, **env):
    # The child imports the same cudalite as this process (installed, or python/ in a dev tree).
    pkg_parent = os.path.dirname(os.path.dirname(cudalite.__file__))
    full_env = dict(os.environ, PYTHONPATH=pkg_parent, **env)
    return subprocess.run(
        [sys.executable, "-c", code], env=full_env, capture_output=True, text=True, timeout=300
    )


# ---------------------------------------------------------------------------------------
# Everywhere.


def test_public_names():
    for name in memory.__all__:
        assert callable(getattr(memory, name)), name
        assert getattr(cudalite.cuda, name) is getattr(memory, name)
    for name in ("_record_memory_history", "_snapshot", "_dump_snapshot"):
        assert callable(getattr(memory, name))
    assert memory.get_allocator_backend() == "native"


def test_deprecated_aliases_warn_like_torch():
    with pytest.warns(FutureWarning, match="`cudalite.cuda.memory_cached` has been renamed"):
        assert memory.memory_cached() == memory.memory_reserved()
    with pytest.warns(FutureWarning, match="`cudalite.cuda.max_memory_cached` has been renamed"):
        assert memory.max_memory_cached() == memory.max_memory_reserved()
    with pytest.warns(FutureWarning, match="reset_max_memory_allocated now calls"):
        try:
            memory.reset_max_memory_allocated()
        except RuntimeError:
            assert not HAS_GPU
    with pytest.warns(FutureWarning, match="reset_max_memory_cached now calls"):
        try:
            memory.reset_max_memory_cached()
        except RuntimeError:
            assert not HAS_GPU


def test_snapshot_layout():
    s = memory._snapshot()
    assert set(s) == {"segments", "device_traces", "allocator_settings", "external_annotations"}
    settings = s["allocator_settings"]
    assert {"CUDALITE_ALLOC_CONF", "max_split_size", "expandable_segments"} <= set(settings)
    assert list(settings["roundup_power2_divisions"]) == [str(1 << i) for i in range(16)]
    assert memory.memory_snapshot() == s["segments"]


def test_dump_snapshot_writes_a_pickle(tmp_path):
    path = tmp_path / "snap.pickle"
    memory._dump_snapshot(str(path))
    with open(path, "rb") as f:
        s = pickle.load(f)
    assert set(s) >= {"segments", "device_traces"}


def test_record_memory_history_checks_its_arguments():
    with pytest.raises(RuntimeError, match="expected state to be 'state', 'all', or None"):
        memory._record_memory_history("sometimes")
    with pytest.raises(RuntimeError, match="expected context to be 'state', 'alloc', 'all'"):
        memory._record_memory_history("all", context="never")
    with pytest.raises(RuntimeError, match="expected stacks to be 'python', or 'all'"):
        memory._record_memory_history("all", stacks="c++")
    with pytest.raises(ValueError, match="unknown action 'allocate' in skip_actions"):
        memory._record_memory_history("all", skip_actions=["allocate"])


def test_set_allocator_settings_rejects_bad_settings():
    with pytest.raises(ValueError, match="Unrecognized key 'max_split_size' in CUDALITE_ALLOC"):
        memory._set_allocator_settings("max_split_size:100")
    with pytest.raises(ValueError, match="Expected 'True' or 'False' for expandable_segments"):
        memory._set_allocator_settings("expandable_segments:1")


def test_caching_allocator_delete_of_an_unknown_pointer():
    with pytest.raises(RuntimeError, match="invalid device pointer"):
        memory.caching_allocator_delete(0xA)


@no_gpu
def test_without_a_gpu_statistics_are_empty():
    assert memory.memory_stats() == {}
    assert memory.memory_stats_as_nested_dict() == {}
    assert memory.memory_allocated() == 0
    assert memory.max_memory_allocated() == 0
    assert memory.memory_reserved() == 0
    assert memory.max_memory_reserved() == 0
    assert memory.memory_snapshot() == []
    memory.empty_cache()  # a no-op, as in torch


@no_gpu
def test_without_a_gpu_calls_that_need_cuda_raise():
    with pytest.raises(RuntimeError, match="invalid argument to reset_peak_memory_stats"):
        memory.reset_peak_memory_stats()
    with pytest.raises(RuntimeError, match="invalid argument to reset_accumulated_memory_stats"):
        memory.reset_accumulated_memory_stats()
    with pytest.raises(RuntimeError, match="Invalid device argument"):
        memory.reset_peak_memory_stats(0)
    for call in (
        lambda: memory.caching_allocator_alloc(10),
        lambda: memory.set_per_process_memory_fraction(0.5),
        lambda: memory.get_per_process_memory_fraction(),
        lambda: memory._record_memory_history(),
    ):
        # RuntimeError from a CUDA build without a driver; a CPU-only build raises torch's
        # AssertionError ("not compiled with CUDA enabled").
        with pytest.raises((RuntimeError, AssertionError)):
            call()
    with pytest.raises(KeyError, match="allocated_bytes.all.current"):
        memory.memory_summary()  # torch raises the same KeyError


# ---------------------------------------------------------------------------------------
# With a GPU.


@pytest.fixture
def no_leak():
    before = memory.memory_allocated(0) if HAS_GPU else 0
    yield
    assert memory.memory_allocated(0) == before


def _rebuilt(segments, device=0):
    out = collections.Counter()
    for seg in segments:
        if seg["device"] != device:
            continue
        pool = "large_pool" if seg["segment_type"] == "large" else "small_pool"
        for p in ("all", pool):
            out[f"segment.{p}"] += 1
            out[f"reserved_bytes.{p}"] += seg["total_size"]
            out[f"allocated_bytes.{p}"] += seg["allocated_size"]
            out[f"active_bytes.{p}"] += seg["active_size"]
            out[f"requested_bytes.{p}"] += seg["requested_size"]
            out[f"allocation.{p}"] += sum(b["state"] == "active_allocated" for b in seg["blocks"])
    return out


@requires_gpu
def test_allocations_count_rounded_bytes(no_leak):
    before = memory.memory_allocated()
    p = memory.caching_allocator_alloc(1000)
    assert memory.memory_allocated() == before + 1024
    assert memory.memory_stats()["requested_bytes.all.current"] >= 1000
    assert memory.memory_reserved() >= memory.memory_allocated()
    memory.caching_allocator_delete(p)
    assert memory.memory_allocated() == before


@requires_gpu
def test_raw_entry_points_check_arguments(no_leak):
    from cudalite._C import _memory as m

    with pytest.raises(TypeError, match="takes 3 arguments"):
        m.raw_alloc(1, 0)
    with pytest.raises(TypeError, match=r"argument 1 must be int, not float"):
        m.raw_alloc(1.5, 0, 0)
    with pytest.raises(OverflowError):
        m.raw_alloc(-1, 0, 0)
    with pytest.raises(RuntimeError, match="invalid device pointer"):
        memory.caching_allocator_delete(12345)
    with pytest.raises(TypeError, match="must be int, not str"):
        memory.caching_allocator_delete("x")
    p = m.raw_alloc(512, 0, 0)
    assert isinstance(p, int) and p > 0 and memory.memory_allocated() >= 512
    m.raw_delete(p)


@requires_gpu
def test_memory_stats_keys_after_init(no_leak):
    memory.caching_allocator_delete(memory.caching_allocator_alloc(1))
    keys = set(memory.memory_stats())
    assert len(keys) == 9 * 3 * 4 + 6 + 8
    assert "oversize_segments.peak" in keys and "num_device_free" in keys
    assert memory.memory_stats()["max_split_size"] == -1
    nested = memory.memory_stats_as_nested_dict()
    assert nested["allocated_bytes"]["all"]["current"] == memory.memory_allocated()


@requires_gpu
def test_peaks_and_resets(no_leak):
    memory.reset_peak_memory_stats()
    base = memory.memory_allocated()
    p = memory.caching_allocator_alloc(64 * MiB)
    memory.caching_allocator_delete(p)
    assert memory.max_memory_allocated() == base + 64 * MiB
    assert memory.max_memory_reserved() >= base + 64 * MiB
    memory.reset_peak_memory_stats()
    assert memory.max_memory_allocated() == base
    memory.reset_accumulated_memory_stats()
    assert memory.memory_stats()["allocated_bytes.all.freed"] == 0


@requires_gpu
def test_empty_cache_returns_unused_memory(no_leak):
    memory.empty_cache()
    before = memory.memory_reserved()
    p = memory.caching_allocator_alloc(256 * MiB)
    assert memory.memory_reserved() >= before + 254 * MiB  # less any free tail it reused
    memory.caching_allocator_delete(p)
    memory.empty_cache()
    assert memory.memory_reserved() <= before


@requires_gpu
def test_snapshot_agrees_with_stats(no_leak):
    ptrs = [memory.caching_allocator_alloc(n) for n in (100, 5000, 3 * MiB, 40 * MiB, 7)]
    memory.caching_allocator_delete(ptrs.pop(1))
    stats = memory.memory_stats()
    rebuilt = _rebuilt(memory.memory_snapshot())
    for key, value in rebuilt.items():
        assert stats[key + ".current"] == value, key
    for p in ptrs:
        memory.caching_allocator_delete(p)


@requires_gpu
@pytest.mark.parametrize("conf", ["", "page_lending:True"])
def test_growth_in_one_allocation_or_lending_free_pages(no_leak, conf):
    before = _C._memory.get_allocator_settings()
    try:
        memory._set_allocator_settings(conf)
        memory.empty_cache()
        a, b, c, d = (memory.caching_allocator_alloc(8 * MiB) for _ in range(4))
        reserved = memory.memory_reserved()
        calls = memory.memory_stats()["num_device_alloc"]
        memory.caching_allocator_delete(b)
        e = memory.caching_allocator_alloc(12 * MiB)  # fits no hole, and no tail is left
        if conf:  # b's two 4 MiB pages lent, one page created
            assert memory.memory_reserved() == reserved + 4 * MiB
            assert memory.memory_stats()["num_device_alloc"] == calls + 3
        else:  # one new 12 MiB allocation (Note [Growth granules])
            assert memory.memory_reserved() == reserved + 12 * MiB
            assert memory.memory_stats()["num_device_alloc"] == calls + 1
        for p in (a, c, d, e):
            memory.caching_allocator_delete(p)
        memory.empty_cache()
    finally:
        memory._set_allocator_settings(before)


OOM = re.compile(
    r"CUDA out of memory\. Tried to allocate [\d.]+ GiB\. GPU 0 has a total capacity of "
    r"[\d.]+ GiB of which [\d.]+ (bytes|KiB|MiB|GiB) is free\. Of the allocated memory "
    r"[\d.]+ (bytes|KiB|MiB|GiB) is allocated by cudalite, and [\d.]+ (bytes|KiB|MiB|GiB) is "
    r"reserved by cudalite but unallocated\."
)


@requires_gpu
def test_out_of_memory_error(no_leak):
    ooms = memory.memory_stats()["num_ooms"]
    with pytest.raises(_C.OutOfMemoryError) as exc:
        memory.caching_allocator_alloc(1 << 50)
    assert isinstance(exc.value, RuntimeError)
    assert OOM.match(str(exc.value)), str(exc.value)
    assert memory.memory_stats()["num_ooms"] == ooms + 1
    memory.caching_allocator_delete(memory.caching_allocator_alloc(MiB))  # still usable


@requires_gpu
@pytest.mark.parametrize("nbytes", [2**62, 2**63 - 1, 2**64 - 1])
def test_absurd_sizes_raise_out_of_memory(nbytes, no_leak):
    # torch: OutOfMemoryError "CUDA out of memory. Tried to allocate 4294967296.00 GiB. ..."
    # for torch.empty(2**62, dtype=torch.uint8, device="cuda"); sizes near 2**64 must not
    # wrap when rounded.
    ooms = memory.memory_stats()["num_ooms"]
    with pytest.raises(_C.OutOfMemoryError) as exc:
        memory.caching_allocator_alloc(nbytes)
    assert OOM.match(str(exc.value)), str(exc.value)
    assert f"Tried to allocate {nbytes / 2**30:.2f} GiB." in str(exc.value)
    assert memory.memory_stats()["num_ooms"] == ooms + 1
    memory.caching_allocator_delete(memory.caching_allocator_alloc(MiB))  # still usable


@requires_gpu
def test_empty_tensor_of_absurd_size_raises_out_of_memory(no_leak):
    with pytest.raises(_C.OutOfMemoryError, match=r"^CUDA out of memory\. Tried to allocate "):
        cudalite.empty(2**62, dtype=cudalite.uint8, device="cuda")
    x = cudalite.ones(4, device="cuda")
    assert x.sum().item() == 4.0


@requires_gpu
def test_empty_cache_with_work_in_flight_and_other_threads(no_leak):
    # empty_cache waits for the device before taking the allocator's lock; allocations of
    # other threads go on meanwhile and memory in use is never released.
    import threading

    keep = cudalite.ones(1 << 20, device="cuda")
    stop = threading.Event()
    errors = []

    def churn():
        try:
            while not stop.is_set():
                y = cudalite.ones(1 << 18, device="cuda") * 2
                assert y.sum().item() == 2 * (1 << 18)
        except Exception as e:  # pragma: no cover - reported below
            errors.append(e)

    t = threading.Thread(target=churn)
    t.start()
    for _ in range(20):
        z = cudalite.ones(1 << 22, device="cuda")
        del z
        memory.empty_cache()
    stop.set()
    t.join()
    assert not errors, errors
    assert keep.sum().item() == float(1 << 20)


@requires_gpu
def test_per_process_memory_fraction(no_leak):
    assert memory.get_per_process_memory_fraction() == 1.0
    with pytest.raises(TypeError, match="Invalid type for fraction argument, must be `float`"):
        memory.set_per_process_memory_fraction(1)
    with pytest.raises(ValueError, match=r"Invalid fraction value: 1\.5\. Allowed range: 0~1"):
        memory.set_per_process_memory_fraction(1.5)
    try:
        memory.set_per_process_memory_fraction(0.01)
        with pytest.raises(_C.OutOfMemoryError, match=" allowed; "):
            memory.caching_allocator_alloc(64 << 30)
    finally:
        memory.set_per_process_memory_fraction(1.0)


@requires_gpu
def test_memory_summary_table(no_leak):
    text = memory.memory_summary()
    lines = text.splitlines()
    assert all(len(line) == 77 for line in lines)
    assert "cudalite CUDA memory summary, device ID 0" in lines[1]
    assert len(memory.memory_summary(abbreviated=True).splitlines()) < len(lines)


def _alloc_in_named_function(n):
    return memory.caching_allocator_alloc(n)


@requires_gpu
def test_history_and_dump(tmp_path, no_leak):
    memory._record_memory_history(max_entries=1000)
    try:
        p = _alloc_in_named_function(3 * MiB)
        memory.caching_allocator_delete(p)
        path = tmp_path / "s.pickle"
        memory._dump_snapshot(str(path))
    finally:
        memory._record_memory_history(None)
    with open(path, "rb") as f:
        s = pickle.load(f)
    trace = s["device_traces"][0]
    allocs = [e for e in trace if e["action"] == "alloc" and e["addr"] == p]
    assert allocs and allocs[0]["size"] == 3 * MiB
    assert any(f["name"] == "_alloc_in_named_function" for f in allocs[0]["frames"])
    assert {"free_requested", "free_completed"} <= {e["action"] for e in trace}


@requires_gpu
def test_tensors_use_the_caching_allocator(no_leak):
    if not hasattr(cudalite, "empty"):
        pytest.skip("cudalite.empty is not available in this build")
    before = memory.memory_allocated()
    t = cudalite.empty(1000, device="cuda")
    assert memory.memory_allocated() == before + 4096
    del t
    assert memory.memory_allocated() == before


@requires_gpu
def test_tensor_data_survives_lending(no_leak):
    if not all(hasattr(cudalite, n) for n in ("full", "float64")):
        pytest.skip("cudalite.full is not available in this build")
    n = MiB  # 8 MiB of float64 per tensor
    ts = {i: cudalite.full((n,), float(i), dtype=cudalite.float64, device="cuda") for i in range(6)}
    del ts[1], ts[3]  # two holes in the middle
    big = cudalite.full((3 * n,), 9.0, dtype=cudalite.float64, device="cuda")  # lends their pages
    for i, t in ts.items():
        assert float(t.sum()) == float(i) * n
    assert float(big.sum()) == 9.0 * 3 * n
    del ts, big, t  # (the loop variable too: it holds the last tensor)


@requires_gpu
def test_settings_from_the_environment():
    code = (
        "from cudalite.cuda import memory as m\n"
        "p = m.caching_allocator_alloc(3 << 20)\n"
        "print(m.memory_reserved())\n"
    )
    classic = _subprocess(code, CUDALITE_ALLOC_CONF="expandable_segments:False")
    assert classic.returncode == 0, classic.stderr
    assert int(classic.stdout) == 20 * MiB  # torch's 20 MiB segment for a 3 MiB request
    default = _subprocess(code)
    assert int(default.stdout) == 4 * MiB  # one 4 MiB large-pool page
    bad = _subprocess(code, CUDALITE_ALLOC_CONF="expandable_segments:maybe")
    assert bad.returncode != 0 and "Expected 'True' or 'False'" in bad.stderr


@requires_gpu
def test_caching_can_be_turned_off():
    code = (
        "from cudalite.cuda import memory as m\n"
        "import cudalite\n"
        "t = cudalite.empty(1 << 20, device='cuda') if hasattr(cudalite, 'empty') else None\n"
        "print(m.memory_reserved())\n"
    )
    r = _subprocess(code, CUDALITE_NO_CUDA_MEMORY_CACHING="1")
    assert r.returncode == 0, r.stderr
    assert int(r.stdout) == 0


@requires_gpu
def test_runtime_settings(no_leak):
    before = _C._memory.get_allocator_settings()
    try:
        memory._set_allocator_settings("expandable_segments:False")
        memory.empty_cache()
        base = memory.memory_reserved()
        p = memory.caching_allocator_alloc(3 * MiB)
        assert memory.memory_reserved() == base + 20 * MiB
        memory.caching_allocator_delete(p)
    finally:
        memory._set_allocator_settings(before)
        memory.empty_cache()


@requires_gpu
def test_python_alloc_free_loop_is_leak_free(no_leak):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for n in (512, 4096, 1 << 20, 64 << 20):
            for _ in range(100):
                memory.caching_allocator_delete(memory.caching_allocator_alloc(n))
