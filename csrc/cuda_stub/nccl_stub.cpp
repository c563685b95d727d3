// CPU-only builds: NCCL is never available; everything that needs it raises.
#include "core/error.h"
#include "cuda/nccl.h"

namespace cl::cuda::nccl {
namespace {
[[noreturn]] void fail() { throw AssertionError("cudalite not compiled with CUDA enabled"); }
}  // namespace

void set_library_candidates(const std::vector<std::string>&) {}
bool is_available() noexcept { return false; }
std::string library_path() { return ""; }
std::string load_error() { return "cudalite was built without CUDA, so NCCL can't be used"; }
int version() { fail(); }
std::string get_unique_id() { fail(); }
Comm comm_init_rank(int, const std::string&, int, int) { fail(); }
std::vector<Comm> comm_init_all(const std::vector<int>&) { fail(); }
void comm_destroy(Comm) { fail(); }
void comm_abort(Comm) { fail(); }
int comm_async_error(Comm) { fail(); }
std::string error_string(int) { fail(); }
std::string last_error(Comm) { fail(); }
void group_start() { fail(); }
void group_end() { fail(); }
bool supports(ScalarType t) { return t != ScalarType::Int16; }
void collective(Coll, const void*, void*, size_t, ScalarType, RedOp, int, Comm, int, void*) {
  fail();
}
}  // namespace cl::cuda::nccl
