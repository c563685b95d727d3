// The CUDA runtime behind core/cuda_api.h: initialisation, fork safety, the current
// device, copies. Streams and events live in streams.cpp and events.cpp.
//
// Note [Lazy init and fork]
// Nothing touches the driver until the first real use (lazy_init), so `import cudalite`,
// is_available() and device_count() cost nothing and leave fork() safe: the counts come
// from NVML (nvml.cpp), which does not create a CUDA context. Just before the driver is
// initialised we register a pthread_atfork child handler; a child forked after that point
// can't use CUDA (the driver state does not survive fork), so lazy_init raises torch's
// "Cannot re-initialize CUDA in forked subprocess" there instead of failing obscurely.
//
// Note [Current device without contexts]
// Since CUDA 12, cudaSetDevice creates the device's primary context (hundreds of ms and
// hundreds of MiB). Restoring the previous device when a guard ends must not create a
// context on a device the program never used, so, as c10::cuda does, the restore only
// records a per-thread "target" device when that device has no context yet; the current
// device reads the target first, and the next real set_device clears it.
#include <cuda.h>
#include <cuda_runtime_api.h>
#include <pthread.h>

#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <mutex>

#include "core/cuda_api.h"
#include "cuda/cuda_check.h"
#include "cuda/deferred.h"
#include "cuda/driver.h"
#include "cuda/graphs.h"
#include "cuda/host_allocator.h"
#include "cuda/staged_copy.h"

namespace cl::cuda {

namespace {
std::once_flag g_init_once;
std::atomic<bool> g_initialized{false};
std::atomic<bool> g_in_bad_fork{false};
int g_device_count = 0;  // written once by lazy_init
std::string g_init_error;
thread_local int t_target_device = -1;

void forked_child() {
  g_in_bad_fork.store(true);
  // The parent's deferred batch is not the child's to launch (it can't use CUDA anyway).
  deferred_detail::g_pending.store(false);
}

// The message torch gives for each way cudaGetDeviceCount can fail (c10/cuda/CUDAFunctions.cpp).
std::string device_count_error(cudaError_t err) {
  switch (err) {
    case cudaErrorInsufficientDriver: {
      int version = 0;
      if (cudaDriverGetVersion(&version) != cudaSuccess || version <= 0) {
        return "Found no NVIDIA driver on your system. Please check that you have an NVIDIA GPU "
               "and installed a driver from http://www.nvidia.com/Download/index.aspx";
      }
      return "The NVIDIA driver on your system is too old (found version " +
             std::to_string(version) +
             "). Please update your GPU driver by downloading and installing a new version from "
             "the URL: http://www.nvidia.com/Download/index.aspx Alternatively, install a "
             "cudalite build compiled with your version of the CUDA driver.";
    }
    case cudaErrorNoDevice:
      return "No CUDA GPUs are available";
    case cudaErrorInitializationError:
      return "CUDA driver initialization failed, you might not have a CUDA gpu.";
    case cudaErrorUnknown:
      return "CUDA unknown error - this may be due to an incorrectly set up environment, e.g. "
             "changing env variable CUDA_VISIBLE_DEVICES after program start. Setting the "
             "available devices to be zero.";
    default:
      return std::string(
                 "Unexpected error from cudaGetDeviceCount(). Did you run some cuda "
                 "functions before calling NumCudaDevices() that might have already "
                 "set an error? Error ") +
             std::to_string(int(err)) + ": " + cudaGetErrorString(err);
  }
}

// cuDevicePrimaryCtxGetState through the runtime's driver entry points (we never link
// libcuda). Without it we answer "has a context", which only costs a context.
bool has_primary_context(int device) {
  using GetFn = CUresult (*)(CUdevice*, int);
  using StateFn = CUresult (*)(CUdevice, unsigned*, int*);
  static const std::pair<GetFn, StateFn> fns(
      driver_function<GetFn>("cuDeviceGet"),
      driver_function<StateFn>("cuDevicePrimaryCtxGetState"));
  if (!fns.first || !fns.second) return true;
  CUdevice dev = 0;
  unsigned flags = 0;
  int active = 0;
  if (fns.first(&dev, device) != CUDA_SUCCESS) return true;
  if (fns.second(dev, &flags, &active) != CUDA_SUCCESS) return true;
  return active != 0;
}

int get_device_raw() {
  if (t_target_device >= 0) return t_target_device;
  int d = 0;
  CL_CUDA_CHECK(cudaGetDevice(&d));
  return d;
}

void set_device_raw(int device) {
  t_target_device = -1;
  int cur = -1;
  CL_CUDA_CHECK(cudaGetDevice(&cur));
  if (cur != device) CL_CUDA_CHECK(cudaSetDevice(device));
}

// Restores `device` as current without creating its context (Note [Current device...]).
void maybe_set_device_raw(int device) {
  if (has_primary_context(device)) {
    set_device_raw(device);
  } else {
    t_target_device = device;
  }
}
}  // namespace

bool is_compiled() { return true; }
#ifdef CL_CUDA_ARCHS
std::string compiled_archs() { return CL_CUDA_ARCHS; }
std::string compiled_version() { return CL_CUDA_VERSION; }
#endif

void throw_cuda_error(cudaError_t err, const char* file, int line) {
  (void)file;
  (void)line;
  cudaGetLastError();  // clear the error so the next call doesn't report it again
  // torch's wording (c10_cuda_check_implementation), less its DSA line.
  std::string msg = std::string("CUDA error: ") + cudaGetErrorString(err);
  if (err == cudaErrorInvalidDevice) {
    msg += "\nGPU device may be out of range, do you have enough GPUs?";
  } else {
    msg += std::string("\nSearch for `") + cudaGetErrorName(err) +
           "' in https://docs.nvidia.com/cuda/cuda-runtime-api/group__CUDART__TYPES.html for "
           "more information.";
  }
  if (!launch_blocking()) {
    msg +=
        "\nCUDA kernel errors might be asynchronously reported at some other API call, so the "
        "stacktrace below might be incorrect.\nFor debugging consider passing "
        "CUDA_LAUNCH_BLOCKING=1";
  }
  msg += "\n";
  if (err == cudaErrorMemoryAllocation) throw OutOfMemoryError(msg);
  throw AcceleratorError(int(err), msg);
}

bool launch_blocking() {
  static const bool blocking = [] {
    const char* v = std::getenv("CUDA_LAUNCH_BLOCKING");
    return v && v[0] == '1' && v[1] == '\0';
  }();
  return blocking;
}

void check_last_launch(const char* file, int line) {
  cudaError_t err = cudaGetLastError();
  if (err == cudaSuccess && launch_blocking()) err = cudaDeviceSynchronize();
  if (err != cudaSuccess) throw_cuda_error(err, file, line);
}

bool is_in_bad_fork() { return g_in_bad_fork.load(); }

void poison_fork() {
  static std::once_flag once;
  std::call_once(once, [] { pthread_atfork(nullptr, nullptr, &forked_child); });
}

int device_count() noexcept {
  if (g_initialized.load()) return g_device_count;
  int n = nvml::visible_device_count();
  if (n >= 0) return n;
  // No NVML (a container without the driver's utility libraries, MIG uuids): ask the
  // runtime, which initialises the driver, so fork safety is lost from here on.
  poison_fork();
  if (cudaGetDeviceCount(&n) != cudaSuccess) {
    cudaGetLastError();
    return 0;
  }
  return n;
}

void lazy_init() {
  if (g_in_bad_fork.load()) {
    throw Error(
        "Cannot re-initialize CUDA in forked subprocess. To use CUDA with multiprocessing, you "
        "must use the 'spawn' start method");
  }
  if (g_initialized.load()) return;
  std::call_once(g_init_once, [] {
    poison_fork();
    int n = 0;
    cudaError_t err = cudaGetDeviceCount(&n);
    if (err != cudaSuccess || n == 0) {
      cudaGetLastError();
      g_init_error = device_count_error(err == cudaSuccess ? cudaErrorNoDevice : err);
      return;
    }
    g_device_count = n;
    g_initialized.store(true);
  });
  if (!g_initialized.load()) throw Error(g_init_error);
}

bool is_initialized() { return g_initialized.load() && !g_in_bad_fork.load(); }

void check_current_device() {
  if (g_initialized.load() || g_in_bad_fork.load()) return;
  poison_fork();  // before the runtime touches the driver (Note at the top of this file)
  int device = 0;
  cudaError_t err = cudaGetDevice(&device);
  if (err != cudaSuccess) throw_cuda_error(err, __FILE__, __LINE__);
}

void check_device_index(int device) {
  lazy_init();
  if (device < 0 || device >= g_device_count) throw_cuda_error(cudaErrorInvalidDevice, "", 0);
}

int current_device() {
  lazy_init();
  return get_device_raw();
}

void set_device(int device) {
  check_device_index(device);
  set_device_raw(device);
}

int exchange_device(int device) {
  if (device < 0) return -1;
  lazy_init();
  int cur = get_device_raw();
  if (cur != device) set_device(device);
  return cur;
}

int maybe_exchange_device(int device) {
  if (device < 0) return -1;
  lazy_init();
  int cur = get_device_raw();
  if (cur != device) {
    check_device_index(device);
    maybe_set_device_raw(device);
  }
  return cur;
}

std::pair<size_t, size_t> mem_get_info(int device) {
  DeviceGuard g(device);
  size_t free = 0, total = 0;
  CL_CUDA_CHECK(cudaMemGetInfo(&free, &total));
  return {free, total};
}

bool can_device_access_peer(int device, int peer) {
  check_device_index(device);
  check_device_index(peer);
  int can = 0;
  CL_CUDA_CHECK(cudaDeviceCanAccessPeer(&can, device, peer));
  return can != 0;
}

// Note [Copies and streams]
// Copies go to the current stream of the GPU involved, like every kernel. non_blocking is
// only passed for page-locked host memory (copy.cpp checks): the copy is queued and the
// pinned block is noted as used by the stream, so the host allocator won't hand it out
// again before the copy has run (Note [Pinned block reuse]). A blocking copy returns when
// the host buffer is safe to use and the stream has caught up, as torch does; from or to
// pageable memory of 1 MiB and more it is staged through pinned buffers by several threads
// (Note [Staged pageable copies]).
namespace {
// Note [Pinned slot for small copies]
// A blocking copy of a few bytes (`.item()`, `x.cuda()` of a small tensor) is dominated by
// the driver's handling of pageable memory: it stages the bytes through its own buffer under
// a lock. Each thread keeps a small page-locked slot instead; the copy goes through it as a
// plain DMA, and because the copy is blocking the slot is free again when the call returns.
constexpr size_t kSlotBytes = 4096;

struct PinnedSlot {
  void* p = nullptr;
  ~PinnedSlot() {
    if (p) (void)cudaFreeHost(p);  // at exit the runtime may be gone already: ignore
  }
};

void* pinned_slot() {
  thread_local PinnedSlot slot;
  if (!slot.p) CL_CUDA_CHECK(cudaHostAlloc(&slot.p, kSlotBytes, cudaHostAllocPortable));
  return slot.p;
}

// Note [One-element copies as memsets]
// A blocking host-to-device copy of 1, 2 or 4 bytes (one element of most dtypes: x.cuda()
// of a scalar, tensor(1., device='cuda')) is a cuMemsetD8/D16/D32Async carrying the value:
// the copy engine has no host memory to read, and copy plus synchronisation cost 0.2-0.4 us
// less than a 4-byte cudaMemcpyAsync from pinned memory (5.07-5.18 against 5.30-5.56 us on
// an H200, benchmarks/cpp/launch_overhead.cu). False when the driver lacks the function or
// the destination isn't aligned to the size; the caller copies then.
bool h2d_as_memset(void* dst, const void* src, size_t n, cudaStream_t s) {
  using D8 = CUresult (*)(CUdeviceptr, unsigned char, size_t, CUstream);
  using D16 = CUresult (*)(CUdeviceptr, unsigned short, size_t, CUstream);
  using D32 = CUresult (*)(CUdeviceptr, unsigned int, size_t, CUstream);
  static const D8 d8 = driver_function<D8>("cuMemsetD8Async");
  static const D16 d16 = driver_function<D16>("cuMemsetD16Async");
  static const D32 d32 = driver_function<D32>("cuMemsetD32Async");
  auto p = reinterpret_cast<CUdeviceptr>(dst);
  auto cs = reinterpret_cast<CUstream>(s);
  CUresult r = CUDA_ERROR_NOT_SUPPORTED;
  if (n == 4 && p % 4 == 0 && d32) {
    uint32_t v;
    std::memcpy(&v, src, 4);
    r = d32(p, v, 1, cs);
  } else if (n == 2 && p % 2 == 0 && d16) {
    uint16_t v;
    std::memcpy(&v, src, 2);
    r = d16(p, v, 1, cs);
  } else if (n == 1 && d8) {
    r = d8(p, *static_cast<const unsigned char*>(src), 1, cs);
  }
  return r == CUDA_SUCCESS;
}
}  // namespace

void memcpy_h2d(void* dst, const void* src, size_t n, int device, bool non_blocking) {
  if (n == 0) return;
  DeviceGuard g(device);
  cudaStream_t s = static_cast<cudaStream_t>(current_stream(device));
  // The slot is allocated on first use, which a capture forbids: a copy during a capture
  // takes the plain path and fails there with CUDA's "not permitted when capturing".
  if (!non_blocking && n <= kSlotBytes &&
      captures_underway() == 0) {          // Note [Pinned slot for small copies]
    if (!h2d_as_memset(dst, src, n, s)) {  // Note [One-element copies as memsets]
      void* slot = pinned_slot();
      std::memcpy(slot, src, n);
      CL_CUDA_CHECK(cudaMemcpyAsync(dst, slot, n, cudaMemcpyHostToDevice, s));
    }
    CL_CUDA_CHECK(cudaStreamSynchronize(s));
    return;
  }
  bool staged = n >= kMinStagedBytes && !is_pinned_ptr(src) && staged_h2d(dst, src, n, device, s);
  if (!staged) {
    CL_CUDA_CHECK(cudaMemcpyAsync(dst, src, n, cudaMemcpyHostToDevice, s));
    if (non_blocking) host_record_stream(src, s, device);
  }
  if (!non_blocking) CL_CUDA_CHECK(cudaStreamSynchronize(s));
}

void memcpy_d2h(void* dst, const void* src, size_t n, int device, bool non_blocking) {
  if (n == 0) return;
  DeviceGuard g(device);
  cudaStream_t s = static_cast<cudaStream_t>(current_stream(device));
  if (!non_blocking && n <= kSlotBytes &&
      captures_underway() == 0) {  // Note [Pinned slot for small copies]; see memcpy_h2d
    void* slot = pinned_slot();
    CL_CUDA_CHECK(cudaMemcpyAsync(slot, src, n, cudaMemcpyDeviceToHost, s));
    CL_CUDA_CHECK(cudaStreamSynchronize(s));
    std::memcpy(dst, slot, n);
    return;
  }
  // A staged copy has waited for its last DMA, and so for all earlier work on the stream.
  if (n >= kMinStagedBytes && !is_pinned_ptr(dst) && staged_d2h(dst, src, n, device, s)) return;
  CL_CUDA_CHECK(cudaMemcpyAsync(dst, src, n, cudaMemcpyDeviceToHost, s));
  if (non_blocking) {
    host_record_stream(dst, s, device);
  } else {
    CL_CUDA_CHECK(cudaStreamSynchronize(s));
  }
}

void memcpy_d2d(void* dst, int dst_device, const void* src, int src_device, size_t n) {
  if (dst_device != src_device) {
    memcpy_peer(dst, dst_device, src, src_device, n);  // Note [Copies between devices]
    return;
  }
  DeviceGuard g(dst_device);
  cudaStream_t s = static_cast<cudaStream_t>(current_stream(dst_device));
  CL_CUDA_CHECK(cudaMemcpyAsync(dst, src, n, cudaMemcpyDeviceToDevice, s));
}

void synchronize(int device) {
  flush_deferred();  // Note [Deferred launches]
  {
    DeviceGuard g(device);
    CL_CUDA_CHECK(cudaDeviceSynchronize());
  }
  process_record_stream_frees();
}

DeviceGuard::DeviceGuard(int device) : prev_(-1), active_(false) {
  if (device < 0) return;
  lazy_init();
  prev_ = get_device_raw();
  if (prev_ != device) {
    check_device_index(device);
    set_device_raw(device);
    active_ = true;
  } else if (t_target_device >= 0) {
    // The thread's device is only a target so far: make it real before work is queued.
    set_device_raw(device);
  }
}

DeviceGuard::~DeviceGuard() {
  if (!active_) return;
  try {
    maybe_set_device_raw(prev_);
  } catch (...) {  // a destructor never throws
  }
}

}  // namespace cl::cuda
