"""Pinned host memory: the caching allocator's reuse rules (on a fake backend, everywhere),
pin_memory / is_pinned / pin_memory=True, host_memory_stats, and copies from and to pinned
and pageable memory (on a GPU)."""

import numpy as np
import pytest

import cudalite
from cudalite import _C
from cudalite.utils.data._utils.pin_memory import pin_memory

HAS_CUDA = cudalite.cuda.is_available()
requires_cuda = pytest.mark.skipif(not HAS_CUDA, reason="no CUDA GPU visible")
MiB = 1 << 20


def _no_gpu_error():
    """What pinning raises here without a GPU: torch's text for this kind of build."""
    if not _C._cuda.is_compiled():
        return None
    with pytest.raises(RuntimeError) as info:
        cudalite.cuda.init()
    return str(info.value)


# ---- size classes (Note [Pinned size classes]) ----


@pytest.mark.parametrize(
    "n",
    [1, 15, 16, 17, 100, 1000, 4096, 4097, 65535, MiB - 1, MiB + 1, 3 * MiB + 12345, 257 * MiB],
)
def test_block_size_wastes_less_than_an_eighth(n):
    size = _C._cuda._host_block_size(n)
    assert size >= n
    assert (size - n) * 8 < size


def test_block_sizes_do_not_double_like_torch():
    # torch pins 512 MiB for a 257 MiB batch; cudalite 288 MiB.
    assert _C._cuda._host_block_size(257 * MiB) == 288 * MiB
    assert _C._cuda._host_block_size(256 * MiB) == 256 * MiB
    assert _C._cuda._host_block_size(1000) == 1024


def test_block_sizes_near_the_top_of_size_t_do_not_wrap():
    # Rounding up would pass 2**64: such sizes are kept (no backend can serve them).
    for n in (2**64 - 1, 2**64 - 2**60 + 1):
        assert _C._cuda._host_block_size(n) == n
    assert _C._cuda._host_block_size(2**63 + 1) == 2**63 + 2**60


def test_an_absurd_request_raises_out_of_memory_and_the_cache_stays_usable():
    h = _C._cuda._HostCacheForTesting()
    for n in (2**62, 2**64 - 1):
        with pytest.raises(_C.OutOfMemoryError):
            h.allocate(n)
    p = h.allocate(1000)
    h.free(p)
    assert h.cached_blocks == 1


# ---- reuse rules, on the fake backend ----


def _cache():
    return _C._cuda._HostCacheForTesting()


def test_freed_block_is_reused_for_the_same_class():
    h = _cache()
    p = h.allocate(1000)
    h.free(p)
    assert h.cached_blocks == 1
    assert h.allocate(1000) == p
    assert h.allocate(1000) != p  # the cached one is taken: a new block
    assert h.stats()["num_host_alloc"] == 2


def test_block_of_another_class_is_not_reused():
    h = _cache()
    p = h.allocate(1000)  # class 1024
    h.free(p)
    q = h.allocate(2000)  # class 2048
    assert q != p
    assert h.cached_blocks == 1


def test_block_used_by_a_stream_waits_for_its_event():
    h = _cache()
    s = 0x5
    p = h.allocate(4096)
    assert h.record_stream(p, s)
    h.free(p)
    assert h.pending_blocks == 1
    q = h.allocate(4096)
    assert q != p  # the copy on s may still read p
    h.complete(s)
    r = h.allocate(4096)
    assert r == p
    assert h.pending_blocks == 0


def test_block_used_by_two_streams_waits_for_both():
    h = _cache()
    s1, s2 = 0x10, 0x20
    p = h.allocate(4096)
    h.record_stream(p, s1)
    h.record_stream(p + 100, s2)  # an interior pointer (a view) names the same block
    h.free(p)
    h.complete(s1)
    h.process_events()
    assert h.pending_blocks == 1
    h.complete(s2)
    h.process_events()
    assert h.pending_blocks == 0 and h.cached_blocks == 1


def test_event_recorded_at_free_time_not_at_use_time():
    # Work queued on the stream after the use but before the free is waited for too:
    # completing the events recorded before the free doesn't complete the free's event.
    h = _cache()
    s = 0x30
    p = h.allocate(512)
    h.record_stream(p, s)
    h.complete(s)  # nothing recorded yet: no effect
    h.free(p)
    h.process_events()
    assert h.pending_blocks == 1
    h.complete(s)
    h.process_events()
    assert h.cached_blocks == 1


def test_record_stream_of_foreign_pointer_is_refused():
    h = _cache()
    p = h.allocate(1024)
    assert not h.record_stream(p + 1024, 0x1)  # one past the end
    assert h.record_stream(p + 1023, 0x1)


def test_stats_have_torchs_keys_and_counts():
    h = _cache()
    p = h.allocate(1000)
    q = h.allocate(3000)  # class 3072
    h.free(p)
    st = h.stats()
    assert set(st) == {
        "allocations",
        "allocated_bytes",
        "active_requests",
        "active_bytes",
        "num_host_alloc",
        "num_host_free",
        "host_alloc_time",
        "host_free_time",
    }
    assert st["allocations"] == {"current": 2, "peak": 2, "allocated": 2, "freed": 0}
    assert st["allocated_bytes"] == {"current": 4096, "peak": 4096, "allocated": 4096, "freed": 0}
    assert st["active_requests"] == {"current": 1, "peak": 2, "allocated": 2, "freed": 1}
    assert st["active_bytes"] == {"current": 3072, "peak": 4096, "allocated": 4096, "freed": 1024}
    assert st["num_host_alloc"] == 2 and st["num_host_free"] == 0
    assert set(st["host_alloc_time"]) == {"total", "max", "min", "count", "avg"}
    assert st["host_alloc_time"]["count"] == 2
    h.free(q)
    h.empty_cache()
    st = h.stats()
    assert st["allocations"]["current"] == 0 and st["allocations"]["freed"] == 2
    assert st["num_host_free"] == 2 and st["host_free_time"]["count"] == 2


def test_active_request_ends_when_the_block_is_reusable():
    h = _cache()
    p = h.allocate(2048)
    h.record_stream(p, 0x7)
    h.free(p)
    assert h.stats()["active_requests"]["current"] == 1  # pending counts as active
    h.complete(0x7)
    h.process_events()
    assert h.stats()["active_requests"]["current"] == 0


def test_empty_cache_keeps_pending_and_live_blocks():
    h = _cache()
    live = h.allocate(1024)
    pend = h.allocate(2048)
    free = h.allocate(4096)
    h.record_stream(pend, 0x9)
    h.free(pend)
    h.free(free)
    h.empty_cache()
    st = h.stats()
    assert st["allocations"]["current"] == 2  # live + pending
    assert st["num_host_free"] == 1
    assert h.pending_blocks == 1
    h.free(live)


def test_reset_peak_and_accumulated():
    h = _cache()
    p = h.allocate(1024)
    q = h.allocate(1024)
    h.free(p)
    h.reset_peak_stats()
    st = h.stats()
    assert st["active_requests"]["peak"] == 1
    h.reset_accumulated_stats()
    st = h.stats()
    assert st["active_requests"]["allocated"] == 0 and st["active_requests"]["freed"] == 0
    assert st["num_host_alloc"] == 0 and st["host_alloc_time"]["count"] == 0
    assert st["allocations"]["current"] == 2  # gauges untouched
    h.free(q)


def test_out_of_memory_releases_the_cache_and_retries():
    h = _cache()
    h.set_limit(3 * 1024)
    p = h.allocate(1024)
    h.free(p)  # cached: 1024 of the 3072 bytes
    q = h.allocate(2560)  # class 2560: only fits once the cache is released
    assert q
    assert h.stats()["num_host_free"] == 1


def test_out_of_memory_when_nothing_can_be_released():
    h = _cache()
    h.set_limit(1024)
    h.allocate(1024)
    with pytest.raises(cudalite.OutOfMemoryError):
        h.allocate(1024)


def test_zero_bytes_is_no_block():
    h = _cache()
    assert h.allocate(0) == 0
    assert h.stats()["num_host_alloc"] == 0


# ---- the Python API without a GPU ----


def test_is_pinned_false_for_ordinary_tensors():
    assert not cudalite.zeros(3).is_pinned()


@pytest.mark.skipif(HAS_CUDA, reason="checks the behaviour without a GPU")
def test_pin_memory_without_cuda_raises_torchs_error():
    expected = _no_gpu_error()
    if expected is None:  # CPU-only build: torch's CPU-only texts
        with pytest.raises(RuntimeError, match="Cannot access accelerator device when none"):
            cudalite.zeros(3).pin_memory()
        with pytest.raises(RuntimeError, match="pin_memory=True requires a CUDA or other"):
            cudalite.empty(3, pin_memory=True)
        with pytest.raises(RuntimeError, match="pin_memory=True requires a CUDA or other"):
            cudalite.zeros(3, pin_memory=True)
        with pytest.raises(RuntimeError, match="Cannot access accelerator device when none"):
            pin_memory(cudalite.zeros(3))
    else:  # a CUDA build on a machine without a usable GPU: the initialisation error
        for make in (
            lambda: cudalite.zeros(3).pin_memory(),
            lambda: cudalite.empty(3, pin_memory=True),
            lambda: cudalite.tensor([1.0], pin_memory=True),
            lambda: pin_memory(cudalite.zeros(3)),
        ):
            with pytest.raises(RuntimeError) as info:
                make()
            assert str(info.value) == expected


def test_host_memory_stats_empty_before_cuda_initialises():
    if cudalite.cuda.is_initialized():
        pytest.skip("CUDA already initialised in this process")
    assert cudalite.cuda.host_memory_stats() == {}
    cudalite.cuda.host_empty_cache()  # nothing to release, and no CUDA initialisation
    assert not cudalite.cuda.is_initialized()


def test_pin_memory_helper_recurses_and_keeps_other_data():
    # Without tensors nothing is pinned, so this runs everywhere.
    data = {"a": [1, "x", (2.0, b"y")], "b": None}
    assert pin_memory(data) == data


# ---- on a GPU ----


@requires_cuda
def test_pin_memory_copies_and_is_pinned():
    x = cudalite.arange(12, dtype=cudalite.float32).reshape(3, 4)
    y = x.pin_memory()
    assert y.is_pinned() and not x.is_pinned()
    assert y.data_ptr() != x.data_ptr()
    np.testing.assert_array_equal(y.numpy(), x.numpy())
    assert y.pin_memory() is y  # already pinned


@requires_cuda
@pytest.mark.parametrize("register", [False, True])
def test_large_pin_memory_is_pinned_while_copying_and_its_block_reused(register):
    # Note [Pinning by copying]: from 4 MiB on, the copy faults the pages in and
    # cudaHostRegister pins them; the block is cached like any other and copied into again.
    conf = "pinned_use_cuda_host_register:True" if register else ""
    before = _C._memory.get_allocator_settings()
    try:
        cudalite.cuda.memory._set_allocator_settings(conf)
        cudalite.cuda.synchronize()
        cudalite.cuda.host_empty_cache()
        a = np.random.default_rng(5).standard_normal((3, 1 << 20)).astype(np.float32)
        x = cudalite.from_numpy(a)[:, 1:]  # a contiguous view at an offset: 12 MiB - 12 B
        x = x.contiguous()
        y = x.pin_memory()
        assert y.is_pinned()
        np.testing.assert_array_equal(y.numpy(), a[:, 1:])
        g = y.cuda(non_blocking=True)
        np.testing.assert_array_equal(g.cpu().numpy(), a[:, 1:])
        ptr = y.data_ptr()
        allocs = cudalite.cuda.host_memory_stats()["num_host_alloc"]
        del y, g
        cudalite.cuda.synchronize()
        z = (x + 1).pin_memory()  # the same size class: the cached block, copied into
        assert z.data_ptr() == ptr
        assert cudalite.cuda.host_memory_stats()["num_host_alloc"] == allocs
        np.testing.assert_array_equal(z.numpy(), a[:, 1:] + 1)
        del z
        cudalite.cuda.host_empty_cache()
    finally:
        cudalite.cuda.memory._set_allocator_settings(before)


@requires_cuda
def test_pin_memory_keeps_strides():
    x = cudalite.arange(12, dtype=cudalite.float32).reshape(3, 4).t()
    y = x.pin_memory()
    assert y.is_pinned()
    assert y.stride() == x.stride()
    np.testing.assert_array_equal(y.numpy(), x.numpy())


@requires_cuda
def test_pin_memory_of_cuda_tensor_raises():
    with pytest.raises(RuntimeError, match="only dense CPU tensors can be pinned"):
        cudalite.zeros(2, device="cuda").pin_memory()
    with pytest.raises(RuntimeError, match="Only dense CPU tensors can be pinned"):
        cudalite.empty(2, device="cuda", pin_memory=True)


@requires_cuda
@pytest.mark.parametrize(
    "make",
    [
        lambda: cudalite.empty(5, pin_memory=True),
        lambda: cudalite.zeros(5, pin_memory=True),
        lambda: cudalite.ones(2, 3, pin_memory=True),
        lambda: cudalite.full((4,), 2.5, pin_memory=True),
        lambda: cudalite.arange(6, pin_memory=True),
        lambda: cudalite.rand(3, pin_memory=True),
        lambda: cudalite.randn(3, pin_memory=True),
        lambda: cudalite.tensor([1.0, 2.0], pin_memory=True),
        lambda: cudalite.zeros_like(cudalite.ones(3), pin_memory=True),
    ],
)
def test_creation_ops_pin_memory(make):
    t = make()
    assert t.is_pinned() and not t.is_cuda


@requires_cuda
def test_seed_pin_memory_example():
    # The seed's snippet: pin_memory() returns copies, and pinned data moves asynchronously.
    x = cudalite.Tensor([[1, 2, 4], [5, 7, 9], [3, 7, 10]])
    y = pin_memory(x)
    z = x.pin_memory()
    assert len({id(x), id(y), id(z)}) == 3
    a = z.cuda(non_blocking=True)
    assert str(a) == (
        "tensor([[ 1.,  2.,  4.],\n        [ 5.,  7.,  9.],\n        [ 3.,  7., 10.]], "
        "device='cuda:0')"
    )
    assert f"is_pinned: {x.is_pinned()}/{z.is_pinned()}" == "is_pinned: False/True"


def _busy(stream):
    """Queues tens of milliseconds of in-place work on `stream` (see test_cuda_streams)."""
    buf = cudalite.ones(32 * MiB, device="cuda")  # 128 MiB
    stream.wait_stream(cudalite.cuda.current_stream())
    with cudalite.cuda.stream(stream):
        for _ in range(400):
            buf.mul_(1.0)
    return buf


@requires_cuda
def test_pinned_block_not_reused_while_a_copy_may_read_it():
    cudalite.cuda.synchronize()
    cudalite.cuda.host_empty_cache()
    n = 4 * MiB
    p = cudalite.full((n,), 3.0, pin_memory=True)
    addr = p.data_ptr()
    s = cudalite.cuda.Stream()
    keep = _busy(s)
    with cudalite.cuda.stream(s):
        g = p.to("cuda", non_blocking=True)  # queued behind the busy work
    del p  # freed while the copy may not have run
    assert not s.query()
    q = cudalite.empty(n, pin_memory=True)  # same size class
    assert q.data_ptr() != addr
    st = cudalite.cuda.host_memory_stats()
    assert st["active_requests.current"] == 2
    q.fill_(-1.0)  # would corrupt g if the block were shared
    s.synchronize()
    assert g.cpu().eq(3.0).all().item()
    allocs = cudalite.cuda.host_memory_stats()["num_host_alloc"]
    r = cudalite.empty(n, pin_memory=True)
    assert r.data_ptr() == addr  # reusable now that the copy has run
    assert cudalite.cuda.host_memory_stats()["num_host_alloc"] == allocs
    del keep, q, r


@requires_cuda
def test_host_empty_cache_releases_blocks():
    cudalite.cuda.synchronize()
    p = cudalite.empty(MiB, pin_memory=True)
    del p
    before = cudalite.cuda.host_memory_stats()
    cudalite.cuda.host_empty_cache()
    after = cudalite.cuda.host_memory_stats()
    assert after["allocations.current"] < before["allocations.current"]
    assert after["num_host_free"] > before["num_host_free"]
    keys = {k.split(".")[0] for k in after}
    assert keys == {
        "active_bytes",
        "active_requests",
        "allocated_bytes",
        "allocations",
        "host_alloc_time",
        "host_free_time",
        "num_host_alloc",
        "num_host_free",
    }


@requires_cuda
@pytest.mark.parametrize("nbytes", [4, 1000, MiB - 4, MiB, 3 * MiB + 4 * 12345, 67 * MiB + 8])
def test_pageable_copies_roundtrip(nbytes):
    # Large pageable copies go through the staged pipeline; odd sizes end mid-chunk.
    a = np.random.default_rng(nbytes).standard_normal(nbytes // 4).astype(np.float32)
    x = cudalite.from_numpy(a)
    g = x.cuda()
    back = g.cpu()
    np.testing.assert_array_equal(back.numpy(), a)
    out = cudalite.empty(a.size)
    out.copy_(g)
    np.testing.assert_array_equal(out.numpy(), a)


@requires_cuda
@pytest.mark.parametrize(
    "dtype, values",
    [
        ("float32", [1.5]),
        ("int32", [-7]),
        ("float16", [0.25]),
        ("bfloat16", [-3.0]),
        ("int16", [-2]),
        ("int8", [-5]),
        ("uint8", [200]),
        ("bool", [True]),
        ("int8", [1, -2]),  # 2 bytes
        ("uint8", [1, 2, 3, 4]),  # 4 bytes
        ("int16", [300, -300]),  # 4 bytes
        ("float64", [2.5]),  # 8 bytes: a copy
        ("uint8", [1, 2, 3]),  # 3 bytes: a copy
    ],
)
def test_blocking_copies_of_a_few_bytes(dtype, values):
    """1, 2 and 4 bytes go as memsets carrying the value (Note [One-element copies as
    memsets]), into aligned and unaligned places; other sizes as copies."""
    dt = getattr(cudalite, dtype)
    x = cudalite.tensor(values, dtype=dt)
    assert x.cuda().cpu().tolist() == values
    assert cudalite.tensor(values, dtype=dt, device="cuda").tolist() == values
    g = cudalite.zeros(len(values) + 3, dtype=dt, device="cuda")
    for start in range(4):  # offsets of 0-3 elements: some destinations unaligned
        g.zero_()
        g[start : start + len(values)].copy_(x)
        expect = [0] * (len(values) + 3)
        expect[start : start + len(values)] = values
        assert g.tolist() == [type(values[0])(v) for v in expect]
    s = cudalite.cuda.Stream()
    with cudalite.cuda.stream(s):  # on a side stream: after the work queued there
        h = cudalite.ones(len(values), dtype=dt, device="cuda").zero_()
        h.copy_(x)
        assert h.tolist() == values


@requires_cuda
def test_pageable_copies_on_a_side_stream_follow_its_work():
    s = cudalite.cuda.Stream()
    n = 8 * MiB
    with cudalite.cuda.stream(s):
        g = cudalite.zeros(n, device="cuda")
        for _ in range(20):
            g.add_(1.0)
        back = g.cpu()  # a staged D2H on s: after the adds
    assert back.eq(20.0).all().item()


@requires_cuda
def test_non_blocking_pinned_copies_correct_after_synchronize():
    n = 16 * MiB + 3
    src = cudalite.arange(n, dtype=cudalite.float32).pin_memory()
    g = src.to("cuda", non_blocking=True)
    dst = cudalite.empty(n, pin_memory=True)
    dst.copy_(g, non_blocking=True)
    cudalite.cuda.synchronize()
    np.testing.assert_array_equal(dst.numpy(), np.arange(n, dtype=np.float32))


@requires_cuda
def test_non_blocking_to_host_lands_in_pinned_memory():
    # torch's _to_copy: a non-blocking device-to-host .to() returns pinned memory, and the
    # copy is asynchronous (queued behind the GPU's work, read after a synchronize).
    g = cudalite.zeros(4 * MiB, device="cuda")
    for _ in range(10):
        g.add_(1.0)
    h = g.to("cpu", non_blocking=True)
    assert h.is_pinned() and h.device.type == "cpu"
    cudalite.cuda.synchronize()
    assert h.eq(10.0).all().item()
    assert not g.to("cpu").is_pinned()  # blocking copies: pageable, as in torch
    c = g.to("cpu", cudalite.float64, non_blocking=True)  # converted on the host
    cudalite.cuda.synchronize()
    assert c.dtype is cudalite.float64 and c.eq(10.0).all().item()


# ---- cudaHostRegister instead of cudaHostAlloc (Note [Registering pinned memory]) ----


@requires_cuda
def test_pinned_use_cuda_host_register_pins_registered_pages():
    import os
    import subprocess
    import sys

    code = """
import numpy as np
import cudalite
x = cudalite.rand(5 * 2**20 + 3)  # not a whole number of pages
y = x.pin_memory()
assert y.is_pinned()
np.testing.assert_array_equal(y.numpy(), x.numpy())
g = y.cuda(non_blocking=True)
cudalite.cuda.synchronize()
np.testing.assert_array_equal(g.cpu().numpy(), x.numpy())
del y, g
s = cudalite.cuda.host_memory_stats()
assert s["num_host_alloc"] == 1, s
cudalite.cuda.host_empty_cache()
assert cudalite.cuda.host_memory_stats()["num_host_free"] == 1
z = cudalite.empty(1000, pin_memory=True)  # a fresh registered block after the release
assert z.is_pinned()
print("ok")
"""
    pkg_parent = os.path.dirname(os.path.dirname(cudalite.__file__))
    for conf in ("pinned_use_cuda_host_register:True,pinned_num_register_threads:8",
                 "pinned_use_cuda_host_register:True"):  # fmt: skip
        env = dict(os.environ, PYTHONPATH=pkg_parent, CUDALITE_ALLOC_CONF=conf)
        r = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
        assert r.returncode == 0 and r.stdout == "ok\n", r.stderr
