// Maps (op, dtype) to a functor and a loop, once for both devices. A Launcher provides
// `template <class out_t, class in_t, int N, class F> void run(const ElementwiseIter&, F)`;
// ops/cpu_elementwise_part.cpp passes the CPU loop, kernels/elementwise_part.cu the CUDA loop.
#pragma once

#include <type_traits>

#include "core/dtype.h"
#include "core/error.h"
#include "ops/elementwise_iter.h"
#include "ops/elementwise_parts.h"
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

// Note [Split instantiation]
// The table below is most of a build's work: every row's functor for every dtype of its loop
// class (casts: every pair of dtypes), on each device. Each dispatch_* takes <Part, Parts> and
// instantiates only part Part of Parts: the binary and unary rows whose enumerator % Parts ==
// Part, and `where` and the casts from the input dtypes whose enumerator % Parts == Part.
// <0, 1> is the whole table. The build compiles one part per translation unit
// (ops/cpu_elementwise_part.cpp, kernels/elementwise_part.cu, CMakeLists.txt's
// CUDALITE_ELEMENTWISE_PARTS), so that the cores share this work instead of one of them
// compiling it alone; the entry points (cpu::binary, ...) call the part that holds the row
// (ops/elementwise_parts.h). The entry points' files must not include this header: they would
// instantiate the whole table again.
template <int Part, int Parts, class E>
constexpr bool in_part(E e) {
  return int(e) % Parts == Part;
}
template <int Part, int Parts, class T>
constexpr bool type_in_part() {
  return in_part<Part, Parts>(TypeOf<T>::value);
}

// One case per row of ops/ops.def: the row's functor, for the dtypes of its loop class (the
// entry points in elementwise.cpp raise for the others before getting here).
template <int Part, int Parts, class T, class L>
void binary_typed(const ElementwiseIter& it, BinaryOp op, const L& launch) {
  switch (op) {
#define CL_BINARY_OP(Enum, name, result, loop, ...)                                             \
  case BinaryOp::Enum:                                                                          \
    if constexpr (in_part<Part, Parts>(BinaryOp::Enum) && loop_instantiated<OpLoop::loop, T>()) \
      launch.template run<op_result_t<OpResult::result, T>, T, 2>(it, fn::Enum{});              \
    break;
#include "ops/ops.def"
#undef CL_BINARY_OP
  }
}

template <int Part = 0, int Parts = 1, class L>
void dispatch_binary(const ElementwiseIter& it, BinaryOp op, const L& launch) {
  CL_DISPATCH_ALL_TYPES(it.in_dtype, binary_op_name(op),
                        [&] { binary_typed<Part, Parts, scalar_t>(it, op, launch); });
}

template <int Part, int Parts, class T, class L>
void unary_typed(const ElementwiseIter& it, UnaryOp op, const L& launch) {
  switch (op) {
#define CL_UNARY_OP(Enum, name, result, loop, ...)                                             \
  case UnaryOp::Enum:                                                                          \
    if constexpr (in_part<Part, Parts>(UnaryOp::Enum) && loop_instantiated<OpLoop::loop, T>()) \
      launch.template run<op_result_t<OpResult::result, T>, T, 1>(it, fn::Enum{});             \
    break;
#include "ops/ops.def"
#undef CL_UNARY_OP
  }
}

template <int Part = 0, int Parts = 1, class L>
void dispatch_unary(const ElementwiseIter& it, UnaryOp op, const L& launch) {
  CL_DISPATCH_ALL_TYPES(it.in_dtype, unary_op_name(op),
                        [&] { unary_typed<Part, Parts, scalar_t>(it, op, launch); });
}

template <int Part = 0, int Parts = 1, class L>
void dispatch_where(const ElementwiseIter& it, const L& launch) {
  CL_DISPATCH_ALL_TYPES(it.in_dtype, "where", [&] {
    if constexpr (type_in_part<Part, Parts, scalar_t>())
      launch.template run<scalar_t, scalar_t, 3>(it, fn::Where{});
  });
}

// fma: float and double only (the entry point in elementwise.cpp raises for the others); the
// optimizers' private op, outside the parts (two instantiations).
template <class L>
void dispatch_fma(const ElementwiseIter& it, const L& launch) {
  if (it.in_dtype == ScalarType::Float32) {
    launch.template run<float, float, 3>(it, fn::Fma{});
  } else {
    launch.template run<double, double, 3>(it, fn::Fma{});
  }
}

template <int Part = 0, int Parts = 1, class L>
void dispatch_cast(const ElementwiseIter& it, const L& launch) {
  CL_DISPATCH_ALL_TYPES(it.in_dtype, "copy_", [&] {
    using in_t = scalar_t;
    if constexpr (type_in_part<Part, Parts, in_t>()) {
      CL_DISPATCH_ALL_TYPES(it.out_dtype, "copy_",
                            [&] { launch.template run<scalar_t, in_t, 1>(it, Identity{}); });
    }
  });
}

// The members of ElementwisePart (ops/elementwise_parts.h): a part's translation unit
// instantiates them for its launcher and part, `template struct ElementwisePart<L, P>;`.
template <class L, int P>
void ElementwisePart<L, P>::binary(const ElementwiseIter& it, BinaryOp op) {
  dispatch_binary<P, kElementwiseParts>(it, op, L{});
}
template <class L, int P>
void ElementwisePart<L, P>::unary(const ElementwiseIter& it, UnaryOp op) {
  dispatch_unary<P, kElementwiseParts>(it, op, L{});
}
template <class L, int P>
void ElementwisePart<L, P>::where(const ElementwiseIter& it) {
  dispatch_where<P, kElementwiseParts>(it, L{});
}
template <class L, int P>
void ElementwisePart<L, P>::cast(const ElementwiseIter& it) {
  dispatch_cast<P, kElementwiseParts>(it, L{});
}

}  // namespace cl
