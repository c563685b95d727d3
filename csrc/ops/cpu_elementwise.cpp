// The CPU elementwise ops: each entry point calls the part of the loops that holds the op
// (ops/cpu_elementwise_part.cpp; the table is shared with CUDA: ops/op_table.h).
#include "ops/cpu_loops.h"
#include "ops/elementwise_parts.h"
#include "ops/kernels.h"

namespace cl::cpu {

void binary(const ElementwiseIter& it, BinaryOp op) {
  call_part<CpuLaunch>(part_of(op), [&](auto p) { p.binary(it, op); });
}
void unary(const ElementwiseIter& it, UnaryOp op) {
  call_part<CpuLaunch>(part_of(op), [&](auto p) { p.unary(it, op); });
}
void where(const ElementwiseIter& it) {
  call_part<CpuLaunch>(part_of(it.in_dtype), [&](auto p) { p.where(it); });
}
void cast(const ElementwiseIter& it) {
  call_part<CpuLaunch>(part_of(it.in_dtype), [&](auto p) { p.cast(it); });
}

void affine_fill(const Tensor& t, double start, double step) {
  CL_DISPATCH_ALL_TYPES(t->dtype, "arange", [&] {
    auto* p = reinterpret_cast<scalar_t*>(t->data());
    for (int64_t i = 0; i < t->numel(); ++i) {
      double v = start + double(i) * step;
      if constexpr (std::is_integral_v<scalar_t>) {
        p[i] = scalar_t(int64_t(v));
      } else {
        p[i] = scalar_t(v);
      }
    }
  });
}

}  // namespace cl::cpu
