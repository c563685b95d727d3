// Arenas: reserving address space, mapping pages, lending them, reclaiming lent ranges,
// unmapping and trimming. The interface is documented in arena.h.
//
// Note [Lending pages]
// An arena grows at its end. When a request fits no cached block, the pages it needs at the
// end are first taken from whole free pages inside the arena's reservations: those pages
// are mapped a second time, at the end, and their old addresses are marked lent (never handed
// out). No memory is unmapped, so nothing waits for the GPU; the stream that freed the pages
// is the stream that reuses them, so its ordering makes the reuse safe, as for any cached
// block. Only the pages still missing are created. Holes left by frees in the middle of an
// arena therefore stop costing memory as soon as the arena needs to grow, which is what keeps
// reserved memory within a few percent of allocated memory (docs/allocator.md).
#include "core/detail/arena.h"

#include <algorithm>
#include <exception>
#include <iterator>

#include "core/error.h"

namespace cl::detail {

Arena::Arena(AllocBackend& backend, BlockStore& store, ArenaLedger& ledger, Pool* pool,
             StreamId stream, bool small)
    : backend_(backend),
      store_(store),
      ledger_(ledger),
      pool_(pool),
      stream_(stream),
      small_(small) {}

Arena::~Arena() {
  try {
    release_all();
  } catch (const std::exception&) {
    // Destructors must not throw; whatever could not be returned is left to the process.
  }
}

void Arena::release_all() {
  // Blocks go back to the store first: nothing below can fail half-way through them.
  for (auto& r : reservations_) {
    for (Block* b = r->head; b;) {
      Block* nx = b->next;
      store_.put(b);
      b = nx;
    }
    r->head = r->last = nullptr;
  }
  bins_ = FreeBins();
  tail_ = nullptr;
  // Then the driver calls, each forgotten once made, so that a failure leaves only what is
  // still held and a second call retries exactly that.
  while (!reservations_.empty()) {
    Reservation* a = reservations_.back().get();
    auto it = a->extents.begin();
    try {
      for (; it != a->extents.end(); ++it) backend_.unmap(it->first, it->second.size);
    } catch (...) {
      a->extents.erase(a->extents.begin(), it);
      throw;
    }
    a->extents.clear();
    backend_.release_address(a->base, a->size);
    reservations_.pop_back();
  }
  size_t i = 0;
  try {
    for (; i < chunks_.size(); ++i) backend_.release_physical(chunks_[i]->handle, chunks_[i]->size);
  } catch (...) {
    chunks_.erase(chunks_.begin(), chunks_.begin() + long(i));
    throw;
  }
  chunks_.clear();
  runs_ = 0;
  lent_bytes_ = 0;
}

// ---------------------------------------------------------------------------------------
// Growth.

Reservation* Arena::new_reservation(size_t min_size) {
  size_t free_b = 0, total = 0;
  backend_.mem_get_info(&free_b, &total);
  const size_t g = backend_.vmm_granularity();
  // Address space is plentiful; physical memory is what counts. Reserve enough that an
  // arena rarely fills up even though lent pages keep their addresses.
  size_t va = round_up(std::max(small_ ? total / 2 : total * 2, 2 * min_size), g);
  va = std::max(va, 64 * (size_t(1) << 20));
  void* base = backend_.reserve_address(va);
  if (!base) return nullptr;
  if (tail_) {
    bins_.insert(tail_);
    tail_ = nullptr;
  }
  reservations_.push_back(std::make_unique<Reservation>());
  Reservation* a = reservations_.back().get();
  a->base = static_cast<char*>(base);
  a->size = va;
  a->pool = pool_;
  a->is_arena = true;
  return a;
}

// Note [Growth granules]
// What a cold start (the first pass of a workload, every new shape) pays is driver calls:
// each physical allocation costs a cuMemCreate, a cuMemMap and a cuMemSetAccess, about 38 us
// together on an H100 whatever its size, and a cache that grows by 4 MiB pages pays that
// for every 4 MiB of its peak (8 us per operation of a synthetic trace against torch's 2 us
// in all). CUDA maps a physical allocation only whole, so the allocation is also the unit
// of lending, and pages fine enough to lend are too many to create. The caching allocator's
// default (page_lending:False) therefore makes one allocation per growth: what the growth
// misses, rounded up to the device granularity. A cold replay then makes about as many
// driver calls as torch's cudaMalloc segments (one per growth of the cache) with an
// expandable segment's fragmentation (one growing range per pool, freed blocks merging
// across growths, the tail used last). Lending is kept for the end: when the device has no
// memory for a growth, whole free allocations of holes are lent before the cache is freed
// and out of memory raised. empty_cache() returns an allocation once all of it is free, as
// torch returns a cudaMalloc segment. page_lending:True keeps pages (large_segment_size),
// lending under the growth budget below and growth room: about 2 % less memory, and a
// driver call per page (docs/allocator.md).

// Note [Growth budget]
// Lending keeps reserved memory at allocated memory, but every lent page is a map call, and
// with no free memory at all a repeating workload keeps moving pages. So while reserved
// memory is within kGrowthSlack (CachingAllocator) above the most memory ever allocated (as
// seen at growths), growth creates new pages instead; beyond it, it lends. The free memory
// this leaves is what lets a workload that repeats fit cached blocks and windows
// (Note [Reclaiming lent pages]) without any driver call, and it bounds peak reserved / peak
// allocated at 1 + kGrowthSlack (plus partly used pages). The ledger's growth_room() is what
// remains of that budget.

// Maps `need` bytes at `cursor` in reservation `a` (unmapped address space): whole free pages
// of the arena's holes first (lending), then new pages. While the ledger gives growth room,
// new pages are preferred to lending (Note [Growth budget]). Returns false, changing nothing,
// when the memory is exhausted; a driver error propagates, changing nothing either
// (Note [Growth is all or nothing]).
//
// Note [Growth is all or nothing]
// A growth makes many driver calls: one create_physical per new page, one map per page
// (new or lent), one set_access for the range. Every one of them can fail, cuMemMap and
// cuMemSetAccess included (they need memory for page tables). So the pages are created and
// mapped, and the range made accessible, before the arena records anything; when a call
// fails, what was mapped is unmapped and what was created released, in reverse order, and
// the arena is as before the growth. An exhausted device (create_physical returns 0, map or
// set_access false) makes the growth return false, so that the allocator frees its cache,
// retries, and raises OutOfMemoryError; any other failure propagates as the driver's error.
// Errors of the undo itself are ignored: the first error is the one reported.
bool Arena::map_pages(Reservation* a, char* cursor, size_t need) {
  size_t fresh = 0;
  const size_t page = page_;
  // The most one create_physical call makes (Note [Growth granules]).
  const size_t unit = whole_growths_ ? need : page;
  size_t room = ledger_.growth_room() / page * page;
  // Plan the lending and create the missing pages before changing anything. When new pages
  // cannot be had, lend all there is.
  std::vector<LendPiece> plan;
  std::vector<std::pair<PhysHandle, size_t>> created;
  std::vector<std::pair<char*, size_t>> mapped;
  auto undo = [&] {
    for (auto it = mapped.rbegin(); it != mapped.rend(); ++it) {
      try {
        backend_.unmap(it->first, it->second);
      } catch (const std::exception&) {
      }
    }
    mapped.clear();
    for (auto it = created.rbegin(); it != created.rend(); ++it) {
      try {
        backend_.release_physical(it->first, it->second);
      } catch (const std::exception&) {
      }
    }
    created.clear();
  };
  for (;;) {
    plan.clear();
    if (need > room) plan = plan_lending(need - room);
    size_t lent = 0;
    for (const LendPiece& p : plan) lent += p.len;
    fresh = need - lent;
    bool ok = ledger_.may_reserve(fresh);
    try {
      for (size_t done = 0; ok && done < fresh;) {
        size_t n = std::min(unit, fresh - done);
        PhysHandle h = backend_.create_physical(n);
        ok = h != 0;
        if (ok) created.emplace_back(h, n);
        done += n;
      }
    } catch (...) {
      undo();
      throw;
    }
    if (ok) break;
    undo();
    if (room == 0) return false;
    room = 0;
  }
  // Map the lent pages, then the new ones, and make the range accessible.
  bool ok = true;
  try {
    char* va = cursor;
    for (const LendPiece& p : plan) {
      const PhysHandle h = reservation_of(p.block)->extents.at(p.lo).chunk->handle;
      if (!(ok = backend_.map(va, p.len, h))) break;
      mapped.emplace_back(va, p.len);
      va += p.len;
    }
    for (size_t i = 0; ok && i < created.size(); ++i) {
      if (!(ok = backend_.map(va, created[i].second, created[i].first))) break;
      mapped.emplace_back(va, created[i].second);
      va += created[i].second;
    }
    if (ok) ok = backend_.set_access(cursor, need);
  } catch (...) {
    undo();
    throw;
  }
  if (!ok) {
    undo();
    return false;
  }
  // Every driver call succeeded: record it all (nothing below can fail).
  char* va = cursor;
  if (!plan.empty()) va += lend_pages(plan, a, va);
  size_t maps = 0;
  for (auto& hc : created) {
    chunks_.push_back(std::make_unique<PhysChunk>());
    PhysChunk* c = chunks_.back().get();
    c->handle = hc.first;
    c->size = hc.second;
    a->extents[va] = Extent{c->size, c};
    c->maps.emplace_back(a, va);
    c->live_seg = a;
    c->live_va = va;
    ++maps;
    va += c->size;
  }
  ledger_.device_calls(*this, maps, 0);
  ledger_.reserved_changed(*this, int64_t(fresh));
  ledger_.mapped(*this, cursor, need);
  return true;
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
Block* Arena::grow(size_t size) {
  const size_t page = page_;
  if (lent_bytes_ > kLentLimit * ledger_.reserved()) unmap_lent();
  Reservation* a = active();
  const size_t have = tail_ ? tail_->size : 0;
  size_t need = round_up(size - std::min(have, size), page);
  if (Block* b = grow_in_place(size, need)) return b;
  // At the end. A new run after an allocated block starts after a gap (Note [Growth room]).
  size_t gap = 0;
  Block* before = a ? (tail_ ? tail_->prev : a->last) : nullptr;
  if (!whole_growths_ && have > 0 && have < backend_.vmm_granularity() && before &&
      before->state == BlockState::kAllocated) {
    gap = round_up(before->size / kGapDivisor, page);
  }
  if (a && a->mapped_end + gap + need > a->size) gap = 0;
  if (!a || a->mapped_end + need > a->size) {
    a = new_reservation(round_up(size, page));
    if (!a) return nullptr;
    need = round_up(size, page);
  }
  if (gap) need = round_up(size, page);
  char* const start = a->base + a->mapped_end + gap;
  if (!map_pages(a, start, need)) return nullptr;
  auto append = [&](Block* nb) {
    nb->seg = a;
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
  if (!a->last || !a->last->live()) add_runs(1);
  Block* nb = store_.get();
  nb->ptr = start;
  nb->size = need;
  nb->state = BlockState::kFree;
  append(nb);
  Block* tail = tail_;
  tail_ = nullptr;
  if (tail && tail->seg == a && tail->next == nb) {
    absorb(store_, tail, nb);
    nb = tail;
  } else if (tail) {
    bins_.insert(tail);
  }
  return nb;
}

// Growth in place (Note [Growth room]): the window of consecutive free blocks and unmapped
// gaps of a reservation that holds `size` bytes with the fewest bytes mapped into its gaps,
// if that is at most `limit` (what growing at the end would map). Maps them and returns the
// free block holding the window, out of the cache; nullptr when no window is cheap enough or
// the memory is exhausted.
Block* Arena::grow_in_place(size_t size, size_t limit) {
  const size_t page = page_;
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
  for (auto& a : reservations_) {
    for (Block* b = a->head; b; b = b->next) {
      if (!usable(b)) continue;
      consider(b, true);
      consider(b, false);
    }
  }
  if (!best.first) return nullptr;
  Reservation* a = reservation_of(best.first);
  struct Piece {
    Block* gap;
    char* lo;
    size_t len;
  };
  std::vector<Piece> pieces;
  for (Block* e = best.first;; e = e->next) {
    if (e->state == BlockState::kFree) {
      unbin(e);  // not a lending source
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
  std::exception_ptr error;  // a driver error, rethrown once the cache is restored
  for (const Piece& p : pieces) {
    try {
      ok = map_pages(a, p.lo, p.len);
    } catch (...) {
      error = std::current_exception();
      ok = false;
    }
    if (!ok) break;
    Block* mid = p.gap;
    if (p.lo > mid->ptr) mid = split_front(store_, mid, size_t(p.lo - mid->ptr));
    if (mid->size > p.len) split_front(store_, mid, p.len)->state = BlockState::kUnmapped;
    mid->state = BlockState::kFree;
    add_runs(1 - int64_t(mid->prev && mid->prev->live()) - int64_t(mid->next && mid->next->live()));
  }
  // Merge what is free now; after a failure, put it back in the cache.
  auto coalesce = [&](Block* r) {
    for (Block* nb = r->prev; nb && nb->state == BlockState::kFree; nb = r->prev) {
      if (nb->bin >= 0 || nb == tail_) unbin(nb);
      absorb(store_, r, nb);
    }
    for (Block* nb = r->next; nb && nb->state == BlockState::kFree; nb = r->next) {
      if (nb->bin >= 0 || nb == tail_) unbin(nb);
      absorb(store_, r, nb);
    }
    return r;
  };
  Block* r = best.first;
  while (r->ptr + r->size <= lo) r = r->next;
  if (ok) return coalesce(r);
  for (; r && (r->state == BlockState::kFree || r->state == BlockState::kUnmapped); r = r->next) {
    if (r->state == BlockState::kFree && r->bin < 0 && r != tail_) {
      r = coalesce(r);
      place_free(r);
    }
  }
  if (error) std::rethrow_exception(error);
  return nullptr;
}

// stats.segment counts what snapshot() reports as segments: plain segments, plus the runs
// of live memory in arenas. Runs change only when memory is mapped, lent or unmapped; growth
// and lending adjust the count as they go, releases (rare) recount.
void Arena::recount_runs() {
  int64_t runs = 0;
  for (auto& a : reservations_) {
    bool in_run = false;
    for (const Block* b = a->head; b; b = b->next) {
      if (b->live() && !in_run) ++runs;
      in_run = b->live();
    }
  }
  add_runs(runs - runs_);
}

void Arena::add_runs(int64_t delta) {
  runs_ += delta;
  if (delta != 0) ledger_.runs_changed(*this, delta);
}

// ---------------------------------------------------------------------------------------
// Lending.

// Chooses pages to lend for a growth of `need` bytes: whole pages (CUDA maps physical memory
// only whole) lying in free blocks of the arena, never more than needed. The smallest holes
// go first: the large ones are what later requests can still fit without any mapping, and a
// hole that lends pages splits into smaller ones. See Note [Lending pages].
std::vector<Arena::LendPiece> Arena::plan_lending(size_t need) {
  std::vector<LendPiece> plan;
  const size_t page = page_;
  std::vector<Block*> holes;
  bins_.for_each_descending([&](Block* b) {
    if (b->size >= page) holes.push_back(b);
    return true;
  });
  size_t planned = 0;
  for (auto h = holes.rbegin(); h != holes.rend() && planned < need; ++h) {
    Block* b = *h;
    char* hi = b->ptr + b->size;
    auto& ext = reservation_of(b)->extents;
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

// Records the planned pages as lent: each is mapped again (map_pages made the calls) at
// `cursor` in reservation `dst`, in plan order, and its old address is marked lent. Returns
// the bytes mapped.
size_t Arena::lend_pages(const std::vector<LendPiece>& plan, Reservation* dst, char* cursor) {
  char* const start = cursor;
  for (const LendPiece& p : plan) {
    Reservation* src = reservation_of(p.block);
    PhysChunk* c = src->extents.at(p.lo).chunk;
    mark_lent(p.block, p.lo, p.len);
    dst->extents[cursor] = Extent{p.len, c};
    c->maps.emplace_back(dst, cursor);
    c->live_seg = dst;
    c->live_va = cursor;
    ledger_.device_calls(*this, 1, 0);
    cursor += p.len;
  }
  return size_t(cursor - start);
}

// Marks [lo, lo + len) of the free block b lent, splitting b around it.
void Arena::mark_lent(Block* b, char* lo, size_t len) {
  unbin(b);
  Block* mid = b;
  if (lo > b->ptr) {
    mid = split_front(store_, b, size_t(lo - b->ptr));
    place_free(b);
  }
  if (mid->size > len) place_free(split_front(store_, mid, len));
  mid->state = BlockState::kLent;
  // A live run loses [lo, lo + len): it splits in two, shrinks, or disappears.
  add_runs(int64_t(mid->prev && mid->prev->live()) + int64_t(mid->next && mid->next->live()) - 1);
  for (Block* nb : {mid->prev, mid->next}) {
    if (nb && nb->state == BlockState::kLent) absorb(store_, mid, nb);
  }
  lent_bytes_ += len;
  ledger_.unmapped(*this, lo, len);
}

// ---------------------------------------------------------------------------------------
// Reclaiming lent pages.

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
// When no window fits, the allocator grows the active reservation; before lending, the
// window that ends at its mapped end is made live the same way, so the growth maps only what
// is still missing.

Block* Arena::reclaim(size_t size) {
  if (lent_bytes_ == 0) return nullptr;
  Window w = find_window(size);
  if (w.arena) return make_live(w.arena, w.lo, w.hi);
  const size_t have = tail_ ? tail_->size : 0;
  if (w.tail > have) {
    Reservation* a = active();
    Block* t = make_live(a, w.tail_lo, a->base + a->mapped_end);
    place_free(t);  // the new tail
  }
  return nullptr;
}

// Scans the reservations for windows of swappable pages (see the Note). Returns the best
// window that holds `size` bytes, or, when none does, the largest window at the mapped end of
// the active reservation (`tail`), which growth extends.
Arena::Window Arena::find_window(size_t size) {
  Window best;
  // The free blocks, by address, to tell whether a page is free where it lives.
  frees_.clear();
  size_t free_bytes = 0;
  bins_.for_each_descending([&](Block* b) {
    frees_.push_back(b);
    free_bytes += b->size;
    return true;
  });
  if (tail_) frees_.push_back(tail_);
  if (free_bytes + (tail_ ? tail_->size : 0) < size) return best;
  std::sort(frees_.begin(), frees_.end(),
            [](const Block* x, const Block* y) { return x->ptr < y->ptr; });
  // Every address of every whole free page: the only pages a window can hold.
  std::vector<Slot>& S = slots_;
  S.clear();
  for (Block* f : frees_) {
    auto& ext = reservation_of(f)->extents;
    for (auto it = ext.lower_bound(f->ptr);
         it != ext.end() && it->first + it->second.size <= f->ptr + f->size; ++it) {
      PhysChunk* c = it->second.chunk;
      for (auto& m : c->maps) S.push_back({m.first, m.second, it->second.size, c});
    }
  }
  std::sort(S.begin(), S.end(), [](const Slot& x, const Slot& y) { return x.va < y.va; });
  // Free bytes of the partly used page in front of (behind) a run of whole pages.
  auto free_before = [&](Reservation* a, char* va) -> size_t {
    Block* b = va > a->base ? free_at(va - 1, 1) : nullptr;
    return b ? size_t(va - b->ptr) : 0;
  };
  auto free_after = [&](Reservation* a, char* va) -> size_t {
    Block* b = va < a->base + a->mapped_end ? free_at(va, 1) : nullptr;
    return b ? size_t(b->ptr + b->size - va) : 0;
  };
  const size_t n = S.size();
  // [s, k]: the longest window ending at k with no page twice; [m, k]: the shortest one
  // ending at k that holds the request (m only moves forward within a run).
  size_t run = 0, s = 0, m = 0, sum_s = 0, sum_m = 0, lent_m = 0, lo_edge = 0;
  for (size_t k = 0; k < n; ++k) {
    Reservation* a = S[k].seg;
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
    if (run_end && a == active() && hi == a->base + a->mapped_end) {
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
Block* Arena::free_at(char* va, size_t len) const {
  auto it = std::upper_bound(frees_.begin(), frees_.end(), va,
                             [](char* v, const Block* b) { return v < b->ptr; });
  if (it == frees_.begin()) return nullptr;
  Block* b = *(it - 1);
  return b->state == BlockState::kFree && va + len <= b->ptr + b->size ? b : nullptr;
}

// Makes the pages of [lo, hi) in reservation `a` live: each lent page swaps roles with its
// live address (which find_window checked is free). Returns the free block that then holds
// [lo, hi) and the free memory around it, out of the cache.
Block* Arena::make_live(Reservation* a, char* lo, char* hi) {
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
    mark_lent(b, w.live, w.len);
    w.chunk->live_seg = a;
    w.chunk->live_va = w.here;
  }
  // Turn the lent blocks of [lo, hi) free, merging them with their free neighbours.
  Block* b = a->head;
  while (b->ptr + b->size <= lo) b = b->next;
  while (b && b->ptr < hi) {
    if (b->state == BlockState::kLent) {
      if (b->ptr < lo) {
        b = split_front(store_, b, size_t(lo - b->ptr));
        b->state = BlockState::kLent;
      }
      if (b->ptr + b->size > hi) {
        split_front(store_, b, size_t(hi - b->ptr))->state = BlockState::kLent;
      }
      lent_bytes_ -= b->size;
      b->state = BlockState::kFree;
      add_runs(1 - int64_t(b->prev && b->prev->live()) - int64_t(b->next && b->next->live()));
      ledger_.mapped(*this, b->ptr, b->size);
      for (Block* nb : {b->prev, b->next}) {
        if (nb && nb->state == BlockState::kFree) {
          if (nb->bin >= 0 || nb == tail_) unbin(nb);  // earlier ones are out
          absorb(store_, b, nb);
        }
      }
    } else {
      CL_CHECK(b->state == BlockState::kFree, "caching allocator: swapping in a used page");
      if (b->bin >= 0 || b == tail_) unbin(b);
    }
    b = b->next;
  }
  b = a->head;
  while (b->ptr + b->size <= lo) b = b->next;
  if (b->bin >= 0 || b == tail_) unbin(b);
  return b;
}

// ---------------------------------------------------------------------------------------
// Unmapping, releasing and trimming.

// Unmaps the mapping `it` (of chunk c, in reservation a) and returns the extent after it. The
// driver call comes first: when it fails, nothing has changed.
std::map<char*, Extent>::iterator Arena::unmap_one(PhysChunk* c, Reservation* a,
                                                   std::map<char*, Extent>::iterator it) {
  char* const va = it->first;
  const size_t len = it->second.size;
  // A lent range left the history (segment_unmap) when it was lent (mark_lent).
  const bool live = c->live_seg == a && c->live_va == va;
  backend_.unmap(va, len);
  mark_unmapped(a, va, len);
  it = a->extents.erase(it);
  c->maps.erase(std::find(c->maps.begin(), c->maps.end(), std::make_pair(a, va)));
  ledger_.device_calls(*this, 0, 1);
  if (live) ledger_.unmapped(*this, va, len);
  return it;
}

// The physical chunks whose every mapping covers only free or lent memory.
std::vector<PhysChunk*> Arena::unused_pages() const {
  std::vector<PhysChunk*> all;
  for (auto& a : reservations_) {
    for (auto& kv : a->extents) all.push_back(kv.second.chunk);
  }
  std::sort(all.begin(), all.end());
  all.erase(std::unique(all.begin(), all.end()), all.end());
  std::vector<PhysChunk*> busy;
  for (auto& a : reservations_) {
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
  std::set_difference(all.begin(), all.end(), busy.begin(), busy.end(),
                      std::back_inserter(release));
  // Pages left unmapped by a release whose cuMemRelease failed are retried.
  for (auto& c : chunks_) {
    if (c->maps.empty()) release.push_back(c.get());
  }
  return release;
}

bool Arena::has_unused() const { return !unused_pages().empty(); }

// Releases the unused pages. Unmapping needs them idle on the GPU, hence the stream
// synchronization.
void Arena::release_unused() {
  const std::vector<PhysChunk*> release = unused_pages();
  if (release.empty()) return;
  backend_.synchronize_stream(stream_);
  try {
    for (PhysChunk* c : release) {
      // In mapping order: the live mapping (a page's first) is unmapped first.
      while (!c->maps.empty()) {
        Reservation* a = c->maps.front().first;
        unmap_one(c, a, a->extents.find(c->maps.front().second));
      }
      backend_.release_physical(c->handle, c->size);
      ledger_.reserved_changed(*this, -int64_t(c->size));
      chunks_.erase(std::find_if(chunks_.begin(), chunks_.end(),
                                 [c](const auto& p) { return p.get() == c; }));
    }
  } catch (...) {
    // What was unmapped is gone from the blocks; what was not stays cached as it was.
    trim();
    recount_runs();
    throw;
  }
  trim();
  recount_runs();
}

// Marks [va, va + len) of reservation `a` unmapped; the blocks there are free or lent.
void Arena::mark_unmapped(Reservation* a, char* va, size_t len) {
  Block* b = a->head;
  while (b && b->ptr + b->size <= va) b = b->next;
  char* const end = va + len;
  while (b && b->ptr < end) {
    if (b->state == BlockState::kFree) unbin(b);
    if (b->ptr < va) {
      Block* rest = split_front(store_, b, size_t(va - b->ptr));
      if (b->state == BlockState::kFree) place_free(b);
      rest->state = b->state;
      b = rest;
    }
    if (b->ptr + b->size > end) {
      Block* rest = split_front(store_, b, size_t(end - b->ptr));
      rest->state = b->state;
      if (rest->state == BlockState::kFree) place_free(rest);
    }
    if (b->state == BlockState::kLent) lent_bytes_ -= b->size;
    b->state = BlockState::kUnmapped;
    if (b->prev && b->prev->state == BlockState::kUnmapped) absorb(store_, b, b->prev);
    if (b->next && b->next->state == BlockState::kUnmapped) absorb(store_, b, b->next);
    b = b->next;
  }
}

// Note [Bounding lent address space]
// Every lending maps a page once more, and a workload that keeps lending (buffers that keep
// growing under a tight budget) would otherwise hold ever more mappings and address space.
// When the arena's lent address space exceeds kLentLimit times the reserved memory, its lent
// ranges are unmapped: once the stream has passed the work queued so far (lent addresses are
// never handed out again, but work queued before the lending may still use them), every lent
// page is unmapped at its lent address. The ranges become unmapped gaps that later growth
// maps pages into again (Note [Growth room]), and whole reservations left empty return their
// address space. One stream synchronization per kLentLimit times reserved memory lent.
void Arena::unmap_lent() {
  backend_.synchronize_stream(stream_);
  try {
    for (auto& r : reservations_) {
      Reservation* a = r.get();
      for (auto it = a->extents.begin(); it != a->extents.end();) {
        PhysChunk* c = it->second.chunk;
        if (c->live_seg == a && c->live_va == it->first) {
          ++it;
          continue;
        }
        it = unmap_one(c, a, it);
      }
    }
  } catch (...) {
    trim();
    recount_runs();
    throw;
  }
  trim();
  recount_runs();
}

// Gives unmapped space at the end of a reservation back to its tail, and whole empty
// reservations (other than the active one) back to the backend.
void Arena::trim() {
  for (size_t i = 0; i < reservations_.size();) {
    Reservation* a = reservations_[i].get();
    if (tail_ && tail_->seg == a) {
      bins_.insert(tail_);
      tail_ = nullptr;
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
    const bool is_active = i + 1 == reservations_.size();
    if (!a->head && !is_active) {
      backend_.release_address(a->base, a->size);
      reservations_.erase(reservations_.begin() + long(i));
      continue;
    }
    ++i;
  }
  Reservation* act = active();
  if (act && act->last && act->last->state == BlockState::kFree) {
    bins_.remove(act->last);
    tail_ = act->last;
  }
}

}  // namespace cl::detail
