// NCCL loaded with dlopen on first use (see csrc/cuda/nccl.h).
#include "cuda/nccl.h"

#include <cuda_runtime_api.h>

#include <cstring>
#include <mutex>

#include "core/cuda_api.h"
#include "core/error.h"
#include "cuda/cuda_check.h"
#include "cuda/dynlib.h"

namespace cl::cuda::nccl {

namespace {

// The parts of nccl.h cudalite uses, with their ABI values.
using Result = int;  // ncclResult_t: 0 success ... 7 in progress
constexpr Result kSuccess = 0;
struct UniqueId {
  char internal[kUniqueIdBytes];
};
using RawComm = void*;

struct Api {
  Result (*get_version)(int*) = nullptr;
  Result (*get_unique_id)(UniqueId*) = nullptr;
  Result (*comm_init_rank)(RawComm*, int, UniqueId, int) = nullptr;
  Result (*comm_init_all)(RawComm*, int, const int*) = nullptr;
  Result (*comm_destroy)(RawComm) = nullptr;
  Result (*comm_abort)(RawComm) = nullptr;
  Result (*comm_get_async_error)(RawComm, Result*) = nullptr;
  const char* (*get_error_string)(Result) = nullptr;
  const char* (*get_last_error)(RawComm) = nullptr;  // NCCL >= 2.13
  Result (*group_start)() = nullptr;
  Result (*group_end)() = nullptr;
  Result (*all_reduce)(const void*, void*, size_t, int, int, RawComm, cudaStream_t) = nullptr;
  Result (*reduce)(const void*, void*, size_t, int, int, int, RawComm, cudaStream_t) = nullptr;
  Result (*broadcast)(const void*, void*, size_t, int, int, RawComm, cudaStream_t) = nullptr;
  Result (*all_gather)(const void*, void*, size_t, int, RawComm, cudaStream_t) = nullptr;
  Result (*reduce_scatter)(const void*, void*, size_t, int, int, RawComm, cudaStream_t) = nullptr;
  Result (*send)(const void*, size_t, int, int, RawComm, cudaStream_t) = nullptr;
  Result (*recv)(void*, size_t, int, int, RawComm, cudaStream_t) = nullptr;
  std::string path;
};

std::mutex g_mu;
std::vector<std::string> g_candidates;
const Api* g_api = nullptr;
std::string g_load_error;

// Tries the candidates, then the system library; sets g_api or g_load_error. Holds g_mu.
void load_locked() {
  if (g_api) return;
  std::vector<std::string> paths = g_candidates;
  paths.push_back("libnccl.so.2");
  Api a;
  auto accept = [&a](void* lib) {
    using dynlib::resolve;
    bool ok = resolve(lib, a.get_version, "ncclGetVersion") &&
              resolve(lib, a.get_unique_id, "ncclGetUniqueId") &&
              resolve(lib, a.comm_init_rank, "ncclCommInitRank") &&
              resolve(lib, a.comm_init_all, "ncclCommInitAll") &&
              resolve(lib, a.comm_destroy, "ncclCommDestroy") &&
              resolve(lib, a.comm_abort, "ncclCommAbort") &&
              resolve(lib, a.comm_get_async_error, "ncclCommGetAsyncError") &&
              resolve(lib, a.get_error_string, "ncclGetErrorString") &&
              resolve(lib, a.group_start, "ncclGroupStart") &&
              resolve(lib, a.group_end, "ncclGroupEnd") &&
              resolve(lib, a.all_reduce, "ncclAllReduce") && resolve(lib, a.reduce, "ncclReduce") &&
              resolve(lib, a.broadcast, "ncclBroadcast") &&
              resolve(lib, a.all_gather, "ncclAllGather") &&
              resolve(lib, a.reduce_scatter, "ncclReduceScatter") &&
              resolve(lib, a.send, "ncclSend") && resolve(lib, a.recv, "ncclRecv");
    resolve(lib, a.get_last_error, "ncclGetLastError");
    return ok;
  };
  std::vector<dynlib::Attempt> attempts;
  if (dynlib::open_first(paths, accept, "lacks the NCCL entry points cudalite uses (NCCL < 2.7?)",
                         &a.path, &attempts)) {
    g_api = new Api(a);
    g_load_error.clear();
    return;
  }
  std::string why;
  for (const dynlib::Attempt& t : attempts)
    why += "\n  " + t.path + ": " + (t.error.empty() ? "not found" : t.error);
  g_load_error = "NCCL could not be loaded. Tried:" + why +
                 "\nInstall it with `pip install nvidia-nccl-cu13` (or `pip install "
                 "cudalite[nccl]`), or set CUDALITE_NCCL_PATH to a libnccl.so.2.";
}

const Api& api() {
  std::lock_guard<std::mutex> lock(g_mu);
  load_locked();
  if (!g_api) throw Error(g_load_error);
  return *g_api;
}

std::string version_string(const Api& a) {
  int v = 0;
  if (a.get_version(&v) != kSuccess) return "unknown";
  int major = v >= 10000 ? v / 10000 : v / 1000;
  int minor = v >= 10000 ? (v / 100) % 100 : (v / 100) % 10;
  int patch = v % 100;
  return std::to_string(major) + "." + std::to_string(minor) + "." + std::to_string(patch);
}

const char* result_name(Result r) {
  switch (r) {
    case 1:
      return "ncclUnhandledCudaError";
    case 2:
      return "ncclSystemError";
    case 3:
      return "ncclInternalError";
    case 4:
      return "ncclInvalidArgument";
    case 5:
      return "ncclInvalidUsage";
    case 6:
      return "ncclRemoteError";
    case 7:
      return "ncclInProgress";
    default:
      return "ncclError";
  }
}

// torch's wording (ProcessGroupNCCL's C10D_NCCL_CHECK): the call, NCCL's description of
// the error and its version, then NCCL's last message when it has one.
[[noreturn]] void fail(const Api& a, Result r, const char* call, RawComm comm) {
  std::string msg = std::string("NCCL error in ") + call + ": " + a.get_error_string(r) +
                    ", NCCL version " + version_string(a) + "\n" + result_name(r) + ": ";
  const char* last = a.get_last_error ? a.get_last_error(comm) : nullptr;
  msg += (last && *last) ? last : "(no details; run with NCCL_DEBUG=INFO)";
  if (r == 4 || r == 5) throw ValueError(msg);
  throw Error(msg);
}

#define CL_NCCL_CHECK(a, expr, call, comm)             \
  do {                                                 \
    Result cl_r_ = (expr);                             \
    if (cl_r_ != kSuccess) fail(a, cl_r_, call, comm); \
  } while (0)

int nccl_type(ScalarType t) {
  switch (t) {
    case ScalarType::Bool:
      return 1;  // ncclUint8
    case ScalarType::UInt8:
      return 1;
    case ScalarType::Int8:
      return 0;
    case ScalarType::Int32:
      return 2;
    case ScalarType::Int64:
      return 4;
    case ScalarType::Float16:
      return 6;
    case ScalarType::Float32:
      return 7;
    case ScalarType::Float64:
      return 8;
    case ScalarType::BFloat16:
      return 9;
    default:
      throw TypeError(std::string("Input tensor data type is not supported for NCCL process "
                                  "group: ") +
                      dtype_name(t));
  }
}

}  // namespace

void set_library_candidates(const std::vector<std::string>& paths) {
  std::lock_guard<std::mutex> lock(g_mu);
  g_candidates = paths;
}

bool is_available() noexcept {
  try {
    std::lock_guard<std::mutex> lock(g_mu);
    load_locked();
    return g_api != nullptr;
  } catch (...) {
    return false;
  }
}

std::string library_path() {
  std::lock_guard<std::mutex> lock(g_mu);
  return g_api ? g_api->path : "";
}

std::string load_error() {
  std::lock_guard<std::mutex> lock(g_mu);
  return g_load_error;
}

int version() {
  const Api& a = api();
  int v = 0;
  CL_NCCL_CHECK(a, a.get_version(&v), "ncclGetVersion", nullptr);
  return v;
}

std::string get_unique_id() {
  const Api& a = api();
  UniqueId id;
  std::memset(&id, 0, sizeof id);
  CL_NCCL_CHECK(a, a.get_unique_id(&id), "ncclGetUniqueId", nullptr);
  return std::string(id.internal, kUniqueIdBytes);
}

Comm comm_init_rank(int nranks, const std::string& unique_id, int rank, int device) {
  const Api& a = api();
  CL_CHECK_VALUE(unique_id.size() == kUniqueIdBytes, "NCCL unique id must be ", kUniqueIdBytes,
                 " bytes, got ", unique_id.size());
  CL_CHECK_VALUE(nranks > 0 && rank >= 0 && rank < nranks, "invalid rank ", rank,
                 " for a communicator of ", nranks, " ranks");
  lazy_init();
  DeviceGuard guard(device);
  CL_CUDA_CHECK(cudaFree(nullptr));  // the primary context, which NCCL binds to
  UniqueId id;
  std::memcpy(id.internal, unique_id.data(), kUniqueIdBytes);
  RawComm comm = nullptr;
  CL_NCCL_CHECK(a, a.comm_init_rank(&comm, nranks, id, rank), "ncclCommInitRank", nullptr);
  return comm;
}

std::vector<Comm> comm_init_all(const std::vector<int>& devices) {
  const Api& a = api();
  lazy_init();
  for (int d : devices) {
    DeviceGuard guard(d);
    CL_CUDA_CHECK(cudaFree(nullptr));
  }
  std::vector<RawComm> comms(devices.size(), nullptr);
  CL_NCCL_CHECK(a, a.comm_init_all(comms.data(), int(devices.size()), devices.data()),
                "ncclCommInitAll", nullptr);
  return comms;
}

void comm_destroy(Comm comm) {
  const Api& a = api();
  CL_NCCL_CHECK(a, a.comm_destroy(comm), "ncclCommDestroy", nullptr);
}

void comm_abort(Comm comm) {
  const Api& a = api();
  CL_NCCL_CHECK(a, a.comm_abort(comm), "ncclCommAbort", nullptr);
}

int comm_async_error(Comm comm) {
  const Api& a = api();
  Result r = kSuccess;
  Result q = a.comm_get_async_error(comm, &r);
  return q != kSuccess ? q : r;
}

std::string error_string(int result) {
  const Api& a = api();
  return std::string(result_name(result)) + ": " + a.get_error_string(result);
}

std::string last_error(Comm comm) {
  const Api& a = api();
  const char* s = a.get_last_error ? a.get_last_error(comm) : nullptr;
  return s ? s : "";
}

void group_start() {
  const Api& a = api();
  CL_NCCL_CHECK(a, a.group_start(), "ncclGroupStart", nullptr);
}

void group_end() {
  const Api& a = api();
  CL_NCCL_CHECK(a, a.group_end(), "ncclGroupEnd", nullptr);
}

bool supports(ScalarType t) { return t != ScalarType::Int16; }

void collective(Coll kind, const void* send, void* recv, size_t count, ScalarType dtype, RedOp op,
                int peer, Comm comm, int device, void* stream) {
  const Api& a = api();
  int type = nccl_type(dtype);
  int rop = int(op);
  if (dtype == ScalarType::Bool) {
    // torch's mapping: a logical or for SUM, a logical and for PRODUCT.
    if (op == RedOp::Sum) rop = int(RedOp::Max);
    if (op == RedOp::Prod) rop = int(RedOp::Min);
    CL_CHECK_TYPE(op != RedOp::Avg, "Cannot use ReduceOp.AVG with boolean inputs");
  }
  auto s = static_cast<cudaStream_t>(stream ? stream : current_stream(device));
  DeviceGuard guard(device);
  switch (kind) {
    case Coll::AllReduce:
      CL_NCCL_CHECK(a, a.all_reduce(send, recv, count, type, rop, comm, s), "ncclAllReduce", comm);
      break;
    case Coll::Reduce:
      CL_NCCL_CHECK(a, a.reduce(send, recv, count, type, rop, peer, comm, s), "ncclReduce", comm);
      break;
    case Coll::Broadcast:
      CL_NCCL_CHECK(a, a.broadcast(send, recv, count, type, peer, comm, s), "ncclBroadcast", comm);
      break;
    case Coll::AllGather:
      CL_NCCL_CHECK(a, a.all_gather(send, recv, count, type, comm, s), "ncclAllGather", comm);
      break;
    case Coll::ReduceScatter:
      CL_NCCL_CHECK(a, a.reduce_scatter(send, recv, count, type, rop, comm, s), "ncclReduceScatter",
                    comm);
      break;
    case Coll::Send:
      CL_NCCL_CHECK(a, a.send(send, count, type, peer, comm, s), "ncclSend", comm);
      break;
    case Coll::Recv:
      CL_NCCL_CHECK(a, a.recv(recv, count, type, peer, comm, s), "ncclRecv", comm);
      break;
  }
}

}  // namespace cl::cuda::nccl
