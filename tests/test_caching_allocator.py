"""The caching allocator's logic on the host backend: runs everywhere, no GPU needed.

The same allocator core serves CUDA devices; here its memory comes from host memory with a
set capacity, and streams and events are simulated (launch() queues pretend work on a
stream, complete() finishes it).
"""

import collections
import os
import pickle
import re
import sys
import threading

import pytest

from cudalite import _C
from cudalite.cuda import memory

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "benchmarks", "traces"))
import kvcache_trace  # noqa: E402
import synthetic_trace  # noqa: E402
import training_trace  # noqa: E402

MiB = 1 << 20
GiB = 1 << 30
H = _C._memory._HostCachingAllocator
CLASSIC = "expandable_segments:False"  # torch's default cudaMalloc-style segments


def flat(h):
    out = {}

    def rec(prefix, obj):
        if isinstance(obj, dict):
            for k, v in obj.items():
                rec(f"{prefix}.{k}" if prefix else k, v)
        else:
            out[prefix] = obj

    rec("", h.memory_stats())
    return out


def cur(h, key):
    return flat(h)[key + ".current"]


def rebuild_from_snapshot(snap):
    """Current statistics recomputed from a snapshot's segments and blocks."""
    out = collections.Counter()
    for seg in snap["segments"]:
        pool = "large_pool" if seg["segment_type"] == "large" else "small_pool"
        for p in ("all", pool):
            out[f"segment.{p}"] += 1
            out[f"reserved_bytes.{p}"] += seg["total_size"]
            out[f"allocated_bytes.{p}"] += seg["allocated_size"]
            out[f"active_bytes.{p}"] += seg["active_size"]
            out[f"requested_bytes.{p}"] += seg["requested_size"]
            for b in seg["blocks"]:
                out[f"allocation.{p}"] += b["state"] == "active_allocated"
                out[f"active.{p}"] += b["state"] != "inactive"
                split = not seg["is_expandable"] and len(seg["blocks"]) > 1
                if split and b["state"] == "inactive":
                    out[f"inactive_split.{p}"] += 1
                    out[f"inactive_split_bytes.{p}"] += b["size"]
    return out


def assert_snapshot_matches_stats(h):
    snap = h.snapshot()
    rebuilt = rebuild_from_snapshot(snap)
    stats = flat(h)
    names = ["segment", "reserved_bytes", "allocated_bytes", "active_bytes", "requested_bytes"]
    names += ["allocation", "active", "inactive_split", "inactive_split_bytes"]
    for name in names:
        for pool in ("all", "small_pool", "large_pool"):
            key = f"{name}.{pool}"
            assert rebuilt[key] == stats[key + ".current"], key
    for seg in snap["segments"]:
        assert seg["total_size"] == sum(b["size"] for b in seg["blocks"])
        addr = seg["address"]
        for b in seg["blocks"]:
            assert b["address"] == addr
            addr += b["size"]


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
# Arenas: growth, lending, release.


def test_arena_grows_in_pages_and_reuses_its_tail():
    h = H(GiB)
    a = h.alloc(3 * MiB)
    assert cur(h, "reserved_bytes.large_pool") == 4 * MiB  # two 2 MiB pages
    b = h.alloc(MiB + 512)  # fits the 1 MiB tail? no: grows by one page
    assert b == a + 3 * MiB
    assert cur(h, "reserved_bytes.large_pool") == 6 * MiB
    assert cur(h, "segment.large_pool") == 1  # one contiguous run
    h.free(a)
    h.free(b)
    assert_snapshot_matches_stats(h)


def test_growth_lends_free_pages_instead_of_reserving_more():
    h = H(256 * MiB)
    a, b, c, d = (h.alloc(8 * MiB) for _ in range(4))
    for p, v in ((a, 1), (c, 3), (d, 4)):
        h.fill(p, 8 * MiB, v)
    h.free(b)  # an 8 MiB hole that no later request fits
    e = h.alloc(12 * MiB)
    # 8 MiB of the new range are the hole's pages mapped again: only 4 MiB are new.
    assert cur(h, "reserved_bytes.all") == 36 * MiB
    h.fill(e, 12 * MiB, 5)
    for p, v in ((a, 1), (c, 3), (d, 4)):
        assert h.check(p, 8 * MiB, v)
    # Live runs: [a] and [c d e], the lent hole between them is not reserved memory.
    assert cur(h, "segment.all") == 2
    assert_snapshot_matches_stats(h)
    for p in (a, c, d, e):
        h.free(p)
    h.empty_cache()
    assert cur(h, "reserved_bytes.all") == 0
    assert h.backend_used == 0
    assert_snapshot_matches_stats(h)


def test_lent_pages_are_reclaimed_without_driver_calls():
    h = H(256 * MiB)
    a, b, c, d = (h.alloc(8 * MiB) for _ in range(4))
    h.fill(d, 8 * MiB, 4)
    h.free(b)
    e = h.alloc(12 * MiB)  # lends b's pages to the arena's end
    h.free(e)
    h.free(a)
    h.free(c)
    # 20 MiB fits no free block, but a + (lent) b + c does once b's pages live there again.
    calls, reserved = flat(h)["num_device_alloc"], cur(h, "reserved_bytes.all")
    f = h.alloc(20 * MiB)
    assert f == a
    assert flat(h)["num_device_alloc"] == calls
    assert cur(h, "reserved_bytes.all") == reserved
    h.fill(f, 20 * MiB, 6)
    assert h.check(d, 8 * MiB, 4)
    assert_snapshot_matches_stats(h)
    h.free(f)
    h.free(d)
    h.empty_cache()
    assert cur(h, "reserved_bytes.all") == 0
    assert h.backend_used == 0


def test_lent_pages_keep_data_intact_under_churn():
    import random

    rnd = random.Random(1)
    h = H(512 * MiB)
    live = {}
    for step in range(3000):
        if live and (rnd.random() < 0.5 or len(live) > 40):
            p, (n, v) = live.popitem() if rnd.random() < 0.5 else _pop_random(live, rnd)
            assert h.check(p, n, v), f"step {step}: block {p:#x} was overwritten"
            h.free(p)
        else:
            n = rnd.randint(1, 12) * MiB + rnd.randint(0, 4096)
            p = h.alloc(n)
            v = rnd.randint(1, 255)
            h.fill(p, n, v)
            live[p] = (n, v)
    assert flat(h)["num_device_alloc"] > 0
    assert_snapshot_matches_stats(h)
    for p in list(live):
        h.free(p)


def _pop_random(d, rnd):
    k = rnd.choice(list(d))
    return k, d.pop(k)


def test_empty_cache_keeps_memory_in_use():
    h = H(GiB)
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
    h = H(64 * MiB)
    h.free(h.alloc(40 * MiB))
    p = h.alloc(50 * MiB)  # the free 40 MiB tail grows by 10 MiB
    st = flat(h)
    assert st["num_alloc_retries"] == 0
    assert st["reserved_bytes.all.current"] == 50 * MiB
    h.free(p)


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


def _allocate_here(h, n):
    return h.alloc(n)


def test_history_records_python_stacks_and_actions():
    h = H(GiB)
    h.record_memory_history("all", "all", "python", 1000)
    p = _allocate_here(h, 3 * MiB)
    h.free(p)
    q = _allocate_here(h, 100)
    snap = h.snapshot()
    actions = [e["action"] for e in snap["device_traces"][0]]
    assert actions[:4] == ["segment_map", "alloc", "free_requested", "free_completed"]
    alloc = snap["device_traces"][0][1]
    assert (alloc["addr"], alloc["size"]) == (p, 3 * MiB)
    names = [(f["name"], f["filename"]) for f in alloc["frames"]]
    assert ("_allocate_here", __file__) in names
    (blk,) = [b for s in snap["segments"] for b in s["blocks"] if b["address"] == q]
    assert blk["frames"][0]["name"] == "_allocate_here"
    assert pickle.loads(pickle.dumps(snap)) == snap
    h.free(q)
    h.record_memory_history(None)
    assert h.snapshot()["device_traces"] == [[]]


def test_history_keeps_the_last_max_entries():
    h = H(GiB)
    h.record_memory_history("all", None, "python", 3)
    for _ in range(5):
        h.free(h.alloc(512))
    trace = h.snapshot()["device_traces"][0]
    assert [e["action"] for e in trace] == ["free_completed", "alloc", "free_requested"][-3:] or (
        len(trace) == 3
    )
    assert all(e["frames"] == [] for e in trace)


def test_history_argument_errors():
    h = H(GiB)
    with pytest.raises(RuntimeError, match="expected state to be 'state', 'all', or None"):
        h.record_memory_history("bad")
    with pytest.raises(RuntimeError, match="expected context to be"):
        h.record_memory_history("all", "bad")
    with pytest.raises(RuntimeError, match="expected stacks to be 'python', or 'all'"):
        h.record_memory_history("all", "all", "c++")


def test_summary_table_is_75_columns():
    h = H(GiB)
    p = h.alloc(5 * MiB)
    stats = flat(h)
    text = memory._format_summary(stats, 0)
    lines = text.splitlines()
    assert all(len(line) == 77 for line in lines), [len(line) for line in lines]
    assert lines[1] == "|" + " " * 17 + "cudalite CUDA memory summary, device ID 0" + " " * 17 + "|"
    assert (
        lines[3]
        == "|   " + " " * 9 + "CUDA OOMs: 0            |        cudaMalloc retries: 0         |"
    )
    assert "| Allocated memory      |   5120 KiB |   5120 KiB |   5120 KiB |      0 B   |" in text
    short = memory._format_summary(stats, 0, abbreviated=True).splitlines()
    assert len(short) < len(lines)
    h.free(p)


def test_invalid_free_raises():
    h = H(GiB)
    with pytest.raises(RuntimeError, match="invalid device pointer"):
        h.free(12345)


# ---------------------------------------------------------------------------------------
# Settings.


@pytest.mark.parametrize(
    "conf, message",
    [
        ("foo:1", "Unrecognized key 'foo' in CUDALITE_ALLOC_CONF"),
        ("expandable_segments:Yes", "Expected 'True' or 'False' for expandable_segments"),
        ("expandable_segments", "expected ':' after 'expandable_segments'"),
        ("expandable_segments:", "expected a value after 'expandable_segments:'"),
        ("max_split_size_mb:10", "max_split_size_mb too small, must be >= 20"),
        ("max_split_size_mb:abc", "max_split_size_mb expects a non-negative integer, got 'abc'"),
        ("max_split_size_mb:-5", "expects a non-negative integer, got '-5'"),
        ("garbage_collection_threshold:2", r"set it in \(0.0, 1.0\)"),
        ("garbage_collection_threshold:x", "expects a number, got 'x'"),
        ("roundup_power2_divisions:3", "divisions has to be power of 2"),
        ("roundup_power2_divisions:[3:4]", "intervals have to be power of 2"),
        ("roundup_power2_divisions:[256:4", "missing ']'"),
        ("backend:bad", "Unknown allocator backend, options are native and cudaMallocAsync"),
        ("backend:cudaMallocAsync", "not supported by cudalite"),
        ("max_split_size_mb:100;expandable_segments:True", "expects a non-negative integer"),
        # Spaces are dropped, as torch does, so this reads as one word.
        ("expandable_segments:True max_split_size_mb:100", "got 'Truemax_split_size_mb'"),
    ],
)
def test_bad_settings_raise_clear_errors(conf, message):
    with pytest.raises(ValueError, match=message):
        _C._memory.parse_allocator_settings(conf)
    with pytest.raises(ValueError, match=message):
        memory._set_allocator_settings(conf)


def test_settings_parse_torchs_syntax():
    s = _C._memory.parse_allocator_settings(
        "max_split_size_mb:128, roundup_power2_divisions:[256:4,>:1],"
        "garbage_collection_threshold:0.6,expandable_segments:False,backend:native,"
        "release_lock_on_cudamalloc:True,pinned_use_cuda_host_register:True"
    )
    assert s["max_split_size"] == 128 * MiB
    assert s["garbage_collection_threshold"] == 0.6
    assert s["expandable_segments"] is False
    assert s["release_lock_on_cudamalloc"] is True
    div = s["roundup_power2_divisions"]
    assert div["1"] == 4 and div["256"] == 4 and div["512"] == 1 and div["32768"] == 1
    div = _C._memory.parse_allocator_settings("roundup_power2_divisions:[64:8,256:4,1024:2]")[
        "roundup_power2_divisions"
    ]
    assert [div[str(1 << i)] for i in range(16)] == [8] * 7 + [0, 4, 0, 2] + [0] * 5
    assert _C._memory.parse_allocator_settings("")["expandable_segments"] is True


def test_runtime_settings_change_the_allocator():
    h = H(GiB)
    h.set_settings(CLASSIC)
    p = h.alloc(3 * MiB)
    assert cur(h, "reserved_bytes.all") == 20 * MiB  # a classic 20 MiB segment
    h.set_settings("")
    q = h.alloc(30 * MiB)
    assert cur(h, "reserved_bytes.all") == 50 * MiB
    assert_snapshot_matches_stats(h)
    h.free(p)
    h.free(q)


def test_set_allocator_settings_updates_the_global_settings():
    before = _C._memory.get_allocator_settings()
    try:
        memory._set_allocator_settings("max_split_size_mb:64")
        assert memory._snapshot()["allocator_settings"]["max_split_size"] == 64 * MiB
        assert memory._snapshot()["allocator_settings"]["CUDALITE_ALLOC_CONF"] == (
            "max_split_size_mb:64"
        )
    finally:
        memory._set_allocator_settings(before)


# ---------------------------------------------------------------------------------------
# Fragmentation (a logic test: peak reserved / peak allocated, not a timing).

TRACES = {
    "synthetic": synthetic_trace.trace,
    "training": training_trace.trace,
    "kvcache": kvcache_trace.trace,
}


@pytest.mark.parametrize("name", sorted(TRACES))
def test_fragmentation_ratio_at_most_1_03(name):
    ops = TRACES[name]()
    default = H(256 * GiB).replay(ops)
    classic = H(256 * GiB, CLASSIC).replay(ops)
    ratio = default["peak_reserved"] / default["peak_allocated"]
    classic_ratio = classic["peak_reserved"] / classic["peak_allocated"]
    assert ratio <= 1.03, ratio
    assert ratio <= classic_ratio
    assert default["peak_reserved"] <= classic["peak_reserved"]


def test_classic_mode_reproduces_torchs_fragmentation_on_the_synthetic_trace():
    # TARGETS.md: torch's default reaches 1.083 on this trace.
    r = H(256 * GiB, CLASSIC).replay(synthetic_trace.trace())
    assert 1.07 < r["peak_reserved"] / r["peak_allocated"] < 1.10


# ---------------------------------------------------------------------------------------
# Threads.


@pytest.mark.parametrize("settings", ["", CLASSIC])
def test_concurrent_alloc_and_free_from_many_threads(settings):
    h = H(8 * GiB, settings)
    ops = h.stress(threads=8, iters=20000, max_bytes=3 * MiB, streams=3, seed=1)
    assert ops == 8 * 20000
    assert cur(h, "allocation.all") == 0
    assert_snapshot_matches_stats(h)


def test_python_threads_allocate_with_the_gil_released():
    h = H(4 * GiB)
    errors = []

    def work(seed):
        import random

        rnd = random.Random(seed)
        live = []
        try:
            for _ in range(2000):
                if live and rnd.random() < 0.5:
                    p, n, v = live.pop(rnd.randrange(len(live)))
                    if not h.check(p, n, v):
                        errors.append(f"thread {seed}: block overwritten")
                    h.free(p)
                else:
                    n = rnd.randint(1, 256 * 1024)
                    p = h.alloc(n, stream=seed % 2)
                    h.fill(p, n, seed + 1)
                    live.append((p, n, seed + 1))
            for p, _, _ in live:
                h.free(p)
        except Exception as e:  # noqa: BLE001 - reported below
            errors.append(repr(e))

    threads = [threading.Thread(target=work, args=(i,)) for i in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert cur(h, "allocation.all") == 0
    assert_snapshot_matches_stats(h)
