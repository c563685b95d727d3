// The caching allocator's bookkeeping: blocks, the segments they tile, the per-stream pools
// and the size-segregated free lists that find a best fit in constant time.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "core/alloc_backend.h"

namespace cl {

class CachingAllocator;

namespace detail {

struct Pool;
struct Segment;
struct Block;

inline size_t round_up(size_t n, size_t m) { return (n + m - 1) / m * m; }

// A stack captured when history recording is on (Python frames, innermost first).
struct StackFrame {
  std::string filename;
  std::string name;
  int line = 0;
};
using StackContext = std::shared_ptr<const std::vector<StackFrame>>;

enum class BlockState : uint8_t {
  kAllocated,  // handed out
  kPending,    // freed, waiting for events on the streams that used it (record_stream)
  kFree,       // cached, ready for reuse
  kLent,       // virtual memory whose physical pages now back another address (see arena)
  kUnmapped,   // virtual memory with nothing mapped (released pages inside an arena)
};

// A contiguous piece of a segment. Blocks of a segment form an address-ordered list
// (prev/next); free blocks also sit in a size bin (bin_prev/bin_next).
struct Block {
  char* ptr = nullptr;
  size_t size = 0;
  size_t requested_size = 0;
  Block* prev = nullptr;
  Block* next = nullptr;
  Block* bin_prev = nullptr;
  Block* bin_next = nullptr;
  Segment* seg = nullptr;
  CachingAllocator* owner = nullptr;
  int32_t bin = -1;  // the bin holding this free block, -1 when in none
  int32_t event_count = 0;
  BlockState state = BlockState::kFree;
  uint64_t gc_base = 0;  // garbage-collection clock when the block was cached
  std::unique_ptr<std::vector<StreamId>> stream_uses;  // other streams (record_stream)
  StackContext context;  // where it was allocated, when history is recorded

  size_t end_offset() const;
  bool live() const { return state <= BlockState::kFree; }
};

// Blocks are recycled through a free list: splitting and merging sit on the allocation fast
// path, where a heap allocation per split would cost more than the rest of the work.
class BlockStore {
 public:
  BlockStore() = default;
  BlockStore(const BlockStore&) = delete;
  BlockStore& operator=(const BlockStore&) = delete;
  Block* get() {
    if (!free_) refill();
    Block* b = free_;
    free_ = b->next;
    b->next = nullptr;
    return b;
  }
  void put(Block* b) {
    b->stream_uses.reset();
    b->context.reset();
    b->requested_size = 0;
    b->prev = b->bin_prev = b->bin_next = nullptr;
    b->bin = -1;
    b->event_count = 0;
    b->gc_base = 0;
    b->next = free_;
    free_ = b;
  }

 private:
  void refill() {
    chunks_.emplace_back(new Block[kChunk]);
    Block* c = chunks_.back().get();
    for (size_t i = 0; i < kChunk; ++i) {
      c[i].next = free_;
      free_ = &c[i];
    }
  }
  static constexpr size_t kChunk = 256;
  std::vector<std::unique_ptr<Block[]>> chunks_;
  Block* free_ = nullptr;
};

// Two-level segregated free lists (as in TLSF): sizes up to 32 KiB have one list per 512 B
// step; above, each power of two is cut into 32 lists. A bitmap finds the first non-empty
// list at or above a size in O(1). Within a list the best fit among the first few entries is
// taken, so the choice is within 1/32 of true best fit and usually exact.
class FreeBins {
 public:
  static constexpr int kLinear = 64;  // exact lists for 1..63 units of 512 B
  static constexpr int kSubBits = 5;
  static constexpr int kNumBins = kLinear + (58 << kSubBits);
  static constexpr int kWords = (kNumBins + 63) / 64;
  static constexpr int kMaxScan = 8;

  static int bin_of(size_t size) {
    size_t u = size >> 9;
    if (u < size_t(kLinear)) return int(u);
    int fl = 63 - __builtin_clzll(u);
    int sl = int((u >> (fl - kSubBits)) & ((1 << kSubBits) - 1));
    return kLinear + ((fl - 6) << kSubBits) + sl;
  }

  bool empty() const { return count_ == 0; }
  size_t count() const { return count_; }

  void insert(Block* b) {
    int i = bin_of(b->size);
    b->bin = i;
    b->bin_prev = nullptr;
    b->bin_next = heads_[i];
    if (heads_[i]) heads_[i]->bin_prev = b;
    heads_[i] = b;
    words_[i >> 6] |= uint64_t(1) << (i & 63);
    summary_ |= uint64_t(1) << (i >> 6);
    ++count_;
  }

  void remove(Block* b) {
    int i = b->bin;
    if (b->bin_prev) {
      b->bin_prev->bin_next = b->bin_next;
    } else {
      heads_[i] = b->bin_next;
      if (!heads_[i]) {
        words_[i >> 6] &= ~(uint64_t(1) << (i & 63));
        if (!words_[i >> 6]) summary_ &= ~(uint64_t(1) << (i >> 6));
      }
    }
    if (b->bin_next) b->bin_next->bin_prev = b->bin_prev;
    b->bin = -1;
    b->bin_prev = b->bin_next = nullptr;
    --count_;
  }

  // The smallest cached block of at least `size` (ties: lowest address), or nullptr.
  Block* best_fit(size_t size) const {
    int i = bin_of(size);
    Block* best = nullptr;
    int scanned = 0;
    for (Block* b = heads_[i]; b && scanned < kMaxScan; b = b->bin_next, ++scanned) {
      if (b->size >= size && better(b, best)) best = b;
    }
    if (best) return best;
    int j = next_nonempty(i + 1);
    if (j < 0) return nullptr;
    scanned = 0;
    for (Block* b = heads_[j]; b && scanned < kMaxScan; b = b->bin_next, ++scanned) {
      if (better(b, best)) best = b;
    }
    return best;
  }

  // Visits every cached block, largest bins first, until f returns false.
  template <class F>
  void for_each_descending(F f) const {
    for (int i = kNumBins - 1; i >= 0; --i) {
      if (!(words_[i >> 6] >> (i & 63) & 1)) continue;
      for (Block* b = heads_[i]; b;) {
        Block* nx = b->bin_next;  // f may remove b
        if (!f(b)) return;
        b = nx;
      }
    }
  }

 private:
  static bool better(const Block* a, const Block* b) {
    return !b || a->size < b->size || (a->size == b->size && a->ptr < b->ptr);
  }
  int next_nonempty(int from) const {
    if (from >= kNumBins) return -1;
    int w = from >> 6;
    uint64_t bits = words_[w] & (~uint64_t(0) << (from & 63));
    if (bits) return (w << 6) + __builtin_ctzll(bits);
    uint64_t sum = w + 1 < 64 ? summary_ & (~uint64_t(0) << (w + 1)) : 0;
    if (!sum) return -1;
    w = __builtin_ctzll(sum);
    return (w << 6) + __builtin_ctzll(words_[w]);
  }

  Block* heads_[kNumBins] = {};
  uint64_t words_[kWords] = {};
  uint64_t summary_ = 0;
  size_t count_ = 0;
};
static_assert(FreeBins::kWords <= 64, "summary bitmap holds one bit per word");

// Physical memory obtained with one create_physical call: one page of an arena. It is
// mapped whole at one or more addresses (one live, the others lent) and released once the
// live one holds no data.
struct PhysChunk {
  PhysHandle handle = 0;
  size_t size = 0;
  std::vector<std::pair<Segment*, char*>> maps;  // where it is mapped
  Segment* live_seg = nullptr;                   // the mapping that is not lent
  char* live_va = nullptr;
  uint64_t scan_id = 0;  // the last find_window scan that saw it, and where
  size_t scan_pos = 0;
};

// One map() call: [va, va + size) shows all of chunk.
struct Extent {
  size_t size = 0;
  PhysChunk* chunk = nullptr;
};

// A region of address space that blocks tile. Either a plain segment (one malloc), or an
// arena: a large reservation whose mapped prefix [0, mapped_end) grows page by page.
struct Segment {
  char* base = nullptr;
  size_t size = 0;  // plain: the segment size; arena: the reserved address space
  Pool* pool = nullptr;
  Block* head = nullptr;  // lowest block
  bool is_arena = false;
  // Arena only.
  size_t mapped_end = 0;            // everything at or above base + mapped_end is unmapped
  Block* last = nullptr;            // the block that ends at mapped_end
  std::map<char*, Extent> extents;  // mapped ranges by address
};

inline size_t Block::end_offset() const { return size_t(ptr + size - seg->base); }

// Cached blocks of one stream and one size class. Blocks never move between pools: memory
// freed on a stream is reused on that stream, where ordering makes it safe.
struct Pool {
  StreamId stream = 0;
  bool small = false;
  FreeBins plain_bins;  // free blocks of plain segments
  FreeBins arena_bins;  // free blocks of arenas, except the active arena's tail
  std::vector<std::unique_ptr<Segment>> segments;  // plain segments
  std::vector<std::unique_ptr<Segment>> arenas;    // arenas, the active (growing) one last
  Block* tail_free = nullptr;  // the free block at the end of the active arena's mapped part
  uint64_t gc_clock = 0;       // counts cache lookups when garbage collection is on
  int64_t runs = 0;            // contiguous live runs in arenas (reported as segments)
  size_t lent_bytes = 0;       // address space of arenas whose pages back other addresses

  Segment* active_arena() const { return arenas.empty() ? nullptr : arenas.back().get(); }
};

}  // namespace detail
}  // namespace cl
