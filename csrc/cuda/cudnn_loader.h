// cuDNN through dlopen: the legacy convolution API's entry points, resolved on first use.
//
// Like cuBLAS (cublas_loader.h), cuDNN is opened the first time a convolution runs on the
// GPU, so `import cudalite` neither needs nor pays for it. Its C API is declared here with
// plain types (handles and descriptors are opaque pointers, enums are ints with cuDNN 9's
// values), so building cudalite needs no cuDNN headers; the library comes from
// CUDALITE_CUDNN_PATH, pip's nvidia-cudnn wheel (site-packages/nvidia/cudnn/lib, found by the
// Python layer) or the loader's search path.
#pragma once

#include <cstddef>
#include <string>

namespace cl::cuda {

namespace cudnn_api {
using Status = int;  // cudnnStatus_t; 0 is CUDNN_STATUS_SUCCESS
using Handle = void*;
using TensorDesc = void*;
using FilterDesc = void*;
using ConvDesc = void*;

// cudnnDataType_t
constexpr int kFloat = 0, kDouble = 1, kHalf = 2, kBFloat16 = 9;
constexpr int kTensorNCHW = 0;        // cudnnTensorFormat_t
constexpr int kCrossCorrelation = 1;  // cudnnConvolutionMode_t
constexpr int kDefaultMath = 0;       // cudnnMathType_t
constexpr int kTensorOpMath = 1;
constexpr int kFmaMath = 3;
constexpr int kDeterministic = 1;  // cudnnDeterminism_t

// cudnnConvolution{Fwd,BwdData,BwdFilter}AlgoPerf_t: the three share this layout.
struct AlgoPerf {
  int algo;
  Status status;
  float time;
  size_t memory;
  int determinism;
  int math_type;
  int reserved[3];
};

// cudnnGetConvolution*Algorithm_v7 and cudnnFindConvolution*AlgorithmEx share these shapes
// up to the order of their descriptor arguments.
using GetAlgo = Status (*)(Handle, void*, void*, ConvDesc, void*, int, int*, AlgoPerf*);
using FindAlgo = Status (*)(Handle, void*, const void*, void*, const void*, ConvDesc, void*, void*,
                            int, int*, AlgoPerf*, void*, size_t);
using WorkspaceSize = Status (*)(Handle, void*, void*, ConvDesc, void*, int, size_t*);
using Run = Status (*)(Handle, const void*, void*, const void*, void*, const void*, ConvDesc, int,
                       void*, size_t, const void*, void*, void*);
}  // namespace cudnn_api

struct Cudnn {
  using S = cudnn_api::Status;
  size_t (*get_version)() = nullptr;
  const char* (*get_error_string)(S) = nullptr;
  S (*create)(cudnn_api::Handle*) = nullptr;
  S (*set_stream)(cudnn_api::Handle, void*) = nullptr;
  S (*create_tensor_desc)(cudnn_api::TensorDesc*) = nullptr;
  S (*set_tensor_nd)(cudnn_api::TensorDesc, int, int, const int*, const int*) = nullptr;
  S (*destroy_tensor_desc)(cudnn_api::TensorDesc) = nullptr;
  S (*create_filter_desc)(cudnn_api::FilterDesc*) = nullptr;
  S (*set_filter_nd)(cudnn_api::FilterDesc, int, int, int, const int*) = nullptr;
  S (*destroy_filter_desc)(cudnn_api::FilterDesc) = nullptr;
  S (*create_conv_desc)(cudnn_api::ConvDesc*) = nullptr;
  S(*set_conv_nd)
  (cudnn_api::ConvDesc, int, const int*, const int*, const int*, int, int) = nullptr;
  S (*set_conv_group_count)(cudnn_api::ConvDesc, int) = nullptr;
  S (*set_conv_math_type)(cudnn_api::ConvDesc, int) = nullptr;
  S (*destroy_conv_desc)(cudnn_api::ConvDesc) = nullptr;
  // [0]: forward, [1]: backward data, [2]: backward filter
  cudnn_api::GetAlgo get_algo[3] = {};
  cudnn_api::FindAlgo find_algo[3] = {};
  cudnn_api::WorkspaceSize workspace_size[3] = {};
  cudnn_api::Run run[3] = {};
  std::string path;  // the library that was opened
};

// Loads cuDNN on the first call (thread-safe). Throws cl::Error, saying what was tried,
// when no usable library is found.
const Cudnn& cudnn();

// torch's wording: "cuDNN error: CUDNN_STATUS_..."
[[noreturn]] void throw_cudnn_error(cudnn_api::Status status);

// The cuDNN handle for `device` bound to its current stream (created once per pair).
cudnn_api::Handle cudnn_handle(int device);

}  // namespace cl::cuda

#define CL_CUDNN_CHECK(expr)                                \
  do {                                                      \
    ::cl::cuda::cudnn_api::Status cl_st_ = (expr);          \
    if (cl_st_ != 0) ::cl::cuda::throw_cudnn_error(cl_st_); \
  } while (0)
