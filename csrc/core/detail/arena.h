// An arena: the virtual memory of one (stream, size class) pool of the caching allocator.
//
// An arena reserves large ranges of address space and maps physical pages at the end of the
// mapped part as requests need them. Its free pages can back new addresses without a driver
// call being paid twice: pages inside holes are lent to the growing end (Note [Lending
// pages]), lent addresses are taken back by swapping roles with their pages' live addresses
// (Note [Reclaiming lent pages]), and growth leaves room after allocated blocks so that a
// block that grows step by step maps a page or two in place (Note [Growth room]). The design
// and its measurements are in docs/allocator.md.
//
// The arena knows memory, not policy: the caching allocator decides which requests reach it
// (after the cached blocks), how much it may reserve (the memory fraction, the growth
// budget) and what it reports (statistics, history), through an ArenaLedger. Blocks, their
// free lists and the BlockStore are shared with the allocator (core/detail/block.h).
// Not thread-safe: the allocator's lock guards every call.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <utility>
#include <vector>

#include "core/alloc_backend.h"
#include "core/detail/block.h"

namespace cl::detail {

struct Reservation;

// Physical memory obtained with one create_physical call: one page of an arena. It is
// mapped whole at one or more addresses (one live, the others lent) and released once the
// live one holds no data.
struct PhysChunk {
  PhysHandle handle = 0;
  size_t size = 0;
  std::vector<std::pair<Reservation*, char*>> maps;  // where it is mapped
  Reservation* live_seg = nullptr;                   // the mapping that is not lent
  char* live_va = nullptr;
  uint64_t scan_id = 0;  // the last find_window scan that saw it, and where
  size_t scan_pos = 0;
};

// One map() call: [va, va + size) shows all of chunk.
struct Extent {
  size_t size = 0;
  PhysChunk* chunk = nullptr;
};

// One reserved range of address space of an arena. Blocks tile its prefix
// [base, base + mapped_end): live (mapped, not lent), lent, or unmapped gaps; everything at
// or above base + mapped_end is unmapped. Segment::size is the reserved length.
struct Reservation : Segment {
  size_t mapped_end = 0;
  std::map<char*, Extent> extents;  // mapped ranges by address
};

inline Reservation* reservation_of(const Block* b) { return static_cast<Reservation*>(b->seg); }

class Arena;

// What an arena asks of its owner and tells it. The caching allocator implements it: the
// limits come from its settings and its totals over all pools, the reports go to its
// statistics and history.
class ArenaLedger {
 public:
  // Bytes of physical memory held by the owner (all pools): lent address space beyond this
  // is unmapped (Note [Bounding lent address space]).
  virtual size_t reserved() const = 0;
  // How many bytes new pages may still add before growth lends pages instead of creating
  // them (Note [Growth budget]); 0 means lend first.
  virtual size_t growth_room() const = 0;
  // Whether `bytes` more physical memory may be created (the memory fraction).
  virtual bool may_reserve(size_t bytes) const = 0;
  // Physical memory created (delta > 0) or released (delta < 0) by `arena`.
  virtual void reserved_changed(const Arena& arena, int64_t delta) = 0;
  // The number of runs of live memory of `arena` changed (they are reported as segments).
  virtual void runs_changed(const Arena& arena, int64_t delta) = 0;
  // Driver calls made: map() calls (new pages and lendings) and unmap() calls.
  virtual void device_calls(const Arena& arena, size_t maps, size_t unmaps) = 0;
  // [va, va + len) became live (usable) or stopped being live (lent or unmapped).
  virtual void mapped(const Arena& arena, char* va, size_t len) = 0;
  virtual void unmapped(const Arena& arena, char* va, size_t len) = 0;

 protected:
  ~ArenaLedger() = default;
};

class Arena {
 public:
  // A growth after an allocated block leaves unmapped address space worth this fraction of
  // the block after it (Note [Growth room]).
  static constexpr size_t kGapDivisor = 8;
  // Lent address space beyond this multiple of the owner's reserved memory is unmapped
  // (Note [Bounding lent address space]).
  static constexpr size_t kLentLimit = 1;

  // `pool` only tags the segments (Segment::pool); the arena never reads it. Blocks come
  // from and go back to `store`, memory from `backend`.
  Arena(AllocBackend& backend, BlockStore& store, ArenaLedger& ledger, Pool* pool, StreamId stream,
        bool small);
  // Returns everything to the backend (release_all), ignoring errors.
  ~Arena();
  Arena(const Arena&) = delete;
  Arena& operator=(const Arena&) = delete;

  StreamId stream() const { return stream_; }
  bool small() const { return small_; }
  // The size of new pages (a multiple of the backend's granularity). Pages already mapped
  // keep their size.
  void set_page_size(size_t page) { page_ = page; }
  size_t page_size() const { return page_; }
  // How growth creates physical memory (Note [Growth granules]). Off (an Arena's default):
  // in pages of page_size(), one allocation each, so that holes can lend them one by one,
  // and growth after an allocated block leaves room (Note [Growth room]). On: one allocation
  // per growth, of what the growth misses rounded up to page_size(), and no growth room.
  void set_whole_growths(bool on) { whole_growths_ = on; }
  bool whole_growths() const { return whole_growths_; }

  // ---- Cached free blocks (the allocator's fast path).
  // The best fit of at least `size` among the free blocks other than the growing tail, or
  // nullptr. The block stays binned (unbin() takes it).
  Block* best_fit(size_t size) const { return bins_.empty() ? nullptr : bins_.best_fit(size); }
  // The free block at the end of the active reservation's mapped part, taken out of the
  // cache, if it holds `size` bytes; else nullptr. It is used last: it can grow to fit any
  // request, so handing it to a request that fits elsewhere only pushes the next growth out.
  Block* take_tail(size_t size) {
    if (!tail_ || tail_->size < size) return nullptr;
    Block* b = tail_;
    tail_ = nullptr;
    return b;
  }
  // Caches a free block of this arena (merged with its neighbours by the caller).
  void place_free(Block* b) {
    if (b->seg == active() && b == b->seg->last) {
      tail_ = b;
    } else {
      bins_.insert(b);
    }
  }
  // Takes a cached free block out of the cache.
  void unbin(Block* b) {
    if (b == tail_) {
      tail_ = nullptr;
    } else {
      bins_.remove(b);
    }
  }

  // ---- New memory, in the order the allocator tries it.
  // A free block of at least `size` bytes assembled from pages already mapped (lent pages
  // swap roles with free live ones; no driver call), out of the cache; or nullptr. When none
  // fits, the swappable pages at the end of the active reservation are made live, so that a
  // following grow() maps less (Note [Reclaiming lent pages]).
  Block* reclaim(size_t size);
  // A free block of at least `size` bytes, out of the cache, made by mapping pages: in place
  // where that maps least (Note [Growth room]), else at the end of the active reservation
  // (a new reservation when it is full). The pages are lent from holes or created, as the
  // ledger's growth room says (Note [Growth budget], Note [Lending pages]). Returns nullptr,
  // with nothing changed, when the memory (or the address space) is exhausted; a failing
  // driver call propagates, with nothing changed either (Note [Growth is all or nothing]).
  Block* grow(size_t size);

  // ---- Giving memory back.
  // Releases every page whose mappings cover only free or lent memory, after synchronizing
  // the arena's stream (the pages must be idle), then trims. Each driver call comes before
  // the bookkeeping it implies: when one fails, the arena is left consistent (what was not
  // released stays cached) and the error propagates.
  void release_unused();
  // Whether release_unused() would release anything (and so synchronize the stream).
  bool has_unused() const;
  // Unmaps and releases everything, allocated or not (the owner is being destroyed).
  void release_all();

  // ---- Inspection.
  bool empty() const { return reservations_.empty() && chunks_.empty(); }
  // The reservations, the active (growing) one last.
  const std::vector<std::unique_ptr<Reservation>>& reservations() const { return reservations_; }
  size_t lent_bytes() const { return lent_bytes_; }
  int64_t runs() const { return runs_; }
  size_t pages() const { return chunks_.size(); }

 private:
  struct LendPiece {
    Block* block;
    char* lo;
    size_t len;
  };
  struct Window {
    Reservation* arena = nullptr;  // a window that holds the request: [lo, hi) in arena
    char* lo = nullptr;
    char* hi = nullptr;
    size_t region = 0;  // bytes it makes free, with the free ends around it
    size_t swaps = 0;   // lent pages in it
    size_t tail = 0;    // the window ending at the active reservation's mapped end
    char* tail_lo = nullptr;
  };
  struct Slot {  // one address of a free page, during find_window
    Reservation* seg;
    char* va;
    size_t len;
    PhysChunk* chunk;
    bool lent = false;  // not the page's live address
  };

  Reservation* active() const {
    return reservations_.empty() ? nullptr : reservations_.back().get();
  }
  Reservation* new_reservation(size_t min_size);
  bool map_pages(Reservation* a, char* cursor, size_t need);
  Block* grow_in_place(size_t size, size_t limit);
  std::vector<LendPiece> plan_lending(size_t need);
  size_t lend_pages(const std::vector<LendPiece>& plan, Reservation* dst, char* cursor);
  void mark_lent(Block* b, char* lo, size_t len);
  Window find_window(size_t size);
  Block* free_at(char* va, size_t len) const;
  Block* make_live(Reservation* a, char* lo, char* hi);
  std::vector<PhysChunk*> unused_pages() const;
  std::map<char*, Extent>::iterator unmap_one(PhysChunk* c, Reservation* a,
                                              std::map<char*, Extent>::iterator it);
  void mark_unmapped(Reservation* a, char* va, size_t len);
  void unmap_lent();
  void trim();
  void recount_runs();
  void add_runs(int64_t delta);

  AllocBackend& backend_;
  BlockStore& store_;
  ArenaLedger& ledger_;
  Pool* pool_;
  StreamId stream_;
  bool small_;
  size_t page_ = 0;
  bool whole_growths_ = false;

  FreeBins bins_;          // free blocks, except the active reservation's tail
  Block* tail_ = nullptr;  // the free block at the end of the active reservation's mapped part
  std::vector<std::unique_ptr<Reservation>> reservations_;
  std::vector<std::unique_ptr<PhysChunk>> chunks_;
  int64_t runs_ = 0;       // contiguous live runs (reported as segments)
  size_t lent_bytes_ = 0;  // address space whose pages back other addresses

  // Scratch of find_window.
  std::vector<Block*> frees_;
  std::vector<Slot> slots_;
  uint64_t scan_id_ = 0;
};

}  // namespace cl::detail
