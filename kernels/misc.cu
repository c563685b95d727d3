// Small CUDA kernels: affine fill (arange) and offset gather/scatter (indexing). Each is
// bandwidth-bound: numel * itemsize bytes written (+ offsets read). Random fills: random.cu.
#include <cuda_runtime.h>

#include "core/cuda_api.h"
#include "cuda/cuda_check.h"
#include "kernels/loops.cuh"
#include "ops/kernels.h"

namespace cl::cuda {
namespace {

cudaStream_t stream_of(const Tensor& t) {
  return static_cast<cudaStream_t>(current_stream(t->device().index));
}

// torch.cuda._sleep's kernel: one thread that spins for `cycles` clock cycles.
__global__ void spin_kernel(int64_t cycles) {
  int64_t start = clock64();
  while (clock64() - start < cycles) {
  }
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

void sleep_cycles(int64_t cycles) {
  int device = current_device();  // initialises CUDA
  spin_kernel<<<1, 1, 0, static_cast<cudaStream_t>(current_stream(device))>>>(cycles);
  CL_CUDA_KERNEL_LAUNCH_CHECK();
}

}  // namespace cl::cuda
