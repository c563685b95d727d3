// NCCL through dlopen: communicators and collectives for cudalite.cuda.nccl and the NCCL
// backend of cudalite.distributed (csrc/cuda/nccl.cpp; stubs that raise in
// csrc/cuda_stub/nccl_stub.cpp). No CUDA or NCCL types here: the bindings use it in every
// build.
//
// NCCL is not linked: it is opened the first time a communicator is needed, from the paths
// set_library_candidates() gave (CUDALITE_NCCL_PATH and the nvidia-nccl-cu13 wheel, found by
// the Python layer), then the system's libnccl.so.2. So `import cudalite` neither pays for
// loading NCCL nor fails where it is missing. The entry points are declared here by hand: the
// ABI of the ones used has been stable since NCCL 2.x.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "core/dtype.h"
#include "core/tensor.h"

namespace cl::cuda::nccl {

using Comm = void*;  // ncclComm_t

// Paths to try, in order, before the system's libnccl.so.2 (replaces earlier candidates).
void set_library_candidates(const std::vector<std::string>& paths);
// Whether NCCL can be loaded (loads it on the first call; never throws).
bool is_available() noexcept;
// The library in use ("" before it is loaded) and, when loading failed, why.
std::string library_path();
std::string load_error();
// ncclGetVersion's code (major * 10000 + minor * 100 + patch on NCCL >= 2.9).
int version();

constexpr size_t kUniqueIdBytes = 128;
std::string get_unique_id();  // kUniqueIdBytes bytes
// ncclCommInitRank on `device`; `unique_id` must be kUniqueIdBytes bytes.
Comm comm_init_rank(int nranks, const std::string& unique_id, int rank, int device);
// ncclCommInitAll: one communicator per device, ranks in the order of `devices`.
std::vector<Comm> comm_init_all(const std::vector<int>& devices);
void comm_destroy(Comm comm);
void comm_abort(Comm comm);
// ncclCommGetAsyncError's result code (0: no error, 7: still in progress).
int comm_async_error(Comm comm);
// ncclGetErrorString, and ncclGetLastError's details where the library has it.
std::string error_string(int result);
std::string last_error(Comm comm);

void group_start();
void group_end();

enum class Coll : int { AllReduce, Reduce, Broadcast, AllGather, ReduceScatter, Send, Recv };
// ncclSum, ncclProd, ncclMax, ncclMin, ncclAvg.
enum class RedOp : int { Sum, Prod, Max, Min, Avg };

// Whether NCCL has a type for `t` (every cudalite dtype has one; bool goes as uint8).
bool supports(ScalarType t);

// Queues one collective on `stream` (nullptr: the current stream of `device`), on raw
// device memory. `count` is in elements of `dtype`: per rank for AllReduce, Reduce,
// Broadcast, Send and Recv, the send count for AllGather, the receive count for
// ReduceScatter. `peer` is the root (Reduce, Broadcast) or the other rank (Send, Recv).
void collective(Coll kind, const void* send, void* recv, size_t count, ScalarType dtype, RedOp op,
                int peer, Comm comm, int device, void* stream);

}  // namespace cl::cuda::nccl
