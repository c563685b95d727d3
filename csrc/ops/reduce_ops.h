// Reduction functors shared by the CPU and CUDA loops. Each has an accumulator type,
// an identity, a combine step and a finish step; the Max/Min family also tracks an index.
#pragma once

#include <cstdint>
#include <type_traits>

#include "core/half.h"
#include "core/macros.h"
#include "ops/ops.h"

namespace cl::red {

// Accumulator types: double on the host for floats (exact enough to match torch's printed
// values), float for 16-bit floats and float32 on the device, int64 for integers.
template <class T, bool kDevice>
struct Acc {
  using type =
      std::conditional_t<std::is_integral_v<T>, int64_t,
                         std::conditional_t<kDevice && !std::is_same_v<T, double>, float, double>>;
};

template <class A>
struct SumOp {
  CL_HOST_DEVICE static A identity() { return A(0); }
  CL_HOST_DEVICE static A combine(A a, A b) { return a + b; }
};
template <class A>
struct ProdOp {
  CL_HOST_DEVICE static A identity() { return A(1); }
  CL_HOST_DEVICE static A combine(A a, A b) { return a * b; }
};

// Max/min with the index of the first extreme; NaN wins (and the first NaN's index).
template <class A, bool kMax>
struct ArgPair {
  A v;
  int64_t i;
};
template <class A, bool kMax>
CL_HOST_DEVICE inline ArgPair<A, kMax> arg_combine(ArgPair<A, kMax> a, ArgPair<A, kMax> b) {
  if (a.i < 0) return b;
  if (b.i < 0) return a;
  bool a_nan = a.v != a.v, b_nan = b.v != b.v;
  if (a_nan || b_nan) {
    if (a_nan && b_nan) return a.i <= b.i ? a : b;
    return a_nan ? a : b;
  }
  bool a_better = kMax ? a.v > b.v : a.v < b.v;
  if (a_better) return a;
  if (a.v == b.v) return a.i <= b.i ? a : b;
  return b;
}

}  // namespace cl::red
