// What a CUDA random kernel needs to place its Philox streams: the generator's seed and
// offset, either as values (eager launches) or, inside a CUDA graph capture, as pointers to
// device memory that every replay fills before it launches (Note [Random numbers in CUDA
// graphs] in ops/random.cpp). Plain data, shared by the host code and kernels/*.cu.
#pragma once

#include <cstdint>

namespace cl {

struct PhiloxArgs {
  uint64_t seed = 0;
  uint64_t offset = 0;  // captured: the kernel's offset from the replay's base offset
  const uint64_t* seed_ptr = nullptr;    // captured: the replay's seed
  const uint64_t* offset_ptr = nullptr;  // captured: the replay's base offset
};

#if defined(__CUDACC__)
// torch's at::cuda::philox::unpack.
__device__ __forceinline__ void philox_unpack(const PhiloxArgs& a, uint64_t& seed,
                                              uint64_t& offset) {
  if (a.seed_ptr) {
    seed = *a.seed_ptr;
    offset = *a.offset_ptr + a.offset;
  } else {
    seed = a.seed;
    offset = a.offset;
  }
}
#endif

}  // namespace cl
