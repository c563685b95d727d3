// The caching allocator's blocks: the segments they tile, the free list that recycles them,
// splitting and merging, and the size-segregated free lists that find a best fit in constant
// time. Pools (core/detail/pool.h) and arenas (core/detail/arena.h) are built from them.
#pragma once

#include <cstddef>
#include <cstdint>
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

// n rounded up to a multiple of m. The caching allocator caps request sizes (kMaxRequest,
// core/alloc_config.h) so that this never wraps.
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

// A region of address space that blocks tile: a plain segment (one malloc), or one
// reservation of an arena (core/detail/arena.h, struct Reservation).
struct Segment {
  char* base = nullptr;
  size_t size = 0;  // plain: the segment size; arena: the reserved address space
  Pool* pool = nullptr;
  Block* head = nullptr;  // lowest block
  Block* last = nullptr;  // highest block
  bool is_arena = false;
};

inline size_t Block::end_offset() const { return size_t(ptr + size - seg->base); }

// Splits b in two: b keeps its first `size` bytes, the returned block (free, from `store`)
// the rest.
inline Block* split_front(BlockStore& store, Block* b, size_t size) {
  Block* rest = store.get();
  rest->ptr = b->ptr + size;
  rest->size = b->size - size;
  rest->seg = b->seg;
  rest->owner = b->owner;
  rest->state = BlockState::kFree;
  rest->prev = b;
  rest->next = b->next;
  if (b->next) b->next->prev = rest;
  b->next = rest;
  if (b->seg->last == b) b->seg->last = rest;
  b->size = size;
  return rest;
}

// Merges src, a neighbour of dst, into dst and gives src back to `store`.
inline void absorb(BlockStore& store, Block* dst, Block* src) {
  if (src == dst->prev) {
    dst->ptr = src->ptr;
    dst->prev = src->prev;
    if (dst->prev) {
      dst->prev->next = dst;
    } else {
      dst->seg->head = dst;
    }
  } else {
    dst->next = src->next;
    if (dst->next) dst->next->prev = dst;
    if (dst->seg->last == src) dst->seg->last = dst;
  }
  dst->size += src->size;
  store.put(src);
}

}  // namespace detail
}  // namespace cl
