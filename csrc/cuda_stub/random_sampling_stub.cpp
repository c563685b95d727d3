// CPU-only builds: torch's CUDA sampling kernels raise, as the other CUDA loops do
// (cuda_stub.cpp).
#include "core/error.h"
#include "ops/kernels.h"

namespace cl::cuda {
namespace {
[[noreturn]] void fail() { throw AssertionError("cudalite not compiled with CUDA enabled"); }
}  // namespace

void torch_randperm(const Tensor&, int, const Tensor&, PhiloxArgs) { fail(); }
void torch_multinomial(const Tensor&, int64_t, const Tensor&, unsigned, unsigned, PhiloxArgs) {
  fail();
}
void torch_dropout(const Tensor&, const Tensor&, const Tensor&, double, int, PhiloxArgs, unsigned) {
  fail();
}

}  // namespace cl::cuda
