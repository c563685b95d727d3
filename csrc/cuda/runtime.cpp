// The CUDA runtime behind core/cuda_api.h: initialisation, devices, copies.
#include <cuda_runtime_api.h>

#include <cstdlib>
#include <mutex>

#include "core/cuda_api.h"
#include "cuda/cuda_check.h"

namespace cl::cuda {

namespace {
std::once_flag g_init_once;
bool g_initialized = false;
std::string g_init_error;
}  // namespace

bool is_compiled() { return true; }
#ifdef CL_CUDA_ARCHS
std::string compiled_archs() { return CL_CUDA_ARCHS; }
std::string compiled_version() { return CL_CUDA_VERSION; }
#endif

void throw_cuda_error(cudaError_t err, const char* file, int line) {
  (void)file;
  (void)line;
  cudaGetLastError();  // clear the sticky-free error state
  std::string msg = std::string("CUDA error: ") + cudaGetErrorString(err) +
                    "\nCUDA kernel errors might be asynchronously reported at some other API "
                    "call, so the stacktrace below might be incorrect.\nFor debugging consider "
                    "passing CUDA_LAUNCH_BLOCKING=1\n";
  if (err == cudaErrorMemoryAllocation) throw OutOfMemoryError(msg);
  throw AcceleratorError(int(err), msg);
}

bool launch_blocking() {
  static const bool blocking = [] {
    const char* v = std::getenv("CUDA_LAUNCH_BLOCKING");
    return v && v[0] == '1';
  }();
  return blocking;
}

void check_last_launch(const char* file, int line) {
  cudaError_t err = cudaGetLastError();
  if (err == cudaSuccess && launch_blocking()) err = cudaDeviceSynchronize();
  if (err != cudaSuccess) throw_cuda_error(err, file, line);
}

int device_count() noexcept {
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess) {
    cudaGetLastError();
    return 0;
  }
  return n;
}

void lazy_init() {
  if (g_initialized) return;
  std::call_once(g_init_once, [] {
    int n = 0;
    cudaError_t err = cudaGetDeviceCount(&n);
    if (err == cudaErrorInsufficientDriver || err == cudaErrorNoDevice ||
        err == cudaErrorInitializationError || (err == cudaSuccess && n == 0)) {
      cudaGetLastError();
      g_init_error = err == cudaErrorInsufficientDriver
                         ? "Found no NVIDIA driver on your system. Please check that you have "
                           "an NVIDIA GPU and installed a driver from "
                           "http://www.nvidia.com/Download/index.aspx"
                         : "No CUDA GPUs are available";
      return;
    }
    if (err != cudaSuccess) {
      cudaGetLastError();
      g_init_error = std::string("CUDA error: ") + cudaGetErrorString(err);
      return;
    }
    g_initialized = true;
  });
  if (!g_initialized) throw Error(g_init_error);
}

bool is_initialized() { return g_initialized; }

void check_device_index(int device) {
  lazy_init();
  if (device < 0 || device >= device_count()) throw_cuda_error(cudaErrorInvalidDevice, "", 0);
}

int current_device() {
  lazy_init();
  int d = 0;
  CL_CUDA_CHECK(cudaGetDevice(&d));
  return d;
}

void set_device(int device) {
  check_device_index(device);
  CL_CUDA_CHECK(cudaSetDevice(device));
}

StreamHandle current_stream(int) { return nullptr; }

void memcpy_h2d(void* dst, const void* src, size_t n, int device, bool non_blocking) {
  DeviceGuard g(device);
  cudaStream_t s = static_cast<cudaStream_t>(current_stream(device));
  CL_CUDA_CHECK(cudaMemcpyAsync(dst, src, n, cudaMemcpyHostToDevice, s));
  if (!non_blocking) CL_CUDA_CHECK(cudaStreamSynchronize(s));
}

void memcpy_d2h(void* dst, const void* src, size_t n, int device, bool non_blocking) {
  DeviceGuard g(device);
  cudaStream_t s = static_cast<cudaStream_t>(current_stream(device));
  CL_CUDA_CHECK(cudaMemcpyAsync(dst, src, n, cudaMemcpyDeviceToHost, s));
  if (!non_blocking) CL_CUDA_CHECK(cudaStreamSynchronize(s));
}

void memcpy_d2d(void* dst, int dst_device, const void* src, int src_device, size_t n) {
  DeviceGuard g(dst_device);
  cudaStream_t s = static_cast<cudaStream_t>(current_stream(dst_device));
  if (dst_device == src_device) {
    CL_CUDA_CHECK(cudaMemcpyAsync(dst, src, n, cudaMemcpyDeviceToDevice, s));
  } else {
    CL_CUDA_CHECK(cudaMemcpyPeerAsync(dst, dst_device, src, src_device, n, s));
    CL_CUDA_CHECK(cudaStreamSynchronize(s));
  }
}

void synchronize(int device) {
  DeviceGuard g(device);
  CL_CUDA_CHECK(cudaDeviceSynchronize());
}

DeviceGuard::DeviceGuard(int device) : prev_(-1), active_(false) {
  if (device < 0) return;
  lazy_init();
  CL_CUDA_CHECK(cudaGetDevice(&prev_));
  if (prev_ != device) {
    check_device_index(device);
    CL_CUDA_CHECK(cudaSetDevice(device));
    active_ = true;
  }
}

DeviceGuard::~DeviceGuard() {
  if (active_) CL_CUDA_CHECK_NOTHROW(cudaSetDevice(prev_));
}

}  // namespace cl::cuda
