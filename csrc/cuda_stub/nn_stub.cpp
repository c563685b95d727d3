// CPU-only builds: the CUDA loops of the fused nn kernels (ops/nn_ops.h) raise torch's
// "not compiled with CUDA" error.
#include "core/error.h"
#include "ops/nn_ops.h"

namespace cl::cuda {
namespace {
[[noreturn]] void fail() { throw AssertionError("cudalite not compiled with CUDA enabled"); }
}  // namespace

void layer_norm(const Tensor&, const Tensor&, const Tensor&, int64_t, int64_t, double,
                const Tensor&, const Tensor&, const Tensor&) {
  fail();
}
void layer_norm_backward(const Tensor&, const Tensor&, const Tensor&, const Tensor&, const Tensor&,
                         int64_t, int64_t, const Tensor&, const Tensor&, const Tensor&) {
  fail();
}
void batch_norm(const Tensor&, const Tensor&, const Tensor&, const Tensor&, const Tensor&, int64_t,
                int64_t, int64_t, bool, double, double, const Tensor&, const Tensor&,
                const Tensor&) {
  fail();
}
void batch_norm_backward(const Tensor&, const Tensor&, const Tensor&, const Tensor&, const Tensor&,
                         int64_t, int64_t, int64_t, bool, const Tensor&, const Tensor&,
                         const Tensor&) {
  fail();
}
void softmax(const Tensor&, int64_t, int64_t, int64_t, bool, const Tensor&) { fail(); }
void softmax_backward(const Tensor&, const Tensor&, int64_t, int64_t, int64_t, bool,
                      const Tensor&) {
  fail();
}
void nll_loss(const Tensor&, const Tensor&, const Tensor&, int, int64_t, const Tensor&,
              const Tensor&) {
  fail();
}
void nll_loss_backward(const Tensor&, const Tensor&, const Tensor&, int, int64_t, const Tensor&,
                       const Tensor&) {
  fail();
}
void gelu(const ElementwiseIter&, bool) { fail(); }
void gelu_backward(const ElementwiseIter&, bool) { fail(); }

}  // namespace cl::cuda
