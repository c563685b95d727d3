// The CUDA loop of the optimizers' fused multiply-add (`_C._fma`: a * b + c rounded once,
// float and double), outside the elementwise parts (ops/op_table.h, dispatch_fma).
#include "kernels/deferred.cuh"
#include "kernels/gpu_launch.cuh"
#include "ops/op_table.h"

namespace cl::cuda {

// Small ones are deferred like the table's ops (Note [Deferred launches]): the optimizers
// update every parameter with it, and a tiny model's step is launch-bound.
void fma(const ElementwiseIter& it) {
  DeviceGuard g(it.device.index);
  if (defer_fma(it)) return;
  dispatch_fma(it, gpu::GpuLaunch{});
}

}  // namespace cl::cuda
