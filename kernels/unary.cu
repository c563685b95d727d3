// CUDA loops of the unary elementwise ops, `where` and `fma` (see binary.cu).
#include "kernels/deferred.cuh"
#include "kernels/gpu_launch.cuh"

namespace cl::cuda {

void unary(const ElementwiseIter& it, UnaryOp op) {
  DeviceGuard g(it.device.index);
  if (defer_unary(it, op)) return;  // Note [Deferred launches]
  dispatch_unary(it, op, gpu::GpuLaunch{});
}

void where(const ElementwiseIter& it) {
  DeviceGuard g(it.device.index);
  if (defer_where(it)) return;  // Note [Deferred launches]
  dispatch_where(it, gpu::GpuLaunch{});
}

// Not deferred: it has no entry in the deferred batch's function table (a launch flushes
// the batch first, Note [Deferred launches]).
void fma(const ElementwiseIter& it) {
  DeviceGuard g(it.device.index);
  dispatch_fma(it, gpu::GpuLaunch{});
}

}  // namespace cl::cuda
