// Tensor.record_stream for device memory.
//
// Note [record_stream]
// torch's contract: after t.record_stream(s), the memory of t is not handed to anyone else
// until the work queued on s when t is freed has completed. With a caching allocator that
// is the allocator's job (it records events on the block's streams at free time and reuses
// the block once they complete); record_stream() below is the one entry point the core
// calls, and it forwards to the caching allocator when one owns the storage's memory.
//
// For memory that the caching allocator does not own (imported through DLPack or the CUDA
// array interface, or from the uncached allocator), this file keeps the contract itself: the
// first record_stream on a storage moves its DataPtr into a Deferred record and gives the
// storage a DataPtr whose deleter is deferred_delete. When the storage dies, an event is
// recorded on every stream noted for it and the original DataPtr (and so the real free) is
// held until those events complete. Held records are checked on every later free through
// this path, on record_stream, and on every synchronize (device, stream, event).
#include <cuda_runtime_api.h>

#include <algorithm>
#include <memory>
#include <mutex>
#include <vector>

#include "core/caching_allocator.h"
#include "core/cuda_api.h"
#include "core/error.h"
#include "core/storage.h"
#include "cuda/events.h"

namespace cl::cuda {

namespace {

struct Deferred {
  DataPtr original;
  std::vector<Stream> streams;
  std::vector<Event> events;
};

std::mutex g_mu;
std::vector<Deferred*> g_pending;  // freed, waiting for their events

bool completed(Deferred* d) {
  for (const Event& e : d->events) {
    try {
      if (!e.query()) return false;
    } catch (...) {
      // A query that fails won't succeed later (the context is gone): release the memory.
    }
  }
  return true;
}

void deferred_delete(void* ctx) {
  auto* d = static_cast<Deferred*>(ctx);
  for (const Stream& s : d->streams) {
    try {
      Event e;
      e.record(s);
      d->events.push_back(std::move(e));
    } catch (...) {
      // Nothing can be queued any more (driver shutting down): nothing is left to wait for.
    }
  }
  d->streams.clear();
  {
    std::lock_guard<std::mutex> lock(g_mu);
    g_pending.push_back(d);
  }
  process_record_stream_frees();
}

}  // namespace

void record_stream(StorageImpl* storage, StreamHandle stream) {
  CL_CHECK(storage->device().is_cuda(), "record_stream expects a CUDA tensor");
  int device = storage->device().index;
  process_record_stream_frees();
  if (!storage->data.get()) return;  // nothing allocated, nothing to protect
  // The caching allocator's blocks: its own record_stream (which also skips the stream the
  // block was allocated on, and reuses the block once the events complete).
  if (storage->data.deleter() == &CachingAllocator::free_ctx) {
    record_stream(storage->data, stream);
    return;
  }
  Deferred* d;
  if (storage->data.deleter() == &deferred_delete) {
    d = static_cast<Deferred*>(storage->data.context());
  } else {
    d = new Deferred;
    void* ptr = storage->data.get();
    Device dev = storage->data.device();
    d->original = std::move(storage->data);
    storage->data = DataPtr(ptr, d, &deferred_delete, dev);
  }
  Stream s(device, stream);
  if (std::find(d->streams.begin(), d->streams.end(), s) == d->streams.end()) {
    d->streams.push_back(s);
  }
}

size_t pending_record_stream_frees() {
  std::lock_guard<std::mutex> lock(g_mu);
  return g_pending.size();
}

void process_record_stream_frees() {
  std::vector<Deferred*> done;
  {
    std::lock_guard<std::mutex> lock(g_mu);
    if (g_pending.empty()) return;
    auto keep = std::partition(g_pending.begin(), g_pending.end(),
                               [](Deferred* d) { return !completed(d); });
    done.assign(keep, g_pending.end());
    g_pending.erase(keep, g_pending.end());
  }
  // Outside the lock: the real deleter may take the allocator's locks.
  for (Deferred* d : done) delete d;
}

}  // namespace cl::cuda
