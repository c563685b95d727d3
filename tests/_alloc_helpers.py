"""Shared helpers of the caching allocator tests (host backend)."""

import collections

from cudalite import _C

MiB = 1 << 20
GiB = 1 << 30
H = _C._memory._HostCachingAllocator
CLASSIC = "expandable_segments:False"  # torch's default cudaMalloc-style segments
# Page lending (Note [Growth granules]): arenas grow in pages that holes lend to the growing
# end. The default grows by one allocation per growth instead.
LENDING = "page_lending:True"
# Page lending with large-pool pages of the hardware granularity (4 MiB otherwise): tests of
# the arena mechanics count pages in these units.
PAGES_2MIB = "page_lending:True,large_segment_size_mb:2"


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


def assert_all_returned(h, *ptrs):
    """Frees ``ptrs``, empties the cache and checks that no memory is left reserved."""
    for p in ptrs:
        h.free(p)
    h.empty_cache()
    assert cur(h, "reserved_bytes.all") == 0
    assert h.backend_used == 0
