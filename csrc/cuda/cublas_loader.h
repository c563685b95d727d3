// cuBLAS through dlopen: the entry points cudalite uses, resolved on first use.
//
// Linking cuBLAS would make `import cudalite` fail wherever the library is missing (and
// costs ~100 ms of loading even for programs that never multiply matrices), so it is opened
// the first time a matrix product runs on the GPU.
#pragma once

#include <cublas_api.h>

#include <string>
#include <vector>

namespace cl::cuda {

struct Cublas {
  cublasStatus_t (*create)(cublasHandle_t*) = nullptr;
  cublasStatus_t (*set_stream)(cublasHandle_t, cudaStream_t) = nullptr;
  cublasStatus_t (*set_math_mode)(cublasHandle_t, cublasMath_t) = nullptr;
  cublasStatus_t (*gemm_ex)(cublasHandle_t, cublasOperation_t, cublasOperation_t, int, int, int,
                            const void*, const void*, cudaDataType, int, const void*, cudaDataType,
                            int, const void*, void*, cudaDataType, int, cublasComputeType_t,
                            cublasGemmAlgo_t) = nullptr;
  cublasStatus_t (*gemm_strided_batched_ex)(cublasHandle_t, cublasOperation_t, cublasOperation_t,
                                            int, int, int, const void*, const void*, cudaDataType,
                                            int, long long, const void*, cudaDataType, int,
                                            long long, const void*, void*, cudaDataType, int,
                                            long long, int, cublasComputeType_t,
                                            cublasGemmAlgo_t) = nullptr;
  const char* (*status_name)(cublasStatus_t) = nullptr;  // absent before cuBLAS 11.4
  std::string path;                                      // the library that was opened
};

// Loads cuBLAS on the first call (thread-safe). Throws cl::Error, saying what was tried,
// when no usable library is found.
const Cublas& cublas();

// torch's wording: "CUDA error: CUBLAS_STATUS_... when calling `call`".
[[noreturn]] void throw_cublas_error(cublasStatus_t status, const char* call);

}  // namespace cl::cuda

#define CL_CUBLAS_CHECK(expr, call)                                                    \
  do {                                                                                 \
    cublasStatus_t cl_st_ = (expr);                                                    \
    if (cl_st_ != CUBLAS_STATUS_SUCCESS) ::cl::cuda::throw_cublas_error(cl_st_, call); \
  } while (0)
