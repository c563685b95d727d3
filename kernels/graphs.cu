// The prologue of a CUDA graph replay that draws random numbers: writes the seed and the base
// Philox offset the captured kernels read (Note [Random numbers in CUDA graphs] in
// csrc/ops/random.cpp). One thread, 16 bytes.
#include <cuda_runtime.h>

#include <cstdint>

#include "cuda/cuda_check.h"
#include "cuda/graphs.h"

namespace cl::cuda {

namespace {
__global__ void write_philox_state_kernel(uint64_t* dst, uint64_t seed, uint64_t offset) {
  dst[0] = seed;
  dst[1] = offset;
}
}  // namespace

void write_philox_state(uint64_t* dst, uint64_t seed, uint64_t offset, void* stream) {
  write_philox_state_kernel<<<1, 1, 0, static_cast<cudaStream_t>(stream)>>>(dst, seed, offset);
  CL_CUDA_KERNEL_LAUNCH_CHECK();
}

}  // namespace cl::cuda
