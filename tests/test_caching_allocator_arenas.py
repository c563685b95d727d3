"""Arenas on the host backend: growth in pages, growth in place, lending free pages from holes,
reclaiming lent ranges through windows, and data integrity while pages move (allocator.md,
"Arenas" to "Steady state"). Runs everywhere, no GPU needed.
"""

import pytest

from _alloc_helpers import (
    LENDING,
    PAGES_2MIB,
    GiB,
    H,
    MiB,
    assert_all_returned,
    assert_snapshot_matches_stats,
    cur,
    flat,
)

# ---------------------------------------------------------------------------------------
# The default: one physical allocation per growth (Note [Growth granules]).


def test_each_growth_is_one_allocation_of_what_it_misses():
    h = H(GiB)
    a = h.alloc(29 * MiB)  # one allocation of 30 MiB (the granularity's multiple)
    assert h.backend_calls()["create"] == h.backend_calls()["map"] == 1
    assert h.arena_pages(a) == ([30 * MiB], 0)
    b = h.alloc(3 * MiB)  # the 1 MiB tail plus one new 2 MiB allocation, right after it
    assert h.backend_calls()["create"] == 2
    assert b == a + 29 * MiB
    assert h.arena_pages(b) == ([30 * MiB, 2 * MiB], 29 * MiB)
    assert cur(h, "reserved_bytes.all") == 32 * MiB
    assert cur(h, "segment.all") == 1  # one run of live memory
    h.fill(a, 29 * MiB, 1)
    h.fill(b, 3 * MiB, 2)
    assert h.check(a, 29 * MiB, 1) and h.check(b, 3 * MiB, 2)
    assert_snapshot_matches_stats(h)
    assert_all_returned(h, a, b)


def test_empty_cache_returns_an_allocation_once_all_of_it_is_free():
    h = H(GiB)
    a = h.alloc(11 * MiB)  # a 12 MiB allocation
    b = h.alloc(9 * MiB)  # its last 1 MiB and a new 8 MiB allocation
    c = h.alloc(4 * MiB)  # a third one
    h.free(a)
    h.free(c)
    h.empty_cache()  # only c's allocation is wholly free: b holds part of the first one
    assert cur(h, "reserved_bytes.all") == 20 * MiB
    assert flat(h)["num_device_free"] == 1
    h.fill(b, 9 * MiB, 5)
    assert h.check(b, 9 * MiB, 5)
    assert_snapshot_matches_stats(h)
    assert_all_returned(h, b)


def test_growth_lends_whole_free_allocations_before_running_out_of_memory():
    h = H(28 * MiB)
    a, b, c = (h.alloc(8 * MiB) for _ in range(3))
    h.fill(a, 8 * MiB, 1)
    h.fill(c, 8 * MiB, 3)
    h.free(b)  # an 8 MiB hole; 4 MiB of the device left
    d = h.alloc(12 * MiB)  # fits no hole: b's allocation is lent, 4 MiB created
    assert cur(h, "reserved_bytes.all") == 28 * MiB
    assert flat(h)["num_alloc_retries"] == 0  # no cache freed, no retry
    assert flat(h)["num_device_free"] == 0
    calls = h.backend_calls()
    assert calls["create"] == 4 and calls["map"] == 5  # a, b, c, the new 4 MiB; b lent
    h.fill(d, 12 * MiB, 4)
    assert h.check(a, 8 * MiB, 1) and h.check(c, 8 * MiB, 3)
    assert_snapshot_matches_stats(h)
    assert_all_returned(h, a, c, d)


def test_replays_time_the_drivers_calls_with_driver_costs():
    create = H.driver_cost_us("create_physical", 2 * MiB)
    page = create + H.driver_cost_us("map", 2 * MiB) + H.driver_cost_us("set_access", 2 * MiB)
    assert create == 10.2
    assert abs(page - 36.3) < 1e-9  # a page made live: ~38 us on an H100
    assert H.driver_cost_us("set_access", 64 * MiB) == 41.4
    mid = H.driver_cost_us("release_physical", 42 * MiB)  # between 20 and 64 MiB
    assert H.driver_cost_us("release_physical", 20 * MiB) < mid < 52.3
    assert H.driver_cost_us("free", GiB) > H.driver_cost_us("free", 256 * MiB)
    assert H.driver_cost_us("synchronize", 0) == 5.0
    with pytest.raises(ValueError, match="unknown call 'cuMemMap'"):
        H.driver_cost_us("cuMemMap", MiB)
    h = H(GiB)
    assert h.driver_costs is False
    p = h.alloc(2 * MiB)
    assert abs(h.backend_calls()["driver_us"] - page) < 1e-9  # counted, not waited for
    h.driver_costs = True
    import time

    t0 = time.perf_counter()
    q = h.alloc(6 * MiB)  # one new 6 MiB allocation, made live at the driver's price
    elapsed = time.perf_counter() - t0
    cost = sum(H.driver_cost_us(k, 6 * MiB) for k in ("create_physical", "map", "set_access"))
    assert elapsed >= cost * 1e-6
    assert abs(h.backend_calls()["driver_us"] - page - cost) < 1e-9
    assert_all_returned(h, p, q)


# ---------------------------------------------------------------------------------------
# Page lending: growth, lending, windows.


def test_arena_grows_in_pages_and_reuses_its_tail():
    h = H(GiB, PAGES_2MIB)
    a = h.alloc(5 * MiB // 2)
    assert cur(h, "reserved_bytes.large_pool") == 4 * MiB  # two 2 MiB pages
    b = h.alloc(5 * MiB // 4)  # fits the 1.5 MiB free tail
    assert b == a + 5 * MiB // 2
    assert cur(h, "reserved_bytes.large_pool") == 4 * MiB
    c = h.alloc(MiB + 512)  # fits no free block: grows by one page
    assert cur(h, "reserved_bytes.large_pool") == 6 * MiB
    for p in (a, b, c):
        h.free(p)
    assert_snapshot_matches_stats(h)


def test_growth_leaves_room_to_grow_in_place():
    h = H(GiB, PAGES_2MIB)
    a = h.alloc(31 * MiB // 2)  # 8 pages, the last one partly used
    b = h.alloc(16 * MiB)  # after a gap of 2 MiB of address space (an eighth of a)
    assert b == a + 18 * MiB
    assert cur(h, "reserved_bytes.all") == 32 * MiB
    assert cur(h, "segment.all") == 2  # the gap splits the arena's live memory
    h.free(a)
    calls = flat(h)["num_device_alloc"]
    c = h.alloc(17 * MiB)  # a's place and one page mapped into the gap
    assert c == a
    assert flat(h)["num_device_alloc"] == calls + 1
    assert cur(h, "segment.all") == 1  # the gap is closed
    h.fill(c, 17 * MiB, 7)
    h.fill(b, 16 * MiB, 8)
    assert h.check(c, 17 * MiB, 7)
    assert_snapshot_matches_stats(h)
    assert_all_returned(h, b, c)


def test_growth_lends_free_pages_instead_of_reserving_more():
    h = H(256 * MiB, LENDING)
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
    assert_all_returned(h, a, c, d, e)
    assert_snapshot_matches_stats(h)


def alloc_without_driver_calls(h, n):
    """h.alloc(n), checking that it made no driver allocation and reserved nothing more."""
    calls, reserved = flat(h)["num_device_alloc"], cur(h, "reserved_bytes.all")
    p = h.alloc(n)
    assert flat(h)["num_device_alloc"] == calls
    assert cur(h, "reserved_bytes.all") == reserved
    return p


def test_lent_pages_are_reclaimed_without_driver_calls():
    h = H(256 * MiB, LENDING)
    a, b, c, d = (h.alloc(8 * MiB) for _ in range(4))
    h.fill(d, 8 * MiB, 4)
    h.free(b)
    e = h.alloc(12 * MiB)  # lends b's pages to the arena's end
    h.free(e)
    h.free(a)
    h.free(c)
    # 20 MiB fits no free block, but a + (lent) b + c does once b's pages live there again.
    f = alloc_without_driver_calls(h, 20 * MiB)
    assert f == a
    h.fill(f, 20 * MiB, 6)
    assert h.check(d, 8 * MiB, 4)
    assert_snapshot_matches_stats(h)
    assert_all_returned(h, f, d)


def test_a_window_across_several_lent_ranges_is_swapped_in_without_driver_calls():
    h = H(256 * MiB, LENDING)
    a, b, c, d, e = (h.alloc(4 * MiB) for _ in range(5))
    h.fill(a, 4 * MiB, 1)
    h.fill(e, 4 * MiB, 5)
    h.free(b)
    h.free(d)
    f = h.alloc(8 * MiB)  # lends the pages of both holes to the arena's end
    assert cur(h, "reserved_bytes.all") == 20 * MiB
    h.free(f)
    h.free(c)
    # 12 MiB fits no free block; [lent b][free c][lent d] holds it once b's and d's pages,
    # free at the end, live there again.
    g = alloc_without_driver_calls(h, 12 * MiB)
    assert g == b
    h.fill(g, 12 * MiB, 7)
    assert h.check(a, 4 * MiB, 1) and h.check(e, 4 * MiB, 5)
    assert_snapshot_matches_stats(h)
    h2 = h.alloc(8 * MiB)  # the end's pages are lent now: this maps again
    h.fill(h2, 8 * MiB, 9)
    assert h.check(g, 12 * MiB, 7)
    for p in (a, e, g, h2):
        h.free(p)
    assert_snapshot_matches_stats(h)


@pytest.mark.parametrize("settings", ["", LENDING])
def test_lent_pages_keep_data_intact_under_churn(settings):
    import random

    rnd = random.Random(1)
    h = H(512 * MiB, settings)
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


def test_growing_buffers_keep_data_intact_while_lent_ranges_are_recycled():
    # Buffers that grow by reallocation, and a per-step temporary sized by their total: the
    # pattern that lends pages on and on. Lent ranges are unmapped once they reach the
    # reserved memory; data must survive windows, growth in place and the unmapping.
    import random

    rnd = random.Random(2)
    h = H(GiB, LENDING)
    bufs = {}  # slot -> (ptr, nbytes, value)

    def new(n):
        p = h.alloc(n)
        v = rnd.randint(1, 255)
        h.fill(p, n, v)
        return p, n, v

    def drop(b):
        p, n, v = b
        assert h.check(p, n, v), f"block {p:#x} was overwritten"
        h.free(p)

    for _ in range(400):
        tmp = new(sum(b[1] for b in bufs.values()) // 8 + MiB)
        slot = rnd.randrange(8)
        old = bufs.get(slot)
        if old is None or rnd.random() < 0.1:
            bufs[slot] = new(rnd.randint(2, 4) * MiB + rnd.randint(0, 4096))
        else:
            bufs[slot] = new(old[1] * 5 // 4 + 512)
        if old is not None:
            drop(old)
        if bufs[slot][1] > 12 * MiB:
            drop(bufs.pop(slot))
        drop(tmp)
    assert flat(h)["num_device_free"] > 0  # lent ranges were unmapped
    assert_snapshot_matches_stats(h)
    # The statistics count the backend's maps and unmaps (what fragmentation.py prices).
    calls = h.backend_calls()
    assert calls["map"] == flat(h)["num_device_alloc"]
    assert calls["unmap"] == flat(h)["num_device_free"]
    assert 0 < calls["create"] < calls["map"]  # pages were lent, not only created
    assert calls["synchronize"] >= 1  # recycling lent ranges waits for the stream once
    for b in bufs.values():
        drop(b)
    h.empty_cache()
    assert cur(h, "reserved_bytes.all") == 0
    assert h.backend_used == 0
    calls = h.backend_calls()
    assert calls["release"] == calls["create"]  # every page went back


def _pop_random(d, rnd):
    k = rnd.choice(list(d))
    return k, d.pop(k)


# ---------------------------------------------------------------------------------------
# Peer access (csrc/cuda/peer_access.cpp): the arenas' mapped ranges are opened to a peer
# device once, and every range mapped later is opened along with the device's own access.


def test_peer_access_opens_mapped_ranges_once():
    h = H(GiB, PAGES_2MIB)
    a = h.alloc(3 * MiB)  # large pool: one growth
    b = h.alloc(4096)  # small pool: another arena
    before = h.backend_calls()["set_access"]
    h.enable_peer_access(1)
    assert h.peers == [1]
    opened = h.backend_calls()["set_access"] - before
    assert opened >= 2  # every mapped range of both arenas
    h.enable_peer_access(1)  # already a peer: nothing to do
    assert h.backend_calls()["set_access"] == before + opened
    c = h.alloc(8 * MiB)  # a growth after: one set_access for the device and its peer
    assert h.backend_calls()["set_access"] == before + opened + 1
    for p in (a, b, c):
        h.free(p)
    h.empty_cache()
    assert cur(h, "reserved_bytes.all") == 0


def test_peer_access_on_plain_segments_maps_nothing():
    h = H(GiB, "expandable_segments:False")
    a = h.alloc(3 * MiB)
    before = h.backend_calls()["set_access"]
    h.enable_peer_access(1)
    assert h.backend_calls()["set_access"] == before
    h.free(a)


def test_arena_pages_cover_an_allocation_in_address_order():
    # What CUDA IPC exports for a block of an expandable segment (csrc/cuda/ipc.cpp).
    h = H(GiB, PAGES_2MIB)
    a = h.alloc(3 * MiB)  # pages [0, 2) and [2, 4) MiB
    b = h.alloc(3 * MiB)  # from 3 MiB: the rest of the second page, then new ones
    sizes, offset = h.arena_pages(a)
    assert offset == 0 and sum(sizes) >= 3 * MiB and all(s % (2 * MiB) == 0 for s in sizes)
    sizes_b, offset_b = h.arena_pages(b)
    assert offset_b + 3 * MiB <= sum(sizes_b)
    assert offset_b == (b - a) % (2 * MiB)
    plain = H(GiB, "expandable_segments:False")
    c = plain.alloc(3 * MiB)
    assert plain.arena_pages(c) == ([], 0)
    for p in (a, b):
        h.free(p)
    plain.free(c)
