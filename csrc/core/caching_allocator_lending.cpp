// Lending pages to an arena's growing end and taking lent address ranges back, both without
// unmapping anything. See Note [Lending pages] (caching_allocator_segments.cpp) and
// Note [Reclaiming lent pages] below.
#include <algorithm>

#include "core/caching_allocator.h"
#include "core/error.h"

namespace cl {

using detail::Block;
using detail::BlockState;
using detail::Extent;
using detail::PhysChunk;
using detail::Pool;
using detail::round_up;
using detail::Segment;

// Chooses pages to lend for a growth of `need` bytes: whole pages (CUDA maps physical memory
// only whole) lying in free blocks of the pool's arenas, never more than needed. The
// smallest holes go first: the large ones are what later requests can still fit without
// any mapping, and a hole that lends pages splits into smaller ones. See Note [Lending pages].
std::vector<CachingAllocator::LendPiece> CachingAllocator::plan_lending(Pool& pool, size_t need) {
  std::vector<LendPiece> plan;
  const size_t page = page_size(pool);
  std::vector<Block*> holes;
  pool.arena_bins.for_each_descending([&](Block* b) {
    if (b->size >= page) holes.push_back(b);
    return true;
  });
  size_t planned = 0;
  for (auto h = holes.rbegin(); h != holes.rend() && planned < need; ++h) {
    Block* b = *h;
    char* hi = b->ptr + b->size;
    auto& ext = b->seg->extents;
    for (auto it = ext.lower_bound(b->ptr);
         it != ext.end() && it->first + it->second.size <= hi && planned < need; ++it) {
      if (planned + it->second.size > need) continue;
      plan.push_back({b, it->first, it->second.size});
      planned += it->second.size;
    }
  }
  // Lend from high addresses down: lending splits a hole's block, and its low part (the
  // block that the lower pieces of the same hole name) stays free and in place.
  std::sort(plan.begin(), plan.end(),
            [](const LendPiece& x, const LendPiece& y) { return x.lo > y.lo; });
  return plan;
}

// Lends the planned pages: maps each again at `cursor` in arena `dst` and marks its old
// address lent. Returns the bytes mapped.
size_t CachingAllocator::lend_pages(Pool& pool, const std::vector<LendPiece>& plan, Segment* dst,
                                    char* cursor) {
  char* const start = cursor;
  for (const LendPiece& p : plan) {
    Segment* src = p.block->seg;
    PhysChunk* c = src->extents.at(p.lo).chunk;
    mark_lent(pool, p.block, p.lo, p.len);
    backend_->map(cursor, p.len, c->handle);
    dst->extents[cursor] = Extent{p.len, c};
    c->maps.emplace_back(dst, cursor);
    c->live_seg = dst;
    c->live_va = cursor;
    ++stats_.num_device_alloc;
    cursor += p.len;
  }
  return size_t(cursor - start);
}

// Marks [lo, lo + len) of the free block b lent, splitting b around it.
void CachingAllocator::mark_lent(Pool& pool, Block* b, char* lo, size_t len) {
  unbin(pool, b);
  Block* mid = b;
  if (lo > b->ptr) {
    mid = split_front(b, size_t(lo - b->ptr));
    place_free(pool, b);
  }
  if (mid->size > len) place_free(pool, split_front(mid, len));
  mid->state = BlockState::kLent;
  // A live run loses [lo, lo + len): it splits in two, shrinks, or disappears.
  add_runs(pool,
           int64_t(mid->prev && mid->prev->live()) + int64_t(mid->next && mid->next->live()) - 1);
  for (Block* nb : {mid->prev, mid->next}) {
    if (nb && nb->state == BlockState::kLent) absorb(mid, nb);
  }
  pool.lent_bytes += len;
  record_trace(TraceEntry::kSegmentUnmap, uintptr_t(lo), len, pool.stream, nullptr);
}

// Note [Reclaiming lent pages]
// Lent address ranges split an arena's free memory into runs that cannot merge. Any page of an
// arena's mapped address space can become live again without a driver call: its physical page
// is mapped there already, and if that page is free at its live address the two addresses
// swap roles (live here, lent there). So when a request fits no cached block, the allocator
// looks for a window of consecutive mapped pages each of which is free (free live memory, or
// a lent page whose page is free where it lives), no two of them showing the same physical
// page, that holds the request (with the free ends of the partly used pages around it). The
// smallest such window is taken, with the fewest role swaps among equals. Windows may cross
// any number of lent ranges and free runs, which is what lets a repeating workload run on the
// mappings it has made, without lending (mapping) again (docs/allocator.md, "Steady state").
//
// When no window fits, the allocator grows the active arena; before lending, the window that
// ends at the arena's mapped end is made live the same way, so the growth maps only what is
// still missing.

// Scans the pool's arenas for windows of swappable pages (see the Note). Returns the best
// window that holds `size` bytes, or, when none does, the largest window at the mapped end of
// the active arena (`at_tail`), which growth extends.
CachingAllocator::Window CachingAllocator::find_window(Pool& pool, size_t size) {
  Window best;
  // The pool's free arena blocks, by address, to tell whether a page is free where it lives.
  frees_.clear();
  size_t free_bytes = 0;
  pool.arena_bins.for_each_descending([&](Block* b) {
    frees_.push_back(b);
    free_bytes += b->size;
    return true;
  });
  if (pool.tail_free) frees_.push_back(pool.tail_free);
  if (free_bytes + (pool.tail_free ? pool.tail_free->size : 0) < size) return best;
  std::sort(frees_.begin(), frees_.end(),
            [](const Block* x, const Block* y) { return x->ptr < y->ptr; });
  // Every address of every whole free page: the only pages a window can hold.
  std::vector<Slot>& S = slots_;
  S.clear();
  for (Block* f : frees_) {
    auto& ext = f->seg->extents;
    for (auto it = ext.lower_bound(f->ptr);
         it != ext.end() && it->first + it->second.size <= f->ptr + f->size; ++it) {
      PhysChunk* c = it->second.chunk;
      for (auto& m : c->maps) S.push_back({m.first, m.second, it->second.size, c});
    }
  }
  std::sort(S.begin(), S.end(), [](const Slot& x, const Slot& y) { return x.va < y.va; });
  // Free bytes of the partly used page in front of (behind) a run of whole pages.
  auto free_before = [&](Segment* a, char* va) -> size_t {
    Block* b = va > a->base ? free_at(va - 1, 1) : nullptr;
    return b ? size_t(va - b->ptr) : 0;
  };
  auto free_after = [&](Segment* a, char* va) -> size_t {
    Block* b = va < a->base + a->mapped_end ? free_at(va, 1) : nullptr;
    return b ? size_t(b->ptr + b->size - va) : 0;
  };
  const size_t n = S.size();
  // [s, k]: the longest window ending at k with no page twice; [m, k]: the shortest one
  // ending at k that holds the request (m only moves forward within a run).
  size_t run = 0, s = 0, m = 0, sum_s = 0, sum_m = 0, lent_m = 0, lo_edge = 0;
  for (size_t k = 0; k < n; ++k) {
    Segment* a = S[k].seg;
    const bool lent = S[k].chunk->live_seg != a || S[k].chunk->live_va != S[k].va;
    if (k == 0 || S[k - 1].seg != a || S[k - 1].va + S[k - 1].len != S[k].va) {
      ++scan_id_;  // a new run: marks the pages seen in it
      run = s = m = k;
      sum_s = sum_m = lent_m = 0;
      lo_edge = free_before(a, S[k].va);
    }
    PhysChunk* c = S[k].chunk;
    if (c->scan_id == scan_id_ && c->scan_pos >= s) {
      for (; s <= c->scan_pos; ++s) sum_s -= S[s].len;
      for (; m < s; ++m) {
        sum_m -= S[m].len;
        lent_m -= S[m].lent;
      }
    }
    c->scan_id = scan_id_;
    c->scan_pos = k;
    S[k].lent = lent;
    sum_s += S[k].len;
    sum_m += S[k].len;
    lent_m += lent;
    char* const hi = S[k].va + S[k].len;
    const bool run_end = k + 1 == n || S[k + 1].seg != a || S[k + 1].va != hi;
    const size_t hi_edge = run_end ? free_after(a, hi) : 0;
    if (run_end && a == pool.active_arena() && hi == a->base + a->mapped_end) {
      best.tail = sum_s + (s == run ? lo_edge : 0);
      best.tail_lo = S[s].va;
    }
    if (sum_m + (m == run ? lo_edge : 0) + hi_edge < size) continue;
    while (m < k && sum_m - S[m].len + hi_edge >= size) {
      sum_m -= S[m].len;
      lent_m -= S[m].lent;
      ++m;
    }
    const size_t region = sum_m + (m == run ? lo_edge : 0) + hi_edge;
    if (!best.arena || region < best.region || (region == best.region && lent_m < best.swaps)) {
      best.arena = a;
      best.lo = S[m].va;
      best.hi = hi;
      best.region = region;
      best.swaps = lent_m;
    }
  }
  return best;
}

// The free block of frees_ (sorted by address) that holds [va, va + len), if any. A block of
// frees_ may have lost its high part to an earlier swap; swaps go from high addresses down,
// so what is left of it is in front.
Block* CachingAllocator::free_at(char* va, size_t len) const {
  auto it = std::upper_bound(frees_.begin(), frees_.end(), va,
                             [](char* v, const Block* b) { return v < b->ptr; });
  if (it == frees_.begin()) return nullptr;
  Block* b = *(it - 1);
  return b->state == BlockState::kFree && va + len <= b->ptr + b->size ? b : nullptr;
}

// Makes the pages of [lo, hi) in arena `a` live: each lent page swaps roles with its live
// address (which find_window checked is free). Returns the free block that then holds [lo, hi)
// and the free memory around it, out of the bins.
Block* CachingAllocator::make_live(Pool& pool, Segment* a, char* lo, char* hi) {
  struct Swap {
    char* live;
    size_t len;
    PhysChunk* chunk;
    char* here;
  };
  std::vector<Swap> swaps;
  for (auto it = a->extents.lower_bound(lo); it != a->extents.end() && it->first < hi; ++it) {
    PhysChunk* c = it->second.chunk;
    if (c->live_seg != a || c->live_va != it->first) {
      swaps.push_back({c->live_va, it->second.size, c, it->first});
    }
  }
  std::sort(swaps.begin(), swaps.end(),
            [](const Swap& x, const Swap& y) { return x.live > y.live; });
  for (const Swap& w : swaps) {
    Block* b = free_at(w.live, w.len);
    CL_CHECK(b, "caching allocator: a lent page is not free where it lives");
    mark_lent(pool, b, w.live, w.len);
    w.chunk->live_seg = a;
    w.chunk->live_va = w.here;
  }
  // Turn the lent blocks of [lo, hi) free, merging them with their free neighbours.
  Block* b = a->head;
  while (b->ptr + b->size <= lo) b = b->next;
  while (b && b->ptr < hi) {
    if (b->state == BlockState::kLent) {
      if (b->ptr < lo) {
        b = split_front(b, size_t(lo - b->ptr));
        b->state = BlockState::kLent;
      }
      if (b->ptr + b->size > hi) split_front(b, size_t(hi - b->ptr))->state = BlockState::kLent;
      pool.lent_bytes -= b->size;
      b->state = BlockState::kFree;
      add_runs(pool, 1 - int64_t(b->prev && b->prev->live()) - int64_t(b->next && b->next->live()));
      record_trace(TraceEntry::kSegmentMap, uintptr_t(b->ptr), b->size, pool.stream, nullptr);
      for (Block* nb : {b->prev, b->next}) {
        if (nb && nb->state == BlockState::kFree) {
          if (nb->bin >= 0 || nb == pool.tail_free) unbin(pool, nb);  // earlier ones are out
          absorb(b, nb);
        }
      }
    } else {
      CL_CHECK(b->state == BlockState::kFree, "caching allocator: swapping in a used page");
      if (b->bin >= 0 || b == pool.tail_free) unbin(pool, b);
    }
    b = b->next;
  }
  b = a->head;
  while (b->ptr + b->size <= lo) b = b->next;
  if (b->bin >= 0 || b == pool.tail_free) unbin(pool, b);
  return b;
}

// A block of at least `size` bytes assembled from swappable pages (no driver call), or
// nullptr. When there is none, the swappable pages at the end of the active arena are made
// live, so that growing it maps fewer pages.
Block* CachingAllocator::reclaim_lent(Pool& pool, size_t size) {
  if (pool.lent_bytes == 0) return nullptr;
  Window w = find_window(pool, size);
  if (w.arena) return make_live(pool, w.arena, w.lo, w.hi);
  const size_t have = pool.tail_free ? pool.tail_free->size : 0;
  if (w.tail > have) {
    Segment* a = pool.active_arena();
    Block* t = make_live(pool, a, w.tail_lo, a->base + a->mapped_end);
    place_free(pool, t);  // the new tail
  }
  return nullptr;
}
}  // namespace cl

namespace cl {

// Note [Bounding lent address space]
// Every lending maps a page once more, and a workload that keeps lending (buffers that keep
// growing under a tight budget) would otherwise hold ever more mappings and address space.
// When a pool's lent address space exceeds kLentLimit times the reserved memory, its lent
// ranges are unmapped: once the stream has passed the work queued so far (lent addresses are
// never handed out again, but work queued before the lending may still use them), every lent
// page is unmapped at its lent address. The ranges become unmapped gaps that later growth
// maps pages into again (Note [Growth room]), and whole arenas left empty return their
// address space. One stream synchronization per kLentLimit times reserved memory lent.
void CachingAllocator::unmap_lent(Pool& pool) {
  backend_->synchronize_stream(pool.stream);
  for (auto& arena : pool.arenas) {
    Segment* a = arena.get();
    for (auto it = a->extents.begin(); it != a->extents.end();) {
      PhysChunk* c = it->second.chunk;
      if (c->live_seg == a && c->live_va == it->first) {
        ++it;
        continue;
      }
      const size_t len = it->second.size;
      unmap_range(a, it->first, len);
      backend_->unmap(it->first, len);
      ++stats_.num_device_free;
      record_trace(TraceEntry::kSegmentUnmap, uintptr_t(it->first), len, pool.stream, nullptr);
      auto m = std::find(c->maps.begin(), c->maps.end(), std::make_pair(a, it->first));
      c->maps.erase(m);
      it = a->extents.erase(it);
    }
  }
  trim_arenas(pool);
  recount_runs(pool);
}

}  // namespace cl

namespace cl {

// Growth in place (Note [Growth room]): the window of consecutive free blocks and unmapped
// gaps of an arena that holds `size` bytes with the fewest bytes mapped into its gaps, if
// that is at most `limit` (what growing at the end would map). Maps them and returns the
// free block holding the window, out of the bins; nullptr when no window is cheap enough or
// the memory is exhausted.
Block* CachingAllocator::grow_in_place(Pool& pool, size_t size, size_t limit) {
  const size_t page = page_size(pool);
  auto usable = [](const Block* b) {
    return b->state == BlockState::kFree || b->state == BlockState::kUnmapped;
  };
  struct Best {
    Block* first = nullptr;  // the window's blocks, in address order
    Block* last = nullptr;
    bool forward = true;  // the last block (else the first) is partly used
    size_t part = 0;      // bytes of the partly used block
    size_t cost = 0;      // bytes to map
  } best;
  best.cost = limit + 1;
  auto consider = [&](Block* b, bool forward) {
    size_t total = 0, cost = 0;
    for (Block* e = b; e && usable(e) && cost < best.cost; e = forward ? e->next : e->prev) {
      if (total + e->size < size) {
        total += e->size;
        if (e->state == BlockState::kUnmapped) cost += e->size;
        continue;
      }
      const size_t part = size - total;
      if (e->state == BlockState::kUnmapped) cost += round_up(part, page);
      if (cost < best.cost) {
        best = forward ? Best{b, e, true, part, cost} : Best{e, b, false, part, cost};
      }
      return;
    }
  };
  for (auto& a : pool.arenas) {
    for (Block* b = a->head; b; b = b->next) {
      if (!usable(b)) continue;
      consider(b, true);
      consider(b, false);
    }
  }
  if (!best.first) return nullptr;
  Segment* a = best.first->seg;
  struct Piece {
    Block* gap;
    char* lo;
    size_t len;
  };
  std::vector<Piece> pieces;
  for (Block* e = best.first;; e = e->next) {
    if (e->state == BlockState::kFree) {
      unbin(pool, e);  // not a lending source
    } else if (e == (best.forward ? best.last : best.first)) {
      const size_t len = round_up(best.part, page);
      pieces.push_back({e, best.forward ? e->ptr : e->ptr + e->size - len, len});
    } else {
      pieces.push_back({e, e->ptr, e->size});
    }
    if (e == best.last) break;
  }
  char* const lo = best.first->state == BlockState::kFree ? best.first->ptr : pieces[0].lo;
  bool ok = true;
  for (const Piece& p : pieces) {
    if (!map_pages(pool, a, p.lo, p.len)) {
      ok = false;
      break;
    }
    Block* mid = p.gap;
    if (p.lo > mid->ptr) mid = split_front(mid, size_t(p.lo - mid->ptr));
    if (mid->size > p.len) split_front(mid, p.len)->state = BlockState::kUnmapped;
    mid->state = BlockState::kFree;
    add_runs(pool,
             1 - int64_t(mid->prev && mid->prev->live()) - int64_t(mid->next && mid->next->live()));
  }
  // Merge what is free now; after a failure, put it back in the bins.
  auto coalesce = [&](Block* r) {
    for (Block* nb = r->prev; nb && nb->state == BlockState::kFree; nb = r->prev) {
      if (nb->bin >= 0 || nb == pool.tail_free) unbin(pool, nb);
      absorb(r, nb);
    }
    for (Block* nb = r->next; nb && nb->state == BlockState::kFree; nb = r->next) {
      if (nb->bin >= 0 || nb == pool.tail_free) unbin(pool, nb);
      absorb(r, nb);
    }
    return r;
  };
  Block* r = best.first;
  while (r->ptr + r->size <= lo) r = r->next;
  if (ok) return coalesce(r);
  for (; r && (r->state == BlockState::kFree || r->state == BlockState::kUnmapped); r = r->next) {
    if (r->state == BlockState::kFree && r->bin < 0 && r != pool.tail_free) {
      r = coalesce(r);
      place_free(pool, r);
    }
  }
  return nullptr;
}

}  // namespace cl
