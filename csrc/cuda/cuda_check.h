// Turning CUDA runtime errors into cl::AcceleratorError with torch's wording.
#pragma once

#include <cuda_runtime_api.h>

#include <string>

#include "core/error.h"

namespace cl::cuda {

[[noreturn]] void throw_cuda_error(cudaError_t err, const char* file, int line);
// CUDA_LAUNCH_BLOCKING=1: every launch synchronises, so errors surface where they happen.
bool launch_blocking();
void check_last_launch(const char* file, int line);

}  // namespace cl::cuda

#define CL_CUDA_CHECK(expr)                                                                \
  do {                                                                                     \
    cudaError_t cl_err_ = (expr);                                                          \
    if (cl_err_ != cudaSuccess) ::cl::cuda::throw_cuda_error(cl_err_, __FILE__, __LINE__); \
  } while (0)
#define CL_CUDA_KERNEL_LAUNCH_CHECK() ::cl::cuda::check_last_launch(__FILE__, __LINE__)
// For destructors: report nothing, never throw.
#define CL_CUDA_CHECK_NOTHROW(expr) (void)(expr)
