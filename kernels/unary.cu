// CUDA loops of the unary elementwise ops and `where` (see binary.cu).
#include "kernels/gpu_launch.cuh"

namespace cl::cuda {

void unary(const ElementwiseIter& it, UnaryOp op) {
  DeviceGuard g(it.device.index);
  dispatch_unary(it, op, gpu::GpuLaunch{});
}

void where(const ElementwiseIter& it) {
  DeviceGuard g(it.device.index);
  dispatch_where(it, gpu::GpuLaunch{});
}

}  // namespace cl::cuda
