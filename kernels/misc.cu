// Small CUDA kernels: affine fill (arange), offset gather/scatter (indexing) and gather/
// scatter along a dim (gather, scatter, scatter_add, index_add, scatter_reduce; adds,
// multiplies, maxima and minima are atomic for every dtype). Each is bandwidth-bound: numel *
// itemsize bytes written (+ offsets read). Random fills: random.cu.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
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

// Read-modify-write of one element through a compare-and-swap loop on the aligned 32- or
// 64-bit word that holds it (1- and 2-byte types share their word with neighbours, which
// the loop leaves untouched).
template <class T, class F>
__device__ void atomic_cas_apply(T* addr, T v, F f) {
  if constexpr (sizeof(T) == 8) {
    auto* w = reinterpret_cast<unsigned long long*>(addr);
    unsigned long long old = *w, assumed;
    do {
      assumed = old;
      T cur;
      memcpy(&cur, &assumed, 8);
      T nv = f(cur, v);
      unsigned long long bits;
      memcpy(&bits, &nv, 8);
      old = atomicCAS(w, assumed, bits);
    } while (assumed != old);
  } else {
    const uintptr_t a = reinterpret_cast<uintptr_t>(addr);
    auto* w = reinterpret_cast<unsigned int*>(a & ~uintptr_t(3));
    const unsigned shift = unsigned(a & 3) * 8;
    const unsigned mask = sizeof(T) == 4 ? 0xffffffffu : ((1u << (8 * sizeof(T))) - 1) << shift;
    unsigned old = *w, assumed;
    do {
      assumed = old;
      unsigned part = (assumed & mask) >> shift;
      T cur;
      memcpy(&cur, &part, sizeof(T));
      T nv = f(cur, v);
      unsigned bits = 0;
      memcpy(&bits, &nv, sizeof(T));
      old = atomicCAS(w, assumed, (assumed & ~mask) | ((bits << shift) & mask));
    } while (assumed != old);
  }
}

template <class T>
__device__ __forceinline__ T add_values(T a, T b) {
  if constexpr (std::is_same_v<T, bool>) {
    return a || b;
  } else {
    return T(opmath_t<T>(a) + opmath_t<T>(b));
  }
}

template <class T>
__device__ __forceinline__ T mul_values(T a, T b) {
  if constexpr (std::is_same_v<T, bool>) {
    return a && b;
  } else {
    return T(opmath_t<T>(a) * opmath_t<T>(b));
  }
}

// amax / amin of scatter_reduce: NaN wins, as in torch.
template <class T>
__device__ __forceinline__ T max_values(T a, T b) {
  if constexpr (std::is_same_v<T, bool>) {
    return a || b;
  } else {
    const opmath_t<T> x(a), y(b);
    return x == x && (y != y || y > x) ? b : a;
  }
}

template <class T>
__device__ __forceinline__ T min_values(T a, T b) {
  if constexpr (std::is_same_v<T, bool>) {
    return a && b;
  } else {
    const opmath_t<T> x(a), y(b);
    return x == x && (y != y || y < x) ? b : a;
  }
}

// Adds with the hardware's atomics where they exist (float, double, 32- and 64-bit
// integers; float16 from sm_70 and bfloat16 from sm_80), else through atomic_cas_apply.
template <class T>
__device__ __forceinline__ void atomic_add(T* p, T v) {
  if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double> ||
                std::is_same_v<T, int32_t>) {
    atomicAdd(p, v);
  } else if constexpr (std::is_same_v<T, int64_t>) {
    atomicAdd(reinterpret_cast<unsigned long long*>(p), static_cast<unsigned long long>(v));
  } else if constexpr (std::is_same_v<T, Half>) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 700
    __half h;
    memcpy(&h, &v, 2);
    atomicAdd(reinterpret_cast<__half*>(p), h);
#else
    atomic_cas_apply(p, v, [](T a, T b) { return add_values(a, b); });
#endif
  } else if constexpr (std::is_same_v<T, BFloat16>) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    __nv_bfloat16 h;
    memcpy(&h, &v, 2);
    atomicAdd(reinterpret_cast<__nv_bfloat16*>(p), h);
#else
    atomic_cas_apply(p, v, [](T a, T b) { return add_values(a, b); });
#endif
  } else {
    atomic_cas_apply(p, v, [](T a, T b) { return add_values(a, b); });
  }
}

// mode 0 assigns (the last writer wins, in no set order), 1 adds, 2 multiplies.
template <class T>
__global__ void scatter_kernel(T* base, const int64_t* off, const T* v, int64_t n, int mode) {
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += int64_t(gridDim.x) * blockDim.x) {
    if (mode == 1) {
      atomic_add(base + off[i], v[i]);
    } else if (mode == 2) {
      atomic_cas_apply(base + off[i], v[i], [](T a, T b) { return mul_values(a, b); });
    } else {
      base[off[i]] = v[i];
    }
  }
}

// Gather / scatter along a dim (DimIndexer, ops/dim_indexer.h): one thread per index element.
template <class T, class I>
__global__ void gather_dim_kernel(DimIndexer g, const T* self, const I* idx, T* out) {
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < g.numel;
       i += int64_t(gridDim.x) * blockDim.x) {
    int64_t off[3];
    g.offsets(i, off);
    out[off[2]] = self[off[0] + int64_t(idx[off[1]]) * g.dim_stride];
  }
}

// mode 0 assigns, 1 adds, 2 multiplies, 3 takes the max, 4 the min (atomically).
template <class T, class I>
__global__ void scatter_dim_kernel(DimIndexer g, T* self, const I* idx, const T* v, int mode) {
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < g.numel;
       i += int64_t(gridDim.x) * blockDim.x) {
    int64_t off[3];
    g.offsets(i, off);
    T* dst = self + off[0] + int64_t(idx[off[1]]) * g.dim_stride;
    if (mode == 1) {
      atomic_add(dst, v[off[2]]);
    } else if (mode == 2) {
      atomic_cas_apply(dst, v[off[2]], [](T a, T b) { return mul_values(a, b); });
    } else if (mode == 3) {
      atomic_cas_apply(dst, v[off[2]], [](T a, T b) { return max_values(a, b); });
    } else if (mode == 4) {
      atomic_cas_apply(dst, v[off[2]], [](T a, T b) { return min_values(a, b); });
    } else {
      *dst = v[off[2]];
    }
  }
}

template <class T, class I>
void launch_gather_dim(const DimIndexer& g, const Tensor& self, const Tensor& index,
                       const Tensor& out) {
  gather_dim_kernel<<<gpu::grid_for(g.numel), gpu::kBlock, 0, stream_of(self)>>>(
      g, reinterpret_cast<const T*>(self->storage->data.get()),
      reinterpret_cast<const I*>(index->data()), reinterpret_cast<T*>(out->data()));
}

template <class I>
void gather_dim_bytes(const DimIndexer& g, const Tensor& self, const Tensor& index,
                      const Tensor& out) {
  switch (self->element_size()) {
    case 1:
      return launch_gather_dim<uint8_t, I>(g, self, index, out);
    case 2:
      return launch_gather_dim<uint16_t, I>(g, self, index, out);
    case 4:
      return launch_gather_dim<uint32_t, I>(g, self, index, out);
    default:
      return launch_gather_dim<uint64_t, I>(g, self, index, out);
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

void scatter_offsets(const Tensor& dst, const Tensor& offsets, const Tensor& values, int mode) {
  CL_DISPATCH_ALL_TYPES(dst->dtype, "index_put_", [&] {
    scatter_kernel<<<gpu::grid_for(offsets->numel()), gpu::kBlock, 0, stream_of(dst)>>>(
        reinterpret_cast<scalar_t*>(dst->storage->data.get()),
        reinterpret_cast<const int64_t*>(offsets->data()),
        reinterpret_cast<const scalar_t*>(values->data()), offsets->numel(), mode);
  });
  CL_CUDA_KERNEL_LAUNCH_CHECK();
}

void gather_dim(const DimIndexer& g, const Tensor& self, const Tensor& index, const Tensor& out) {
  if (index->dtype == ScalarType::Int64) {
    gather_dim_bytes<int64_t>(g, self, index, out);
  } else {
    gather_dim_bytes<int32_t>(g, self, index, out);
  }
  CL_CUDA_KERNEL_LAUNCH_CHECK();
}

void scatter_dim(const DimIndexer& g, const Tensor& self, const Tensor& index, const Tensor& src,
                 int mode) {
  CL_DISPATCH_ALL_TYPES(self->dtype, "scatter", [&] {
    auto* s = reinterpret_cast<scalar_t*>(self->storage->data.get());
    const auto* v = reinterpret_cast<const scalar_t*>(src->data());
    const unsigned blocks = gpu::grid_for(g.numel);
    if (index->dtype == ScalarType::Int64) {
      scatter_dim_kernel<<<blocks, gpu::kBlock, 0, stream_of(self)>>>(
          g, s, reinterpret_cast<const int64_t*>(index->data()), v, mode);
    } else {
      scatter_dim_kernel<<<blocks, gpu::kBlock, 0, stream_of(self)>>>(
          g, s, reinterpret_cast<const int32_t*>(index->data()), v, mode);
    }
  });
  CL_CUDA_KERNEL_LAUNCH_CHECK();
}

void sleep_cycles(int64_t cycles) {
  int device = current_device();  // initialises CUDA
  spin_kernel<<<1, 1, 0, static_cast<cudaStream_t>(current_stream(device))>>>(cycles);
  CL_CUDA_KERNEL_LAUNCH_CHECK();
}

}  // namespace cl::cuda
