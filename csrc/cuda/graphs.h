// CUDA graphs (torch's at::cuda::CUDAGraph): capture the work queued on a stream, instantiate
// it once, and replay it with one launch (csrc/cuda/graphs.cpp; csrc/cuda_stub/graphs_stub.cpp
// in CPU-only builds). No CUDA types here: the bindings include this header in every build.
// How captures interact with the caching allocator, deferred launches and random numbers:
// Note [Capturing CUDA graphs] in graphs.cpp and docs/graphs.md.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>

#include "core/caching_allocator.h"

namespace cl::cuda {

// cudaStreamCaptureMode's values.
enum class CaptureMode : int { kGlobal = 0, kThreadLocal = 1, kRelaxed = 2 };

// A pool id for graphs that share memory (torch.cuda.graph_pool_handle()): {0, n}.
MempoolId graph_pool_handle();
// Whether the calling thread's current stream on the current device is capturing. False
// without creating a context when CUDA has not been initialised in this process.
bool is_current_stream_capturing();
// How many captures run in the process now (any thread, any device).
int captures_underway();
// While any capture runs, makes the calling thread's capture mode relaxed for its lifetime,
// so that calls the global and thread_local modes forbid (cudaMalloc, cuMemMap, cuBLAS handle
// creation) stay legal, as torch's cudaMallocMaybeCapturing does.
class RelaxedCaptureGuard {
 public:
  RelaxedCaptureGuard();
  ~RelaxedCaptureGuard();
  RelaxedCaptureGuard(const RelaxedCaptureGuard&) = delete;
  RelaxedCaptureGuard& operator=(const RelaxedCaptureGuard&) = delete;

 private:
  int prev_ = -1;
};
// A replay's prologue (kernels/graphs.cu): dst[0] = seed, dst[1] = offset, on `stream`.
void write_philox_state(uint64_t* dst, uint64_t seed, uint64_t offset, void* stream);

class CudaGraph {
 public:
  explicit CudaGraph(bool keep_graph = false);
  ~CudaGraph();
  CudaGraph(const CudaGraph&) = delete;
  CudaGraph& operator=(const CudaGraph&) = delete;

  // Begins capturing the current stream of the current device. pool {0, 0}: a pool of its
  // own; else the pool of another graph or of graph_pool_handle().
  void capture_begin(MempoolId pool = {0, 0}, CaptureMode mode = CaptureMode::kGlobal);
  // Ends the capture (on the stream it began on); returns the graph's node count. Without
  // keep_graph the graph is instantiated and its template dropped.
  size_t capture_end();
  // Ends a capture that failed (an error inside it): drops whatever was captured, stops the
  // pool's diversion and releases the pool. No-op when not capturing. Never throws.
  void abort_capture() noexcept;
  void instantiate();
  // Launches the graph on the current stream of the capture device.
  void replay();
  // Drops the graph and its executable and releases the pool (once).
  void reset() noexcept;
  MempoolId pool() const;
  void enable_debug_mode() { keep_graph_ = true; }
  void debug_dump(const std::string& path);
  uintptr_t raw_cuda_graph() const;
  uintptr_t raw_cuda_graph_exec() const;
  bool capturing() const { return capturing_; }
  // Philox offsets the graph consumes per replay (0 when it draws no random numbers).
  uint64_t rng_increment() const { return rng_increment_; }

 private:
  void finish_capture() noexcept;

  bool keep_graph_ = false;
  bool capturing_ = false;
  bool capture_ended_ = false;
  bool owns_pool_ = false;  // the pool's use by this graph is not released yet
  int device_ = -1;
  void* capture_stream_ = nullptr;  // cudaStream_t
  void* graph_ = nullptr;           // cudaGraph_t
  void* exec_ = nullptr;            // cudaGraphExec_t
  MempoolId pool_{0, 0};
  std::shared_ptr<std::atomic<unsigned long long>> capture_id_;
  // Random numbers (Note [Random numbers in CUDA graphs] in ops/random.cpp): the seed and
  // base offset each replay writes for the captured kernels, and what a replay consumes.
  DataPtr rng_state_;
  uint64_t rng_increment_ = 0;
  bool rng_registered_ = false;
};

}  // namespace cl::cuda
