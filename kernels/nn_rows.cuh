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
#include <cstdint>
#include <type_traits>

#include "core/half.h"

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

}  // namespace cl::gpu::rows
