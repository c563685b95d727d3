// The CPU loops of the elementwise ops (the table is shared with CUDA: ops/op_table.h).
#include "ops/cpu_loops.h"
#include "ops/kernels.h"
#include "ops/op_table.h"

namespace cl::cpu {
namespace {
struct CpuLaunch {
  template <class out_t, class in_t, int N, class F>
  void run(const ElementwiseIter& it, F f) const {
    cpu_kernel<out_t, in_t, N>(it, f);
  }
};
}  // namespace

void binary(const ElementwiseIter& it, BinaryOp op) { dispatch_binary(it, op, CpuLaunch{}); }
void unary(const ElementwiseIter& it, UnaryOp op) { dispatch_unary(it, op, CpuLaunch{}); }
void where(const ElementwiseIter& it) { dispatch_where(it, CpuLaunch{}); }
void fma(const ElementwiseIter& it) { dispatch_fma(it, CpuLaunch{}); }
void cast(const ElementwiseIter& it) { dispatch_cast(it, CpuLaunch{}); }

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
