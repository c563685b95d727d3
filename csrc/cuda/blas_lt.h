// cuBLASLt's matrix product with a bias epilogue (what torch's addmm uses for a Linear
// layer): D = alpha * op(A) op(B) + bias, column-major, bias along D's rows. Loaded through
// dlopen like cuBLAS (cublas_loader.h).
#pragma once

#include <cublas_api.h>
#include <cuda_runtime_api.h>

#include <cstdint>

namespace cl::cuda {

struct LtGemm {
  bool transa = false, transb = false;
  int m = 0, n = 0, k = 0;  // D is m x n
  const void* a = nullptr;
  int lda = 0;
  const void* b = nullptr;
  int ldb = 0;
  const void* bias = nullptr;  // m elements of `type`
  void* d = nullptr;
  int ldd = 0;
  cudaDataType type = CUDA_R_32F;
  cublasComputeType_t compute = CUBLAS_COMPUTE_32F;
  bool allow_reduced = true;  // split-K reductions in reduced precision allowed
  float alpha = 1.0f;
};

// Runs the product on the current stream of `device`; false (nothing launched) when
// cuBLASLt is unavailable or has no algorithm for this problem.
bool lt_gemm_bias(int device, const LtGemm& g);

}  // namespace cl::cuda
