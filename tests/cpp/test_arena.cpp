// detail::Arena on its own, over the host backend: growth, lending, reclaiming lent pages,
// releasing, and what a failing backend call leaves behind. The caching allocator's policy
// around it is tested from Python (tests/test_caching_allocator*.py).
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "core/detail/arena.h"
#include "core/error.h"
#include "core/host_backend.h"

namespace {

using cl::HostBackend;
using cl::detail::Arena;
using cl::detail::ArenaLedger;
using cl::detail::Block;
using cl::detail::BlockState;
using cl::detail::BlockStore;

constexpr size_t MiB = size_t(1) << 20;

// Limits set by the test; reports counted.
class Ledger final : public ArenaLedger {
 public:
  size_t reserved() const override { return reserved_bytes; }
  size_t growth_room() const override { return room; }
  bool may_reserve(size_t bytes) const override { return reserved_bytes + bytes <= limit; }
  void reserved_changed(const Arena&, int64_t delta) override {
    reserved_bytes = size_t(int64_t(reserved_bytes) + delta);
  }
  void runs_changed(const Arena&, int64_t delta) override { runs += delta; }
  void device_calls(const Arena&, size_t m, size_t u) override {
    maps += m;
    unmaps += u;
  }
  void mapped(const Arena&, char*, size_t len) override { mapped_bytes += len; }
  void unmapped(const Arena&, char*, size_t len) override { unmapped_bytes += len; }

  size_t room = size_t(1) << 40;  // new pages, never lending, unless a test says otherwise
  size_t limit = SIZE_MAX;
  size_t reserved_bytes = 0;
  int64_t runs = 0;
  size_t maps = 0, unmaps = 0, mapped_bytes = 0, unmapped_bytes = 0;
};

class ArenaTest : public ::testing::Test {
 protected:
  ArenaTest() : backend(size_t(1) << 30), arena(backend, store, ledger, nullptr, 0, false) {
    arena.set_page_size(2 * MiB);
  }

  // What CachingAllocator does with a block that new memory gave it: keep `size` bytes,
  // cache the rest, hand it out.
  Block* take(Block* b, size_t size) {
    if (b->size > size) arena.place_free(cl::detail::split_front(store, b, size));
    b->state = BlockState::kAllocated;
    return b;
  }
  // ... and when it is freed: merge with free neighbours, cache.
  void release(Block* b) {
    b->state = BlockState::kFree;
    for (Block* nb : {b->prev, b->next}) {
      if (nb && nb->state == BlockState::kFree) {
        arena.unbin(nb);
        cl::detail::absorb(store, b, nb);
      }
    }
    arena.place_free(b);
  }
  Block* alloc(size_t size) {
    Block* b = arena.grow(size);
    return b ? take(b, size) : nullptr;
  }

  // The arena's invariants: blocks tile each reservation's mapped prefix, the ledger's
  // totals match the backend and the blocks.
  void check() {
    size_t lent = 0;
    int64_t runs = 0;
    for (auto& r : arena.reservations()) {
      char* at = r->base;
      bool in_run = false;
      for (Block* b = r->head; b; b = b->next) {
        EXPECT_EQ(b->ptr, at);
        EXPECT_EQ(b->seg, r.get());
        if (b->next) EXPECT_EQ(b->next->prev, b);
        if (!b->next) EXPECT_EQ(r->last, b);
        if (b->state == BlockState::kLent) lent += b->size;
        if (b->live() && !in_run) ++runs;
        in_run = b->live();
        at += b->size;
      }
      EXPECT_EQ(at, r->base + r->mapped_end);
    }
    EXPECT_EQ(lent, arena.lent_bytes());
    EXPECT_EQ(runs, arena.runs());
    EXPECT_EQ(runs, ledger.runs);
    EXPECT_EQ(ledger.reserved_bytes, backend.used());
  }

  HostBackend backend;
  BlockStore store;
  Ledger ledger;
  Arena arena;
};

TEST_F(ArenaTest, GrowMapsWholePagesAtTheEnd) {
  Block* a = arena.grow(3 * MiB);
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(a->size, 4 * MiB);  // two 2 MiB pages
  EXPECT_EQ(a->state, BlockState::kFree);
  EXPECT_EQ(ledger.reserved_bytes, 4 * MiB);
  EXPECT_EQ(ledger.maps, 2u);
  EXPECT_EQ(ledger.mapped_bytes, 4 * MiB);
  EXPECT_EQ(arena.pages(), 2u);
  std::memset(a->ptr, 0x5a, a->size);  // usable memory
  take(a, 3 * MiB);
  // The free 1 MiB after a holds no 2 MiB request: growth starts after a gap worth an eighth
  // of a (Note [Growth room]), and the 1 MiB goes to the cache.
  Block* b = arena.grow(2 * MiB);
  ASSERT_NE(b, nullptr);
  EXPECT_EQ(b->ptr, a->ptr + 6 * MiB);
  EXPECT_EQ(b->size, 2 * MiB);
  EXPECT_EQ(ledger.reserved_bytes, 6 * MiB);
  EXPECT_EQ(arena.reservations().size(), 1u);
  Block* rest = arena.best_fit(512 * 1024);
  ASSERT_NE(rest, nullptr);
  EXPECT_EQ(rest->ptr, a->ptr + 3 * MiB);
  take(b, 2 * MiB);
  check();
}

// Note [Growth granules]: one allocation per growth, of what it misses, and no growth room.
TEST_F(ArenaTest, WholeGrowthsMakeOneAllocationOfWhatTheGrowthMisses) {
  arena.set_whole_growths(true);
  Block* a = arena.grow(7 * MiB);
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(a->size, 8 * MiB);
  EXPECT_EQ(arena.pages(), 1u);  // one 8 MiB allocation
  EXPECT_EQ(ledger.maps, 1u);
  EXPECT_EQ(backend.calls().create, 1u);
  EXPECT_EQ(backend.calls().set_access, 1u);
  take(a, 7 * MiB);
  // The free 1 MiB tail and a new 2 MiB allocation right after it: no gap.
  Block* b = arena.grow(3 * MiB);
  ASSERT_NE(b, nullptr);
  EXPECT_EQ(b->ptr, a->ptr + 7 * MiB);
  EXPECT_EQ(b->size, 3 * MiB);
  EXPECT_EQ(arena.pages(), 2u);
  EXPECT_EQ(ledger.reserved_bytes, 10 * MiB);
  std::memset(a->ptr, 1, 7 * MiB);
  std::memset(b->ptr, 2, 3 * MiB);
  take(b, 3 * MiB);
  release(a);
  arena.release_unused();  // b still holds part of the first allocation
  EXPECT_EQ(ledger.reserved_bytes, 10 * MiB);
  release(b);
  arena.release_unused();
  EXPECT_EQ(ledger.reserved_bytes, 0u);
  check();
}

TEST_F(ArenaTest, TheTailIsCachedApart) {
  Block* a = alloc(2 * MiB);
  Block* t = arena.grow(2 * MiB);
  release(t);  // the free end of the mapped part
  EXPECT_EQ(arena.best_fit(MiB), nullptr);
  EXPECT_EQ(arena.take_tail(4 * MiB), nullptr);
  EXPECT_EQ(arena.take_tail(MiB), t);
  EXPECT_EQ(arena.take_tail(MiB), nullptr);  // taken
  release(t);
  release(a);  // merges with the tail
  EXPECT_EQ(arena.take_tail(4 * MiB), a);
  EXPECT_EQ(a->size, 4 * MiB);
  release(a);
  check();
}

TEST_F(ArenaTest, GrowthBeyondTheBudgetLendsFreePagesOfHoles) {
  alloc(4 * MiB);
  Block* hole = alloc(4 * MiB);
  alloc(4 * MiB);
  char* const hole_va = hole->ptr;
  release(hole);  // 4 MiB free in the middle
  ledger.room = 0;
  const size_t used = backend.used();
  Block* w = alloc(6 * MiB);  // fits no hole: two lent pages and one new one
  ASSERT_NE(w, nullptr);
  EXPECT_EQ(backend.used(), used + 2 * MiB);
  EXPECT_EQ(arena.lent_bytes(), 4 * MiB);
  EXPECT_EQ(ledger.maps, 6u + 3u);
  // The lent pages are the hole's: the same memory shows at both addresses.
  std::memset(w->ptr, 0x3c, 4 * MiB);
  EXPECT_EQ(static_cast<unsigned char>(hole_va[0]), 0x3c);
  EXPECT_EQ(static_cast<unsigned char>(hole_va[4 * MiB - 1]), 0x3c);
  check();
}

TEST_F(ArenaTest, ReclaimSwapsLentPagesBackWithoutDriverCalls) {
  alloc(4 * MiB);             // [0, 4)
  Block* y = alloc(4 * MiB);  // [4, 8): will lend its pages
  Block* z = alloc(4 * MiB);  // [8, 12)
  alloc(4 * MiB);             // [12, 16)
  char* const base = y->ptr - 4 * MiB;
  release(y);
  ledger.room = 0;
  Block* w = alloc(6 * MiB);  // [16, 22): y's two pages and a new one
  ASSERT_EQ(w->ptr, base + 16 * MiB);
  release(w);
  release(z);
  // 8 MiB fits no free block (4 and 6 MiB), but [4, 12) is lent pages whose live address
  // (in w) is free, followed by z: swapping roles makes it live with no map call.
  const size_t maps = ledger.maps, used = backend.used();
  Block* r = arena.reclaim(8 * MiB);
  ASSERT_NE(r, nullptr);
  EXPECT_EQ(r->ptr, base + 4 * MiB);
  EXPECT_EQ(r->size, 8 * MiB);
  EXPECT_EQ(ledger.maps, maps);
  EXPECT_EQ(backend.used(), used);
  EXPECT_EQ(arena.lent_bytes(), 4 * MiB);  // now [16, 20)
  take(r, 8 * MiB);
  check();
  EXPECT_EQ(arena.reclaim(8 * MiB), nullptr);  // nothing left to swap in
}

TEST_F(ArenaTest, ReleaseUnusedReturnsFreePagesAndKeepsLiveOnes) {
  Block* a = alloc(4 * MiB);
  Block* b = alloc(4 * MiB);
  alloc(4 * MiB);
  release(a);
  release(b);
  arena.release_unused();
  EXPECT_EQ(backend.used(), 4 * MiB);
  EXPECT_EQ(ledger.unmaps, 4u);
  EXPECT_EQ(backend.calls().synchronize, 1u);  // unmapping waits for the stream
  check();
}

TEST_F(ArenaTest, EverythingGoesBackWithTheArena) {
  {
    Ledger l;
    Arena a(backend, store, l, nullptr, 0, true);
    a.set_page_size(2 * MiB);
    ASSERT_NE(a.grow(5 * MiB), nullptr);
    EXPECT_EQ(backend.used(), 6 * MiB);
  }
  EXPECT_EQ(backend.used(), 0u);
}

TEST_F(ArenaTest, TheMemoryLimitRefusesGrowthAndChangesNothing) {
  alloc(4 * MiB);
  ledger.limit = 6 * MiB;
  EXPECT_EQ(arena.grow(4 * MiB), nullptr);
  EXPECT_EQ(backend.used(), 4 * MiB);
  EXPECT_EQ(ledger.maps, 2u);
  check();
  EXPECT_NE(alloc(2 * MiB), nullptr);
  check();
}

TEST_F(ArenaTest, AFailingCreateLeavesNothingBehind) {
  alloc(2 * MiB);
  backend.fail_next("create_physical", 1, 1);
  // The second page's creation fails after the first succeeded: the first is released.
  EXPECT_THROW(arena.grow(4 * MiB), cl::AcceleratorError);
  EXPECT_EQ(backend.used(), 2 * MiB);
  check();
  EXPECT_NE(alloc(4 * MiB), nullptr);
  check();
}

TEST_F(ArenaTest, AFailingUnmapLeavesTheArenaConsistent) {
  Block* a = alloc(4 * MiB);
  Block* b = alloc(4 * MiB);
  release(b);
  release(a);
  backend.fail_next("unmap", 1);
  EXPECT_THROW(arena.release_unused(), cl::AcceleratorError);
  check();  // what was not unmapped is still mapped, cached and counted
  EXPECT_GT(backend.used(), 0u);
  arena.release_unused();  // the retry releases the rest
  EXPECT_EQ(backend.used(), 0u);
  EXPECT_EQ(ledger.reserved_bytes, 0u);
  check();
  EXPECT_NE(alloc(6 * MiB), nullptr);
  check();
}

TEST_F(ArenaTest, AFailingReleaseKeepsThePageCounted) {
  Block* a = alloc(4 * MiB);
  release(a);
  backend.fail_next("release_physical", 1);
  EXPECT_THROW(arena.release_unused(), cl::AcceleratorError);
  check();  // unmapped, but still held and counted
  EXPECT_EQ(backend.used(), 4 * MiB);
  arena.release_unused();  // retries the release
  EXPECT_EQ(backend.used(), 0u);
  EXPECT_EQ(ledger.reserved_bytes, 0u);
  check();
}

// Note [Growth is all or nothing]: a map failing in the middle of a growth of several pages
// unmaps the pages mapped before it and releases the new ones.
TEST_F(ArenaTest, AFailingMapInTheMiddleOfAGrowthUndoesIt) {
  Block* a = alloc(2 * MiB);
  std::memset(a->ptr, 0x11, 2 * MiB);
  const size_t maps = ledger.maps, mapped = ledger.mapped_bytes;
  const size_t unmaps_before = backend.calls().unmap;
  backend.fail_next("map", 1, 2);  // the third of four maps fails
  EXPECT_THROW(arena.grow(8 * MiB), cl::AcceleratorError);
  EXPECT_EQ(backend.calls().unmap, unmaps_before + 2);  // the two mapped pages
  EXPECT_EQ(backend.used(), 2 * MiB);                   // the four new pages released
  EXPECT_EQ(arena.pages(), 1u);
  EXPECT_EQ(ledger.maps, maps);
  EXPECT_EQ(ledger.mapped_bytes, mapped);
  check();
  Block* b = alloc(8 * MiB);  // the same addresses map again
  ASSERT_NE(b, nullptr);
  std::memset(b->ptr, 0x22, 8 * MiB);
  EXPECT_EQ(static_cast<unsigned char>(a->ptr[2 * MiB - 1]), 0x11);
  check();
}

TEST_F(ArenaTest, AMapOutOfMemoryReturnsNullAndChangesNothing) {
  alloc(2 * MiB);
  for (const char* call : {"map", "set_access"}) {
    backend.fail_next(call, 1, call[0] == 'm' ? 3 : 0, /*out_of_memory=*/true);
    EXPECT_EQ(arena.grow(8 * MiB), nullptr);
    EXPECT_EQ(backend.used(), 2 * MiB);
    EXPECT_EQ(arena.pages(), 1u);
    check();
  }
  EXPECT_NE(alloc(8 * MiB), nullptr);
  check();
}

TEST_F(ArenaTest, AFailingSetAccessUnmapsEveryPage) {
  alloc(2 * MiB);
  const size_t unmaps_before = backend.calls().unmap;
  backend.fail_next("set_access", 1);
  EXPECT_THROW(arena.grow(6 * MiB), cl::AcceleratorError);
  EXPECT_EQ(backend.calls().unmap, unmaps_before + 3);
  EXPECT_EQ(backend.used(), 2 * MiB);
  check();
  EXPECT_NE(alloc(6 * MiB), nullptr);
  check();
}

TEST_F(ArenaTest, AFailingMapWhileLendingLeavesTheHoleFree) {
  alloc(4 * MiB);
  Block* hole = alloc(4 * MiB);
  alloc(4 * MiB);
  char* const hole_va = hole->ptr;
  std::memset(hole_va, 0x33, 4 * MiB);
  release(hole);
  ledger.room = 0;
  const size_t used = backend.used();
  backend.fail_next("map", 1, 1);  // the second lent page fails to map
  EXPECT_THROW(arena.grow(6 * MiB), cl::AcceleratorError);
  EXPECT_EQ(arena.lent_bytes(), 0u);  // nothing was lent
  EXPECT_EQ(backend.used(), used);    // the new page released
  Block* again = arena.best_fit(4 * MiB);
  ASSERT_NE(again, nullptr);  // the hole is free and cached as before
  EXPECT_EQ(again->ptr, hole_va);
  EXPECT_EQ(static_cast<unsigned char>(hole_va[4 * MiB - 1]), 0x33);
  check();
  Block* w = alloc(6 * MiB);  // the retry lends the hole's pages
  ASSERT_NE(w, nullptr);
  EXPECT_EQ(arena.lent_bytes(), 4 * MiB);
  EXPECT_EQ(backend.used(), used + 2 * MiB);
  check();
}

TEST(HostBackendTest, OnlyCreateMapAndSetAccessReportOutOfMemory) {
  HostBackend backend(size_t(1) << 30);
  EXPECT_THROW(backend.fail_next("unmap", 1, 0, true), cl::ValueError);
  backend.fail_next("create_physical", 1, 0, true);
  EXPECT_EQ(backend.create_physical(2 * MiB), 0u);
  cl::PhysHandle h = backend.create_physical(2 * MiB);
  EXPECT_NE(h, 0u);
  backend.fail_next("map", 5, 0, true);
  backend.fail_next("map", 0);  // cancelled
  void* va = backend.reserve_address(2 * MiB);
  ASSERT_NE(va, nullptr);
  EXPECT_TRUE(backend.map(va, 2 * MiB, h));
  EXPECT_TRUE(backend.set_access(va, 2 * MiB));
  backend.unmap(va, 2 * MiB);
  backend.release_physical(h, 2 * MiB);
  backend.release_address(va, 2 * MiB);
}

}  // namespace
