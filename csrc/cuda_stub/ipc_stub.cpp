// CPU-only builds: CUDA IPC raises torch's error for a build without CUDA.
#include "core/error.h"
#include "cuda/ipc.h"

namespace cl::cuda {
namespace {
[[noreturn]] void fail() { throw AssertionError("cudalite not compiled with CUDA enabled"); }
}  // namespace

IpcShare ipc_share(StorageImpl&, const int64_t*) { fail(); }
Tensor ipc_open_pages(const std::vector<int>&, const std::vector<size_t>&, int, size_t, size_t,
                      ScalarType, int64_t*) {
  fail();
}
size_t ipc_collect() { return 0; }
size_t ipc_limbo_size() { return 0; }
Tensor ipc_open(const std::string&, int, size_t, size_t, ScalarType, int64_t*) { fail(); }
size_t ipc_open_handles() { return 0; }
size_t ipc_open_calls() { return 0; }

}  // namespace cl::cuda
