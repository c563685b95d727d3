// Loading cuDNN (cudnn_loader.h) and caching one handle per (thread, device, stream), as
// cuBLAS's (blas_handle.cpp): handles are made on first use and kept for the life of the
// process (Note [Library handles per thread], cuda/thread_handles.h).
#include <cuda_runtime_api.h>

#include <map>
#include <mutex>
#include <utility>
#include <vector>

#include "core/cuda_api.h"
#include "cuda/cuda_check.h"
#include "cuda/cudnn_loader.h"
#include "cuda/dynlib.h"
#include "cuda/thread_handles.h"

namespace cl::cuda {

namespace {
std::mutex g_dirs_mu;
std::vector<std::string> g_dirs;

bool resolve_all(void* lib, Cudnn& c) {
  using dynlib::resolve;
  bool ok = resolve(lib, c.get_version, "cudnnGetVersion") &&
            resolve(lib, c.get_error_string, "cudnnGetErrorString") &&
            resolve(lib, c.create, "cudnnCreate") && resolve(lib, c.set_stream, "cudnnSetStream") &&
            resolve(lib, c.create_tensor_desc, "cudnnCreateTensorDescriptor") &&
            resolve(lib, c.set_tensor_nd, "cudnnSetTensorNdDescriptor") &&
            resolve(lib, c.destroy_tensor_desc, "cudnnDestroyTensorDescriptor") &&
            resolve(lib, c.create_filter_desc, "cudnnCreateFilterDescriptor") &&
            resolve(lib, c.set_filter_nd, "cudnnSetFilterNdDescriptor") &&
            resolve(lib, c.destroy_filter_desc, "cudnnDestroyFilterDescriptor") &&
            resolve(lib, c.create_conv_desc, "cudnnCreateConvolutionDescriptor") &&
            resolve(lib, c.set_conv_nd, "cudnnSetConvolutionNdDescriptor") &&
            resolve(lib, c.set_conv_group_count, "cudnnSetConvolutionGroupCount") &&
            resolve(lib, c.set_conv_math_type, "cudnnSetConvolutionMathType") &&
            resolve(lib, c.destroy_conv_desc, "cudnnDestroyConvolutionDescriptor");
  const char* kinds[3] = {"Forward", "BackwardData", "BackwardFilter"};
  for (int i = 0; i < 3 && ok; ++i) {
    std::string k = kinds[i];
    ok = resolve(lib, c.get_algo[i], ("cudnnGetConvolution" + k + "Algorithm_v7").c_str()) &&
         resolve(lib, c.find_algo[i], ("cudnnFindConvolution" + k + "AlgorithmEx").c_str()) &&
         resolve(lib, c.workspace_size[i], ("cudnnGetConvolution" + k + "WorkspaceSize").c_str()) &&
         resolve(lib, c.run[i], ("cudnnConvolution" + k).c_str());
  }
  return ok;
}

Cudnn load() {
  // CUDALITE_CUDNN_PATH (the library itself, or the folder that holds it), the pip wheel's
  // folders, then the loader's search path
  std::vector<std::string> candidates =
      dynlib::env_candidates("CUDALITE_CUDNN_PATH", "libcudnn.so.9");
  {
    std::lock_guard<std::mutex> lock(g_dirs_mu);
    for (std::string& p : dynlib::in_dirs(g_dirs, "libcudnn.so.9"))
      candidates.push_back(std::move(p));
  }
  candidates.push_back("libcudnn.so.9");
  candidates.push_back("libcudnn.so");
  Cudnn c;
  std::vector<dynlib::Attempt> attempts;
  if (dynlib::open_first(
          candidates, [&c](void* lib) { return resolve_all(lib, c); },
          "lacks the cuDNN entry points cudalite needs (cuDNN 9's legacy API)", &c.path, &attempts))
    return c;
  throw Error("cuDNN could not be loaded. Tried:" + dynlib::tried(attempts) +
              ". Last error: " + dynlib::last_error(attempts) +
              ". Install it with `pip install nvidia-cudnn-cu13` (or cudalite's `cudnn` extra), or "
              "set CUDALITE_CUDNN_PATH to libcudnn.so.9 or its folder.");
}

std::mutex g_load_mu;
const Cudnn* g_cudnn = nullptr;
bool g_failed = false;  // a failed load is remembered until the search folders change
}  // namespace

const Cudnn& cudnn() {
  std::lock_guard<std::mutex> lock(g_load_mu);
  if (!g_cudnn) g_cudnn = new Cudnn(load());
  return *g_cudnn;
}

bool cudnn_available() {
  {
    std::lock_guard<std::mutex> lock(g_load_mu);
    if (g_cudnn) return true;
    if (g_failed) return false;
  }
  try {
    cudnn();
    return true;
  } catch (const Error&) {
    std::lock_guard<std::mutex> lock(g_load_mu);
    g_failed = true;
    return false;
  }
}

int64_t cudnn_version() { return cudnn_available() ? int64_t(cudnn().get_version()) : 0; }

std::string cudnn_library_path() { return cudnn_available() ? cudnn().path : ""; }

void set_cudnn_library_dirs(const std::vector<std::string>& dirs) {
  {
    std::lock_guard<std::mutex> lock(g_dirs_mu);
    g_dirs = dirs;
  }
  std::lock_guard<std::mutex> lock(g_load_mu);
  g_failed = false;
}

void throw_cudnn_error(cudnn_api::Status status) {
  const Cudnn& c = cudnn();
  throw Error(std::string("cuDNN error: ") + c.get_error_string(status));
}

namespace {
struct CudnnTag {};
}  // namespace

// The calling thread's handle for the device's current stream (Note [Library handles per
// thread], cuda/thread_handles.h).
cudnn_api::Handle cudnn_handle(int device) {
  const Cudnn& c = cudnn();
  check_device_index(device);
  StreamHandle stream = current_stream(device);  // also launches deferred work
  return ThreadHandles<cudnn_api::Handle, CudnnTag>::get(device, stream, [&] {
    DeviceGuard guard(device);
    CL_CUDA_CHECK(cudaFree(nullptr));  // the primary context, as for cuBLAS
    cudnn_api::Handle h = nullptr;
    CL_CUDNN_CHECK(c.create(&h));
    CL_CUDNN_CHECK(c.set_stream(h, stream));
    return h;
  });
}

}  // namespace cl::cuda
