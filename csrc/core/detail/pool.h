// A pool of the caching allocator: the cached memory of one stream and one size class
// (small: requests up to 1 MiB; large). Blocks never move between pools: memory freed on a
// stream is reused on that stream, where ordering makes it safe.
#pragma once

#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

#include "core/detail/arena.h"
#include "core/detail/block.h"

namespace cl::detail {

struct Pool {
  Pool(StreamId s, bool is_small, AllocBackend& backend, BlockStore& store, ArenaLedger& ledger)
      : stream(s), small(is_small), arena(backend, store, ledger, this, s, is_small) {}
  Pool(const Pool&) = delete;
  Pool& operator=(const Pool&) = delete;

  StreamId stream = 0;
  bool small = false;
  // {0, 0} for the default pools; a CUDA graph's private pool otherwise (Note [Private
  // pools] in caching_allocator_graphs.cpp). Private pools use plain segments only.
  std::pair<uint64_t, uint64_t> pool_id{0, 0};
  bool is_private() const { return pool_id.first != 0 || pool_id.second != 0; }
  FreeBins plain_bins;                             // free blocks of plain segments
  std::vector<std::unique_ptr<Segment>> segments;  // plain segments
  Arena arena;                                     // virtual memory (expandable segments)
  uint64_t gc_clock = 0;  // counts cache lookups when garbage collection is on
};

}  // namespace cl::detail
