"""The caching allocator's logic on the host backend: runs everywhere, no GPU needed.

The same allocator core serves CUDA devices; here its memory comes from host memory with a
set capacity, and streams and events are simulated (launch() queues pretend work on a
stream, complete() finishes it). Arena growth and lending are in
test_caching_allocator_arenas.py, reports, settings and history in
test_caching_allocator_reports.py, traces and threads in test_caching_allocator_stress.py.
"""

import re

import pytest

from _alloc_helpers import (
    CLASSIC,
    PAGES_2MIB,
    GiB,
    H,
    MiB,
    assert_snapshot_matches_stats,
    cur,
    flat,
)
from cudalite import _C

# ---------------------------------------------------------------------------------------
# Size classes, pools and segments.


def test_rounds_to_512_bytes_in_the_small_pool():
    h = H(GiB)
    p = h.alloc(1)
    assert cur(h, "allocated_bytes.all") == 512
    assert cur(h, "allocated_bytes.small_pool") == 512
    assert cur(h, "requested_bytes.all") == 1
    assert cur(h, "allocation.small_pool") == 1
    assert cur(h, "reserved_bytes.small_pool") == 2 * MiB  # one 2 MiB page
    assert cur(h, "segment.all") == 1
    h.free(p)
    assert cur(h, "allocated_bytes.all") == 0
    assert cur(h, "reserved_bytes.all") == 2 * MiB  # cached
    assert flat(h)["allocated_bytes.all.peak"] == 512


def test_one_mib_is_small_and_above_is_large():
    h = H(GiB)
    a = h.alloc(MiB)
    b = h.alloc(MiB + 1)
    assert cur(h, "allocated_bytes.small_pool") == MiB
    assert cur(h, "allocated_bytes.large_pool") == MiB + 512
    h.free(a)
    h.free(b)


def test_zero_bytes_allocates_nothing():
    h = H(GiB)
    assert h.alloc(0) == 0
    assert cur(h, "allocation.all") == 0


@pytest.mark.parametrize(
    "nbytes, reserved",
    [(512, 2 * MiB), (MiB, 2 * MiB), (MiB + 512, 20 * MiB), (9 * MiB, 20 * MiB)]
    + [(10 * MiB, 10 * MiB), (11 * MiB + 1, 12 * MiB), (100 * MiB, 100 * MiB)],
)
def test_classic_segment_sizes_are_torchs(nbytes, reserved):
    h = H(GiB, CLASSIC)
    p = h.alloc(nbytes)
    assert cur(h, "reserved_bytes.all") == reserved
    assert cur(h, "segment.all") == 1
    h.free(p)


def test_classic_split_rules():
    h = H(GiB, CLASSIC)
    # 1.5 MiB comes from a 20 MiB segment; the 18.5 MiB rest is split off.
    a = h.alloc(3 * MiB // 2)
    assert cur(h, "allocated_bytes.all") == 3 * MiB // 2
    assert cur(h, "inactive_split.all") == 1
    assert cur(h, "inactive_split_bytes.all") == 20 * MiB - 3 * MiB // 2
    # 12 MiB fits the cached 18.5 MiB rest: no new segment.
    b = h.alloc(12 * MiB)
    assert cur(h, "reserved_bytes.all") == 20 * MiB
    h.free(a)
    h.free(b)
    assert cur(h, "inactive_split.all") == 0
    # A large block is not split when at most 1 MiB would remain.
    c = h.alloc(39 * MiB + MiB // 2)
    assert cur(h, "allocated_bytes.all") == 40 * MiB
    assert cur(h, "requested_bytes.all") == 39 * MiB + MiB // 2
    h.free(c)
    assert_snapshot_matches_stats(h)


def test_reuse_returns_the_cached_block():
    for settings in ("", CLASSIC):
        h = H(GiB, settings)
        p = h.alloc(3 * MiB)
        reserved = cur(h, "reserved_bytes.all")
        device_allocs = flat(h)["num_device_alloc"]
        h.free(p)
        assert h.alloc(3 * MiB) == p
        assert cur(h, "reserved_bytes.all") == reserved
        assert flat(h)["num_device_alloc"] == device_allocs


def test_free_blocks_merge_with_free_neighbours():
    h = H(GiB, CLASSIC)
    a, b, c = (h.alloc(512 * 1024) for _ in range(3))
    assert b == a + 512 * 1024 and c == b + 512 * 1024
    h.free(a)
    h.free(c)
    assert cur(h, "inactive_split.small_pool") == 2
    assert_snapshot_matches_stats(h)
    h.free(b)
    (seg,) = h.snapshot()["segments"]
    assert [blk["state"] for blk in seg["blocks"]] == ["inactive"]
    assert seg["blocks"][0]["size"] == 2 * MiB
    assert cur(h, "inactive_split.all") == 0


def test_blocks_belong_to_their_stream():
    for settings in ("", CLASSIC):
        h = H(GiB, settings)
        p = h.alloc(4 * MiB, stream=1)
        h.free(p)
        q = h.alloc(4 * MiB, stream=2)
        assert q != p
        assert h.alloc(4 * MiB, stream=1) == p
        segs = h.snapshot()["segments"]
        assert {s["stream"] for s in segs} == {1, 2}


def test_roundup_power2_divisions():
    h = H(GiB, "roundup_power2_divisions:4")
    p = h.alloc(1200 * 1024)
    assert cur(h, "allocated_bytes.all") == 1280 * 1024
    h.free(p)
    h.set_settings("roundup_power2_divisions:[1:4,>:2]")
    p = h.alloc(3 * MiB + 1)
    assert cur(h, "allocated_bytes.all") == 4 * MiB
    h.free(p)


def test_max_split_size_keeps_oversize_blocks_whole():
    h = H(GiB, CLASSIC + ",max_split_size_mb:20")
    a = h.alloc(30 * MiB)
    assert flat(h)["oversize_allocations.current"] == 1
    assert flat(h)["oversize_segments.current"] == 1
    assert flat(h)["max_split_size"] == 20 * MiB
    h.free(a)
    b = h.alloc(10 * MiB)  # may not take the oversize block
    assert b != a
    assert cur(h, "reserved_bytes.all") == 40 * MiB
    c = h.alloc(25 * MiB)  # oversize request: takes the 30 MiB block whole
    assert c == a
    assert cur(h, "allocated_bytes.all") == 40 * MiB
    h.free(b)
    h.free(c)
    assert flat(h)["oversize_allocations.current"] == 0


# ---------------------------------------------------------------------------------------
# Releasing memory (arena growth and lending: test_caching_allocator_arenas.py).


def test_empty_cache_keeps_memory_in_use():
    h = H(GiB, PAGES_2MIB)
    a = h.alloc(4 * MiB)
    b = h.alloc(4 * MiB)
    h.fill(b, 4 * MiB, 7)
    h.free(a)
    h.empty_cache()
    assert cur(h, "reserved_bytes.all") == 4 * MiB
    assert flat(h)["num_device_free"] == 2  # a's two 2 MiB pages
    assert h.check(b, 4 * MiB, 7)
    assert_snapshot_matches_stats(h)
    h.free(b)
    h.empty_cache()
    assert cur(h, "reserved_bytes.all") == 0


def test_empty_cache_releases_unsplit_classic_segments_only():
    h = H(GiB, CLASSIC)
    a = h.alloc(3 * MiB)  # in a 20 MiB segment
    b = h.alloc(30 * MiB)
    h.free(b)
    h.empty_cache()
    assert cur(h, "reserved_bytes.all") == 20 * MiB
    h.free(a)
    h.empty_cache()
    assert cur(h, "reserved_bytes.all") == 0
    assert cur(h, "segment.all") == 0


# ---------------------------------------------------------------------------------------
# Streams and events (record_stream).


def test_record_stream_defers_reuse_until_the_stream_passes_the_free():
    for settings in ("", CLASSIC):
        h = H(GiB, settings)
        p = h.alloc(4 * MiB)
        h.record_stream(p, 7)
        h.launch(7)  # work on stream 7 still uses p
        h.free(p)
        assert cur(h, "allocation.all") == 0
        assert cur(h, "active.all") == 1  # freed, but waiting for stream 7
        states = [b["state"] for s in h.snapshot()["segments"] for b in s["blocks"]]
        assert "active_pending_free" in states
        assert_snapshot_matches_stats(h)
        q = h.alloc(4 * MiB)
        assert q != p
        h.free(q)
        h.complete(7)
        r = h.alloc(4 * MiB)  # processes the completed event
        assert cur(h, "active.all") == 1
        h.free(r)
        assert_snapshot_matches_stats(h)


def test_record_stream_on_the_allocation_stream_needs_no_event():
    h = H(GiB)
    p = h.alloc(MiB, stream=3)
    h.record_stream(p, 3)
    h.launch(3)
    h.free(p)
    assert cur(h, "active.all") == 0


def test_empty_cache_waits_for_outstanding_events():
    h = H(GiB)
    p = h.alloc(4 * MiB)
    h.record_stream(p, 5)
    h.launch(5)
    h.free(p)
    h.empty_cache()
    st = flat(h)
    assert st["num_sync_all_streams"] == 1
    assert st["active.all.current"] == 0
    assert st["reserved_bytes.all.current"] == 0


# ---------------------------------------------------------------------------------------
# Out of memory.

OOM_MESSAGE = re.compile(
    r"Host backend out of memory\. Tried to allocate 32\.00 MiB\. Host backend 0 has a total "
    r"capacity of 64\.00 MiB of which 16\.00 MiB is free\. Of the allocated memory 48\.00 MiB "
    r"is allocated by cudalite, and 0 bytes is reserved by cudalite but unallocated\.$"
)


def test_out_of_memory_raises_and_leaves_live_blocks_alone():
    h = H(64 * MiB)
    a = h.alloc(32 * MiB)
    b = h.alloc(16 * MiB)
    h.fill(a, 32 * MiB, 1)
    h.fill(b, 16 * MiB, 2)
    with pytest.raises(_C.OutOfMemoryError) as exc:
        h.alloc(32 * MiB)
    assert isinstance(exc.value, RuntimeError)
    assert OOM_MESSAGE.match(str(exc.value)), str(exc.value)
    st = flat(h)
    assert st["num_ooms"] == 1
    assert st["allocated_bytes.all.current"] == 48 * MiB
    assert h.check(a, 32 * MiB, 1) and h.check(b, 16 * MiB, 2)
    h.free(b)
    c = h.alloc(32 * MiB)  # usable again after the error
    h.free(a)
    h.free(c)


def test_classic_oom_message_suggests_expandable_segments():
    h = H(64 * MiB, CLASSIC)
    a = h.alloc(40 * MiB)
    with pytest.raises(_C.OutOfMemoryError, match="expandable_segments:True"):
        h.alloc(40 * MiB)
    h.free(a)


def test_allocation_retries_after_freeing_the_cache():
    h = H(64 * MiB, CLASSIC)
    h.free(h.alloc(40 * MiB))
    p = h.alloc(50 * MiB)  # needs the cached 40 MiB segment released first
    st = flat(h)
    assert st["num_alloc_retries"] == 1
    assert st["num_device_free"] == 1
    assert st["reserved_bytes.all.current"] == 50 * MiB
    assert st["num_ooms"] == 0
    h.free(p)


def test_arena_grows_its_free_tail_without_a_retry():
    h = H(64 * MiB, PAGES_2MIB)
    h.free(h.alloc(40 * MiB))
    p = h.alloc(50 * MiB)  # the free 40 MiB tail grows by 10 MiB
    st = flat(h)
    assert st["num_alloc_retries"] == 0
    assert st["reserved_bytes.all.current"] == 50 * MiB
    h.free(p)


def test_growth_lends_when_the_budget_allows_new_pages_but_the_device_has_none():
    h = H(GiB)
    h.free(h.alloc(100 * MiB))  # the growth budget now allows ~100 MiB of new pages
    h.empty_cache()
    h.capacity = 20 * MiB
    a, b, c, d, e = (h.alloc(4 * MiB) for _ in range(5))
    h.free(b)
    h.free(d)
    f = h.alloc(8 * MiB)  # no new page to be had: lends b's and d's instead
    assert flat(h)["num_alloc_retries"] == 0
    assert flat(h)["num_ooms"] == 0
    assert cur(h, "reserved_bytes.all") == 20 * MiB
    h.fill(f, 8 * MiB, 3)
    for p in (a, c, e, f):
        h.free(p)
    assert_snapshot_matches_stats(h)


def test_memory_fraction_caps_reserved_memory():
    h = H(100 * MiB)
    assert h.get_memory_fraction() == 1.0
    h.set_memory_fraction(0.5)
    assert h.get_memory_fraction() == 0.5
    a = h.alloc(40 * MiB)
    with pytest.raises(_C.OutOfMemoryError, match=r"50\.00 MiB allowed; "):
        h.alloc(20 * MiB)
    with pytest.raises(ValueError, match=r"Invalid fraction value: 1\.5\. Allowed range: 0~1"):
        h.set_memory_fraction(1.5)
    h.free(a)


def test_garbage_collection_threshold_frees_old_cached_segments():
    h = H(100 * MiB, CLASSIC + ",garbage_collection_threshold:0.5")
    h.set_memory_fraction(1.0)
    a = h.alloc(30 * MiB)
    b = h.alloc(30 * MiB)
    h.free(a)
    h.free(b)
    c = h.alloc(40 * MiB)  # reserved 60 MiB > 50 MiB: one cached segment goes first
    assert cur(h, "reserved_bytes.all") == 70 * MiB
    assert flat(h)["num_device_free"] == 1
    h.free(c)


# ---------------------------------------------------------------------------------------
# Statistics and snapshots.


def test_memory_stats_have_torchs_keys():
    h = H(GiB)
    keys = set(flat(h))
    arrays = ["allocation", "segment", "active", "inactive_split", "allocated_bytes"]
    arrays += ["reserved_bytes", "active_bytes", "inactive_split_bytes", "requested_bytes"]
    expected = {
        f"{a}.{p}.{m}"
        for a in arrays
        for p in ("all", "small_pool", "large_pool")
        for m in ("current", "peak", "allocated", "freed")
    }
    expected |= {
        f"{o}.{m}"
        for o in ("oversize_allocations", "oversize_segments")
        for m in ("current", "peak", "allocated", "freed")
    }
    expected |= {"num_alloc_retries", "num_ooms", "num_sync_all_streams", "num_device_alloc"}
    expected |= {"num_device_free", "max_split_size"}
    assert keys == expected
    assert flat(h)["max_split_size"] == -1


def test_reset_peak_and_accumulated_stats():
    h = H(GiB)
    p = h.alloc(8 * MiB)
    h.free(p)
    q = h.alloc(MiB)
    h.reset_peak_memory_stats()
    st = flat(h)
    assert st["allocated_bytes.all.peak"] == st["allocated_bytes.all.current"] == MiB
    h.reset_accumulated_memory_stats()
    st = flat(h)
    assert st["allocated_bytes.all.allocated"] == st["allocated_bytes.all.freed"] == 0
    assert st["num_device_alloc"] == 0
    h.free(q)


@pytest.mark.parametrize("settings", ["", CLASSIC])
def test_stats_rebuilt_from_snapshots_agree(settings):
    import random

    rnd = random.Random(7)
    h = H(64 * GiB, settings)
    live = []
    for step in range(4000):
        r = rnd.random()
        if live and r < 0.45:
            p = live.pop(rnd.randrange(len(live)))
            if rnd.random() < 0.2:
                h.record_stream(p, 9)
                h.launch(9)
            h.free(p)
        elif r < 0.47:
            h.complete(9)
        elif r < 0.48:
            h.empty_cache()
        else:
            small = rnd.random() < 0.5
            n = rnd.randint(1, 2048) * 512 if small else rnd.randint(1, 40 * MiB)
            live.append(h.alloc(n, stream=rnd.choice([0, 0, 0, 1])))
        if step % 250 == 0:
            assert_snapshot_matches_stats(h)
    assert_snapshot_matches_stats(h)


def test_snapshot_layout_is_torchs():
    h = H(GiB)
    p = h.alloc(1000)
    snap = h.snapshot()
    assert set(snap) == {"segments", "device_traces", "allocator_settings", "external_annotations"}
    (seg,) = snap["segments"]
    assert set(seg) == {
        "device", "address", "total_size", "allocated_size", "active_size", "requested_size",
        "stream", "segment_type", "segment_pool_id", "is_expandable", "frames", "blocks",
    }  # fmt: skip
    assert seg["segment_type"] == "small" and seg["is_expandable"]
    assert seg["segment_pool_id"] == (0, 0)
    blk = seg["blocks"][0]
    assert set(blk) == {"address", "size", "requested_size", "state", "frames"}
    assert (blk["address"], blk["size"], blk["requested_size"]) == (p, 1024, 1000)
    assert blk["state"] == "active_allocated"
    h.free(p)


# ---------------------------------------------------------------------------------------
# Absurd sizes and failing backends (hardening).


@pytest.mark.parametrize("settings", ["", CLASSIC, "roundup_power2_divisions:4"])
@pytest.mark.parametrize("nbytes", [2**62, 2**62 + 1, 2**63 - 1, 2**64 - 512, 2**64 - 1])
def test_huge_requests_raise_out_of_memory_without_wrapping(settings, nbytes):
    h = H(GiB, settings)
    live = h.alloc(MiB)
    with pytest.raises(_C.OutOfMemoryError, match=r"^Host backend out of memory\. Tried to"):
        h.alloc(nbytes)
    st = flat(h)
    assert st["num_ooms"] == 1
    assert st["allocated_bytes.all.current"] == MiB  # nothing was handed out
    assert st["reserved_bytes.all.current"] == h.backend_used
    h.free(h.alloc(2 * MiB))  # usable afterwards
    h.free(live)


def test_huge_request_message_names_the_size():
    h = H(GiB)
    with pytest.raises(_C.OutOfMemoryError, match=r"Tried to allocate 17179869184\.00 GiB\."):
        h.alloc(2**64 - 1)


def _consistent(h, snapshot=True):
    st = flat(h)
    assert st["reserved_bytes.all.current"] == h.backend_used
    if snapshot:
        assert_snapshot_matches_stats(h)


@pytest.mark.parametrize("call", ["unmap", "release_physical"])
def test_a_failing_release_in_empty_cache_leaves_the_arenas_consistent(call):
    h = H(GiB, PAGES_2MIB)
    keep = h.alloc(8 * MiB)
    h.fill(keep, 8 * MiB, 7)
    for p in [h.alloc(8 * MiB) for _ in range(4)]:
        h.free(p)
    h.fail_next(call, 1, 2)  # the third such call fails
    with pytest.raises(_C.AcceleratorError, match=f"injected failure of {call}"):
        h.empty_cache()
    # A page whose release failed is unmapped (no segment shows it) but still held and
    # counted in reserved memory until a retry releases it.
    _consistent(h, snapshot=call == "unmap")
    assert h.backend_used > 8 * MiB  # part of the cache is still held
    h.empty_cache()  # the retry releases the rest
    _consistent(h)
    assert h.backend_used == 8 * MiB
    assert h.check(keep, 8 * MiB, 7)
    p = h.alloc(16 * MiB)
    h.fill(p, 16 * MiB, 1)
    assert h.check(keep, 8 * MiB, 7)
    h.free(p)
    h.free(keep)


def test_a_failing_free_in_empty_cache_leaves_plain_segments_cached():
    h = H(GiB, CLASSIC)
    for p in [h.alloc(40 * MiB) for _ in range(3)]:
        h.free(p)
    h.fail_next("free", 1, 1)  # the second cudaFree fails
    with pytest.raises(_C.AcceleratorError, match="injected failure of free"):
        h.empty_cache()
    _consistent(h)
    st = flat(h)
    assert st["segment.all.current"] == 2
    assert st["num_device_free"] == 1
    h.empty_cache()
    _consistent(h)
    assert h.backend_used == 0
    h.free(h.alloc(40 * MiB))  # the cached segment is used again


def test_a_failing_free_in_the_out_of_memory_path_propagates_and_recovers():
    h = H(100 * MiB, CLASSIC)
    h.free(h.alloc(60 * MiB))
    h.fail_next("free", 1)
    with pytest.raises(_C.AcceleratorError):
        h.alloc(70 * MiB)  # needs the cached segment freed first
    _consistent(h)
    h.free(h.alloc(70 * MiB))  # the retry frees it
    _consistent(h)


def test_a_failing_page_creation_during_growth_leaves_nothing_behind():
    h = H(GiB, PAGES_2MIB)
    a = h.alloc(4 * MiB)
    h.fail_next("create_physical", 1, 2)
    with pytest.raises(_C.AcceleratorError):
        h.alloc(8 * MiB)
    _consistent(h)
    assert h.backend_used == 4 * MiB
    h.free(h.alloc(8 * MiB))
    h.free(a)
    _consistent(h)


def test_a_failing_map_in_the_middle_of_growth_rolls_it_back():
    # Note [Growth is all or nothing]: 8 pages to map, the fourth map fails.
    h = H(GiB, PAGES_2MIB)
    a = h.alloc(4 * MiB)
    h.fill(a, 4 * MiB, 7)
    before = h.backend_calls()
    h.fail_next("map", 1, 3)
    with pytest.raises(_C.AcceleratorError, match="injected failure of map"):
        h.alloc(16 * MiB)
    after = h.backend_calls()
    assert after["map"] - before["map"] == 3
    assert after["unmap"] - before["unmap"] == 3  # what was mapped is unmapped
    assert after["create"] - before["create"] == after["release"] - before["release"] == 8
    _consistent(h)
    assert h.backend_used == 4 * MiB
    assert flat(h)["allocated_bytes.all.current"] == 4 * MiB
    p = h.alloc(16 * MiB)  # the allocator keeps working, on the same addresses
    h.fill(p, 16 * MiB, 1)
    assert h.check(a, 4 * MiB, 7)
    _consistent(h)
    h.free(p)
    h.free(a)


@pytest.mark.parametrize("call", ["map", "set_access"])
def test_out_of_memory_while_mapping_frees_the_cache_retries_then_raises(call):
    h = H(GiB, PAGES_2MIB)
    keep = h.alloc(4 * MiB)
    h.free(h.alloc(8 * MiB))  # cached
    # Once: the allocator frees its cache and the retry succeeds, as after cuMemCreate.
    h.fail_next(call, 1, 1 if call == "map" else 0, out_of_memory=True)
    p = h.alloc(64 * MiB)
    st = flat(h)
    assert st["num_alloc_retries"] == 1
    assert st["num_ooms"] == 0
    _consistent(h)
    h.free(p)
    h.free(h.alloc(8 * MiB))
    # Every time: torch's OutOfMemoryError, with nothing left behind.
    h.fail_next(call, 1000, 0, out_of_memory=True)
    with pytest.raises(_C.OutOfMemoryError, match=r"^Host backend out of memory\. Tried to"):
        h.alloc(128 * MiB)  # more than the cache holds
    assert flat(h)["num_ooms"] == 1
    _consistent(h)
    assert h.backend_used == 4 * MiB  # the cache was freed, the failed growth undone
    h.fail_next(call, 0)  # cancelled
    p = h.alloc(64 * MiB)
    h.fill(p, 64 * MiB, 3)
    _consistent(h)
    h.free(p)
    h.free(keep)


def test_a_failing_map_while_lending_keeps_the_hole_cached():
    h = H(GiB, PAGES_2MIB)
    blocks = [h.alloc(4 * MiB) for _ in range(3)]
    h.fill(blocks[0], 4 * MiB, 9)
    h.free(blocks[1])  # a hole whose pages a growth may lend
    h.set_memory_fraction(14 / 1024)  # 14 MiB of 1 GiB: growth has to lend
    h.fail_next("map", 1)
    with pytest.raises(_C.AcceleratorError, match="injected failure of map"):
        h.alloc(6 * MiB)
    _consistent(h)
    assert h.backend_used == 12 * MiB
    assert h.check(blocks[0], 4 * MiB, 9)
    p = h.alloc(6 * MiB)  # the retry lends the hole's pages and creates one
    assert h.backend_used == 14 * MiB
    h.fill(p, 6 * MiB, 2)
    assert h.check(blocks[0], 4 * MiB, 9)
    _consistent(h)
    h.free(p)


def test_fail_next_out_of_memory_only_for_calls_that_report_it():
    with pytest.raises(ValueError, match="unmap cannot report out of memory"):
        H(GiB).fail_next("unmap", out_of_memory=True)


def test_fail_next_checks_the_call_name():
    with pytest.raises(ValueError, match="unknown call 'cudaFree'"):
        H(GiB).fail_next("cudaFree")


def test_empty_cache_waits_for_the_device_before_taking_the_lock():
    # Pages of an arena are released only once its stream is idle; the wait happens before
    # the release (and again, at once, under the lock).
    h = H(GiB, PAGES_2MIB)
    h.free(h.alloc(8 * MiB))
    h.launch(0)  # work pending on stream 0
    before = h.backend_calls()["synchronize"]
    h.empty_cache()
    assert h.backend_used == 0
    assert h.backend_calls()["synchronize"] == before + 2
    h.empty_cache()  # nothing to release: no wait at all
    assert h.backend_calls()["synchronize"] == before + 2
