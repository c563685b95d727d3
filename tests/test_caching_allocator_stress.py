"""The caching allocator under load on the host backend: the fragmentation traces (a logic
test of peak reserved / peak allocated, not a timing) and many threads at once."""

import os
import sys
import threading

import pytest

from _alloc_helpers import CLASSIC, GiB, H, MiB, assert_snapshot_matches_stats, cur

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "benchmarks", "traces"))
import kvcache_trace  # noqa: E402
import synthetic_trace  # noqa: E402
import training_trace  # noqa: E402

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


# Driver calls (maps and unmaps) per operation allowed in a warm replay after the first two.
# Training runs on its mappings; growing KV-cache buffers under a 2% budget still move pages
# (docs/allocator.md, "Steady state": about 0.35 per operation with 4 MiB pages, 0.65 with
# 2 MiB); before those rules, that trace made 3.3 calls per operation warm and exhausted the
# host's mappings on its second warm replay.
WARM_CALLS_PER_OP = {"synthetic": 0.05, "training": 0.001, "kvcache": 0.5}


def driver_calls(h):
    st = h.memory_stats()
    return st["num_device_alloc"] + st["num_device_free"]


@pytest.mark.parametrize("name", sorted(TRACES))
def test_warm_replays_make_few_driver_calls(name):
    ops = TRACES[name]()
    h = H(256 * GiB)
    cold = h.replay(ops)
    assert cold["peak_reserved"] / cold["peak_allocated"] <= 1.03
    for _ in range(2):  # the first warm replays settle the cache the cold one left
        h.replay(ops)
    for _ in range(3):
        before = driver_calls(h)
        warm = h.replay(ops)
        assert (driver_calls(h) - before) / len(ops) <= WARM_CALLS_PER_OP[name]
        # Warm replays stay within the growth budget too.
        assert warm["peak_reserved"] / warm["peak_allocated"] <= 1.03
    assert cur(h, "allocation.all") == 0
    assert_snapshot_matches_stats(h)


def test_classic_mode_reproduces_torchs_fragmentation_on_the_synthetic_trace():
    # torch 2.11's default allocator reaches 1.083 on this trace.
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
