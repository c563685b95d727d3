// Profiling hooks: NVTX annotations (torch.cuda.nvtx) and the profiler switch
// (torch.cuda.profiler / cudart().cudaProfilerStart).
//
// NVTX v3 is header-only (it ships with the toolkit): each call goes through a function
// pointer that stays a no-op until a tool such as Nsight Systems injects itself, so these
// cost nothing when nobody profiles and never touch the driver.
#include <cuda_profiler_api.h>
#include <cuda_runtime_api.h>
#include <nvtx3/nvToolsExt.h>

#include "core/cuda_api.h"
#include "cuda/deferred.h"

namespace cl::cuda {

int nvtx_range_push(const std::string& msg) { return nvtxRangePushA(msg.c_str()); }
int nvtx_range_pop() { return nvtxRangePop(); }
uint64_t nvtx_range_start(const std::string& msg) { return nvtxRangeStartA(msg.c_str()); }
void nvtx_range_end(uint64_t id) { nvtxRangeEnd(id); }
void nvtx_mark(const std::string& msg) { nvtxMarkA(msg.c_str()); }

int profiler_start() {
  lazy_init();
  flush_deferred();  // the profiled range starts after the work queued before it
  return int(cudaProfilerStart());
}
int profiler_stop() {
  lazy_init();
  flush_deferred();  // and holds all of the work queued inside it
  return int(cudaProfilerStop());
}
std::string error_string(int code) { return cudaGetErrorString(cudaError_t(code)); }

}  // namespace cl::cuda
