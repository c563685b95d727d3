// What the GPU reductions share (kernels/reduce.cu: rows; kernels/reduce_cols.cu: columns):
// the reducers (acc type, identity, make, combine, step, store for each ReduceOp), the block
// size and the vector loads.
//
// Speed comes from bytes in flight: each thread loads 16-byte vectors (kUnroll of them
// before combining any), into one accumulator per vector lane, so the combine chains are
// independent. The combine order is fixed by the launch shape, which depends only on the
// sizes and the alignment, so results are the same run to run. Bytes moved: outer * inner *
// itemsize (+ the output).
#pragma once

#include <cuda_runtime.h>

#include <limits>
#include <type_traits>

#include "kernels/loops.cuh"
#include "ops/reduce_ops.h"

namespace cl::cuda::reducer {

constexpr int kThreads = 256;

// A reducer: acc type, identity, make (from an element and its index), combine, store.
template <class T, ReduceOp OP>
struct R {
  using A = typename red::Acc<T, true>::type;
  // Max/Min keep only the value (NaN wins); ArgMax/ArgMin also carry the first index.
  static constexpr bool kArg = OP == ReduceOp::ArgMax || OP == ReduceOp::ArgMin;
  static constexpr bool kExt = OP == ReduceOp::Max || OP == ReduceOp::Min;
  static constexpr bool kIsMax = OP == ReduceOp::Max || OP == ReduceOp::ArgMax;
  using P = opmath_t<T>;
  using acc_t = std::conditional_t<
      kArg, red::ArgPair<P, kIsMax>,
      std::conditional_t<kExt, P,
                         std::conditional_t<OP == ReduceOp::All || OP == ReduceOp::Any, int, A>>>;
  __device__ static acc_t identity() {
    if constexpr (kArg)
      return acc_t{P(0), -1};
    else if constexpr (kExt) {
      // -inf / +inf for floats (a row of -inf must give -inf), the extremes for integers.
      using L = std::numeric_limits<P>;
      if constexpr (L::has_infinity)
        return kIsMax ? -L::infinity() : L::infinity();
      else
        return kIsMax ? L::lowest() : L::max();
    } else if constexpr (OP == ReduceOp::Prod || OP == ReduceOp::All)
      return acc_t(1);
    else
      return acc_t(0);
  }
  __device__ static acc_t make(T x, int64_t i) {
    if constexpr (kArg)
      return acc_t{P(x), i};
    else if constexpr (kExt)
      return P(x);
    else if constexpr (OP == ReduceOp::All || OP == ReduceOp::Any)
      return bool(x) ? 1 : 0;
    else
      return acc_t(x);
  }
  __device__ static acc_t combine(acc_t a, acc_t b) {
    if constexpr (kArg)
      return red::arg_combine(a, b);
    else if constexpr (kExt) {
#if __CUDA_ARCH__ >= 800
      // One instruction that keeps NaN (the generic code below is four and two branches:
      // what made max 3x slower than sum where the loop had little else to hide it behind).
      if constexpr (std::is_same_v<P, float>) {
        float d;
        if constexpr (kIsMax)
          asm("max.NaN.f32 %0, %1, %2;" : "=f"(d) : "f"(a), "f"(b));
        else
          asm("min.NaN.f32 %0, %1, %2;" : "=f"(d) : "f"(a), "f"(b));
        return d;
      }
#endif
      if constexpr (std::is_floating_point_v<P>) {
        if (a != a) return a;
        if (b != b) return b;
      }
      return kIsMax ? (b > a ? b : a) : (b < a ? b : a);
    } else if constexpr (OP == ReduceOp::Sum)
      return a + b;
    else if constexpr (OP == ReduceOp::Prod)
      return a * b;
    else if constexpr (OP == ReduceOp::All)
      return a && b;
    else
      return a || b;
  }
  // Folds element x (index i) into a; a lane sees its elements in increasing index order,
  // so for the Arg ops a strictly better value (or the first NaN) is all that replaces a.
  __device__ static void step(acc_t& a, T x, int64_t i) {
    if constexpr (kArg) {
      P v = P(x);
      bool better = kIsMax ? v > a.v : v < a.v;
      if constexpr (std::is_floating_point_v<P>) better = a.v == a.v && (better || v != v);
      if (a.i < 0 || better) a = acc_t{v, i};
    } else {
      a = combine(a, make(x, i));
    }
  }
  __device__ static void store(acc_t a, void* out, int64_t* idx, int64_t r) {
    if constexpr (kExt) {
      static_cast<T*>(out)[r] = T(a);
    } else if constexpr (kArg) {
      static_cast<T*>(out)[r] = T(a.v);
      if (idx) idx[r] = a.i;
    } else if constexpr (OP == ReduceOp::All || OP == ReduceOp::Any) {
      static_cast<bool*>(out)[r] = a != 0;
    } else {
      static_cast<T*>(out)[r] = T(a);
    }
  }
};

// Calls f(std::integral_constant<ReduceOp, OP>{}) for the run-time `op`: the reducers are
// templates on the op (reduce.cu, reduce_cols.cu, deferred.cu).
template <class F>
void with_reduce_op(ReduceOp op, F&& f) {
  using K = ReduceOp;
  switch (op) {
#define CL_REDUCE_OP(Enum, ...)              \
  case K::Enum:                              \
    f(std::integral_constant<K, K::Enum>{}); \
    break;
#include "ops/reductions.def"
#undef CL_REDUCE_OP
  }
}

using gpu::vec_width;
template <class T, int V>
using Vec = gpu::VecT<T, V>;

constexpr int kUnroll = 4;  // vectors loaded per thread before any is combined

// The block's accumulators combined in a fixed tree through `sh` (blockDim.x entries);
// every thread gets the result.
template <class Red>
__device__ __forceinline__ typename Red::acc_t block_reduce(typename Red::acc_t v,
                                                            typename Red::acc_t* sh) {
  sh[threadIdx.x] = v;
  __syncthreads();
  for (int s = blockDim.x / 2; s > 0; s >>= 1) {
    if (threadIdx.x < s) sh[threadIdx.x] = Red::combine(sh[threadIdx.x], sh[threadIdx.x + s]);
    __syncthreads();
  }
  typename Red::acc_t r = sh[0];
  __syncthreads();  // sh may be used again
  return r;
}

// What one thread of block `split` of `splits` folds of a row (reduce.cu's block_rows, and
// the deferred reductions of kernels/deferred.cu): the blocks walk the row's 16-byte vectors
// interleaved, block after block (they read at the full bandwidth, where a contiguous chunk
// per block lost 4 %, benchmarks/cpp/reduce_variants.cu), kUnroll in flight per thread;
// split 0 also takes the scalar head up to the first vector boundary and the scalar tail.
// (Written out rather than shared with team_rows' walk: through it the Arg ops of long rows
// lost 3-4 % on an H200.)
template <class T, class Red>
__device__ __forceinline__ typename Red::acc_t block_walk(const T* row, int64_t inner, int split,
                                                          int splits) {
  constexpr int V = vec_width<T>();
  using acc_t = typename Red::acc_t;
  acc_t acc[V];
#pragma unroll
  for (int j = 0; j < V; ++j) acc[j] = Red::identity();
  int64_t head =
      int64_t((sizeof(Vec<T, V>) - reinterpret_cast<uintptr_t>(row) % sizeof(Vec<T, V>)) %
              sizeof(Vec<T, V>)) /
      int64_t(sizeof(T));
  if (head > inner) head = inner;
  if (split == 0 && threadIdx.x < head) Red::step(acc[0], row[threadIdx.x], threadIdx.x);
  const int64_t a = head, nvec = (inner - a) / V, bs = blockDim.x, stride = int64_t(splits) * bs;
  const Vec<T, V>* vp = reinterpret_cast<const Vec<T, V>*>(row + a);
  int64_t k = int64_t(split) * bs + threadIdx.x;
  for (; k + (kUnroll - 1) * stride < nvec; k += kUnroll * stride) {
    Vec<T, V> v[kUnroll];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) v[u] = vp[k + u * stride];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
#pragma unroll
      for (int j = 0; j < V; ++j) Red::step(acc[j], v[u].v[j], a + (k + u * stride) * V + j);
    }
  }
  for (; k < nvec; k += stride) {
    Vec<T, V> v = vp[k];
#pragma unroll
    for (int j = 0; j < V; ++j) Red::step(acc[j], v.v[j], a + k * V + j);
  }
  if (split == 0) {
    for (int64_t i = a + nvec * V + threadIdx.x; i < inner; i += bs) Red::step(acc[0], row[i], i);
  }
#pragma unroll
  for (int j = 1; j < V; ++j) acc[0] = Red::combine(acc[0], acc[j]);
  return acc[0];
}

}  // namespace cl::cuda::reducer
