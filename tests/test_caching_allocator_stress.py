"""The caching allocator under load on the host backend: the fragmentation traces (a logic
test of peak reserved / peak allocated, not a timing) and many threads at once."""

import os
import sys
import threading

import pytest

from _alloc_helpers import CLASSIC, LENDING, GiB, H, MiB, assert_snapshot_matches_stats, cur

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "benchmarks", "traces"))
import gpt_trace  # noqa: E402
import inference_trace  # noqa: E402
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
ALL_TRACES = dict(TRACES, gpt=gpt_trace.trace, inference=inference_trace.trace)
# torch 2.11 with expandable_segments:True on these traces (NVIDIA H100, performance.md): the
# default's bound. The traces without a GPU measurement yet are held to 1.03.
TORCH_EXPANDABLE = {"synthetic": 1.030, "training": 1.019, "kvcache": 1.243}


@pytest.mark.parametrize("name", sorted(ALL_TRACES))
def test_default_fragments_no_more_than_torch(name):
    ops = ALL_TRACES[name]()
    default = H(256 * GiB).replay(ops)
    classic = H(256 * GiB, CLASSIC).replay(ops)
    ratio = default["peak_reserved"] / default["peak_allocated"]
    classic_ratio = classic["peak_reserved"] / classic["peak_allocated"]
    assert ratio <= TORCH_EXPANDABLE.get(name, 1.03), ratio
    assert ratio <= classic_ratio
    assert default["peak_reserved"] <= classic["peak_reserved"]


@pytest.mark.parametrize("name", sorted(TRACES))
def test_page_lending_ratio_at_most_1_03(name):
    ops = TRACES[name]()
    r = H(256 * GiB, LENDING).replay(ops)
    assert r["peak_reserved"] / r["peak_allocated"] <= 1.03


def driver_calls(h):
    st = h.memory_stats()
    return st["num_device_alloc"] + st["num_device_free"]


@pytest.mark.parametrize("name", sorted(ALL_TRACES))
def test_default_cold_replays_make_few_driver_calls_and_warm_ones_none(name):
    # One allocation per growth (Note [Growth granules]): a cold replay maps about as often
    # as torch's default calls cudaMalloc (131-183 times on the first three traces), never
    # unmaps, and the cache it leaves serves every warm replay without a driver call.
    ops = ALL_TRACES[name]()
    h = H(256 * GiB)
    h.replay(ops)
    calls = h.backend_calls()
    assert calls["unmap"] == calls["synchronize"] == 0
    assert calls["create"] == calls["map"] <= 250
    for _ in range(3):
        before = driver_calls(h)
        h.replay(ops)
        assert driver_calls(h) == before
    assert cur(h, "allocation.all") == 0
    assert_snapshot_matches_stats(h)


# Driver calls (maps and unmaps) per operation allowed with page lending in a warm replay
# after the first two. Training runs on its mappings; growing KV-cache buffers under a 2%
# budget still move pages (docs/allocator.md, "Steady state": about 0.35 per operation with
# 4 MiB pages); before those rules, that trace made 3.3 calls per operation warm and
# exhausted the host's mappings on its second warm replay.
WARM_CALLS_PER_OP = {"synthetic": 0.05, "training": 0.001, "kvcache": 0.5}


@pytest.mark.parametrize("name", sorted(TRACES))
def test_page_lending_warm_replays_make_few_driver_calls(name):
    ops = TRACES[name]()
    h = H(256 * GiB, LENDING)
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
