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

template <class T, class L>
void binary_typed(const ElementwiseIter& it, BinaryOp op, const L& launch) {
  constexpr bool integral = std::is_integral_v<T>;
  switch (op) {
#define CL_SAME(OP)                             \
  case BinaryOp::OP:                            \
    launch.template run<T, T, 2>(it, fn::OP{}); \
    break;
#define CL_BOOL(OP)                                \
  case BinaryOp::OP:                               \
    launch.template run<bool, T, 2>(it, fn::OP{}); \
    break;
    CL_SAME(Add)
    CL_SAME(Sub)
    CL_SAME(Mul) CL_SAME(FloorDiv) CL_SAME(Rem) CL_SAME(Pow) CL_SAME(Maximum) CL_SAME(Minimum)
        CL_BOOL(Eq) CL_BOOL(Ne) CL_BOOL(Lt) CL_BOOL(Le) CL_BOOL(Gt) CL_BOOL(Ge) CL_BOOL(LogicalAnd)
            CL_BOOL(LogicalOr) CL_BOOL(LogicalXor)
#undef CL_SAME
#undef CL_BOOL
                case BinaryOp::Div : if constexpr (!integral)
                                         launch.template run<T, T, 2>(it, fn::Div{});
    break;
    case BinaryOp::Atan2:
      if constexpr (!integral) launch.template run<T, T, 2>(it, fn::Atan2{});
      break;
    case BinaryOp::BitAnd:
      if constexpr (integral) launch.template run<T, T, 2>(it, fn::BitAnd{});
      break;
    case BinaryOp::BitOr:
      if constexpr (integral) launch.template run<T, T, 2>(it, fn::BitOr{});
      break;
    case BinaryOp::BitXor:
      if constexpr (integral) launch.template run<T, T, 2>(it, fn::BitXor{});
      break;
  }
}

template <class L>
void dispatch_binary(const ElementwiseIter& it, BinaryOp op, const L& launch) {
  CL_DISPATCH_ALL_TYPES(it.in_dtype, binary_op_name(op),
                        [&] { binary_typed<scalar_t>(it, op, launch); });
}

template <class T, class L>
void unary_typed(const ElementwiseIter& it, UnaryOp op, const L& launch) {
  constexpr bool integral = std::is_integral_v<T>;
  switch (op) {
#define CL_SAME(OP)                             \
  case UnaryOp::OP:                             \
    launch.template run<T, T, 1>(it, fn::OP{}); \
    break;
#define CL_BOOL(OP)                                \
  case UnaryOp::OP:                                \
    launch.template run<bool, T, 1>(it, fn::OP{}); \
    break;
#define CL_FLOAT(OP)                                                     \
  case UnaryOp::OP:                                                      \
    if constexpr (!integral) launch.template run<T, T, 1>(it, fn::OP{}); \
    break;
    CL_SAME(Abs)
    CL_SAME(Sign)
    CL_SAME(Relu) CL_SAME(Square) CL_BOOL(LogicalNot) CL_BOOL(IsNan) CL_BOOL(IsInf)
        CL_BOOL(IsFinite) CL_FLOAT(Exp) CL_FLOAT(Log) CL_FLOAT(Log2) CL_FLOAT(Log10) CL_FLOAT(Log1p)
            CL_FLOAT(Expm1) CL_FLOAT(Sqrt) CL_FLOAT(Rsqrt) CL_FLOAT(Sin) CL_FLOAT(Cos) CL_FLOAT(Tan)
                CL_FLOAT(Tanh) CL_FLOAT(Sigmoid) CL_FLOAT(Erf) CL_FLOAT(Reciprocal) CL_FLOAT(Floor)
                    CL_FLOAT(Ceil) CL_FLOAT(Round) CL_FLOAT(Trunc)
#undef CL_SAME
#undef CL_BOOL
#undef CL_FLOAT
                        case UnaryOp::Neg : if constexpr (!std::is_same_v<T, bool>)
                                                launch.template run<T, T, 1>(it, fn::Neg{});
    break;
    case UnaryOp::BitNot:
      if constexpr (integral) launch.template run<T, T, 1>(it, fn::BitNot{});
      break;
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

template <class L>
void dispatch_cast(const ElementwiseIter& it, const L& launch) {
  CL_DISPATCH_ALL_TYPES(it.in_dtype, "copy_", [&] {
    using in_t = scalar_t;
    CL_DISPATCH_ALL_TYPES(it.out_dtype, "copy_",
                          [&] { launch.template run<scalar_t, in_t, 1>(it, Identity{}); });
  });
}

}  // namespace cl
