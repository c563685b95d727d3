// Kernel launches through the driver's cuLaunchKernel (Note [Driver launches]).
#pragma once

#include <cuda_runtime_api.h>

namespace cl::cuda {

// The handle cuLaunchKernel takes for a __global__ function (its address in this module), or
// nullptr where there is none (then launch_kernel uses the runtime). Resolved once per kernel.
const void* kernel_handle(const void* func);

// Launches `func` with its parameters' addresses in `args`, on `stream` of the current
// device. A launch that fails raises AcceleratorError with the runtime's error; errors of the
// kernel's execution surface later, as they do for any launch (check_last_launch).
void launch_kernel(const void* func, const void* handle, dim3 grid, dim3 block, size_t smem,
                   cudaStream_t stream, void** args);

}  // namespace cl::cuda
