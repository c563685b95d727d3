// The CUDA elementwise ops: each entry point defers small ops (Note [Deferred launches]) or
// calls the part of the CUDA loops that holds the op (kernels/elementwise_part.cu).
#include "core/cuda_api.h"
#include "kernels/deferred.cuh"
#include "ops/elementwise_parts.h"
#include "ops/kernels.h"

namespace cl {
namespace gpu {
struct GpuLaunch;  // kernels/gpu_launch.cuh
}  // namespace gpu

namespace cuda {

void binary(const ElementwiseIter& it, BinaryOp op) {
  DeviceGuard g(it.device.index);
  if (defer_binary(it, op)) return;
  call_part<gpu::GpuLaunch>(part_of(op), [&](auto p) { p.binary(it, op); });
}

void unary(const ElementwiseIter& it, UnaryOp op) {
  DeviceGuard g(it.device.index);
  if (defer_unary(it, op)) return;
  call_part<gpu::GpuLaunch>(part_of(op), [&](auto p) { p.unary(it, op); });
}

void where(const ElementwiseIter& it) {
  DeviceGuard g(it.device.index);
  if (defer_where(it)) return;
  call_part<gpu::GpuLaunch>(part_of(it.in_dtype), [&](auto p) { p.where(it); });
}

// Copies with dtype conversion, and fill (a scalar input): all 100 (from, to) pairs.
void cast(const ElementwiseIter& it) {
  DeviceGuard g(it.device.index);
  if (defer_cast(it)) return;
  call_part<gpu::GpuLaunch>(part_of(it.in_dtype), [&](auto p) { p.cast(it); });
}

}  // namespace cuda
}  // namespace cl
