// Random fills drawn as torch's CUDA kernels draw them (torch's distribution_nullary_kernel):
// a grid-stride loop of 256-thread blocks in which thread `idx` starts the Philox4x32-10
// stream (curand's) at subsequence idx and the generator's offset, and every step takes one
// curand4-sized draw (four 32-bit words: four floats, or two doubles / 64-bit integers) for
// `unroll` elements spaced one grid apart. The grid and the offset increment come from the
// host (ops/random.cpp, torch's calc_execution_policy), so the same seed gives torch's numbers
// on the same GPU model. The transforms are torch's: curand's uniform (0, 1] and Box-Muller
// normals, rand * range + from (with `to` folded back to `from`), rand * std + mean, integers
// modulo the range, value < p, and -log(rand) / lambda.
#include <cuda_runtime.h>
#include <curand_kernel.h>

#include <cmath>
#include <limits>

#include "core/cuda_api.h"
#include "cuda/cuda_check.h"
#include "kernels/loops.cuh"
#include "ops/kernels.h"

namespace cl::cuda {
namespace {

cudaStream_t stream_of(const Tensor& t) {
  return static_cast<cudaStream_t>(current_stream(t->device().index));
}

constexpr int kTorchBlock = 256;

// Draws of one curand4 call, as `unroll` accumulate values.
struct DrawUniformFloat {
  static constexpr int kUnroll = 4;
  __device__ float4 operator()(curandStatePhilox4_32_10_t* s) const { return curand_uniform4(s); }
};
struct DrawUniformDouble {
  static constexpr int kUnroll = 2;
  __device__ double2 operator()(curandStatePhilox4_32_10_t* s) const {
    return curand_uniform2_double(s);
  }
};
struct DrawNormalFloat {
  static constexpr int kUnroll = 4;
  __device__ float4 operator()(curandStatePhilox4_32_10_t* s) const { return curand_normal4(s); }
};
struct DrawNormalDouble {
  static constexpr int kUnroll = 2;
  __device__ double2 operator()(curandStatePhilox4_32_10_t* s) const {
    return curand_normal2_double(s);
  }
};
struct DrawBits32 {
  static constexpr int kUnroll = 4;
  __device__ uint4 operator()(curandStatePhilox4_32_10_t* s) const { return curand4(s); }
};
struct DrawBits64 {
  static constexpr int kUnroll = 2;
  __device__ ulonglong2 operator()(curandStatePhilox4_32_10_t* s) const {
    uint4 r = curand4(s);
    ulonglong2 v;
    v.x = (uint64_t(r.x) << 32) | r.y;
    v.y = (uint64_t(r.z) << 32) | r.w;
    return v;
  }
};

template <class Draw, class Acc, class T, class Transform>
__global__ void __launch_bounds__(kTorchBlock, 4)
    torch_dist_kernel(T* out, int64_t numel, PhiloxArgs philox, Draw draw, Transform transform) {
  constexpr int kUnroll = Draw::kUnroll;
  const int64_t idx = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  curandStatePhilox4_32_10_t state;
  uint64_t seed, offset;
  philox_unpack(philox, seed, offset);
  curand_init(seed, idx, offset, &state);
  const int64_t stride = int64_t(blockDim.x) * gridDim.x;
  const int64_t rounded = ((numel - 1) / (stride * kUnroll) + 1) * stride * kUnroll;
  for (int64_t li = idx; li < rounded; li += stride * kUnroll) {
    auto r = draw(&state);
#pragma unroll
    for (int ii = 0; ii < kUnroll; ++ii) {
      const int64_t e = li + stride * ii;
      if (e < numel) out[e] = transform(static_cast<Acc>((&r.x)[ii]));
    }
  }
}

// ---- transforms (T: the output type; Acc: the accumulate type torch uses) ----

template <class T, class Acc>
struct UniformFn {
  Acc range;
  T from, to;
  __device__ T operator()(Acc rand) const {
    const T v = convert<T>(rand * range + Acc(from));  // fused by nvcc, as torch's
    return v == to ? from : v;                         // (0, 1] folded to [0, 1)
  }
};

template <class T, class Acc>
struct NormalFn {
  Acc mean, std;
  __device__ T operator()(Acc rand) const { return convert<T>(rand * std + mean); }
};

template <class T, class Acc>
struct ExponentialFn {
  Acc lambda;
  __device__ T operator()(Acc rand) const {
    const Acc eps = std::numeric_limits<Acc>::epsilon();
    // at::log: the __logf approximation for float on the device, as torch's kernel calls it
    Acc lg;
    if constexpr (std::is_same_v<Acc, float>) {
      lg = rand >= Acc(1) - eps / 2 ? -eps / 2 : __logf(rand);
    } else {
      lg = rand >= Acc(1) - eps / 2 ? -eps / 2 : log(rand);
    }
    return convert<T>(Acc(-1.0) / lambda * lg);
  }
};

template <class T, class Acc>
struct BernoulliFn {
  Acc p;
  __device__ T operator()(Acc rand) const { return convert<T>(rand < p ? 1 : 0); }
};

template <class T>
__device__ T from_int64(int64_t v) {
  if constexpr (std::is_same_v<T, bool>) {
    return v != 0;
  } else if constexpr (std::is_integral_v<T>) {
    return T(v);
  } else if constexpr (std::is_same_v<T, double>) {
    return double(v);  // random_() of float64 draws 53 bits: no float on the way
  } else {
    return convert<T>(float(v));
  }
}

// (rand % range) + base; range 0: the 64 bits as an int64 (the full-range kernel).
template <class T, class V>
struct FromToFn {
  uint64_t range;
  int64_t base;
  __device__ T operator()(V rand) const {
    if (range == 0) return from_int64<T>(int64_t(rand));
    return from_int64<T>(int64_t(uint64_t(rand) % range + uint64_t(base)));
  }
};

template <class T>
constexpr bool is_double = std::is_same_v<T, double>;

template <class Draw, class Acc, class T, class Transform>
void launch(const Tensor& t, PhiloxArgs philox, unsigned grid, Transform f) {
  torch_dist_kernel<Draw, Acc, T><<<grid, kTorchBlock, 0, stream_of(t)>>>(
      reinterpret_cast<T*>(t->data()), t->numel(), philox, Draw{}, f);
  CL_CUDA_KERNEL_LAUNCH_CHECK();
}

template <class T>
void uniform_typed(const Tensor& t, double a, double b, PhiloxArgs philox, unsigned grid) {
  const T from = T(a), to = T(b);
  if constexpr (is_double<T>) {
    launch<DrawUniformDouble, double, T>(t, philox, grid,
                                         UniformFn<T, double>{double(to - from), from, to});
  } else {
    const float range = float(T(float(to) - float(from)));
    launch<DrawUniformFloat, float, T>(t, philox, grid, UniformFn<T, float>{range, from, to});
  }
}

template <class T>
void fill_typed(const Tensor& t, TorchRandom kind, double a, double b, uint64_t range, int64_t base,
                PhiloxArgs philox, unsigned grid) {
  constexpr bool floating =
      std::is_floating_point_v<T> || std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>;
  switch (kind) {
    case TorchRandom::Uniform:
      if constexpr (floating) uniform_typed<T>(t, a, b, philox, grid);
      return;
    case TorchRandom::Normal:
      if constexpr (is_double<T>) {
        launch<DrawNormalDouble, double, T>(t, philox, grid, NormalFn<T, double>{a, b});
      } else if constexpr (floating) {
        launch<DrawNormalFloat, float, T>(t, philox, grid, NormalFn<T, float>{float(a), float(b)});
      }
      return;
    case TorchRandom::Exponential:
      if constexpr (is_double<T>) {
        launch<DrawUniformDouble, double, T>(t, philox, grid, ExponentialFn<T, double>{a});
      } else if constexpr (floating) {
        launch<DrawUniformFloat, float, T>(t, philox, grid, ExponentialFn<T, float>{float(a)});
      }
      return;
    case TorchRandom::Bernoulli:
      if constexpr (is_double<T>) {
        launch<DrawUniformDouble, double, T>(t, philox, grid, BernoulliFn<T, double>{a});
      } else {
        launch<DrawUniformFloat, float, T>(t, philox, grid, BernoulliFn<T, float>{float(a)});
      }
      return;
    case TorchRandom::FromTo:
    case TorchRandom::Default:
      if (torch_random_unroll(kind, t->dtype, range) == 2) {
        launch<DrawBits64, uint64_t, T>(t, philox, grid, FromToFn<T, uint64_t>{range, base});
      } else {
        launch<DrawBits32, uint32_t, T>(t, philox, grid, FromToFn<T, uint32_t>{range, base});
      }
      return;
  }
}

// bernoulli_ with a tensor of probabilities (torch's CUDA_tensor_apply2 over 4 elements per
// thread): thread t owns elements 4t .. 4t+3 in logical order, starts curand's stream t at the
// offset and takes one curand_uniform4; element k is rand[k] <= p[k].
template <class T, class P>
__global__ void __launch_bounds__(512)
    bernoulli_tensor_kernel(T* out, const P* p, int64_t n, PhiloxArgs philox) {
  const int64_t t = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  const int64_t base = 4 * t;
  if (base >= n) return;
  curandStatePhilox4_32_10_t state;
  uint64_t seed, offset;
  philox_unpack(philox, seed, offset);
  curand_init(seed, t, offset, &state);
  const float4 r = curand_uniform4(&state);
  const float rs[4] = {r.x, r.y, r.z, r.w};
  for (int k = 0; k < 4 && base + k < n; ++k)
    out[base + k] = from_int64<T>(P(rs[k]) <= p[base + k] ? 1 : 0);
}

}  // namespace

void torch_bernoulli_tensor(const Tensor& t, const Tensor& p, const PhiloxArgs& philox) {
  const int64_t n = t->numel();
  const unsigned grid = unsigned((n + 2047) / 2048);
  CL_DISPATCH_ALL_TYPES(t->dtype, "bernoulli_", [&] {
    if (p->dtype == ScalarType::Float64) {
      bernoulli_tensor_kernel<<<grid, 512, 0, stream_of(t)>>>(
          reinterpret_cast<scalar_t*>(t->data()), reinterpret_cast<const double*>(p->data()), n,
          philox);
    } else {
      bernoulli_tensor_kernel<<<grid, 512, 0, stream_of(t)>>>(
          reinterpret_cast<scalar_t*>(t->data()), reinterpret_cast<const float*>(p->data()), n,
          philox);
    }
  });
  CL_CUDA_KERNEL_LAUNCH_CHECK();
}

int torch_random_unroll(TorchRandom kind, ScalarType dtype, uint64_t range) {
  switch (kind) {
    case TorchRandom::FromTo:
      return range == 0 || range >= (uint64_t(1) << 28) ? 2 : 4;
    case TorchRandom::Default:
      return dtype == ScalarType::Float64 || dtype == ScalarType::Int64 ? 2 : 4;
    default:
      return dtype == ScalarType::Float64 ? 2 : 4;
  }
}

void torch_random(const Tensor& t, TorchRandom kind, double a, double b, uint64_t range,
                  int64_t base, const PhiloxArgs& philox, unsigned grid) {
  CL_DISPATCH_ALL_TYPES(t->dtype, "random",
                        [&] { fill_typed<scalar_t>(t, kind, a, b, range, base, philox, grid); });
}

}  // namespace cl::cuda
