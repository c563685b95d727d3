// CPU-only builds: the CUDA entry points exist and raise torch's "not compiled" error, so
// the rest of the core compiles and links the same way with or without the toolkit.
#include "core/cuda_api.h"
#include "core/error.h"
#include "ops/kernels.h"

namespace cl {
namespace {
[[noreturn]] void fail() { throw AssertionError("cudalite not compiled with CUDA enabled"); }
}  // namespace

namespace cuda {
bool is_compiled() { return false; }
std::string compiled_archs() { return ""; }
std::string compiled_version() { return ""; }
int device_count() noexcept { return 0; }
void lazy_init() { fail(); }
bool is_initialized() { return false; }
int current_device() { fail(); }
void set_device(int) { fail(); }
void check_device_index(int) { fail(); }
void check_current_device() { fail(); }
Allocator* device_allocator(int) { fail(); }
// torch's CPU-only message for pin_memory=True (EmptyTensor.cpp).
Allocator* host_allocator() {
  throw Error(
      "pin_memory=True requires a CUDA or other accelerator backend; no pinned memory allocator "
      "is available on this system.");
}
CachingAllocator* caching_allocator(int) { fail(); }
std::vector<CachingAllocator*> caching_allocators() { return {}; }
void record_stream(const DataPtr&, StreamHandle) { fail(); }
void memcpy_h2d(void*, const void*, size_t, int, bool) { fail(); }
void memcpy_d2h(void*, const void*, size_t, int, bool) { fail(); }
void memcpy_d2d(void*, int, const void*, int, size_t) { fail(); }
void synchronize(int) { fail(); }
void flush_deferred_launches() {}
int deferred_ops_pending() { return 0; }
bool set_deferred_launches(bool) { return false; }
DeviceGuard::DeviceGuard(int) : prev_(-1), active_(false) {}
DeviceGuard::~DeviceGuard() = default;
// torch's message when its NVTX bindings are missing (torch/cuda/nvtx.py).
[[noreturn]] void no_nvtx() {
  throw Error("NVTX functions not installed. Are you sure you have a CUDA build?");
}
int nvtx_range_push(const std::string&) { no_nvtx(); }
int nvtx_range_pop() { no_nvtx(); }
uint64_t nvtx_range_start(const std::string&) { no_nvtx(); }
void nvtx_range_end(uint64_t) { no_nvtx(); }
void nvtx_mark(const std::string&) { no_nvtx(); }
int profiler_start() { fail(); }
int profiler_stop() { fail(); }
std::string error_string(int) { fail(); }
void sleep_cycles(int64_t) { fail(); }
bool is_in_bad_fork() { return false; }
void poison_fork() {}
int exchange_device(int device) {
  if (device < 0) return -1;
  fail();
}
int maybe_exchange_device(int device) { return exchange_device(device); }
std::pair<size_t, size_t> mem_get_info(int) { fail(); }
bool can_device_access_peer(int, int) { fail(); }
bool get_p2p_access(int, int) { fail(); }
int p2p_access_state(int, int) { fail(); }
void p2p_selfcheck(int, int, bool) { fail(); }
void memcpy_peer(void*, int, const void*, int, size_t) { fail(); }
const DeviceProperties& get_device_properties(int) { fail(); }
std::string uuid_string(const std::array<uint8_t, 16>&) { fail(); }

namespace nvml {
int visible_device_count() noexcept { return -1; }
int visible_device_count(const char*, int, const std::vector<std::string>&) { fail(); }
bool available() noexcept { return false; }
unsigned index_of(int) { fail(); }
unsigned utilization(int) { fail(); }
unsigned memory_usage(int) { fail(); }
unsigned temperature(int) { fail(); }
unsigned power_draw(int) { fail(); }
unsigned clock_rate(int) { fail(); }
uint64_t memory_used(int) { fail(); }
std::vector<Process> compute_processes(int) { fail(); }
}  // namespace nvml

// torch lets CPU-only builds set the matmul flags too; they just have no effect.
MatmulFlags& matmul_flags() {
  static MatmulFlags flags;
  return flags;
}
const char* const kTf32ApiConflictMessage = "";
void* blas_handle(int) { fail(); }
void set_library_dirs(const std::vector<std::string>&) {}
std::string blas_library_path() { return ""; }
// ---- cuDNN: never available without CUDA ----
bool cudnn_available() { return false; }
int64_t cudnn_version() { return 0; }
std::string cudnn_library_path() { return ""; }
void set_cudnn_library_dirs(const std::vector<std::string>&) {}

void binary(const ElementwiseIter&, BinaryOp) { fail(); }
void unary(const ElementwiseIter&, UnaryOp) { fail(); }
void where(const ElementwiseIter&) { fail(); }
void fma(const ElementwiseIter&) { fail(); }
void cast(const ElementwiseIter&) { fail(); }
void affine_fill(const Tensor&, double, double) { fail(); }
void reduce_rows(ReduceOp, const Tensor&, int64_t, int64_t, const Tensor&, const Tensor&) {
  fail();
}
void gather_offsets(const Tensor&, const Tensor&, const Tensor&) { fail(); }
void reduce_cols(ReduceOp, const Tensor&, int64_t, int64_t, int64_t, const Tensor&, const Tensor&) {
  fail();
}
void scatter_offsets(const Tensor&, const Tensor&, const Tensor&, int) { fail(); }
void scan(ScanOp, const Tensor&, int64_t, int64_t, int64_t, const Tensor&) { fail(); }
void gather_dim(const DimIndexer&, const Tensor&, const Tensor&, const Tensor&) { fail(); }
void scatter_dim(const DimIndexer&, const Tensor&, const Tensor&, const Tensor&, int) { fail(); }
int torch_random_unroll(TorchRandom, ScalarType, uint64_t) { fail(); }
void torch_bernoulli_tensor(const Tensor&, const Tensor&, const PhiloxArgs&) { fail(); }
void torch_random(const Tensor&, TorchRandom, double, double, uint64_t, int64_t, const PhiloxArgs&,
                  unsigned) {
  fail();
}
}  // namespace cuda

Tensor cuda_matmul(const Tensor&, const Tensor&) { fail(); }
Tensor cuda_addmm(const Tensor&, const Tensor&, const Tensor&, double, double) { fail(); }
Tensor cudnn_convolution(const Tensor&, const Tensor&, const CudnnConvArgs&) { fail(); }
Tensor cudnn_convolution_backward_input(const std::vector<int64_t>&, const Tensor&, const Tensor&,
                                        const CudnnConvArgs&) {
  fail();
}
Tensor cudnn_convolution_backward_weight(const std::vector<int64_t>&, const Tensor&, const Tensor&,
                                         const CudnnConvArgs&) {
  fail();
}

}  // namespace cl
