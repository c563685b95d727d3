// Matrix products on CUDA. Placeholder until the cuBLAS binding lands (issue: GPU math).
#include "core/error.h"
#include "ops/ops.h"

namespace cl {
Tensor cuda_matmul(const Tensor&, const Tensor&) {
  throw NotImplementedError("matmul on CUDA tensors is not implemented yet");
}
}  // namespace cl
