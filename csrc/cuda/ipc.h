// CUDA IPC: sharing device memory of the caching allocator with other processes
// (csrc/cuda/ipc.cpp; csrc/cuda_stub/ipc_stub.cpp in CPU-only builds). No CUDA types here:
// the bindings include this header in every build. python/cudalite/multiprocessing builds
// torch's sharing protocol (reference counts, events, the consumer's cache) on top.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "core/dtype.h"
#include "core/tensor.h"

namespace cl::cuda {

// What a consumer needs to map the memory of a storage: the cudaIpcMemHandle_t (64 bytes) of
// the cudaMalloc segment holding it, and where the storage starts in that segment.
// For a block of an expandable segment, `handle` is empty and the pages behind it travel as
// file descriptors instead (Note [IPC of expandable segments] in ipc_pages.cpp): `offset` is
// then where the storage starts in the first page.
struct IpcShare {
  std::string handle;
  size_t offset = 0;        // bytes from the segment's base to the storage's first byte
  size_t segment_size = 0;  // bytes of the segment (of the pages)
  std::vector<int> fds;     // the pages, exported; the caller closes them
  std::vector<size_t> page_sizes;
};

// Throws a RuntimeError for memory CUDA IPC can't share: the caching allocator's expandable
// segments (virtual memory), memory from other libraries. Marks the storage exported (work on
// it is never deferred from now on: another process may read it). With a `counter` (the
// consumer's reference count, which stays mapped for the life of the process), the memory is
// not freed while it is above 0, even after the storage dies (Note [Shared memory in limbo]
// in ipc.cpp).
IpcShare ipc_share(StorageImpl& storage, const int64_t* counter);
// The pages (handle, size) exported as POSIX file descriptors; empty, with `why` set, when the
// driver refuses (pages created without an exportable handle type, say).
std::vector<int> export_pages(const std::vector<std::pair<uint64_t, size_t>>& pages,
                              std::string* why);
// The consumer's side: a flat tensor of `dtype` over `nbytes` from `offset` of the pages
// `fds` (of `sizes` bytes) mapped one after another; takes ownership of the descriptors.
Tensor ipc_open_pages(const std::vector<int>& fds, const std::vector<size_t>& sizes, int device,
                      size_t offset, size_t nbytes, ScalarType dtype, int64_t* counter);

// Frees the memory in limbo whose consumers have all released it; returns how many storages.
size_t ipc_collect();
size_t ipc_limbo_size();  // storages in limbo (tests)

// A flat tensor of `dtype` over `nbytes` of the memory `handle` names on `device`, from
// `offset`. A handle is opened once per process (cudaIpcOpenMemHandle) and closed when the last
// tensor over it dies. When that tensor dies the device's current stream is synchronised and
// *counter, if given, is decremented atomically: the producer's reference count
// (Note [IPC reference counts] in python/cudalite/multiprocessing/_cuda_ipc.py).
Tensor ipc_open(const std::string& handle, int device, size_t offset, size_t nbytes,
                ScalarType dtype, int64_t* counter);

// Handles this process has open, and how many cudaIpcOpenMemHandle calls it made (tests).
size_t ipc_open_handles();
size_t ipc_open_calls();

}  // namespace cl::cuda
