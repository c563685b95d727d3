"""The caching allocator's reports on the host backend: history with Python stacks, the
summary table, and settings (CUDALITE_ALLOC_CONF syntax and errors)."""

import pickle
import sys

import pytest

from _alloc_helpers import (
    CLASSIC,
    LENDING,
    PAGES_2MIB,
    GiB,
    H,
    MiB,
    assert_snapshot_matches_stats,
    cur,
    flat,
)
from cudalite import _C
from cudalite.cuda import memory


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
    # Taking the snapshot is recorded too, as torch does.
    assert [e["action"] for e in trace] == ["free_requested", "free_completed", "snapshot"]
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
        ("page_lending:1", "Expected 'True' or 'False' for page_lending"),
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
    assert s["page_lending"] is False  # cudalite's key, off by default
    assert _C._memory.parse_allocator_settings("page_lending:True")["page_lending"] is True
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
    q = h.alloc(29 * MiB)  # arenas again: one growth of 30 MiB (the granularity's multiple)
    assert cur(h, "reserved_bytes.all") == 50 * MiB
    h.set_settings(LENDING)
    r = h.alloc(29 * MiB)  # pages of 4 MiB: 32 MiB more
    assert cur(h, "reserved_bytes.all") == 82 * MiB
    assert_snapshot_matches_stats(h)
    h.free(p)
    h.free(q)
    h.free(r)


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
# The history's segment events add up to the reserved bytes (the timeline's reserved line).


def _traced_reserved(h):
    total = 0
    for e in h.snapshot()["device_traces"][0]:
        if e["action"] in ("segment_map", "segment_alloc"):
            total += e["size"]
        elif e["action"] in ("segment_unmap", "segment_free"):
            total -= e["size"]
    return total


@pytest.mark.parametrize("settings", ["", CLASSIC, LENDING, PAGES_2MIB])
@pytest.mark.parametrize("capacity", [GiB, 160 * MiB])
def test_history_segment_events_sum_to_reserved(settings, capacity):
    # A tight capacity makes the arenas lend pages and later unmap the lent ranges.
    import random

    h = H(capacity, settings)
    h.record_memory_history("all", None, "python", 1 << 20)
    rnd = random.Random(capacity)
    live = []
    for i in range(400):
        if live and rnd.random() < 0.5:
            h.free(live.pop(rnd.randrange(len(live))))
        else:
            try:
                live.append(h.alloc(rnd.randint(1, 16 * MiB)))
            except _C.OutOfMemoryError:
                pass
        if i % 40 == 0:
            h.empty_cache()
        assert _traced_reserved(h) == cur(h, "reserved_bytes.all"), i
    for p in live:
        h.free(p)
    h.empty_cache()
    assert _traced_reserved(h) == 0


# Note [History stacks]: stacks are cached by code object and position; the lines and the
# outer frames must still be each event's own.


def _alloc_and_line(h):
    import inspect

    return h.alloc(1024), inspect.currentframe().f_lineno


def test_history_stacks_have_each_events_lines():
    h = H(GiB)
    h.record_memory_history("all", "all", "python", 1000)
    p1, line1 = _alloc_and_line(h)
    outer1 = sys._getframe().f_lineno - 1
    p2, line2 = _alloc_and_line(h)
    outer2 = sys._getframe().f_lineno - 1
    ptrs = [p1, p2]
    for _ in range(3):  # the same stack again: the cached context
        ptrs.append(_alloc_and_line(h)[0])
    allocs = [e for e in h.snapshot()["device_traces"][0] if e["action"] == "alloc"]
    assert len(allocs) == 5
    for e, outer in zip(allocs, (outer1, outer2), strict=False):
        inner, caller = e["frames"][0], e["frames"][1]
        assert (inner["name"], inner["line"]) == ("_alloc_and_line", line1)
        assert (caller["name"], caller["line"]) == (
            "test_history_stacks_have_each_events_lines",
            outer,
        )
    assert line1 == line2
    assert allocs[2]["frames"] == allocs[3]["frames"] == allocs[4]["frames"]
    assert allocs[0]["frames"] != allocs[1]["frames"]  # called from two lines
    for p in ptrs:
        h.free(p)
    h.record_memory_history(None)


def test_history_stack_cache_starts_over_when_full():
    # More distinct stacks than the cache holds (4096): each event keeps its own frames.
    h = H(GiB)
    h.record_memory_history("all", "all", "python", 10_000)
    ns = {}
    for i in range(4200):
        exec(f"def site_{i}(h):\n    return h.alloc(512)", ns)
    ptrs = [ns[f"site_{i}"](h) for i in range(4200)]
    ptrs.append(ns["site_7"](h))  # a stack cached before the cache started over
    allocs = [e for e in h.snapshot()["device_traces"][0] if e["action"] == "alloc"]
    names = [e["frames"][0]["name"] for e in allocs]
    assert names == [f"site_{i}" for i in range(4200)] + ["site_7"]
    assert all(e["frames"][0]["line"] == 2 for e in allocs)
    for p in ptrs:
        h.free(p)
    h.record_memory_history(None)
