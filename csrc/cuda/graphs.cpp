// CUDA graphs: capture, instantiate, replay, reset (torch's at::cuda::CUDAGraph).
//
// Note [Capturing CUDA graphs]
// capture_begin makes the current stream capture (cudaStreamBeginCapture in the requested
// mode) and tells the device's caching allocator to serve that capture's allocations from a
// private pool (Note [Private pools] in core/caching_allocator_graphs.cpp): the filter accepts the
// streams whose capture id is this capture's, so streams forked into the capture through
// events allocate from the pool too, and other threads' streams do not.
// What cudalite does lazily must not break a capture:
// - Deferred launches (Note [Deferred launches]): the pending batch is launched before the
//   capture begins (so no earlier op lands in the graph) and before it ends (so every op
//   queued during the capture does); a batch launched on the capturing stream becomes one
//   kernel node whose operands are copied into the node, as for any kernel.
// - New memory: cudaMalloc, cuMemCreate/cuMemMap and cuBLAS's handle creation run in relaxed
//   capture mode (cudaThreadExchangeStreamCaptureMode), as torch's cudaMallocMaybeCapturing
//   does, since the "global" and "thread_local" modes forbid them while any capture runs.
//   The allocator neither frees nor waits during a capture.
// - Random numbers: the default generator of the device is captured (Note [Random numbers in
//   CUDA graphs] in ops/random.cpp); its two words of device memory are allocated before the
//   capture begins.
// A capture that fails (an illegal call inside it: a synchronisation, a copy to pageable
// memory) is ended by abort_capture: the partial graph is destroyed, the pool's diversion
// stops and the pool is released, so its memory returns at the next empty_cache().
#include "cuda/graphs.h"

#include <cuda_runtime_api.h>

#include <atomic>

#include "core/cuda_api.h"
#include "core/error.h"
#include "cuda/cuda_check.h"
#include "cuda/deferred.h"
#include "cuda/streams.h"
#include "ops/generator.h"

namespace cl::cuda {

namespace {

std::atomic<uint64_t> g_next_graph_pool{1};   // {n, 0}: a graph's own pool
std::atomic<uint64_t> g_next_pool_handle{1};  // {0, n}: graph_pool_handle()
std::atomic<int> g_captures{0};

cudaStream_t as_stream(void* s) { return static_cast<cudaStream_t>(s); }
cudaGraph_t as_graph(void* g) { return static_cast<cudaGraph_t>(g); }
cudaGraphExec_t as_exec(void* e) { return static_cast<cudaGraphExec_t>(e); }

}  // namespace

MempoolId graph_pool_handle() { return {0, g_next_pool_handle.fetch_add(1)}; }

int captures_underway() { return g_captures.load(std::memory_order_relaxed); }

RelaxedCaptureGuard::RelaxedCaptureGuard() {
  if (captures_underway() == 0) return;
  cudaStreamCaptureMode m = cudaStreamCaptureModeRelaxed;
  if (cudaThreadExchangeStreamCaptureMode(&m) == cudaSuccess) prev_ = int(m);
}

RelaxedCaptureGuard::~RelaxedCaptureGuard() {
  if (prev_ < 0) return;
  cudaStreamCaptureMode m = cudaStreamCaptureMode(prev_);
  cudaThreadExchangeStreamCaptureMode(&m);
}

bool current_stream_capturing(int device) {
  cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
  if (cudaStreamIsCapturing(as_stream(current_stream_unflushed(device)), &status) != cudaSuccess) {
    cudaGetLastError();
    return false;
  }
  return status == cudaStreamCaptureStatusActive;
}

bool is_current_stream_capturing() {
  if (!is_initialized()) {
    check_current_device();  // torch raises the runtime's error where CUDA is unusable
    return false;
  }
  const int d = current_device();
  cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
  CL_CUDA_CHECK(cudaStreamIsCapturing(as_stream(current_stream_unflushed(d)), &status));
  return status == cudaStreamCaptureStatusActive;
}

CudaGraph::CudaGraph(bool keep_graph)
    : keep_graph_(keep_graph), capture_id_(std::make_shared<std::atomic<unsigned long long>>(0)) {
  check_current_device();
}

CudaGraph::~CudaGraph() {
  abort_capture();
  reset();
}

void CudaGraph::capture_begin(MempoolId pool, CaptureMode mode) {
  CL_CHECK(!capturing_ && !capture_ended_,
           "This CUDAGraph instance already owns a captured graph. To capture a new graph, "
           "create a new instance.");
  lazy_init();
  const int device = current_device();
  void* stream = current_stream(device);  // launches the pending batch, outside the capture
  CL_CHECK(stream != nullptr,
           "CUDA graphs must be captured on a non-default stream. (However, after capture, "
           "it's ok to replay them on the default stream.)");
  CachingAllocator* alloc = caching_allocator(device);
  CL_CHECK(alloc != nullptr,
           "CUDA graphs need the caching allocator, which CUDALITE_NO_CUDA_MEMORY_CACHING=1 "
           "turned off.");
  if (pool.first || pool.second) {
    CL_CHECK_AS(ValueError, !(pool.first && pool.second), "invalid graph pool handle (", pool.first,
                ", ", pool.second, ")");
    pool_ = pool;
  } else {
    pool_ = {g_next_graph_pool.fetch_add(1), 0};
  }
  device_ = device;
  capture_stream_ = stream;

  // The replays' seed and offset live in memory of the default pools, allocated now.
  const GeneratorPtr& gen = default_generator(Device(DeviceType::CUDA, device));
  if (!rng_state_.get()) rng_state_ = alloc->allocate(2 * sizeof(uint64_t), StreamId(stream));
  auto* words = static_cast<uint64_t*>(rng_state_.get());

  auto id = capture_id_;
  id->store(0);
  alloc->begin_allocate_to_pool(pool_, [id](StreamId s) {
    const unsigned long long want = id->load(std::memory_order_relaxed);
    if (!want) return false;
    cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
    unsigned long long got = 0;
    if (cudaStreamGetCaptureInfo(reinterpret_cast<cudaStream_t>(s), &status, &got) != cudaSuccess) {
      cudaGetLastError();
      return false;
    }
    return status == cudaStreamCaptureStatusActive && got == want;
  });
  owns_pool_ = true;
  g_captures.fetch_add(1);
  DeviceGuard g(device);
  cudaError_t err = cudaStreamBeginCapture(as_stream(stream), cudaStreamCaptureMode(int(mode)));
  if (err != cudaSuccess) {
    g_captures.fetch_sub(1);
    alloc->end_allocate_to_pool(pool_);
    alloc->release_pool(pool_);
    owns_pool_ = false;
    throw_cuda_error(err, __FILE__, __LINE__);
  }
  capturing_ = true;
  try {
    cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
    unsigned long long cid = 0;
    CL_CUDA_CHECK(cudaStreamGetCaptureInfo(as_stream(stream), &status, &cid));
    id->store(cid);
    gen->graph_capture_begin(words, words + 1);
    rng_registered_ = true;
  } catch (...) {
    abort_capture();
    throw;
  }
}

// The bookkeeping of a capture's end, whatever its outcome.
void CudaGraph::finish_capture() noexcept {
  capturing_ = false;
  g_captures.fetch_sub(1);
  capture_id_->store(0);
  try {
    if (CachingAllocator* alloc = caching_allocator(device_)) alloc->end_allocate_to_pool(pool_);
  } catch (const std::exception&) {
  }
  rng_increment_ = 0;
  if (rng_registered_) {
    rng_registered_ = false;
    try {
      rng_increment_ = default_generator(Device(DeviceType::CUDA, device_))->graph_capture_end();
    } catch (const std::exception&) {
    }
  }
}

size_t CudaGraph::capture_end() {
  CL_CHECK(capturing_, "capture_end() called before capture_begin().");
  void* stream = nullptr;
  try {
    stream = current_stream(device_);  // launches the batch queued during the capture
  } catch (...) {
    // The batch could not join the capture (CUDA invalidated it, e.g. after another thread's
    // illegal call): end the capture, drop what it holds and release its pool now, or the
    // allocator and the generator would stay in capture mode until this object dies.
    abort_capture();
    throw;
  }
  CL_CHECK(stream == capture_stream_, "Capture must end on the same stream it began on.");
  cudaGraph_t graph = nullptr;
  cudaError_t err;
  {
    DeviceGuard g(device_);
    err = cudaStreamEndCapture(as_stream(stream), &graph);
  }
  finish_capture();
  if (err != cudaSuccess || !graph) {
    if (graph) cudaGraphDestroy(graph);
    cudaGetLastError();
    reset();  // releases the pool
    if (err != cudaSuccess) throw_cuda_error(err, __FILE__, __LINE__);
    throw Error("Invalid capture.");
  }
  graph_ = graph;
  capture_ended_ = true;
  size_t nodes = 0;
  CL_CUDA_CHECK(cudaGraphGetNodes(graph, nullptr, &nodes));
  if (!keep_graph_) {
    instantiate();
    CL_CUDA_CHECK(cudaGraphDestroy(graph));
    graph_ = nullptr;
  }
  return nodes;
}

void CudaGraph::abort_capture() noexcept {
  if (!capturing_) return;
  try {
    flush_deferred();  // a batch for the broken capture fails to launch; it is dropped
  } catch (const std::exception&) {
  }
  try {
    DeviceGuard g(device_);
    cudaGraph_t graph = nullptr;
    cudaStreamEndCapture(as_stream(capture_stream_), &graph);
    if (graph) cudaGraphDestroy(graph);
    cudaGetLastError();
  } catch (const std::exception&) {
  }
  finish_capture();
  reset();
}

void CudaGraph::instantiate() {
  CL_CHECK(capture_ended_, "capture_end() must have been called before calling instantiate");
  CL_CHECK(graph_,
           "No cudaGraph_t is available: either capture_end() has not been called, or "
           "the underlying cudaGraph_t was destroyed (keep_graph=false, and capture has "
           "been finalized).");
  DeviceGuard g(device_);
  if (exec_) {
    CL_CUDA_CHECK(cudaGraphExecDestroy(as_exec(exec_)));
    exec_ = nullptr;
  }
  cudaGraphExec_t exec = nullptr;
  CL_CUDA_CHECK(cudaGraphInstantiateWithFlags(
      &exec, as_graph(graph_),
      cudaGraphInstantiateFlagAutoFreeOnLaunch | cudaGraphInstantiateFlagUseNodePriority));
  exec_ = exec;
}

void CudaGraph::replay() {
  CL_CHECK(capture_ended_, "Called CUDAGraph::replay without a preceding successful capture.");
  if (!exec_) instantiate();  // keep_graph=True and not instantiated yet
  DeviceGuard g(device_);
  void* stream = current_stream(device_);  // any stream; launches the pending batch first
  if (rng_increment_) {
    auto [seed, offset] =
        default_generator(Device(DeviceType::CUDA, device_))->philox_reserve(rng_increment_);
    write_philox_state(static_cast<uint64_t*>(rng_state_.get()), seed, offset, stream);
  }
  CL_CUDA_CHECK(cudaGraphLaunch(as_exec(exec_), as_stream(stream)));
}

void CudaGraph::reset() noexcept {
  if (capturing_) return;  // abort_capture() ends it first
  if (graph_ || exec_) {
    try {
      DeviceGuard g(device_);
      if (graph_) cudaGraphDestroy(as_graph(graph_));
      if (exec_) cudaGraphExecDestroy(as_exec(exec_));
      cudaGetLastError();
    } catch (const std::exception&) {
    }
    graph_ = exec_ = nullptr;
  }
  if (owns_pool_) {
    owns_pool_ = false;
    if (CachingAllocator* alloc = caching_allocator(device_)) {
      try {
        alloc->release_pool(pool_);
      } catch (const std::exception&) {
      }
    }
  }
  capture_ended_ = false;
  rng_increment_ = 0;
}

MempoolId CudaGraph::pool() const {
  CL_CHECK(capture_ended_, "Called CUDAGraph::pool() without a preceding successful capture.");
  return pool_;
}

uintptr_t CudaGraph::raw_cuda_graph() const {
  CL_CHECK(graph_,
           "No cudaGraph_t is available: either capture_end() has not been called, or the "
           "underlying cudaGraph_t was destroyed (keep_graph=false, and capture has been "
           "finalized).");
  return reinterpret_cast<uintptr_t>(graph_);
}

uintptr_t CudaGraph::raw_cuda_graph_exec() const {
  CL_CHECK(exec_,
           "You cannot access the raw cudaGraphExec_t instance until instantiate() has been "
           "called");
  return reinterpret_cast<uintptr_t>(exec_);
}

void CudaGraph::debug_dump(const std::string& path) {
  CL_CHECK(graph_,
           "No cudaGraph_t is available: either capture_end() has not been called, or the "
           "underlying cudaGraph_t was destroyed (keep_graph=false, and capture has been "
           "finalized).");
  CL_CUDA_CHECK(
      cudaGraphDebugDotPrint(as_graph(graph_), path.c_str(), cudaGraphDebugDotFlagsVerbose));
}

}  // namespace cl::cuda
