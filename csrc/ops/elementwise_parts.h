// The elementwise loops of one device, compiled in parts (Note [Split instantiation] in
// ops/op_table.h). ElementwisePart<Launch, P> holds the rows and dtypes of part P for the
// loops of Launch; its members are defined in ops/op_table.h and instantiated in the part's
// translation unit. call_part runs the part that holds an op's instantiation.
#pragma once

#include <utility>

#include "core/dtype.h"
#include "ops/elementwise_iter.h"
#include "ops/ops.h"

// The number of parts, set by the build (CMakeLists.txt's CUDALITE_ELEMENTWISE_PARTS).
#ifndef CL_ELEMENTWISE_PARTS
#define CL_ELEMENTWISE_PARTS 1
#endif

namespace cl {

constexpr int kElementwiseParts = CL_ELEMENTWISE_PARTS;

template <class Launch, int Part>
struct ElementwisePart {
  static void binary(const ElementwiseIter& it, BinaryOp op);
  static void unary(const ElementwiseIter& it, UnaryOp op);
  static void where(const ElementwiseIter& it);
  static void cast(const ElementwiseIter& it);
};

// The part that holds an op's rows: binary and unary ops by enumerator, where and cast by
// input dtype.
inline int part_of(BinaryOp op) { return int(op) % kElementwiseParts; }
inline int part_of(UnaryOp op) { return int(op) % kElementwiseParts; }
inline int part_of(ScalarType in_dtype) { return int(in_dtype) % kElementwiseParts; }

namespace detail {
template <class Launch, class F, int... P>
void call_part(int part, const F& f, std::integer_sequence<int, P...>) {
  ((part == P ? f(ElementwisePart<Launch, P>{}) : void()), ...);
}
}  // namespace detail

// f(ElementwisePart<Launch, part>{}) for the runtime `part`.
template <class Launch, class F>
void call_part(int part, const F& f) {
  detail::call_part<Launch>(part, f, std::make_integer_sequence<int, kElementwiseParts>{});
}

}  // namespace cl
