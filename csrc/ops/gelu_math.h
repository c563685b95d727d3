// The scalar GELU formulas (torch's ActivationGeluKernel), for host and device: `A` is the
// computation type (float for float16, bfloat16 and float32; double for float64: the
// elementwise loops' opmath_t).
#pragma once

#include <cmath>
#include <type_traits>

#include "core/half.h"

#ifdef __CUDACC__
#define CL_GELU_HD __host__ __device__ __forceinline__
#else
#define CL_GELU_HD inline
#endif

namespace cl {

// 1 / sqrt(2), 1 / sqrt(2 pi), sqrt(2 / pi)
constexpr double kGeluSqrtHalf = 0.70710678118654752440;
constexpr double kGeluInvSqrt2Pi = 0.39894228040143267794;
constexpr double kGeluSqrt2OverPi = 0.79788456080286535588;

// x * Phi(x) = x / 2 * (1 + erf(x / sqrt(2)))
template <class A>
CL_GELU_HD A gelu_erf(A x) {
  const A kAlpha = A(kGeluSqrtHalf);
  return x * A(0.5) * (A(1) + std::erf(x * kAlpha));
}

// d/dx: Phi(x) + x * phi(x)
template <class A>
CL_GELU_HD A gelu_erf_grad(A x) {
  const A kAlpha = A(kGeluSqrtHalf);
  const A kBeta = A(kGeluInvSqrt2Pi);
  const A cdf = A(0.5) * (A(1) + std::erf(x * kAlpha));
  const A pdf = kBeta * std::exp(x * x * A(-0.5));
  return cdf + x * pdf;
}

// x / 2 * (1 + tanh(sqrt(2 / pi) * (x + 0.044715 x^3)))
template <class A>
CL_GELU_HD A gelu_tanh(A x) {
  const A kBeta = A(kGeluSqrt2OverPi);
  const A kKappa = A(0.044715);
  const A inner = kBeta * (x + kKappa * x * x * x);
  return A(0.5) * x * (A(1) + std::tanh(inner));
}

template <class A>
CL_GELU_HD A gelu_tanh_grad(A x) {
  const A kBeta = A(kGeluSqrt2OverPi);
  const A kKappa = A(0.044715);
  const A x_sq = x * x;
  const A inner = kBeta * (x + kKappa * x_sq * x);
  const A t = std::tanh(inner);
  const A left = A(0.5) * x;
  const A right = A(1) + t;
  const A left_derivative = A(0.5) * right;
  const A right_derivative = left * (A(1) - t * t) * kBeta * (A(1) + A(3) * kKappa * x_sq);
  return left_derivative + right_derivative;
}

// The functors the elementwise loops (ops/cpu_loops.h, kernels/loops.cuh) run: x -> gelu(x),
// and (g, x) -> g * gelu'(x).
template <bool kTanh>
struct GeluFn {
  template <class A>
  CL_GELU_HD A operator()(A x) const {
    if constexpr (kTanh) {
      return gelu_tanh<A>(x);
    } else {
      return gelu_erf<A>(x);
    }
  }
};

template <bool kTanh>
struct GeluBackwardFn {
  template <class A>
  CL_GELU_HD A operator()(A g, A x) const {
    if constexpr (kTanh) {
      return g * gelu_tanh_grad<A>(x);
    } else {
      return g * gelu_erf_grad<A>(x);
    }
  }
};

}  // namespace cl

#undef CL_GELU_HD
