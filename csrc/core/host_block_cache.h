// The caching logic of the pinned host allocator, apart from CUDA so that it is tested on
// machines without a GPU (a fake backend stands in for cudaHostAlloc and events).
//
// Note [Pinned block reuse]
// Pinning memory is slow (cudaHostAlloc of 256 MiB takes tens of ms), so freed blocks are
// kept and handed out again. A block may still be read or written by copies queued on
// streams when its tensor dies (x.pin_memory().cuda(non_blocking=True) drops the pinned
// tensor at once). Every stream that used a block is recorded (record_stream); when the
// block is freed, an event is recorded on each of those streams, and the block becomes
// reusable only once all those events have completed. Pending blocks are checked on each
// allocation and when the cache is emptied.
//
// Note [Pinned size classes]
// torch rounds every pinned request up to a power of two, which can nearly double the pinned
// memory a program holds (a 257 MiB batch pins 512 MiB). Here a request of n bytes, with
// 2^k <= n < 2^(k+1), is rounded up to a multiple of 2^(k-3): eight classes per power of
// two, so a block is never more than 1/8 larger than the request it was made for. A cached
// block is reused only for requests of exactly its class, which keeps that bound for reuse
// too.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "core/allocator.h"
#include "core/memory_stats.h"

namespace cl {

// torch's DurationStat, in microseconds.
struct HostDurationStat {
  int64_t total = 0, max = 0, min = 0, count = 0;
  void add(int64_t us);
};
// The fields of torch.cuda.host_memory_stats().
struct HostMemoryStats {
  Stat allocations;      // blocks owned (in use + cached)
  Stat allocated_bytes;  // their bytes
  Stat active_requests;  // blocks handed out and not yet reusable
  Stat active_bytes;     // their bytes
  int64_t num_host_alloc = 0;
  int64_t num_host_free = 0;
  HostDurationStat host_alloc_time;
  HostDurationStat host_free_time;
};

// What the cache needs from the machine.
class PinnedBackend {
 public:
  virtual ~PinnedBackend() = default;
  // Page-locked memory of `n` bytes; throws cl::OutOfMemoryError when there is none.
  virtual void* allocate(size_t n) = 0;
  // Page-locked memory of `n` bytes whose first `len` (<= n) bytes are a copy of `src`. A
  // backend may make the copy part of pinning (Note [Pinning by copying] in
  // cuda/host_allocator.cpp); by default the memory is allocated, then copied.
  virtual void* allocate_copy(size_t n, const void* src, size_t len);
  virtual void free(void* p) = 0;
  // A marker recorded now on `stream` of `device`: query_event answers true once the work
  // queued there before it has completed.
  virtual void* record_event(int device, void* stream) = 0;
  virtual bool query_event(void* event) = 0;
  virtual void release_event(void* event) = 0;
};

class HostBlockCache {
 public:
  explicit HostBlockCache(PinnedBackend* backend) : backend_(backend) {}
  ~HostBlockCache();  // frees cached blocks (never blocks still in use)
  HostBlockCache(const HostBlockCache&) = delete;
  HostBlockCache& operator=(const HostBlockCache&) = delete;

  // The size of the block that serves a request of `n` bytes (Note [Pinned size classes]).
  static size_t block_size(size_t n);

  // A CPU DataPtr whose deleter returns the block to this cache.
  DataPtr allocate(size_t n);
  // allocate(n), its first `len` (<= n) bytes a copy of `src`: a cached block is copied
  // into, a new one comes from the backend's allocate_copy (pin_memory()).
  DataPtr allocate_copy(size_t n, const void* src, size_t len);
  // Notes that work queued on `stream` of `device` uses the block holding `ptr`. Returns
  // false when `ptr` is not inside a block of this cache.
  bool record_stream(const void* ptr, int device, void* stream);
  bool owns(const void* ptr);
  // Releases every cached block whose pending events have completed.
  void empty_cache();
  // Moves freed blocks whose events have completed to the free lists.
  void process_events();

  HostMemoryStats stats();
  void reset_peak_stats();
  void reset_accumulated_stats();
  size_t cached_blocks();   // free, ready for reuse
  size_t pending_blocks();  // freed, waiting for events

 private:
  struct Block {
    HostBlockCache* owner;
    void* ptr;
    size_t size;
    bool in_use = true;
    std::vector<std::pair<int, void*>> streams;  // (device, stream) that used it
    std::vector<void*> events;                   // recorded when it was freed
  };
  static void delete_block(void* ctx);
  DataPtr allocate_impl(size_t n, const void* src, size_t len);
  Block* find_locked(const void* ptr);
  void free_block(Block* b);
  void process_events_locked();
  void release_locked(Block* b);  // back to the backend

  PinnedBackend* backend_;
  std::mutex mu_;
  std::map<uintptr_t, Block*> blocks_;  // every block, by address
  std::unordered_map<size_t, std::vector<Block*>> free_;
  std::vector<Block*> pending_;
  HostMemoryStats stats_;
};

}  // namespace cl
