// Internal to csrc/cuda: the allocator behind cuda::device_allocator() when caching is off.
#pragma once

#include "core/allocator.h"

namespace cl::cuda {

// Plain cudaMalloc / cudaFree per allocation (CUDALITE_NO_CUDA_MEMORY_CACHING=1, for memory
// checkers such as compute-sanitizer that must see every allocation).
Allocator* uncached_device_allocator(int device);
// Whether CUDALITE_NO_CUDA_MEMORY_CACHING=1 turned caching off (read once).
bool caching_disabled();

}  // namespace cl::cuda
