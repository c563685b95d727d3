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

using gpu::vec_width;
template <class T, int V>
using Vec = gpu::VecT<T, V>;

constexpr int kUnroll = 4;  // vectors loaded per thread before any is combined

}  // namespace cl::cuda::reducer
