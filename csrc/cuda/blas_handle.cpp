// Loading cuBLAS and caching one handle per (thread, device, stream).
//
// A handle is bound to the device that was current when it was created and owns workspace
// there; creating one costs milliseconds, so each thread's (device, stream) pair gets one,
// made on first use and kept for the life of the process (destroying handles at exit races
// with the driver's own teardown, so, like torch, we never do): Note [Library handles per
// thread] in cuda/thread_handles.h.
#include <cuda_runtime_api.h>

#include <map>
#include <mutex>
#include <utility>

#include "core/cuda_api.h"
#include "cuda/cublas_loader.h"
#include "cuda/cuda_check.h"
#include "cuda/dynlib.h"
#include "cuda/graphs.h"
#include "cuda/thread_handles.h"

namespace cl::cuda {

namespace {
std::mutex g_dirs_mu;
std::vector<std::string> g_dirs;

Cublas load() {
  std::vector<std::string> dirs;
  {
    std::lock_guard<std::mutex> lock(g_dirs_mu);
    dirs = g_dirs;
  }
  // each soname, newest first: the loader's search path, then the pip wheels' folders
  std::vector<std::string> candidates;
  for (const char* name : {"libcublas.so.13", "libcublas.so.12", "libcublas.so"}) {
    candidates.push_back(name);
    for (std::string& p : dynlib::in_dirs(dirs, name)) candidates.push_back(std::move(p));
  }
  Cublas c;
  auto accept = [&c](void* lib) {
    using dynlib::resolve;
    bool ok = resolve(lib, c.create, "cublasCreate_v2") &&
              resolve(lib, c.set_stream, "cublasSetStream_v2") &&
              resolve(lib, c.set_math_mode, "cublasSetMathMode") &&
              resolve(lib, c.gemm_ex, "cublasGemmEx") &&
              resolve(lib, c.gemm_strided_batched_ex, "cublasGemmStridedBatchedEx");
    resolve(lib, c.status_name, "cublasGetStatusName");
    return ok;
  };
  std::vector<dynlib::Attempt> attempts;
  if (dynlib::open_first(candidates, accept, "lacks the cuBLAS entry points cudalite needs",
                         &c.path, &attempts))
    return c;
  throw Error("cuBLAS could not be loaded, so matrix products can't run on the GPU. Tried:" +
              dynlib::tried(attempts) + ". Last error: " + dynlib::last_error(attempts) +
              ". Install the CUDA toolkit's cuBLAS (or `pip install nvidia-cublas`) and make it "
              "findable, e.g. through LD_LIBRARY_PATH.");
}

std::mutex g_load_mu;
const Cublas* g_cublas = nullptr;
}  // namespace

const Cublas& cublas() {
  std::lock_guard<std::mutex> lock(g_load_mu);
  // Not std::call_once: a failed load is retried, since a later set_library_dirs may fix it.
  if (!g_cublas) g_cublas = new Cublas(load());
  return *g_cublas;
}

void set_library_dirs(const std::vector<std::string>& dirs) {
  std::lock_guard<std::mutex> lock(g_dirs_mu);
  g_dirs = dirs;
}

std::string blas_library_path() {
  std::lock_guard<std::mutex> lock(g_load_mu);
  return g_cublas ? g_cublas->path : "";
}

void throw_cublas_error(cublasStatus_t status, const char* call) {
  const Cublas& c = cublas();
  std::string name =
      c.status_name ? c.status_name(status) : "CUBLAS_STATUS_" + std::to_string(int(status));
  throw Error("CUDA error: " + name + " when calling `" + call + "`");
}

MatmulFlags& matmul_flags() {
  static MatmulFlags flags;
  return flags;
}

const char* const kTf32ApiConflictMessage =
    "PyTorch is checking whether allow_tf32_new is enabled for cuBlas matmul,Current status "
    "indicate that you have used mix of the legacy and new APIs to set the TF32 status for "
    "cublas matmul. We suggest only using the new API to set the TF32 flag. See also: "
    "https://pytorch.org/docs/main/notes/cuda.html#tensorfloat-32-tf32-on-ampere-and-later-"
    "devices";

namespace {
struct BlasTag {};
}  // namespace

// The calling thread's handle for the device's current stream (Note [Library handles per
// thread], cuda/thread_handles.h).
void* blas_handle(int device) {
  const Cublas& c = cublas();
  check_device_index(device);
  StreamHandle stream = current_stream(device);
  return ThreadHandles<cublasHandle_t, BlasTag>::get(device, stream, [&] {
    DeviceGuard guard(device);
    // A handle made during a capture allocates its workspace (Note [Capturing CUDA graphs]).
    RelaxedCaptureGuard relaxed;
    // cuBLAS binds the handle to the current context: make sure it is the primary one.
    if (captures_underway() == 0) CL_CUDA_CHECK(cudaFree(nullptr));
    cublasHandle_t h = nullptr;
    CL_CUBLAS_CHECK(c.create(&h), "cublasCreate(handle)");
    CL_CUBLAS_CHECK(c.set_stream(h, static_cast<cudaStream_t>(stream)),
                    "cublasSetStream(handle, stream)");
    return h;
  });
}

}  // namespace cl::cuda
