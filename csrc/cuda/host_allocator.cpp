// The pinned host allocator: HostBlockCache (core/host_block_cache.h) over cudaHostAlloc
// and pooled events, plus pin_memory.
#include "cuda/host_allocator.h"

#include <cuda_runtime_api.h>

#include "core/error.h"
#include "core/parallel.h"
#include "core/storage.h"
#include "cuda/cuda_check.h"
#include "cuda/events.h"
#include "cuda/staged_copy.h"
#include "ops/ops.h"

namespace cl::cuda {

namespace {

class CudaPinnedBackend final : public PinnedBackend {
 public:
  void* allocate(size_t n) override {
    lazy_init();
    void* p = nullptr;
    CL_CUDA_CHECK(cudaHostAlloc(&p, n, cudaHostAllocDefault));  // OutOfMemoryError when full
    return p;
  }
  void free(void* p) override { CL_CUDA_CHECK_NOTHROW(cudaFreeHost(p)); }
  void* record_event(int device, void* stream) override {
    auto* e = new Event;
    try {
      e->record(Stream(device, stream));
    } catch (...) {
      delete e;
      throw;
    }
    return e;
  }
  bool query_event(void* e) override { return static_cast<Event*>(e)->query(); }
  void release_event(void* e) override { delete static_cast<Event*>(e); }
};

// Never destroyed: pinned tensors may be freed while the process exits, after statics.
HostBlockCache& cache() {
  static auto* backend = new CudaPinnedBackend;
  static auto* c = new HostBlockCache(backend);
  return *c;
}

class CachingHostAllocator final : public Allocator {
 public:
  DataPtr allocate(size_t nbytes) override {
    lazy_init();  // torch's errors ("Found no NVIDIA driver ...") even for 0 bytes
    return cache().allocate(nbytes);
  }
};

// Bytes of storage that `t`'s sizes and strides reach from its offset (torch's
// computeStorageNbytes), so a pinned copy keeps the layout of the original.
size_t storage_extent(const Tensor& t) {
  size_t last = 0;
  for (size_t i = 0; i < t->sizes.size(); ++i) {
    if (t->sizes[i] == 0) return 0;
    last += size_t(t->strides[i]) * size_t(t->sizes[i] - 1);
  }
  return (last + 1) * t->element_size();
}

}  // namespace

Allocator* host_allocator() {
  static CachingHostAllocator alloc;
  return &alloc;
}

HostMemoryStats host_memory_stats() { return cache().stats(); }
void host_reset_peak_stats() { cache().reset_peak_stats(); }
void host_reset_accumulated_stats() { cache().reset_accumulated_stats(); }

void host_empty_cache() {
  cache().empty_cache();
  release_staging_buffers();
}

bool host_record_stream(const void* ptr, StreamHandle stream, int device) {
  return cache().record_stream(ptr, device, stream);
}

bool is_pinned_ptr(const void* ptr) {
  if (cache().owns(ptr)) return true;
  cudaPointerAttributes attr{};
  if (cudaPointerGetAttributes(&attr, ptr) != cudaSuccess) {
    cudaGetLastError();
    return false;
  }
  return attr.type == cudaMemoryTypeHost;
}

Tensor pin_memory(const Tensor& t) {
  CL_CHECK(t->device().is_cpu(), "only dense CPU tensors can be pinned");
  lazy_init();
  size_t nbytes = storage_extent(t);
  auto storage = std::make_shared<StorageImpl>(host_allocator()->allocate(nbytes), nbytes);
  storage->pinned = true;
  auto out = std::make_shared<TensorImpl>(std::move(storage), t->sizes, t->strides, 0, t->dtype);
  if (t->is_contiguous()) {
    // The common case (a batch, a weight): one parallel copy of the bytes.
    parallel_memcpy(out->data(), t->data(), size_t(t->numel()) * t->element_size());
  } else {
    copy_(out, t);
  }
  return out;
}

}  // namespace cl::cuda
