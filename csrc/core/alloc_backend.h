// What the caching allocator needs from the memory it manages: plain segments, optionally
// virtual memory (reserve address space, create physical memory, map it, possibly at several
// addresses), and stream events. The CUDA backend (csrc/cuda/device_allocator.cpp) implements
// it with cudaMalloc and the driver's cuMem* API; the host backend (core/host_backend.h) with
// mmap and fake streams, so that the allocator's logic is tested on machines without a GPU.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>

#include "core/device.h"

namespace cl {

using StreamId = uintptr_t;   // a cudaStream_t; 0 is the legacy default stream
using PhysHandle = uint64_t;  // a CUmemGenericAllocationHandle; 0 is "none"
using EventHandle = void*;    // a cudaEvent_t

class AllocBackend {
 public:
  virtual ~AllocBackend() = default;

  virtual Device device() const = 0;
  // The stream an allocation without an explicit stream belongs to.
  virtual StreamId current_stream() = 0;

  // A plain segment. Returns nullptr when the memory is exhausted; throws on other errors.
  virtual void* malloc(size_t nbytes) = 0;
  virtual void free(void* ptr, size_t nbytes) = 0;

  // Virtual memory. When supports_vmm() is false the allocator never calls these.
  virtual bool supports_vmm() const = 0;
  virtual size_t vmm_granularity() const = 0;  // physical page size (2 MiB on NVIDIA GPUs)
  // Address space to map pages into; nullptr when none is left.
  virtual void* reserve_address(size_t nbytes) = 0;
  virtual void release_address(void* base, size_t nbytes) = 0;
  // Physical memory (a multiple of the granularity). Returns 0 when memory is exhausted.
  virtual PhysHandle create_physical(size_t nbytes) = 0;
  virtual void release_physical(PhysHandle h, size_t nbytes) = 0;
  // Maps all of h (nbytes) at va. The same handle may be mapped at several addresses at
  // once; CUDA maps whole handles only (cuMemMap's offset must be 0). set_access makes a
  // mapped range usable; unmap takes one whole earlier map(). map and set_access return
  // false, having changed nothing, when the device is out of memory (the driver needs some
  // for page tables); they throw on other errors.
  virtual bool map(void* va, size_t nbytes, PhysHandle h) = 0;
  virtual bool set_access(void* va, size_t nbytes) = 0;
  virtual void unmap(void* va, size_t nbytes) = 0;
  // Peer access (Note [Peer access] in csrc/cuda/peer_access.cpp): from now on set_access
  // also makes ranges usable by `device`. False when it already did (or can't: the host
  // backend has no peers).
  virtual bool add_peer(int device) {
    (void)device;
    return false;
  }

  // Events mark a point in a stream; query_event is true once the stream has passed it.
  virtual EventHandle create_event() = 0;
  virtual void destroy_event(EventHandle e) = 0;
  virtual void record_event(EventHandle e, StreamId s) = 0;
  virtual bool query_event(EventHandle e) = 0;
  virtual void synchronize_event(EventHandle e) = 0;
  virtual void synchronize_stream(StreamId s) = 0;

  // Free and total memory of the device, for the out-of-memory message and memory fractions.
  virtual void mem_get_info(size_t* free, size_t* total) = 0;
  // "CUDA" for the device, "host" for the test backend: names the memory in messages.
  virtual const char* kind() const = 0;
};

}  // namespace cl
