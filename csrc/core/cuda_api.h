// What the core needs from the CUDA runtime, behind a header with no CUDA types, so that the
// rest of the core compiles the same with or without the toolkit. Implemented in
// csrc/cuda/ (CUDA builds) or csrc/cuda_stub/ (CPU-only builds, which raise torch's
// "not compiled with CUDA" errors).
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "core/allocator.h"

namespace cl {
class CachingAllocator;
}

namespace cl::cuda {

bool is_compiled();
std::string compiled_archs();    // "90-real;75-virtual", "" for CPU-only builds
std::string compiled_version();  // toolkit version, "" for CPU-only builds
// Number of visible GPUs. Never throws and never initialises CUDA in this process.
int device_count() noexcept;
// Initialises CUDA (once, thread-safe); throws torch's errors when no GPU is usable.
void lazy_init();
bool is_initialized();
int current_device();
void set_device(int device);
void check_device_index(int device);  // AcceleratorError "invalid device ordinal" when bad

Allocator* device_allocator(int device);
Allocator* host_allocator();  // page-locked host memory

using StreamHandle = void*;  // cudaStream_t
StreamHandle current_stream(int device);

// The caching allocator behind device_allocator(device), created on first use; nullptr when
// CUDALITE_NO_CUDA_MEMORY_CACHING=1 turned caching off. Initialises CUDA.
CachingAllocator* caching_allocator(int device);
// The caching allocators created so far, indexed by device (nullptr where none).
std::vector<CachingAllocator*> caching_allocators();
// Tensor.record_stream: memory of a device DataPtr is also used on `stream`, so the caching
// allocator reuses it only after the work queued there when it is freed has finished.
void record_stream(const DataPtr& data, StreamHandle stream);

// Copies between host and device or device and device; `device` is the GPU involved.
// Blocking unless `non_blocking` (which is only asynchronous for page-locked host memory).
void memcpy_h2d(void* dst, const void* src, size_t n, int device, bool non_blocking);
void memcpy_d2h(void* dst, const void* src, size_t n, int device, bool non_blocking);
void memcpy_d2d(void* dst, int dst_device, const void* src, int src_device, size_t n);
void synchronize(int device);

// Sets the current device for a scope; restores the previous one on exit.
class DeviceGuard {
 public:
  explicit DeviceGuard(int device);
  ~DeviceGuard();
  DeviceGuard(const DeviceGuard&) = delete;
  DeviceGuard& operator=(const DeviceGuard&) = delete;

 private:
  int prev_;
  bool active_;
};

}  // namespace cl::cuda
