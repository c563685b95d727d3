// The CUDA loops of the elementwise ops: the shared op table (ops/op_table.h) with the
// CUDA loop template (kernels/loops.cuh).
#include "kernels/loops.cuh"
#include "ops/kernels.h"
#include "ops/op_table.h"

namespace cl::cuda {
namespace {
struct GpuLaunch {
  template <class out_t, class in_t, int N, class F>
  void run(const ElementwiseIter& it, F f) const {
    gpu::gpu_kernel<out_t, in_t, N>(it, f);
  }
};
}  // namespace

void binary(const ElementwiseIter& it, BinaryOp op) {
  DeviceGuard g(it.device.index);
  dispatch_binary(it, op, GpuLaunch{});
}
void unary(const ElementwiseIter& it, UnaryOp op) {
  DeviceGuard g(it.device.index);
  dispatch_unary(it, op, GpuLaunch{});
}
void where(const ElementwiseIter& it) {
  DeviceGuard g(it.device.index);
  dispatch_where(it, GpuLaunch{});
}
void cast(const ElementwiseIter& it) {
  DeviceGuard g(it.device.index);
  dispatch_cast(it, GpuLaunch{});
}

}  // namespace cl::cuda
