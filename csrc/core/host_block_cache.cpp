#include "core/host_block_cache.h"

#include <algorithm>
#include <chrono>
#include <cstdint>

#include "core/error.h"
#include "core/parallel.h"

namespace cl {

void HostDurationStat::add(int64_t us) {
  total += us;
  ++count;
  max = std::max(max, us);
  min = min == 0 ? us : std::min(min, us);
}

namespace {
int64_t micros_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() -
                                                               t0)
      .count();
}
}  // namespace

HostBlockCache::~HostBlockCache() {
  std::lock_guard<std::mutex> lock(mu_);
  for (auto& [size, list] : free_) {
    for (Block* b : list) {
      backend_->free(b->ptr);
      blocks_.erase(reinterpret_cast<uintptr_t>(b->ptr));
      delete b;
    }
  }
  // Blocks still in use or pending are left to the process: freeing them under a live
  // tensor or an unfinished copy would be worse than the leak at exit.
}

size_t HostBlockCache::block_size(size_t n) {
  if (n <= 16) return n;
  int k = 63 - __builtin_clzll(uint64_t(n));  // 2^k <= n < 2^(k+1)
  size_t step = size_t(1) << (k - 3);
  // Rounding a size within a step of 2^64 would wrap around: such a size is kept as it is
  // (no backend can serve it, and the backend's out-of-memory error is what the caller sees).
  if (n > SIZE_MAX - (step - 1)) return n;
  return (n + step - 1) / step * step;
}

void* PinnedBackend::allocate_copy(size_t n, const void* src, size_t len) {
  void* p = allocate(n);
  parallel_memcpy(p, src, len);
  return p;
}

DataPtr HostBlockCache::allocate(size_t n) { return allocate_impl(n, nullptr, 0); }

DataPtr HostBlockCache::allocate_copy(size_t n, const void* src, size_t len) {
  CL_CHECK(len <= n, "HostBlockCache::allocate_copy: ", len, " bytes do not fit in ", n);
  return allocate_impl(n, src, len);
}

DataPtr HostBlockCache::allocate_impl(size_t n, const void* src, size_t len) {
  Device cpu(DeviceType::CPU);
  if (n == 0) return DataPtr(nullptr, nullptr, nullptr, cpu);
  size_t size = block_size(n);
  Block* cached = nullptr;
  {
    std::lock_guard<std::mutex> lock(mu_);
    process_events_locked();
    auto it = free_.find(size);
    if (it != free_.end() && !it->second.empty()) {
      cached = it->second.back();
      it->second.pop_back();
      cached->in_use = true;
      stats_.active_requests.increase(1);
      stats_.active_bytes.increase(int64_t(size));
    }
  }
  if (cached) {
    DataPtr out(cached->ptr, cached, &delete_block, cpu);
    if (src) parallel_memcpy(cached->ptr, src, len);
    return out;
  }
  // Pinning (and copying) runs without the lock: it takes milliseconds, and other threads
  // may reuse cached blocks meanwhile.
  auto t0 = std::chrono::steady_clock::now();
  void* p = nullptr;
  auto get = [&] {
    return src ? backend_->allocate_copy(size, src, len) : backend_->allocate(size);
  };
  try {
    p = get();
  } catch (const OutOfMemoryError&) {
    empty_cache();
    t0 = std::chrono::steady_clock::now();
    p = get();
  }
  int64_t us = micros_since(t0);
  auto* b = new Block{this, p, size};
  std::lock_guard<std::mutex> lock(mu_);
  blocks_.emplace(reinterpret_cast<uintptr_t>(p), b);
  stats_.host_alloc_time.add(us);
  ++stats_.num_host_alloc;
  stats_.allocations.increase(1);
  stats_.allocated_bytes.increase(int64_t(size));
  stats_.active_requests.increase(1);
  stats_.active_bytes.increase(int64_t(size));
  return DataPtr(p, b, &delete_block, cpu);
}

void HostBlockCache::delete_block(void* ctx) {
  auto* b = static_cast<Block*>(ctx);
  b->owner->free_block(b);
}

void HostBlockCache::free_block(Block* b) {
  std::lock_guard<std::mutex> lock(mu_);
  b->in_use = false;
  if (b->streams.empty()) {
    stats_.active_requests.decrease(1);
    stats_.active_bytes.decrease(int64_t(b->size));
    free_[b->size].push_back(b);
    return;
  }
  for (auto& [device, stream] : b->streams) {
    try {
      b->events.push_back(backend_->record_event(device, stream));
    } catch (...) {
      // No event could be recorded (the driver is shutting down): nothing is left to wait
      // for that the runtime could still run.
    }
  }
  b->streams.clear();
  pending_.push_back(b);
}

HostBlockCache::Block* HostBlockCache::find_locked(const void* ptr) {
  auto addr = reinterpret_cast<uintptr_t>(ptr);
  auto it = blocks_.upper_bound(addr);
  if (it == blocks_.begin()) return nullptr;
  Block* b = std::prev(it)->second;
  return addr < reinterpret_cast<uintptr_t>(b->ptr) + b->size ? b : nullptr;
}

bool HostBlockCache::record_stream(const void* ptr, int device, void* stream) {
  std::lock_guard<std::mutex> lock(mu_);
  Block* b = find_locked(ptr);
  if (!b) return false;
  std::pair<int, void*> key(device, stream);
  if (b->in_use && std::find(b->streams.begin(), b->streams.end(), key) == b->streams.end()) {
    b->streams.push_back(key);
  }
  return true;
}

bool HostBlockCache::owns(const void* ptr) {
  std::lock_guard<std::mutex> lock(mu_);
  return find_locked(ptr) != nullptr;
}

void HostBlockCache::process_events() {
  std::lock_guard<std::mutex> lock(mu_);
  process_events_locked();
}

void HostBlockCache::process_events_locked() {
  if (pending_.empty()) return;
  auto done = [&](Block* b) {
    while (!b->events.empty()) {
      bool ready = true;
      try {
        ready = backend_->query_event(b->events.back());
      } catch (...) {
        ready = true;  // a failed query can't become a success later; don't leak the block
      }
      if (!ready) return false;
      backend_->release_event(b->events.back());
      b->events.pop_back();
    }
    return true;
  };
  auto keep = std::partition(pending_.begin(), pending_.end(), [&](Block* b) { return !done(b); });
  for (auto it = keep; it != pending_.end(); ++it) {
    Block* b = *it;
    stats_.active_requests.decrease(1);
    stats_.active_bytes.decrease(int64_t(b->size));
    free_[b->size].push_back(b);
  }
  pending_.erase(keep, pending_.end());
}

void HostBlockCache::release_locked(Block* b) {
  auto t0 = std::chrono::steady_clock::now();
  backend_->free(b->ptr);
  stats_.host_free_time.add(micros_since(t0));
  ++stats_.num_host_free;
  stats_.allocations.decrease(1);
  stats_.allocated_bytes.decrease(int64_t(b->size));
  blocks_.erase(reinterpret_cast<uintptr_t>(b->ptr));
  delete b;
}

void HostBlockCache::empty_cache() {
  std::lock_guard<std::mutex> lock(mu_);
  process_events_locked();
  for (auto& [size, list] : free_) {
    for (Block* b : list) release_locked(b);
  }
  free_.clear();
}

HostMemoryStats HostBlockCache::stats() {
  std::lock_guard<std::mutex> lock(mu_);
  return stats_;
}

void HostBlockCache::reset_peak_stats() {
  std::lock_guard<std::mutex> lock(mu_);
  for (Stat* s : {&stats_.allocations, &stats_.allocated_bytes, &stats_.active_requests,
                  &stats_.active_bytes}) {
    s->reset_peak();
  }
  for (HostDurationStat* d : {&stats_.host_alloc_time, &stats_.host_free_time}) {
    d->max = d->min = 0;
  }
}

void HostBlockCache::reset_accumulated_stats() {
  std::lock_guard<std::mutex> lock(mu_);
  for (Stat* s : {&stats_.allocations, &stats_.allocated_bytes, &stats_.active_requests,
                  &stats_.active_bytes}) {
    s->reset_accumulated();
  }
  for (HostDurationStat* d : {&stats_.host_alloc_time, &stats_.host_free_time}) {
    d->total = d->count = 0;
  }
  stats_.num_host_alloc = stats_.num_host_free = 0;
}

size_t HostBlockCache::cached_blocks() {
  std::lock_guard<std::mutex> lock(mu_);
  size_t n = 0;
  for (auto& [size, list] : free_) n += list.size();
  return n;
}

size_t HostBlockCache::pending_blocks() {
  std::lock_guard<std::mutex> lock(mu_);
  return pending_.size();
}

}  // namespace cl
