// Note [Fused nn rows] (docs/design.md)
// Row kernels of the fused nn ops (kernels/layer_norm.cu, kernels/softmax.cu): a row is
// worked on by one warp (rows of up to kWarpRowMax elements, several rows per block) or by
// one block (longer rows). Each thread strides over the row at the group's width, so that
// neighbouring threads read neighbouring elements, accumulates in `A` (float for float16,
// bfloat16 and float32; double for float64), and the group combines its threads' values
// with warp shuffles (then, for a block, through shared memory), every thread receiving the
// result. The strided loops are unrolled by 4 so that each thread has several loads in
// flight.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "core/cuda_api.h"
#include "core/half.h"
#include "core/tensor.h"
#include "cuda/cuda_check.h"

namespace cl::gpu::rows {

constexpr int64_t kWarpRowMax = 1024;
constexpr int kThreads = 256;  // threads of a warp-per-row block (8 rows)

template <class T>
using acc_t = std::conditional_t<std::is_same_v<T, double>, double, float>;

template <class A, class T>
__device__ __forceinline__ A load(const T* p, int64_t i) {
  if constexpr (std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>) {
    return A(float(p[i]));
  } else {
    return A(p[i]);
  }
}

template <class T, class A>
__device__ __forceinline__ T store(A v) {
  if constexpr (std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>) {
    return T(float(v));
  } else {
    return T(v);
  }
}

template <class A>
struct Sum {
  __device__ __forceinline__ A operator()(A a, A b) const { return a + b; }
};
// NaN wins, as torch's max.
template <class A>
struct Max {
  __device__ __forceinline__ A operator()(A a, A b) const { return (a > b || a != a) ? a : b; }
};

template <class A>
__device__ __forceinline__ A rsqrt_of(A v) {
  if constexpr (std::is_same_v<A, float>) {
    return rsqrtf(v);
  } else {
    return 1.0 / sqrt(v);
  }
}

// Butterfly: every lane ends with the same value (each step combines a commutative pair).
template <class A, class Op>
__device__ __forceinline__ A warp_reduce(A v, Op op) {
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) v = op(v, __shfl_xor_sync(0xffffffffu, v, o));
  return v;
}

// The whole block's value, returned to every thread; shm holds 32 values. The first
// barrier keeps a previous call's readers ahead of this call's writers. blockDim.x is a
// multiple of 32 and every thread of the block calls it.
template <class A, class Op>
__device__ __forceinline__ A block_reduce(A v, Op op, A* shm) {
  v = warp_reduce(v, op);
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, nw = blockDim.x >> 5;
  __syncthreads();
  if (lane == 0) shm[warp] = v;
  __syncthreads();
  A r = shm[0];
  for (int i = 1; i < nw; ++i) r = op(r, shm[i]);
  return r;
}

template <bool kWarp, class A, class Op>
__device__ __forceinline__ A row_reduce(A v, Op op, A* shm) {
  if constexpr (kWarp) {
    return warp_reduce(v, op);
  } else {
    return block_reduce(v, op, shm);
  }
}

// Which rows this thread's group works on (first, first + step, ...), its index in the group
// and the group's width. A group's loop condition is the same for all its threads, so the
// group's reductions are reached by all of them.
struct RowMap {
  int64_t first, step;
  int lane, width;
};

template <bool kWarp>
__device__ __forceinline__ RowMap row_map() {
  if constexpr (kWarp) {
    const int per = int(blockDim.x >> 5);
    return {int64_t(blockIdx.x) * per + (threadIdx.x >> 5), int64_t(gridDim.x) * per,
            int(threadIdx.x & 31), 32};
  } else {
    return {int64_t(blockIdx.x), int64_t(gridDim.x), int(threadIdx.x), int(blockDim.x)};
  }
}

struct RowLaunch {
  bool warp;
  unsigned grid, block;
};

// A warp per row for short rows, else a block (wider for longer rows); a grid-stride loop
// covers rows beyond the grid.
inline RowLaunch row_launch(int64_t rows, int64_t n) {
  constexpr int64_t kMaxGrid = int64_t(1) << 20;
  if (n <= kWarpRowMax) {
    const int64_t per = kThreads / 32;
    return {true, unsigned(std::min((rows + per - 1) / per, kMaxGrid)), unsigned(kThreads)};
  }
  const unsigned block = n <= 4096 ? 256u : n <= 16384 ? 512u : 1024u;
  return {false, unsigned(std::min(rows, kMaxGrid)), block};
}

// Host helpers of the fused nn ops' launches: a tensor's data (null for an absent
// tensor) and the current stream of its device.
template <class T>
const T* cptr(const Tensor& t) {
  return t ? reinterpret_cast<const T*>(t->data()) : nullptr;
}
template <class T>
T* mptr(const Tensor& t) {
  return t ? reinterpret_cast<T*>(t->data()) : nullptr;
}
inline cudaStream_t stream_of(const Tensor& t) {
  return static_cast<cudaStream_t>(::cl::cuda::current_stream(t->device().index));
}

// Note [Rows staged in shared memory]
// A block-per-row kernel whose row (or rows: the backward stages two) fits in the block's
// dynamic shared memory copies it there once, in 16-byte pieces where the row's address
// allows, computes from there and copies its result back out the same way: one pass over
// global memory each way, where reading the row from global memory for each of its loops
// would read a row too long for L1 three times. Up to the device's opt-in limit per block
// (227 KiB on H100: 50304 float32 logits fit), else the kernel reading global memory runs.

// The block's dynamic shared memory, 16-byte aligned.
template <class T>
__device__ __forceinline__ T* staged_row() {
  extern __shared__ __align__(16) unsigned char staged_smem[];
  return reinterpret_cast<T*>(staged_smem);
}

// Elements of one staged row, rounded up so that the next row starts 16-byte aligned.
template <class T>
__host__ __device__ __forceinline__ int64_t staged_elems(int64_t n) {
  constexpr int64_t per = 16 / int64_t(sizeof(T));
  return (n + per - 1) / per * per;
}

template <class T>
inline size_t staged_bytes(int64_t n, int rows) {
  return size_t(staged_elems<T>(n)) * sizeof(T) * size_t(rows);
}

// Copies n elements between global and shared memory (all threads of the block; ends with a
// barrier; a barrier first, so that the previous row's readers are done with dst).
template <class T>
__device__ __forceinline__ void stage_copy(const T* __restrict__ src, T* __restrict__ dst,
                                           int64_t n) {
  __syncthreads();
  int64_t done = 0;
  if ((reinterpret_cast<uintptr_t>(src) & 15) == 0 &&
      (reinterpret_cast<uintptr_t>(dst) & 15) == 0) {
    const int64_t nv = n * int64_t(sizeof(T)) / 16;
    const uint4* s = reinterpret_cast<const uint4*>(src);
    uint4* d = reinterpret_cast<uint4*>(dst);
    for (int64_t j = threadIdx.x; j < nv; j += blockDim.x) d[j] = s[j];
    done = nv * 16 / int64_t(sizeof(T));
  }
  for (int64_t i = done + threadIdx.x; i < n; i += blockDim.x) dst[i] = src[i];
  __syncthreads();
}

template <class T>
__device__ __forceinline__ void stage_in(const T* src, T* row, int64_t n) {
  stage_copy(src, row, n);
}

template <class T>
__device__ __forceinline__ void stage_out(const T* row, T* dst, int64_t n) {
  stage_copy(row, dst, n);
}

// The most dynamic shared memory kernel K may use on `device` (its static shared memory
// aside); raises K's limit to it on first use on each device.
template <auto K>
size_t staged_limit(int device) {
  static size_t limit[64] = {};
  if (device < 0 || device >= 64) return 0;
  if (limit[device] == 0) {
    cudaFuncAttributes a{};
    CL_CUDA_CHECK(cudaFuncGetAttributes(&a, reinterpret_cast<const void*>(K)));
    const size_t optin = ::cl::cuda::get_device_properties(device).shared_memory_per_block_optin;
    const size_t dyn = optin > a.sharedSizeBytes ? optin - a.sharedSizeBytes : 0;
    CL_CUDA_CHECK(cudaFuncSetAttribute(reinterpret_cast<const void*>(K),
                                       cudaFuncAttributeMaxDynamicSharedMemorySize, int(dyn)));
    limit[device] = dyn;
  }
  return limit[device];
}

}  // namespace cl::gpu::rows
