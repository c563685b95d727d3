// CPU-only builds: sorting CUDA tensors raises, as the other CUDA loops do (cuda_stub.cpp).
#include "core/error.h"
#include "ops/sort.h"

namespace cl::cuda {

void sort_rows(const Tensor&, int64_t, int64_t, int64_t, bool, const Tensor&, const Tensor&) {
  throw AssertionError("cudalite not compiled with CUDA enabled");
}

}  // namespace cl::cuda
