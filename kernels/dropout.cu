// Dropout drawn as torch's fused CUDA dropout (native_dropout): thread `idx` starts curand's
// Philox stream `idx` at the generator's offset, keeps an element when its curand_uniform4
// value is below `keep` (1 - p), and writes x * kept * (1 / keep) and the kept mask.
//  - vec > 1 (a dense input whose address and size allow it): thread idx owns `vec`
//    consecutive elements in memory from idx * vec, stepping by grid * 256 * vec; each step
//    takes ceil(vec / 4) draws (vec 2 uses the first two values of each draw).
//  - vec 1: the grid-stride layout of the other random kernels, four elements per draw spaced
//    one grid apart, in logical order.
// The grid and the offset increment come from the host (ops/random.cpp).
#include <cuda_runtime.h>
#include <curand_kernel.h>

#include "core/cuda_api.h"
#include "cuda/cuda_check.h"
#include "kernels/loops.cuh"
#include "ops/kernels.h"
#include "ops/philox_args.h"

namespace cl::cuda {
namespace {

constexpr int kBlock = 256;

// torch's accumulate type: float for the 16-bit floats and float32, double for float64.
template <class T>
using dropout_acc_t = std::conditional_t<std::is_same_v<T, double>, double, float>;

template <class T, class Acc, int VEC>
__global__ void __launch_bounds__(kBlock, 4)
    dropout_vec_kernel(const T* __restrict__ a, T* __restrict__ b, bool* __restrict__ mask,
                       int64_t n, Acc keep, PhiloxArgs philox) {
  const int64_t idx = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  curandStatePhilox4_32_10_t state;
  uint64_t seed, offset;
  philox_unpack(philox, seed, offset);
  curand_init(seed, idx, offset, &state);
  const Acc scale = Acc(1.0 / keep);
  constexpr int kDraws = (VEC + 3) / 4;
  const int64_t step = int64_t(gridDim.x) * blockDim.x * VEC;
  for (int64_t li = idx * VEC; li < n; li += step) {
    float4 rand[kDraws];
#pragma unroll
    for (int d = 0; d < kDraws; ++d) rand[d] = curand_uniform4(&state);
#pragma unroll
    for (int e = 0; e < VEC; ++e) {
      const float kept = (&rand[e / 4].x)[e % 4] < keep ? 1.0f : 0.0f;
      b[li + e] = convert<T>(a[li + e] * kept * scale);
      mask[li + e] = kept != 0.0f;
    }
  }
}

template <class T, class Acc>
__global__ void __launch_bounds__(kBlock, 4)
    dropout_kernel(const T* __restrict__ a, T* __restrict__ b, bool* __restrict__ mask, int64_t n,
                   Acc keep, PhiloxArgs philox) {
  const int64_t idx = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  curandStatePhilox4_32_10_t state;
  uint64_t seed, offset;
  philox_unpack(philox, seed, offset);
  curand_init(seed, idx, offset, &state);
  const Acc scale = Acc(1.0 / keep);
  const int64_t stride = int64_t(gridDim.x) * blockDim.x;
  const int64_t rounded = ((n - 1) / (stride * 4) + 1) * stride * 4;
  for (int64_t li = idx; li < rounded; li += stride * 4) {
    const float4 rand = curand_uniform4(&state);
#pragma unroll
    for (int e = 0; e < 4; ++e) {
      const int64_t i = li + stride * e;
      if (i < n) {
        const float kept = (&rand.x)[e] < keep ? 1.0f : 0.0f;
        b[i] = convert<T>(a[i] * kept * scale);
        mask[i] = kept != 0.0f;
      }
    }
  }
}

template <class T>
void dropout_typed(const Tensor& x, const Tensor& out, const Tensor& mask, double keep, int vec,
                   PhiloxArgs philox, unsigned grid) {
  using Acc = dropout_acc_t<T>;
  const T* a = reinterpret_cast<const T*>(x->data());
  T* b = reinterpret_cast<T*>(out->data());
  bool* m = reinterpret_cast<bool*>(mask->data());
  const int64_t n = x->numel();
  const Acc k = Acc(keep);
  cudaStream_t s = static_cast<cudaStream_t>(current_stream(x->device().index));
  switch (vec) {
    case 8:
      dropout_vec_kernel<T, Acc, 8><<<grid, kBlock, 0, s>>>(a, b, m, n, k, philox);
      break;
    case 4:
      dropout_vec_kernel<T, Acc, 4><<<grid, kBlock, 0, s>>>(a, b, m, n, k, philox);
      break;
    case 2:
      dropout_vec_kernel<T, Acc, 2><<<grid, kBlock, 0, s>>>(a, b, m, n, k, philox);
      break;
    default:
      dropout_kernel<T, Acc><<<grid, kBlock, 0, s>>>(a, b, m, n, k, philox);
      break;
  }
  CL_CUDA_KERNEL_LAUNCH_CHECK();
}

}  // namespace

void torch_dropout(const Tensor& x, const Tensor& out, const Tensor& mask, double keep, int vec,
                   PhiloxArgs philox, unsigned grid) {
  switch (x->dtype) {
    case ScalarType::Float32:
      return dropout_typed<float>(x, out, mask, keep, vec, philox, grid);
    case ScalarType::Float64:
      return dropout_typed<double>(x, out, mask, keep, vec, philox, grid);
    case ScalarType::Float16:
      return dropout_typed<Half>(x, out, mask, keep, vec, philox, grid);
    case ScalarType::BFloat16:
      return dropout_typed<BFloat16>(x, out, mask, keep, vec, philox, grid);
    default:
      throw NotImplementedError(std::string("\"fused_dropout\" not implemented for '") +
                                dtype_short_name(x->dtype) + "'");
  }
}

}  // namespace cl::cuda
