// The CUDA loop of the optimizers' fused multiply-add (`_C._fma`: a * b + c rounded once,
// float and double), outside the elementwise parts (ops/op_table.h, dispatch_fma).
#include "kernels/deferred.cuh"
#include "kernels/gpu_launch.cuh"
#include "ops/op_table.h"

namespace cl::cuda {

// Not deferred: it has no entry in the deferred batch's function table (a launch flushes
// the batch first, Note [Deferred launches]).
void fma(const ElementwiseIter& it) {
  DeviceGuard g(it.device.index);
  dispatch_fma(it, gpu::GpuLaunch{});
}

}  // namespace cl::cuda
