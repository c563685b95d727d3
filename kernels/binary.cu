// CUDA loops of the binary elementwise ops: the shared op table (ops/op_table.h) with the
// CUDA loop template (kernels/loops.cuh). Split from unary.cu / cast.cu so that the
// template-heavy files compile in parallel.
#include "kernels/deferred.cuh"
#include "kernels/gpu_launch.cuh"

namespace cl::cuda {

void binary(const ElementwiseIter& it, BinaryOp op) {
  DeviceGuard g(it.device.index);
  if (defer_binary(it, op)) return;  // Note [Deferred launches]
  dispatch_binary(it, op, gpu::GpuLaunch{});
}

}  // namespace cl::cuda
