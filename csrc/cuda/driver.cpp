#include "cuda/driver.h"

#include <cuda_runtime_api.h>

namespace cl::cuda {

void* driver_entry_point(const char* name) {
#if CUDART_VERSION >= 12000
  void* fn = nullptr;
  cudaDriverEntryPointQueryResult q{};
#if CUDART_VERSION >= 12050
  cudaError_t err = cudaGetDriverEntryPointByVersion(name, &fn, 12000, cudaEnableDefault, &q);
#else
  cudaError_t err = cudaGetDriverEntryPoint(name, &fn, cudaEnableDefault, &q);
#endif
  if (err != cudaSuccess || q != cudaDriverEntryPointSuccess) {
    cudaGetLastError();  // leave no sticky error behind
    return nullptr;
  }
  return fn;
#else
  (void)name;
  return nullptr;
#endif
}

}  // namespace cl::cuda
