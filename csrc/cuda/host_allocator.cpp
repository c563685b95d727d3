// The pinned host allocator: HostBlockCache (core/host_block_cache.h) over cudaHostAlloc
// and pooled events, plus pin_memory.
#include "cuda/host_allocator.h"

#include <cuda_runtime_api.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <mutex>
#include <unordered_map>

#include "core/alloc_config.h"
#include "core/error.h"
#include "core/parallel.h"
#include "core/storage.h"
#include "cuda/cuda_check.h"
#include "cuda/events.h"
#include "cuda/staged_copy.h"
#include "ops/ops.h"

namespace cl::cuda {

namespace {

// Note [Registering pinned memory]
// By default a block is cudaHostAlloc'ed (torch's default too): the driver maps, zeroes and
// pins its pages on one thread. With pinned_use_cuda_host_register:True in
// CUDALITE_ALLOC_CONF (torch's key, with pinned_num_register_threads) the pages are mapped
// with mmap, faulted in by that many threads at once, and then pinned with cudaHostRegister,
// which is faster for large blocks; cudaHostUnregister and munmap return them.
//
// Note [Pinning by copying]
// pin_memory() of a tensor that no cached block serves pays for new pinned memory and a copy.
// cudaHostAlloc maps, zeroes and pins every page on one thread, and the copy then writes the
// pages again. For blocks of kCopyPinMin bytes and more the memory is mapped with mmap
// instead, the tensor's bytes are copied into it by parallel_memcpy's threads (the copy is
// what faults the pages in, several threads at once, and nothing is zeroed twice), and the
// pages are pinned with cudaHostRegister. When the driver refuses to register host memory,
// the block comes from cudaHostAlloc and is copied, as before.
constexpr size_t kCopyPinMin = size_t(4) << 20;

class CudaPinnedBackend final : public PinnedBackend {
 public:
  void* allocate(size_t n) override {
    lazy_init();
    const AllocatorSettings st = global_allocator_settings();
    if (st.pinned_use_cuda_host_register && n > 0) {
      return allocate_registered(n, st.pinned_num_register_threads);
    }
    void* p = nullptr;
    CL_CUDA_CHECK(cudaHostAlloc(&p, n, cudaHostAllocDefault));  // OutOfMemoryError when full
    return p;
  }
  // Note [Pinning by copying].
  void* allocate_copy(size_t n, const void* src, size_t len) override {
    lazy_init();
    if (n < kCopyPinMin || global_allocator_settings().pinned_use_cuda_host_register) {
      return PinnedBackend::allocate_copy(n, src, len);
    }
    void* p = mmap(nullptr, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) return PinnedBackend::allocate_copy(n, src, len);
    parallel_memcpy(p, src, len);
    if (cudaHostRegister(p, n, cudaHostRegisterDefault) != cudaSuccess) {
      cudaGetLastError();  // forgive: cudaHostAlloc then
      munmap(p, n);
      return PinnedBackend::allocate_copy(n, src, len);
    }
    std::lock_guard<std::mutex> lock(mu_);
    registered_[p] = n;
    return p;
  }
  void free(void* p) override {
    size_t registered = 0;
    {
      std::lock_guard<std::mutex> lock(mu_);
      auto it = registered_.find(p);
      if (it != registered_.end()) {
        registered = it->second;
        registered_.erase(it);
      }
    }
    if (registered) {
      CL_CUDA_CHECK_NOTHROW(cudaHostUnregister(p));
      munmap(p, registered);
    } else {
      CL_CUDA_CHECK_NOTHROW(cudaFreeHost(p));
    }
  }
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

 private:
  void* allocate_registered(size_t n, size_t threads) {
    void* p = mmap(nullptr, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) {
      throw OutOfMemoryError(detail::str("could not map ", format_size(n), " of host memory"));
    }
    // Fault the pages in on several threads (one write per page), then pin them.
    const size_t page = size_t(sysconf(_SC_PAGESIZE));
    const size_t pages = (n + page - 1) / page;
    const int parts = int(std::clamp<size_t>(threads, 1, std::max<size_t>(pages, 1)));
    const size_t share = (pages + size_t(parts) - 1) / size_t(parts);
    auto touch = [&](int i) {
      auto* c = static_cast<volatile char*>(p);
      for (size_t k = size_t(i) * share; k < std::min(pages, size_t(i + 1) * share); ++k) {
        c[k * page] = 0;
      }
    };
    if (parts > 1) {
      parallel_run(parts, touch);
    } else {
      touch(0);
    }
    cudaError_t err = cudaHostRegister(p, n, cudaHostRegisterDefault);
    if (err != cudaSuccess) {
      munmap(p, n);
      CL_CUDA_CHECK(err);  // OutOfMemoryError when nothing more can be pinned
    }
    std::lock_guard<std::mutex> lock(mu_);
    registered_[p] = n;
    return p;
  }

  std::mutex mu_;
  std::unordered_map<void*, size_t> registered_;  // blocks from allocate_registered
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
  // The common case (a batch, a weight): the bytes copied while the block is pinned (Note
  // [Pinning by copying]).
  const bool contiguous = t->is_contiguous();
  DataPtr data = contiguous ? cache().allocate_copy(nbytes, t->data(), nbytes)
                            : host_allocator()->allocate(nbytes);
  auto storage = std::make_shared<StorageImpl>(std::move(data), nbytes);
  storage->pinned = true;
  auto out = std::make_shared<TensorImpl>(std::move(storage), t->sizes, t->strides, 0, t->dtype);
  if (!contiguous) copy_(out, t);
  return out;
}

}  // namespace cl::cuda
