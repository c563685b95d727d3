// Small CUDA kernels: affine fill (arange), offset gather/scatter (indexing) and Philox
// random fills. Each is bandwidth-bound: numel * itemsize bytes written (+ offsets read).
#include <cuda_runtime.h>

#include "core/cuda_api.h"
#include "cuda/cuda_check.h"
#include "kernels/loops.cuh"
#include "ops/kernels.h"
#include "ops/philox.h"

namespace cl::cuda {
namespace {

cudaStream_t stream_of(const Tensor& t) {
  return static_cast<cudaStream_t>(current_stream(t->device().index));
}

template <class T>
__global__ void affine_kernel(T* p, int64_t n, double start, double step) {
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += int64_t(gridDim.x) * blockDim.x) {
    double v = start + double(i) * step;
    if constexpr (std::is_integral_v<T>) {
      p[i] = T(int64_t(v));
    } else {
      p[i] = T(v);
    }
  }
}

template <class T>
__global__ void gather_kernel(const T* base, const int64_t* off, T* out, int64_t n) {
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += int64_t(gridDim.x) * blockDim.x) {
    out[i] = base[off[i]];
  }
}

template <class T>
__global__ void scatter_kernel(T* base, const int64_t* off, const T* v, int64_t n, bool acc) {
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += int64_t(gridDim.x) * blockDim.x) {
    if (acc) {
      if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double> ||
                    std::is_same_v<T, int32_t>) {
        atomicAdd(base + off[i], v[i]);
      } else if constexpr (std::is_same_v<T, int64_t>) {
        atomicAdd(reinterpret_cast<unsigned long long*>(base + off[i]),
                  static_cast<unsigned long long>(v[i]));
      }
    } else {
      base[off[i]] = v[i];
    }
  }
}

template <class T>
// One thread per Philox counter: elements 4c .. 4c+3, so one draw (and for normals one
// log/sincos per pair) serves four values. Element i still uses counter base + i / 4 and
// lane i % 4, as on the CPU.
__global__ void random_kernel(T* p, int64_t n, int kind, double a, double b, int bits,
                              uint64_t seed, uint64_t base) {
  const int64_t counters = (n + 3) / 4;
  for (int64_t c = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; c < counters;
       c += int64_t(gridDim.x) * blockDim.x) {
    double v[4];
    philox::sample4(kind, a, b, bits, seed, base + uint64_t(c), v);
    for (int l = 0; l < 4 && 4 * c + l < n; ++l) {
      if constexpr (std::is_integral_v<T>) {
        p[4 * c + l] = T(int64_t(v[l]));
      } else {
        p[4 * c + l] = T(v[l]);
      }
    }
  }
}

}  // namespace

void affine_fill(const Tensor& t, double start, double step) {
  CL_DISPATCH_ALL_TYPES(t->dtype, "arange", [&] {
    affine_kernel<<<gpu::grid_for(t->numel()), gpu::kBlock, 0, stream_of(t)>>>(
        reinterpret_cast<scalar_t*>(t->data()), t->numel(), start, step);
  });
  CL_CUDA_KERNEL_LAUNCH_CHECK();
}

void gather_offsets(const Tensor& src, const Tensor& offsets, const Tensor& out) {
  const char* base = static_cast<const char*>(src->storage->data.get());
  const int64_t* off = reinterpret_cast<const int64_t*>(offsets->data());
  int64_t n = offsets->numel();
  unsigned g = gpu::grid_for(n);
  cudaStream_t s = stream_of(src);
  switch (src->element_size()) {
    case 1:
      gather_kernel<<<g, gpu::kBlock, 0, s>>>(reinterpret_cast<const uint8_t*>(base), off,
                                              reinterpret_cast<uint8_t*>(out->data()), n);
      break;
    case 2:
      gather_kernel<<<g, gpu::kBlock, 0, s>>>(reinterpret_cast<const uint16_t*>(base), off,
                                              reinterpret_cast<uint16_t*>(out->data()), n);
      break;
    case 4:
      gather_kernel<<<g, gpu::kBlock, 0, s>>>(reinterpret_cast<const uint32_t*>(base), off,
                                              reinterpret_cast<uint32_t*>(out->data()), n);
      break;
    default:
      gather_kernel<<<g, gpu::kBlock, 0, s>>>(reinterpret_cast<const uint64_t*>(base), off,
                                              reinterpret_cast<uint64_t*>(out->data()), n);
  }
  CL_CUDA_KERNEL_LAUNCH_CHECK();
}

void scatter_offsets(const Tensor& dst, const Tensor& offsets, const Tensor& values,
                     bool accumulate) {
  if (accumulate) {
    ScalarType t = dst->dtype;
    CL_CHECK(t == ScalarType::Float32 || t == ScalarType::Float64 || t == ScalarType::Int32 ||
                 t == ScalarType::Int64,
             "index_put_ with accumulate=True on CUDA supports float32, float64, int32 and "
             "int64, got ",
             dtype_name(t));
  }
  CL_DISPATCH_ALL_TYPES(dst->dtype, "index_put_", [&] {
    scatter_kernel<<<gpu::grid_for(offsets->numel()), gpu::kBlock, 0, stream_of(dst)>>>(
        reinterpret_cast<scalar_t*>(dst->storage->data.get()),
        reinterpret_cast<const int64_t*>(offsets->data()),
        reinterpret_cast<const scalar_t*>(values->data()), offsets->numel(), accumulate);
  });
  CL_CUDA_KERNEL_LAUNCH_CHECK();
}

void random_fill(const Tensor& t, int kind, double a, double b, uint64_t seed, uint64_t base) {
  int bits = philox::uniform_bits(t->dtype);
  CL_DISPATCH_ALL_TYPES(t->dtype, "random", [&] {
    random_kernel<<<gpu::grid_for((t->numel() + 3) / 4), gpu::kBlock, 0, stream_of(t)>>>(
        reinterpret_cast<scalar_t*>(t->data()), t->numel(), kind, a, b, bits, seed, base);
  });
  CL_CUDA_KERNEL_LAUNCH_CHECK();
}

}  // namespace cl::cuda
