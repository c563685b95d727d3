// CUDA loop of copies with dtype conversion (and fill, with a scalar input): all 100
// (from, to) pairs (see binary.cu).
#include "kernels/deferred.cuh"
#include "kernels/gpu_launch.cuh"

namespace cl::cuda {

void cast(const ElementwiseIter& it) {
  DeviceGuard g(it.device.index);
  if (defer_cast(it)) return;  // Note [Deferred launches]
  dispatch_cast(it, gpu::GpuLaunch{});
}

}  // namespace cl::cuda
