// Getting memory from the backend and giving it back: plain segments (torch's cudaMalloc
// segments), arenas (growable virtual-memory segments, cudalite's default), the out-of-memory
// path and garbage collection.
//
// Note [Lending pages]
// An arena grows at its end. When a request fits no cached block, the pages it needs at the
// end are first taken from whole free pages inside the arenas of the same pool: those pages
// are mapped a second time, at the end, and their old addresses are marked lent (never handed
// out). No memory is unmapped, so nothing waits for the GPU; the stream that freed the pages
// is the stream that reuses them, so its ordering makes the reuse safe, as for any cached
// block. Only the pages still missing are created. Holes left by frees in the middle of an
// arena therefore stop costing memory as soon as the arena needs to grow, which is what keeps
// reserved memory within a few percent of allocated memory (docs/allocator.md).
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

namespace {
size_t align_down(uintptr_t p, size_t m) { return p / m * m; }

// torch's segment sizes: small requests share 2 MiB segments, medium ones 20 MiB segments,
// large ones get a segment of their own rounded to 2 MiB.
size_t plain_segment_size(size_t size) {
  if (size <= kSmallSize) return kSmallBuffer;
  if (size < kMinLargeAlloc) return kLargeBuffer;
  return round_up(size, kRoundLarge);
}
}  // namespace

Block* CachingAllocator::allocate_new(Pool& pool, size_t size) {
  if (use_arenas()) {
    if (Block* b = reclaim_lent(pool, size)) return b;
  }
  if (gc_enabled_) garbage_collect();
  Block* b = try_allocate(pool, size, false);
  if (!b && release_available_cached_blocks(pool, size)) b = try_allocate(pool, size, false);
  if (!b && release_cached_blocks()) b = try_allocate(pool, size, true);
  if (!b) raise_oom(size);
  return b;
}

Block* CachingAllocator::try_allocate(Pool& pool, size_t size, bool retry) {
  if (retry) ++stats_.num_alloc_retries;
  // release_cached_blocks may have freed event-deferred blocks into the cache.
  if (retry) {
    if (Block* b = find_cached(pool, size)) return b;
  }
  return use_arenas() ? grow_arena(pool, size) : alloc_plain_segment(pool, size);
}

Block* CachingAllocator::alloc_plain_segment(Pool& pool, size_t size) {
  const size_t n = plain_segment_size(size);
  if (fraction_set_ && total_reserved_ + n > allowed_max_) return nullptr;
  void* p = backend_->malloc(n);
  if (!p) return nullptr;
  total_reserved_ += n;
  pool.segments.push_back(std::make_unique<Segment>());
  Segment* seg = pool.segments.back().get();
  seg->base = static_cast<char*>(p);
  seg->size = n;
  seg->pool = &pool;
  Block* b = store_.get();
  b->ptr = seg->base;
  b->size = n;
  b->seg = seg;
  b->owner = this;
  b->state = BlockState::kFree;
  seg->head = seg->last = b;
  stats_.segment.increase(pool.small, 1);
  stats_.reserved_bytes.increase(pool.small, int64_t(n));
  if (n >= settings_.max_split_size) stats_.oversize_segments.increase(1);
  ++stats_.num_device_alloc;
  record_trace(TraceEntry::kSegmentAlloc, uintptr_t(p), n, pool.stream, nullptr);
  return b;
}

Segment* CachingAllocator::new_arena(Pool& pool, size_t min_size) {
  size_t free_b = 0, total = 0;
  backend_->mem_get_info(&free_b, &total);
  const size_t g = backend_->vmm_granularity();
  // Address space is plentiful; physical memory is what counts. Reserve enough that an
  // arena rarely fills up even though lent pages keep their addresses.
  size_t va = round_up(std::max(pool.small ? total / 2 : total * 2, 2 * min_size), g);
  va = std::max(va, 64 * kMiB);
  void* base = backend_->reserve_address(va);
  if (!base) return nullptr;
  if (Segment* old = pool.active_arena()) {
    if (pool.tail_free) {
      Block* t = pool.tail_free;
      pool.tail_free = nullptr;
      pool.arena_bins.insert(t);
    }
    (void)old;
  }
  pool.arenas.push_back(std::make_unique<Segment>());
  Segment* a = pool.arenas.back().get();
  a->base = static_cast<char*>(base);
  a->size = va;
  a->pool = &pool;
  a->is_arena = true;
  return a;
}

// Note [Growth budget]
// Lending keeps reserved memory at allocated memory, but every lent page is a map call, and
// with no free memory at all a repeating workload keeps moving pages. So while reserved
// memory is within kGrowthSlack above the most memory ever allocated (as seen at growths),
// growth creates new pages instead; beyond it, it lends. The free memory this leaves is what
// lets a workload that repeats fit cached blocks and windows (Note [Reclaiming lent pages])
// without any driver call, and it bounds peak reserved / peak allocated at 1 + kGrowthSlack
// (plus partly used pages).

// Maps `need` bytes at `cursor` in arena `a` (unmapped address space): whole free pages of the
// pool's holes first (lending), then new pages. While reserved memory is below the growth
// budget, new pages are preferred to lending (Note [Growth budget]). Returns false, changing
// nothing, when the memory is exhausted.
bool CachingAllocator::map_pages(Pool& pool, Segment* a, char* cursor, size_t need) {
  size_t fresh = 0;
  const size_t page = page_size(pool);
  const size_t budget = size_t((1.0 + kGrowthSlack) * double(high_water_));
  size_t room = total_reserved_ < budget ? (budget - total_reserved_) / page * page : 0;
  // Plan the lending and create the missing pages before changing anything, so that a
  // failure leaves the arena as it was. When new pages cannot be had, lend all there is.
  std::vector<LendPiece> plan;
  std::vector<std::pair<PhysHandle, size_t>> created;
  for (;;) {
    plan.clear();
    if (need > room) plan = plan_lending(pool, need - room);
    size_t lent = 0;
    for (const LendPiece& p : plan) lent += p.len;
    fresh = need - lent;
    bool ok = !fraction_set_ || total_reserved_ + fresh <= allowed_max_;
    for (size_t done = 0; ok && done < fresh;) {
      size_t n = std::min(page, fresh - done);
      PhysHandle h = backend_->create_physical(n);
      ok = h != 0;
      if (ok) created.emplace_back(h, n);
      done += n;
    }
    if (ok) break;
    for (auto& c : created) backend_->release_physical(c.first, c.second);
    created.clear();
    if (room == 0) return false;
    room = 0;
  }
  char* const start = cursor;
  if (!plan.empty()) cursor += lend_pages(pool, plan, a, cursor);
  for (auto& hc : created) {
    chunks_.push_back(std::make_unique<PhysChunk>());
    PhysChunk* c = chunks_.back().get();
    c->handle = hc.first;
    c->size = hc.second;
    backend_->map(cursor, c->size, c->handle);
    a->extents[cursor] = Extent{c->size, c};
    c->maps.emplace_back(a, cursor);
    c->live_seg = a;
    c->live_va = cursor;
    ++stats_.num_device_alloc;
    cursor += c->size;
  }
  total_reserved_ += fresh;
  stats_.reserved_bytes.increase(pool.small, int64_t(fresh));
  backend_->set_access(start, need);
  record_trace(TraceEntry::kSegmentMap, uintptr_t(start), need, pool.stream, nullptr);
  return true;
}

size_t CachingAllocator::page_size(const Pool& pool) const {
  const size_t g = backend_->vmm_granularity();
  return pool.small ? g : round_up(std::max(settings_.large_segment_size, g), g);
}

// Note [Growth room]
// A request that fits no cached block (and no window, Note [Reclaiming lent pages]) is
// placed where it needs the fewest new mappings: at the arena's end, extending its free tail,
// or in place, extending a free block into the unmapped gap that follows it. Gaps are left
// on purpose: a growth that starts after an allocated block first skips address space worth
// an eighth of that block, so that when the block is freed, a slightly larger request (a
// buffer that grows step by step) fits there by mapping a page or two instead of moving to
// the end and mapping all of its pages again. Address space is plentiful; only mapped pages
// cost memory.
Block* CachingAllocator::grow_arena(Pool& pool, size_t size) {
  const size_t page = page_size(pool);
  if (pool.lent_bytes > kLentLimit * total_reserved_) unmap_lent(pool);
  high_water_ = std::max(high_water_, size_t(stats_.allocated_bytes[kAggregate].current) + size);
  Segment* a = pool.active_arena();
  const size_t have = pool.tail_free ? pool.tail_free->size : 0;
  size_t need = round_up(size - std::min(have, size), page);
  if (Block* b = grow_in_place(pool, size, need)) return b;
  // At the end. A new run after an allocated block starts after a gap (Note [Growth room]).
  size_t gap = 0;
  Block* before = a ? (pool.tail_free ? pool.tail_free->prev : a->last) : nullptr;
  if (have > 0 && have < backend_->vmm_granularity() && before &&
      before->state == BlockState::kAllocated) {
    gap = round_up(before->size / kGapDivisor, page);
  }
  if (a && a->mapped_end + gap + need > a->size) gap = 0;
  if (!a || a->mapped_end + need > a->size) {
    a = new_arena(pool, round_up(size, page));
    if (!a) return nullptr;
    need = round_up(size, page);
  }
  if (gap) need = round_up(size, page);
  char* const start = a->base + a->mapped_end + gap;
  if (!map_pages(pool, a, start, need)) return nullptr;
  auto append = [&](Block* nb) {
    nb->seg = a;
    nb->owner = this;
    nb->prev = a->last;
    if (a->last) {
      a->last->next = nb;
    } else {
      a->head = nb;
    }
    a->last = nb;
    a->mapped_end += nb->size;
  };
  if (gap) {
    Block* u = store_.get();
    u->ptr = a->base + a->mapped_end;
    u->size = gap;
    u->state = BlockState::kUnmapped;
    append(u);
  }
  // The mapped range starts a new live run unless it continues the one before it.
  if (!a->last || !a->last->live()) add_runs(pool, 1);
  Block* nb = store_.get();
  nb->ptr = start;
  nb->size = need;
  nb->state = BlockState::kFree;
  append(nb);
  Block* tail = pool.tail_free;
  pool.tail_free = nullptr;
  if (tail && tail->seg == a && tail->next == nb) {
    absorb(tail, nb);
    nb = tail;
  } else if (tail) {
    pool.arena_bins.insert(tail);
  }
  return nb;
}

// stats.segment counts what snapshot() reports as segments: plain segments, plus the runs
// of live memory in arenas. Runs change only when memory is mapped, lent or unmapped; growth
// and lending adjust the count as they go, releases (rare) recount.
void CachingAllocator::recount_runs(Pool& pool) {
  int64_t runs = 0;
  for (auto& a : pool.arenas) {
    bool in_run = false;
    for (const Block* b = a->head; b; b = b->next) {
      if (b->live() && !in_run) ++runs;
      in_run = b->live();
    }
  }
  add_runs(pool, runs - pool.runs);
}

void CachingAllocator::add_runs(Pool& pool, int64_t delta) {
  if (delta > 0) stats_.segment.increase(pool.small, delta);
  if (delta < 0) stats_.segment.decrease(pool.small, -delta);
  pool.runs += delta;
}

// With max_split_size set: frees oversize cached plain segments, the smallest one that
// covers the request, else the largest ones until the request is covered (torch's rule).
bool CachingAllocator::release_available_cached_blocks(Pool& pool, size_t size) {
  if (settings_.max_split_size == std::numeric_limits<size_t>::max()) return false;
  const size_t key = std::max(size, settings_.max_split_size);
  std::vector<Block*> oversize;
  pool.plain_bins.for_each_descending([&](Block* b) {
    if (b->size >= settings_.max_split_size && !b->prev && !b->next) oversize.push_back(b);
    return true;
  });
  if (oversize.empty()) return false;
  std::sort(oversize.begin(), oversize.end(),
            [](const Block* x, const Block* y) { return x->size < y->size; });
  auto fit = std::lower_bound(oversize.begin(), oversize.end(), key,
                              [](const Block* b, size_t k) { return b->size < k; });
  if (fit != oversize.end()) {
    release_plain_segment((*fit)->seg);
    return true;
  }
  size_t released = 0;
  for (auto it = oversize.rbegin(); it != oversize.rend() && released < key; ++it) {
    released += (*it)->size;
    release_plain_segment((*it)->seg);
  }
  return released >= key;
}

// Waits for outstanding stream events, then returns every cached segment and every
// physical chunk that holds no live data.
bool CachingAllocator::release_cached_blocks() {
  synchronize_and_free_events();
  for (auto& pool : pools_) {
    std::vector<Segment*> unused;
    for (auto& seg : pool->segments) {
      Block* h = seg->head;
      if (h->state == BlockState::kFree && !h->next) unused.push_back(seg.get());
    }
    for (Segment* seg : unused) release_plain_segment(seg);
    if (!pool->arenas.empty()) release_arena_memory(*pool);
  }
  return true;
}

void CachingAllocator::release_plain_segment(Segment* seg) {
  Pool& pool = *seg->pool;
  Block* b = seg->head;
  pool.plain_bins.remove(b);
  record_trace(TraceEntry::kSegmentFree, uintptr_t(seg->base), seg->size, pool.stream, nullptr);
  backend_->free(seg->base, seg->size);
  ++stats_.num_device_free;
  total_reserved_ -= seg->size;
  stats_.segment.decrease(pool.small, 1);
  stats_.reserved_bytes.decrease(pool.small, int64_t(seg->size));
  if (seg->size >= settings_.max_split_size) stats_.oversize_segments.decrease(1);
  store_.put(b);
  auto it = std::find_if(pool.segments.begin(), pool.segments.end(),
                         [seg](const auto& s) { return s.get() == seg; });
  pool.segments.erase(it);
}

// Releases the physical chunks of a pool whose every mapping covers only free or lent
// memory. Unmapping needs the pages idle on the GPU, hence the stream synchronization.
void CachingAllocator::release_arena_memory(Pool& pool) {
  std::vector<PhysChunk*> pool_chunks;
  for (auto& a : pool.arenas) {
    for (auto& kv : a->extents) pool_chunks.push_back(kv.second.chunk);
  }
  std::sort(pool_chunks.begin(), pool_chunks.end());
  pool_chunks.erase(std::unique(pool_chunks.begin(), pool_chunks.end()), pool_chunks.end());
  std::vector<PhysChunk*> busy;
  for (auto& a : pool.arenas) {
    for (const Block* b = a->head; b; b = b->next) {
      if (b->state != BlockState::kAllocated && b->state != BlockState::kPending) continue;
      auto it = a->extents.upper_bound(b->ptr);
      if (it != a->extents.begin()) --it;
      for (; it != a->extents.end() && it->first < b->ptr + b->size; ++it) {
        if (it->first + it->second.size > b->ptr) busy.push_back(it->second.chunk);
      }
    }
  }
  std::sort(busy.begin(), busy.end());
  std::vector<PhysChunk*> release;
  std::set_difference(pool_chunks.begin(), pool_chunks.end(), busy.begin(), busy.end(),
                      std::back_inserter(release));
  if (release.empty()) return;
  backend_->synchronize_stream(pool.stream);
  for (PhysChunk* c : release) {
    for (auto& where : c->maps) {
      Segment* a = where.first;
      size_t len = a->extents[where.second].size;
      unmap_range(a, where.second, len);
      backend_->unmap(where.second, len);
      ++stats_.num_device_free;
      a->extents.erase(where.second);
      record_trace(TraceEntry::kSegmentUnmap, uintptr_t(where.second), len, pool.stream, nullptr);
    }
    backend_->release_physical(c->handle, c->size);
    total_reserved_ -= c->size;
    stats_.reserved_bytes.decrease(pool.small, int64_t(c->size));
    auto it =
        std::find_if(chunks_.begin(), chunks_.end(), [c](const auto& p) { return p.get() == c; });
    chunks_.erase(it);
  }
  trim_arenas(pool);
  recount_runs(pool);
}

// Marks [va, va + len) of arena `a` unmapped; the blocks there are free or lent.
void CachingAllocator::unmap_range(Segment* a, char* va, size_t len) {
  Pool& pool = *a->pool;
  Block* b = a->head;
  while (b && b->ptr + b->size <= va) b = b->next;
  char* const end = va + len;
  while (b && b->ptr < end) {
    if (b->state == BlockState::kFree) unbin(pool, b);
    if (b->ptr < va) {
      Block* rest = split_front(b, size_t(va - b->ptr));
      if (b->state == BlockState::kFree) place_free(pool, b);
      rest->state = b->state;
      b = rest;
    }
    if (b->ptr + b->size > end) {
      Block* rest = split_front(b, size_t(end - b->ptr));
      rest->state = b->state;
      if (rest->state == BlockState::kFree) place_free(pool, rest);
    }
    if (b->state == BlockState::kLent) pool.lent_bytes -= b->size;
    b->state = BlockState::kUnmapped;
    if (b->prev && b->prev->state == BlockState::kUnmapped) absorb(b, b->prev);
    if (b->next && b->next->state == BlockState::kUnmapped) absorb(b, b->next);
    b = b->next;
  }
}

// Gives unmapped space at the end of an arena back to its tail, and whole empty arenas
// (other than the active one) back to the backend.
void CachingAllocator::trim_arenas(Pool& pool) {
  for (size_t i = 0; i < pool.arenas.size();) {
    Segment* a = pool.arenas[i].get();
    if (pool.tail_free && pool.tail_free->seg == a) {
      pool.arena_bins.insert(pool.tail_free);
      pool.tail_free = nullptr;
    }
    while (a->last && a->last->state == BlockState::kUnmapped) {
      Block* u = a->last;
      a->mapped_end -= u->size;
      a->last = u->prev;
      if (a->last) {
        a->last->next = nullptr;
      } else {
        a->head = nullptr;
      }
      store_.put(u);
    }
    const bool active = i + 1 == pool.arenas.size();
    if (!a->head && !active) {
      backend_->release_address(a->base, a->size);
      pool.arenas.erase(pool.arenas.begin() + long(i));
      continue;
    }
    ++i;
  }
  Segment* act = pool.active_arena();
  if (act && act->last && act->last->state == BlockState::kFree) {
    pool.arena_bins.remove(act->last);
    pool.tail_free = act->last;
  }
}

// torch's garbage_collection_threshold: once reserved memory passes the threshold share of
// the allowed memory, free cached memory that has gone unused the longest.
void CachingAllocator::garbage_collect() {
  const size_t threshold = size_t(settings_.garbage_collection_threshold * double(allowed_max_));
  if (total_reserved_ <= threshold) return;
  const size_t target = total_reserved_ - threshold;
  size_t reclaimed = 0;
  for (auto& pool : pools_) {
    std::vector<Block*> candidates;
    pool->plain_bins.for_each_descending([&](Block* b) {
      if (!b->prev && !b->next) candidates.push_back(b);
      return true;
    });
    std::sort(candidates.begin(), candidates.end(), [&](const Block* x, const Block* y) {
      return pool->gc_clock - x->gc_base > pool->gc_clock - y->gc_base;
    });
    for (Block* b : candidates) {
      if (reclaimed >= target) break;
      reclaimed += b->size;
      release_plain_segment(b->seg);
    }
  }
  if (reclaimed < target) {
    for (auto& pool : pools_) {
      if (!pool->arenas.empty()) release_arena_memory(*pool);
    }
  }
}

void CachingAllocator::raise_oom(size_t size) {
  size_t free_b = 0, total = 0;
  backend_->mem_get_info(&free_b, &total);
  ++stats_.num_ooms;
  record_trace(TraceEntry::kOom, free_b, size, 0, nullptr);
  const int64_t allocated = stats_.allocated_bytes[kAggregate].current;
  const int64_t reserved = stats_.reserved_bytes[kAggregate].current;
  const bool cuda = std::string(backend_->kind()) == "CUDA";
  const size_t tried = use_arenas() ? size : plain_segment_size(size);
  std::string msg =
      detail::str(cuda ? "CUDA out of memory. Tried to allocate "
                       : "Host backend out of memory. Tried "
                         "to allocate ",
                  format_size(tried), ". ", cuda ? "GPU " : "Host backend ",
                  device_.index < 0 ? 0 : device_.index, " has a total capacity of ",
                  format_size(total), " of which ", format_size(free_b), " is free. ",
                  fraction_set_ ? format_size(allowed_max_) + " allowed; " : std::string(),
                  "Of the allocated memory ", format_size(uint64_t(allocated)),
                  " is allocated by cudalite, and ", format_size(uint64_t(reserved - allocated)),
                  " is reserved by cudalite but unallocated.");
  if (!use_arenas()) {
    msg +=
        " If reserved but unallocated memory is large try setting "
        "CUDALITE_ALLOC_CONF=expandable_segments:True to avoid fragmentation.";
  }
  throw OutOfMemoryError(msg);
}

}  // namespace cl
