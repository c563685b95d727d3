// The plain cudaMalloc allocator: what CUDALITE_NO_CUDA_MEMORY_CACHING=1 selects; the
// caching allocator (device_allocator.cpp) serves device memory otherwise. Pinned host
// memory has its own caching allocator (host_allocator.cpp).
#include <cuda_runtime_api.h>

#include <memory>
#include <mutex>
#include <vector>

#include "core/cuda_api.h"
#include "cuda/cuda_check.h"
#include "cuda/device_allocator.h"

namespace cl::cuda {

namespace {

void free_device(void* p) { CL_CUDA_CHECK_NOTHROW(cudaFree(p)); }

class DeviceAllocator final : public Allocator {
 public:
  explicit DeviceAllocator(int device) : device_(device) {}
  DataPtr allocate(size_t nbytes) override {
    Device dev(DeviceType::CUDA, device_);
    if (nbytes == 0) return DataPtr(nullptr, nullptr, nullptr, dev);
    DeviceGuard g(device_);
    void* p = nullptr;
    cudaError_t err = cudaMalloc(&p, nbytes);
    if (err != cudaSuccess) throw_cuda_error(err, __FILE__, __LINE__);
    return DataPtr(p, p, &free_device, dev);
  }

 private:
  int device_;
};

}  // namespace

Allocator* uncached_device_allocator(int device) {
  static std::mutex mu;
  static std::vector<std::unique_ptr<DeviceAllocator>> allocs;
  check_device_index(device);
  std::lock_guard<std::mutex> lock(mu);
  if (allocs.empty()) allocs.resize(size_t(device_count()));
  if (!allocs[device]) allocs[device] = std::make_unique<DeviceAllocator>(device);
  return allocs[device].get();
}

}  // namespace cl::cuda
