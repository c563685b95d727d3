// gelu and its backward on CUDA: one thread per element (grid-stride) over contiguous
// operands, the formulas of ops/gelu_math.h in float32 (float64 for float64).
// Bytes moved: forward 2 * numel * itemsize, backward 3 * numel * itemsize.
#include <cuda_runtime.h>

#include "core/cuda_api.h"
#include "cuda/cuda_check.h"
#include "kernels/nn_rows.cuh"
#include "ops/gelu_math.h"
#include "ops/nn_ops.h"

namespace cl::cuda {
namespace {

using namespace ::cl::gpu::rows;

constexpr int kGeluBlock = 256;

template <class T, bool kTanh>
__global__ void gelu_kernel(const T* __restrict__ x, T* __restrict__ y, int64_t n) {
  using A = acc_t<T>;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += int64_t(gridDim.x) * blockDim.x) {
    const A v = load<A>(x, i);
    y[i] = store<T>(kTanh ? gelu_tanh<A>(v) : gelu_erf<A>(v));
  }
}

template <class T, bool kTanh>
__global__ void gelu_backward_kernel(const T* __restrict__ g, const T* __restrict__ x,
                                     T* __restrict__ gx, int64_t n) {
  using A = acc_t<T>;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += int64_t(gridDim.x) * blockDim.x) {
    const A v = load<A>(x, i);
    gx[i] = store<T>(load<A>(g, i) * (kTanh ? gelu_tanh_grad<A>(v) : gelu_erf_grad<A>(v)));
  }
}

unsigned grid_for(int64_t n) {
  return unsigned(
      std::max<int64_t>(1, std::min<int64_t>((n + kGeluBlock - 1) / kGeluBlock, int64_t(1) << 20)));
}

}  // namespace

void gelu(const Tensor& x, bool tanh, const Tensor& y) {
  const int64_t n = x->numel();
  cudaStream_t s = static_cast<cudaStream_t>(current_stream(x->device().index));
  CL_DISPATCH_FLOATING(x->dtype, "GeluCUDAKernelImpl", [&] {
    const auto* xp = reinterpret_cast<const scalar_t*>(x->data());
    auto* yp = reinterpret_cast<scalar_t*>(y->data());
    if (tanh) {
      gelu_kernel<scalar_t, true><<<grid_for(n), kGeluBlock, 0, s>>>(xp, yp, n);
    } else {
      gelu_kernel<scalar_t, false><<<grid_for(n), kGeluBlock, 0, s>>>(xp, yp, n);
    }
    CL_CUDA_KERNEL_LAUNCH_CHECK();
  });
}

void gelu_backward(const Tensor& g, const Tensor& x, bool tanh, const Tensor& gx) {
  const int64_t n = x->numel();
  cudaStream_t s = static_cast<cudaStream_t>(current_stream(x->device().index));
  CL_DISPATCH_FLOATING(x->dtype, "GeluBackwardCUDAKernelImpl", [&] {
    const auto* gp = reinterpret_cast<const scalar_t*>(g->data());
    const auto* xp = reinterpret_cast<const scalar_t*>(x->data());
    auto* op = reinterpret_cast<scalar_t*>(gx->data());
    if (tanh) {
      gelu_backward_kernel<scalar_t, true><<<grid_for(n), kGeluBlock, 0, s>>>(gp, xp, op, n);
    } else {
      gelu_backward_kernel<scalar_t, false><<<grid_for(n), kGeluBlock, 0, s>>>(gp, xp, op, n);
    }
    CL_CUDA_KERNEL_LAUNCH_CHECK();
  });
}

}  // namespace cl::cuda
