"""The caching allocator's private pools for CUDA graphs, on the host backend (no GPU needed).

A capture diverts the allocations of the streams it captures to a private pool keyed by a
pool id; the pool keeps its memory from the default pools until no graph uses it and every
block in it is free (docs/graphs.md, "Memory"). The GPU side is in test_cuda_graphs.py.
"""

import pytest

from _alloc_helpers import CLASSIC, GiB, H, MiB, assert_snapshot_matches_stats, cur

S0, S1 = 0, 7  # a stream that captures, and one that doesn't
POOL = (1, 0)  # a graph's own pool, as capture_begin makes it
HANDLE = (0, 5)  # a pool from graph_pool_handle()


def pool_segments(h, pool_id):
    return [s for s in h.snapshot()["segments"] if s["segment_pool_id"] == pool_id]


@pytest.fixture(params=[CLASSIC, ""], ids=["plain", "arenas"])
def h(request):
    return H(GiB, request.param)


def test_allocations_of_the_capturing_stream_go_to_the_private_pool(h):
    h.begin_allocate_to_pool(POOL, [S0])
    a = h.alloc(1000, S0)
    b = h.alloc(1000, S1)  # another stream (another thread) keeps the default pools
    h.end_allocate_to_pool(POOL)
    assert [s["segment_pool_id"] for s in pool_segments(h, POOL)] == [POOL]
    seg = pool_segments(h, POOL)[0]
    assert seg["address"] <= a < seg["address"] + seg["total_size"]
    assert not seg["is_expandable"]  # private pools use plain segments
    others = [s for s in h.snapshot()["segments"] if s["segment_pool_id"] == (0, 0)]
    assert any(s["address"] <= b < s["address"] + s["total_size"] for s in others)
    assert h.private_pool_use_count(POOL) == 1
    assert_snapshot_matches_stats(h)
    h.free(a)
    h.free(b)
    h.release_pool(POOL)
    h.empty_cache()
    assert cur(h, "reserved_bytes.all") == 0
    assert h.private_pool_count() == 0


def test_freed_blocks_are_reused_inside_the_pool_and_not_outside(h):
    h.begin_allocate_to_pool(POOL, [S0])
    a = h.alloc(4096, S0)
    h.free(a)
    b = h.alloc(4096, S0)
    assert b == a  # reused inside the pool during the capture
    h.end_allocate_to_pool(POOL)
    h.free(b)
    c = h.alloc(4096, S0)  # after the capture: the default pool, not the graph's memory
    seg = pool_segments(h, POOL)[0]
    assert not (seg["address"] <= c < seg["address"] + seg["total_size"])
    h.free(c)
    h.release_pool(POOL)
    h.empty_cache()
    assert cur(h, "reserved_bytes.all") == 0


def test_pool_is_kept_until_reset_and_its_tensors_died(h):
    base = cur(h, "reserved_bytes.all")
    h.begin_allocate_to_pool(POOL, [S0])
    out = h.alloc(3 * MiB, S0)
    h.end_allocate_to_pool(POOL)
    reserved = cur(h, "reserved_bytes.all")
    h.empty_cache()  # the graph still uses its pool
    assert cur(h, "reserved_bytes.all") == reserved
    h.release_pool(POOL)  # graph reset, but the output tensor lives
    h.empty_cache()
    assert cur(h, "reserved_bytes.all") == reserved
    assert h.private_pool_count() == 1
    h.free(out)  # the output dies: the memory goes at the next empty_cache
    assert cur(h, "reserved_bytes.all") == reserved
    h.empty_cache()
    assert cur(h, "reserved_bytes.all") == base
    assert h.private_pool_count() == 0


def test_shared_pool_reserves_the_larger_capture_not_the_sum(h):
    h.begin_allocate_to_pool(HANDLE, [S0])
    a = h.alloc(5 * MiB, S0)
    h.free(a)
    h.end_allocate_to_pool(HANDLE)
    first = cur(h, "reserved_bytes.all")
    h.begin_allocate_to_pool(HANDLE, [S0])  # a second graph with pool=first.pool()
    b = h.alloc(4 * MiB, S0)
    h.free(b)
    h.end_allocate_to_pool(HANDLE)
    assert cur(h, "reserved_bytes.all") == first
    assert h.private_pool_use_count(HANDLE) == 2
    h.release_pool(HANDLE)
    h.empty_cache()
    assert cur(h, "reserved_bytes.all") == first  # one graph still uses it
    h.release_pool(HANDLE)
    h.empty_cache()
    assert cur(h, "reserved_bytes.all") == 0


def test_a_released_pool_without_memory_goes_at_once(h):
    h.begin_allocate_to_pool(POOL, [S0])
    h.end_allocate_to_pool(POOL)  # an empty (or aborted) capture
    assert h.private_pool_count() == 1
    h.release_pool(POOL)
    assert h.private_pool_count() == 0
    assert h.private_pool_use_count(POOL) == 0


def test_aborted_capture_releases_its_pool_exactly(h):
    base = cur(h, "reserved_bytes.all")
    h.begin_allocate_to_pool(POOL, [S0])
    tmp = [h.alloc(n, S0) for n in (512, 3 * MiB, 30 * MiB)]
    for p in tmp:  # the failed capture's tensors die as the exception unwinds
        h.free(p)
    h.end_allocate_to_pool(POOL)
    h.release_pool(POOL)
    h.empty_cache()
    assert cur(h, "reserved_bytes.all") == base
    assert cur(h, "allocated_bytes.all") == 0
    assert h.private_pool_count() == 0
    assert pool_segments(h, POOL) == []


def test_events_of_blocks_freed_during_capture_wait_until_no_capture(h):
    x = h.alloc(4096, S0)  # allocated before the capture
    h.record_stream(x, S1)  # used on a side stream
    h.launch(S1)
    h.begin_allocate_to_pool(POOL, [S0])
    h.free(x)  # freed inside the capture: no event may be recorded or queried now
    assert cur(h, "active_bytes.all") == 4096
    y = h.alloc(4096, S0)  # the private pool: x's memory is not handed out
    assert y != x
    h.end_allocate_to_pool(POOL)
    z = h.alloc(4096, S0)  # after the capture the event is recorded; S1 is still busy
    assert z != x
    assert cur(h, "active_bytes.all") == 3 * 4096
    h.complete(S1)
    w = h.alloc(4096, S0)
    assert w == x  # the event completed: x's block was freed and reused
    assert cur(h, "active_bytes.all") == 3 * 4096
    for p in (y, z, w):
        h.free(p)
    h.release_pool(POOL)
    h.empty_cache()
    assert cur(h, "reserved_bytes.all") == 0


def test_record_stream_during_capture_is_not_waited_for_after_it(h):
    x = h.alloc(4096, S0)
    h.launch(S1)
    h.begin_allocate_to_pool(POOL, [S0])
    h.record_stream(x, S1)  # the side stream's use is part of the graph
    h.free(x)
    h.end_allocate_to_pool(POOL)
    y = h.alloc(4096, S0)  # the deferred free happens now, without an event on S1
    assert y == x
    assert cur(h, "active_bytes.all") == 4096
    h.free(y)
    h.release_pool(POOL)
    h.complete(S1)
    h.empty_cache()
    assert cur(h, "reserved_bytes.all") == 0


def test_empty_cache_during_capture_releases_nothing(h):
    a = h.alloc(3 * MiB, S1)
    h.free(a)
    reserved = cur(h, "reserved_bytes.all")
    h.begin_allocate_to_pool(POOL, [S0])
    h.empty_cache()
    assert cur(h, "reserved_bytes.all") == reserved
    h.end_allocate_to_pool(POOL)
    h.release_pool(POOL)
    h.empty_cache()
    assert cur(h, "reserved_bytes.all") == 0


def test_out_of_memory_during_capture_raises_without_freeing():
    h = H(40 * MiB, CLASSIC)
    a = h.alloc(24 * MiB, S1)
    h.free(a)  # cached in the default pool; may not be freed during a capture
    h.begin_allocate_to_pool(POOL, [S0])
    with pytest.raises(_oom()):
        h.alloc(24 * MiB, S0)
    h.end_allocate_to_pool(POOL)
    h.release_pool(POOL)
    b = h.alloc(24 * MiB, S0)  # after the capture the cache is released and the retry works
    h.free(b)


def test_reset_pool_memory_is_returned_by_the_out_of_memory_retry():
    h = H(40 * MiB, CLASSIC)
    h.begin_allocate_to_pool(POOL, [S0])
    a = h.alloc(24 * MiB, S0)
    h.free(a)
    h.end_allocate_to_pool(POOL)
    with pytest.raises(_oom()):
        h.alloc(24 * MiB, S0)  # the graph still holds its pool
    h.release_pool(POOL)
    b = h.alloc(24 * MiB, S0)
    h.free(b)
    assert h.private_pool_count() == 0


def test_two_captures_at_once_use_their_own_pools(h):
    h.begin_allocate_to_pool(POOL, [S0])
    h.begin_allocate_to_pool(HANDLE, [S1])
    a = h.alloc(1000, S0)
    b = h.alloc(1000, S1)
    h.end_allocate_to_pool(HANDLE)
    h.end_allocate_to_pool(POOL)
    (sa,) = pool_segments(h, POOL)
    (sb,) = pool_segments(h, HANDLE)
    assert sa["address"] <= a < sa["address"] + sa["total_size"]
    assert sb["address"] <= b < sb["address"] + sb["total_size"]
    h.free(a)
    h.free(b)
    h.release_pool(POOL)
    h.release_pool(HANDLE)
    h.empty_cache()
    assert cur(h, "reserved_bytes.all") == 0


def test_misuse_raises(h):
    with pytest.raises(RuntimeError, match="no capture allocates to pool"):
        h.end_allocate_to_pool(POOL)
    with pytest.raises(RuntimeError, match="no graph uses pool"):
        h.release_pool(POOL)
    with pytest.raises(RuntimeError, match="default pools"):
        h.begin_allocate_to_pool((0, 0), [S0])


def _oom():
    from cudalite import _C

    return _C.OutOfMemoryError
