// Driving a caching allocator from C++ for tests and benchmarks: replaying allocation traces,
// timing allocate/free pairs, and hammering it from many threads. Kept in C++ so that the
// figures measure the allocator, not the Python calls around it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "core/caching_allocator.h"

namespace cl {

// One step of a trace: allocate `nbytes` as `id`, or free `id` (nbytes == 0 when freeing).
struct TraceOp {
  bool alloc;
  int64_t id;
  size_t nbytes;
};

struct ReplayResult {
  int64_t peak_reserved = 0;   // reserved_bytes.all.peak over the replay
  int64_t peak_allocated = 0;  // allocated_bytes.all.peak over the replay
  int64_t peak_requested = 0;  // requested_bytes.all.peak over the replay
  double seconds = 0;          // wall time of all allocations and frees
  int64_t allocs = 0;
  int64_t frees = 0;
};

// Replays `ops` on `stream` (peaks are reset first; everything still live is freed at the
// end, outside the timing).
ReplayResult replay_trace(CachingAllocator& a, const std::vector<TraceOp>& ops,
                          StreamId stream = 0);

// Nanoseconds per allocate(nbytes) + free pair, the median of `rounds` rounds of `iters`.
double time_alloc_free_ns(CachingAllocator& a, size_t nbytes, size_t iters, int rounds = 5);

// `threads` threads each run `iters` random allocations and frees (up to `max_bytes` each,
// on `streams` different streams), writing a pattern into every block and checking it before
// the free. Throws cl::Error if two live blocks ever overlap. Returns the operations run.
int64_t stress_threads(CachingAllocator& a, int threads, int iters, size_t max_bytes, int streams,
                       uint64_t seed);

}  // namespace cl
