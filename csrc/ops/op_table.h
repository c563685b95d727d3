// Maps (op, dtype) to a functor and a loop, once for both devices. A Launcher provides
// `template <class out_t, class in_t, int N, class F> void run(const ElementwiseIter&, F)`;
// ops/cpu_elementwise.cpp passes the CPU loop, kernels/elementwise.cu the CUDA loop.
#pragma once

#include <type_traits>

#include "core/error.h"
#include "ops/elementwise_iter.h"
#include "ops/functors.h"
#include "ops/ops.h"

namespace cl {

struct Identity {
  template <class T>
  CL_HOST_DEVICE T operator()(T a) const {
    return a;
  }
};

// Whether an op's loop exists for input type T: the compile-time twin of ops.h loop_takes.
template <OpLoop loop, class T>
constexpr bool loop_instantiated() {
  if constexpr (loop == OpLoop::Floating) return !std::is_integral_v<T>;
  if constexpr (loop == OpLoop::Integral) return std::is_integral_v<T>;
  if constexpr (loop == OpLoop::NotBool) return !std::is_same_v<T, bool>;
  return true;
}
template <OpResult result, class T>
using op_result_t = std::conditional_t<result == OpResult::Bool, bool, T>;

// One case per row of ops/ops.def: the row's functor, for the dtypes of its loop class (the
// entry points in elementwise.cpp raise for the others before getting here).
template <class T, class L>
void binary_typed(const ElementwiseIter& it, BinaryOp op, const L& launch) {
  switch (op) {
#define CL_BINARY_OP(Enum, name, result, loop, ...)                                \
  case BinaryOp::Enum:                                                             \
    if constexpr (loop_instantiated<OpLoop::loop, T>())                            \
      launch.template run<op_result_t<OpResult::result, T>, T, 2>(it, fn::Enum{}); \
    break;
#include "ops/ops.def"
#undef CL_BINARY_OP
  }
}

template <class L>
void dispatch_binary(const ElementwiseIter& it, BinaryOp op, const L& launch) {
  CL_DISPATCH_ALL_TYPES(it.in_dtype, binary_op_name(op),
                        [&] { binary_typed<scalar_t>(it, op, launch); });
}

template <class T, class L>
void unary_typed(const ElementwiseIter& it, UnaryOp op, const L& launch) {
  switch (op) {
#define CL_UNARY_OP(Enum, name, result, loop, ...)                                 \
  case UnaryOp::Enum:                                                              \
    if constexpr (loop_instantiated<OpLoop::loop, T>())                            \
      launch.template run<op_result_t<OpResult::result, T>, T, 1>(it, fn::Enum{}); \
    break;
#include "ops/ops.def"
#undef CL_UNARY_OP
  }
}

template <class L>
void dispatch_unary(const ElementwiseIter& it, UnaryOp op, const L& launch) {
  CL_DISPATCH_ALL_TYPES(it.in_dtype, unary_op_name(op),
                        [&] { unary_typed<scalar_t>(it, op, launch); });
}

template <class L>
void dispatch_where(const ElementwiseIter& it, const L& launch) {
  CL_DISPATCH_ALL_TYPES(it.in_dtype, "where",
                        [&] { launch.template run<scalar_t, scalar_t, 3>(it, fn::Where{}); });
}

// fma: float and double only (the entry point in elementwise.cpp raises for the others).
template <class L>
void dispatch_fma(const ElementwiseIter& it, const L& launch) {
  if (it.in_dtype == ScalarType::Float32) {
    launch.template run<float, float, 3>(it, fn::Fma{});
  } else {
    launch.template run<double, double, 3>(it, fn::Fma{});
  }
}

template <class L>
void dispatch_cast(const ElementwiseIter& it, const L& launch) {
  CL_DISPATCH_ALL_TYPES(it.in_dtype, "copy_", [&] {
    using in_t = scalar_t;
    CL_DISPATCH_ALL_TYPES(it.out_dtype, "copy_",
                          [&] { launch.template run<scalar_t, in_t, 1>(it, Identity{}); });
  });
}

}  // namespace cl
