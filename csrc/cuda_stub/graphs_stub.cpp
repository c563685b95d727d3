// CPU-only builds: CUDA graphs exist and raise torch's errors for a build without CUDA, so
// the bindings compile the same way in every build (the Python layer refuses earlier, with
// torch's dummy-class messages).
#include "core/error.h"
#include "cuda/graphs.h"

namespace cl::cuda {
namespace {
[[noreturn]] void fail() { throw AssertionError("cudalite not compiled with CUDA enabled"); }
}  // namespace

MempoolId graph_pool_handle() { fail(); }
bool is_current_stream_capturing() { fail(); }
int captures_underway() { return 0; }
bool current_stream_capturing(int) { return false; }
void write_philox_state(uint64_t*, uint64_t, uint64_t, void*) { fail(); }
RelaxedCaptureGuard::RelaxedCaptureGuard() = default;
RelaxedCaptureGuard::~RelaxedCaptureGuard() = default;

CudaGraph::CudaGraph(bool) { fail(); }
CudaGraph::~CudaGraph() = default;
void CudaGraph::capture_begin(MempoolId, CaptureMode) { fail(); }
size_t CudaGraph::capture_end() { fail(); }
void CudaGraph::abort_capture() noexcept {}
void CudaGraph::finish_capture() noexcept {}
void CudaGraph::instantiate() { fail(); }
void CudaGraph::replay() { fail(); }
void CudaGraph::reset() noexcept {}
MempoolId CudaGraph::pool() const { fail(); }
void CudaGraph::debug_dump(const std::string&) { fail(); }
uintptr_t CudaGraph::raw_cuda_graph() const { fail(); }
uintptr_t CudaGraph::raw_cuda_graph_exec() const { fail(); }

}  // namespace cl::cuda
