// What the core needs from the CUDA runtime, behind a header with no CUDA types, so that the
// rest of the core compiles the same with or without the toolkit. Implemented in
// csrc/cuda/ (CUDA builds) or csrc/cuda_stub/ (CPU-only builds, which raise torch's
// "not compiled with CUDA" errors).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "core/allocator.h"

namespace cl {
class CachingAllocator;
struct StorageImpl;
}  // namespace cl

namespace cl::cuda {

bool is_compiled();
std::string compiled_archs();    // "90-real;75-virtual", "" for CPU-only builds
std::string compiled_version();  // toolkit version, "" for CPU-only builds
// Number of visible GPUs. Never throws and never initialises CUDA in this process.
int device_count() noexcept;
// Initialises CUDA (once, thread-safe); throws torch's errors when no GPU is usable.
void lazy_init();
bool is_initialized();
int current_device();
void set_device(int device);
void check_device_index(int device);  // AcceleratorError "invalid device ordinal" when bad
// Raises what the runtime reports for the current device (cudaGetDevice's error, as
// AcceleratorError) when CUDA is not usable; returns when it is, or in a forked child. torch
// raises that error from calls that skip lazy initialisation (torch.cuda.Stream()).
void check_current_device();

Allocator* device_allocator(int device);
Allocator* host_allocator();  // page-locked host memory

using StreamHandle = void*;  // cudaStream_t
// The calling thread's current stream on `device` (a thread_local lookup; csrc/cuda/
// streams.cpp). Every kernel launch and copy on `device` goes to it.
StreamHandle current_stream(int device);
// Launches the batch of deferred small ops, if any (Note [Deferred launches] in
// csrc/cuda/deferred.cpp): before a pointer to device memory leaves cudalite. No-op in
// CPU-only builds.
void flush_deferred_launches();
int deferred_ops_pending();  // ops waiting in that batch (for tests)
// Turns deferral on or off for the process (tests compare both); returns the previous state.
bool set_deferred_launches(bool on);
// Whether the calling thread's current stream on `device` is capturing a CUDA graph
// (csrc/cuda/graphs.cpp; false in CPU-only builds).
bool current_stream_capturing(int device);

// The caching allocator behind device_allocator(device), created on first use; nullptr when
// CUDALITE_NO_CUDA_MEMORY_CACHING=1 turned caching off. Initialises CUDA.
CachingAllocator* caching_allocator(int device);
// The caching allocators created so far, indexed by device (nullptr where none).
std::vector<CachingAllocator*> caching_allocators();
// Tensor.record_stream, the entry point (csrc/cuda/record_stream.cpp): the memory of
// `storage` (on a GPU) is not reused before the work queued on `stream` when the storage is
// freed has completed. Caching-allocator memory goes to the DataPtr overload below; other
// memory (imported through DLPack, say) is held back by record_stream.cpp itself.
void record_stream(StorageImpl* storage, StreamHandle stream);
// The caching allocator's part (csrc/cuda/device_allocator.cpp): memory of a device DataPtr
// is also used on `stream`, so the allocator reuses it only after the work queued there when
// it is freed has finished.
void record_stream(const DataPtr& data, StreamHandle stream);
// Releases memory held back by record_stream.cpp whose streams have finished. Called on
// synchronize and frees.
void process_record_stream_frees();
size_t pending_record_stream_frees();  // frees still held back (for tests)

// Copies between host and device or device and device; `device` is the GPU involved.
// Blocking unless `non_blocking` (which is only asynchronous for page-locked host memory).
void memcpy_h2d(void* dst, const void* src, size_t n, int device, bool non_blocking);
void memcpy_d2h(void* dst, const void* src, size_t n, int device, bool non_blocking);
// Same device: on its current stream. Across devices: memcpy_peer (never blocks the host).
void memcpy_d2d(void* dst, int dst_device, const void* src, int src_device, size_t n);
void synchronize(int device);

// Sets the current device for a scope; restores the previous one on exit.
class DeviceGuard {
 public:
  explicit DeviceGuard(int device);
  ~DeviceGuard();
  DeviceGuard(const DeviceGuard&) = delete;
  DeviceGuard& operator=(const DeviceGuard&) = delete;

 private:
  int prev_;
  bool active_;
};

// ---- Device runtime (csrc/cuda/runtime.cpp, device_properties.cpp) ----

// Whether this process is a child forked after its parent initialised CUDA; CUDA can't be
// used there (lazy_init throws torch's "Cannot re-initialize CUDA in forked subprocess").
bool is_in_bad_fork();
// Marks children forked from now on as bad forks (called before the driver is touched).
void poison_fork();
// torch's _cuda_exchangeDevice: makes `device` current and returns the previous one; -1 in,
// -1 out (no-op). maybe_exchange_device restores without initialising CUDA when it isn't.
int exchange_device(int device);
int maybe_exchange_device(int device);
std::pair<size_t, size_t> mem_get_info(int device);  // (free, total) bytes
bool can_device_access_peer(int device, int peer);
// Makes `waiting` wait (on the GPU) for the work queued so far on `stream` of `device`.
void stream_wait_stream(StreamHandle waiting, StreamHandle stream, int device);

// ---- Peer access and copies between GPUs (csrc/cuda/peer_access.cpp) ----
// Whether work queued on `device` may use `peer`'s memory directly. Enabled on the first call
// for the pair (cudaDeviceEnablePeerAccess, the peer's arenas mapped for `device`, then a
// self-check) and cached; false where the GPUs can't or CUDALITE_DISABLE_P2P=1. Raises a
// RuntimeError when the pair failed the self-check (Note [Peer access self-check]).
bool get_p2p_access(int device, int peer);
// The cached answer, without enabling anything: -1 not asked yet, 0 off, 1 on, 2 broken.
int p2p_access_state(int device, int peer);
// Writes a pattern from `device` into `peer`'s memory and reads it back, through peer access
// when it is on; raises the self-check's RuntimeError on a mismatch. `inject_fault` flips a
// bit of what was read back (tests of the error).
void p2p_selfcheck(int device, int peer, bool inject_fault);
// A copy of n bytes from `src` on src_device to `dst` on another device, on the source's
// current stream behind a two-way event barrier with the destination's current stream
// (Note [Copies between devices]); cudaMemcpyPeerAsync where peer access is off.
void memcpy_peer(void* dst, int dst_device, const void* src, int src_device, size_t n);

// torch's _CudaDeviceProperties fields, read once per device and cached.
struct DeviceProperties {
  std::string name;
  int major = 0;
  int minor = 0;
  bool is_multi_gpu_board = false;
  bool is_integrated = false;
  int multi_processor_count = 0;
  size_t total_memory = 0;
  int max_threads_per_multi_processor = 0;
  int max_threads_per_block = 0;
  int warp_size = 0;
  size_t shared_memory_per_block = 0;
  size_t shared_memory_per_block_optin = 0;
  size_t shared_memory_per_multiprocessor = 0;
  int regs_per_multiprocessor = 0;
  int clock_rate = 0;         // kHz
  int memory_clock_rate = 0;  // kHz
  int memory_bus_width = 0;   // bits
  int L2_cache_size = 0;      // bytes
  int pci_bus_id = 0;
  int pci_device_id = 0;
  int pci_domain_id = 0;
  std::array<uint8_t, 16> uuid{};
};
const DeviceProperties& get_device_properties(int device);
// "xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx", lower-case hex (torch's uuid_to_string).
std::string uuid_string(const std::array<uint8_t, 16>& uuid);

// ---- NVML, opened from the driver at run time (csrc/cuda/nvml.cpp) ----
// Device counts and monitoring that never initialise CUDA in this process, so a later
// fork() stays safe.
namespace nvml {
// Devices that NVML sees with CUDA_VISIBLE_DEVICES applied, as torch's _device_count_nvml
// computes it; -1 when NVML can't answer (no driver, MIG uuids, ...).
int visible_device_count() noexcept;
// The mapping behind it: `env` is CUDA_VISIBLE_DEVICES (nullptr when unset), `raw_count`
// the number of devices NVML lists and `uuids` their UUIDs ("GPU-...").
int visible_device_count(const char* env, int raw_count, const std::vector<std::string>& uuids);
// False when NVML (the driver) can't be loaded or initialised.
bool available() noexcept;
// NVML's index for a CUDA device ordinal; throws torch's "device N is not visible" error.
unsigned index_of(int device);
unsigned utilization(int device);   // % of time a kernel ran
unsigned memory_usage(int device);  // % of time device memory was read or written
unsigned temperature(int device);   // degrees C (GPU die)
unsigned power_draw(int device);    // mW
unsigned clock_rate(int device);    // SM clock, MHz
uint64_t memory_used(int device);   // bytes in use on the device (all processes)
struct Process {
  unsigned pid;
  uint64_t used_memory;  // bytes; UINT64_MAX when NVML can't tell
};
std::vector<Process> compute_processes(int device);
}  // namespace nvml

// ---- Profiling (csrc/cuda/profiling.cpp): NVTX annotations and the profiler switch ----
// NVTX calls are annotations for a profiler (Nsight Systems): without one attached they do
// nothing, and they never initialise CUDA. range_push / range_pop return the nesting depth
// (negative when no tool tracks it), as nvtxRangePushA / nvtxRangePop do.
int nvtx_range_push(const std::string& msg);
int nvtx_range_pop();
uint64_t nvtx_range_start(const std::string& msg);  // a handle for nvtx_range_end
void nvtx_range_end(uint64_t id);
void nvtx_mark(const std::string& msg);
// cudaProfilerStart / cudaProfilerStop; the cudaError_t code (0: success).
int profiler_start();
int profiler_stop();
std::string error_string(int code);  // cudaGetErrorString
// torch.cuda._sleep: a kernel on the current stream that spins for `cycles` clock cycles
// (kernels/misc.cu).
void sleep_cycles(int64_t cycles);

// ---- cuBLAS, loaded with dlopen on first use (csrc/cuda/blas_handle.cpp) ----
// torch.backends.cuda.matmul settings.
struct MatmulFlags {
  bool allow_tf32 = false;
  bool allow_fp16_reduced_precision_reduction = true;
  bool allow_bf16_reduced_precision_reduction = true;
  // torch.backends.cuda.matmul.fp32_precision (the new API) disagrees with allow_tf32 /
  // set_float32_matmul_precision (the legacy one): float32 products raise, as torch's
  // allowTF32CuBLAS() does.
  bool tf32_api_conflict = false;
};
// torch's message for a float32 product under conflicting TF32 settings.
extern const char* const kTf32ApiConflictMessage;
MatmulFlags& matmul_flags();
// The cuBLAS handle (cublasHandle_t) for `device` and its current stream, created once.
void* blas_handle(int device);
// Extra folders to search for libcublas after the loader's own search (pip's
// site-packages/nvidia/*/lib folders, found by the Python layer).
void set_library_dirs(const std::vector<std::string>& dirs);
// The path of the cuBLAS library in use ("" before the first matrix product).
std::string blas_library_path();

// ---- cuDNN, loaded with dlopen on first use (csrc/cuda/cudnn_handle.cpp) ----
// Whether cuDNN can be loaded (loads it on the first call; never throws; false in CPU-only
// builds).
bool cudnn_available();
// cudnnGetVersion() (91900 for 9.19.0), or 0 when cuDNN can't be loaded.
int64_t cudnn_version();
// The path of the cuDNN library in use ("" when it can't be loaded).
std::string cudnn_library_path();
// Extra folders to search for libcudnn.so.9 (pip's site-packages/nvidia/cudnn/lib).
void set_cudnn_library_dirs(const std::vector<std::string>& dirs);

}  // namespace cl::cuda

namespace cl {
struct TensorImpl;
using Tensor = std::shared_ptr<TensorImpl>;
// beta * self + alpha * (a @ b) for 2-D `a`, `b` on one GPU, `self` broadcastable to the
// product (nn.Linear's bias); through cuBLAS (csrc/cuda/blas.cpp).
Tensor cuda_addmm(const Tensor& self, const Tensor& a, const Tensor& b, double beta, double alpha);

// ---- convolutions through cuDNN (csrc/cuda/cudnn_conv.cpp) ----
// Cross-correlation of contiguous NC* tensors on one GPU, with symmetric `padding`,
// `stride` and `dilation` per spatial dim and `groups`; no bias. `benchmark` times cuDNN's
// algorithms once per problem (else its heuristics choose), `deterministic` keeps only
// deterministic ones, `allow_tf32` lets float32 use TF32 tensor cores.
struct CudnnConvArgs {
  std::vector<int64_t> padding, stride, dilation;
  int64_t groups = 1;
  bool benchmark = false, deterministic = false, allow_tf32 = true;
};
// y = conv(x, w)
Tensor cudnn_convolution(const Tensor& x, const Tensor& w, const CudnnConvArgs& args);
// The gradient of conv(x, w) with respect to x (of sizes `x_sizes`), given dy.
Tensor cudnn_convolution_backward_input(const std::vector<int64_t>& x_sizes, const Tensor& dy,
                                        const Tensor& w, const CudnnConvArgs& args);
// The gradient of conv(x, w) with respect to w (of sizes `w_sizes`), given dy.
Tensor cudnn_convolution_backward_weight(const std::vector<int64_t>& w_sizes, const Tensor& dy,
                                         const Tensor& x, const CudnnConvArgs& args);
}  // namespace cl
