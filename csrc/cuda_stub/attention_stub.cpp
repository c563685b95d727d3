// CPU-only builds: the fused attention kernels raise, as the other CUDA loops do
// (cuda_stub.cpp); flash_attention_supported is false there (no device), so the Python
// dispatch never reaches them.
#include "core/error.h"
#include "ops/attention.h"

namespace cl::cuda {
namespace {
[[noreturn]] void fail() { throw AssertionError("cudalite not compiled with CUDA enabled"); }
}  // namespace

void flash_attention_fwd(const FlashParams&, int) { fail(); }
void flash_attention_bwd(const FlashParams&, int) { fail(); }
int64_t flash_attention_smem(int64_t) { return 0; }

}  // namespace cl::cuda
