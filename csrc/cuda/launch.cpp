// Note [Driver launches]
// A launch-bound op (a + b on one element) spends most of its time in the launch call. The
// runtime's cudaLaunchKernel (what <<<>>> compiles to) looks the kernel up and then calls the
// driver's cuLaunchKernel; calling the driver directly, with a kernel handle resolved once,
// saved about 0.2 us of about 3 us per launch on an H200 (benchmarks/cpp/launch_overhead.cu).
// The handle is a CUkernel (cudaGetKernel, CUDA 12), which is valid in every context, so one
// handle serves every device. The driver's entry point comes from the runtime (cudalite never
// links libcuda). When the driver call fails, the same launch goes through the runtime, so
// that the error is the runtime's, with its message; a launch the runtime refuses (a bad
// configuration, no device, a sticky error) raises it at once, as torch's
// C10_CUDA_KERNEL_LAUNCH_CHECK after every launch does.
#include "cuda/launch.h"

#include <cuda.h>

#include "cuda/cuda_check.h"
#include "cuda/driver.h"

namespace cl::cuda {

namespace {
using LaunchFn = CUresult (*)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned,
                              unsigned, unsigned, CUstream, void**, void**);

LaunchFn driver_launch() {
  static const LaunchFn fn = driver_function<LaunchFn>("cuLaunchKernel");
  return fn;
}
}  // namespace

const void* kernel_handle(const void* func) {
#if CUDART_VERSION >= 12000
  if (!driver_launch()) return nullptr;
  cudaKernel_t k = nullptr;
  if (cudaGetKernel(&k, func) != cudaSuccess) {
    cudaGetLastError();
    return nullptr;
  }
  return k;
#else
  (void)func;
  return nullptr;
#endif
}

// Whether the calling thread has made a runtime call that binds its device's context. A
// thread's first launch goes through the runtime, which binds it (the driver's launch would
// fail there with CUDA_ERROR_INVALID_CONTEXT, which memory checkers report); cudaSetDevice
// binds the context of a device switched to later.
static thread_local bool t_context_bound = false;

void launch_kernel(const void* func, const void* handle, dim3 grid, dim3 block, size_t smem,
                   cudaStream_t stream, void** args) {
  if (handle && t_context_bound) {
    CUfunction f = reinterpret_cast<CUfunction>(const_cast<void*>(handle));
    if (driver_launch()(f, grid.x, grid.y, grid.z, block.x, block.y, block.z, unsigned(smem),
                        reinterpret_cast<CUstream>(stream), args, nullptr) == CUDA_SUCCESS) {
      return;
    }
  }
  cudaError_t err = cudaLaunchKernel(func, grid, block, args, smem, stream);
  if (err != cudaSuccess) throw_cuda_error(err, __FILE__, __LINE__);  // clears it too
  t_context_bound = true;
}

}  // namespace cl::cuda
