// gelu and its backward on CUDA: the elementwise loops of kernels/loops.cuh (16-byte vectors
// for dense operands, the rows/tiled/strided paths otherwise) with the functors of
// ops/gelu_math.h, in float32 for float16/bfloat16 (float64 for float64).
// Bytes moved: forward 2 * numel * itemsize, backward 3 * numel * itemsize.
#include "kernels/loops.cuh"
#include "ops/gelu_math.h"
#include "ops/nn_ops.h"

namespace cl::cuda {

void gelu(const ElementwiseIter& it, bool tanh) {
  CL_DISPATCH_FLOATING(it.in_dtype, "GeluCUDAKernelImpl", [&] {
    if (tanh) {
      gpu::gpu_kernel<scalar_t, scalar_t, 1>(it, GeluFn<true>());
    } else {
      gpu::gpu_kernel<scalar_t, scalar_t, 1>(it, GeluFn<false>());
    }
  });
}

void gelu_backward(const ElementwiseIter& it, bool tanh) {
  CL_DISPATCH_FLOATING(it.in_dtype, "GeluBackwardCUDAKernelImpl", [&] {
    if (tanh) {
      gpu::gpu_kernel<scalar_t, scalar_t, 2>(it, GeluBackwardFn<true>());
    } else {
      gpu::gpu_kernel<scalar_t, scalar_t, 2>(it, GeluBackwardFn<false>());
    }
  });
}

}  // namespace cl::cuda
