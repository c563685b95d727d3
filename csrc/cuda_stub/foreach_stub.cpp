// CPU-only builds: the multi-tensor loops on CUDA tensors raise, as the other CUDA loops do
// (cuda_stub.cpp).
#include "core/error.h"
#include "ops/foreach.h"

namespace cl::cuda {
namespace {
[[noreturn]] void fail() { throw AssertionError("cudalite not compiled with CUDA enabled"); }
}  // namespace

void foreach_pointwise(const std::vector<TensorList>&, const PointwiseArgs&) { fail(); }
void foreach_norm(const TensorList&, double, const Tensor&) { fail(); }
void amp_unscale(const TensorList&, const Tensor&, const Tensor&) { fail(); }
void amp_update_scale(const Tensor&, const Tensor&, const Tensor&, double, double, int64_t) {
  fail();
}
void fused_adam(const std::vector<TensorList>&, const TensorList&, const AdamArgs&) { fail(); }
void fused_sgd(const std::vector<TensorList>&, const SgdArgs&) { fail(); }

}  // namespace cl::cuda
