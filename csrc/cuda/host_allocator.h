// The caching pinned host allocator behind cl::cuda::host_allocator() (csrc/cuda/
// host_allocator.cpp; Note [Pinned block reuse] in core/host_block_cache.h), and the
// functions built on it. No CUDA types: the bindings use this header in every build
// (csrc/cuda_stub/streams_stub.cpp raises torch's errors in CPU-only builds).
#pragma once

#include "core/cuda_api.h"
#include "core/host_block_cache.h"
#include "core/tensor.h"

namespace cl::cuda {

HostMemoryStats host_memory_stats();
void host_reset_peak_stats();
void host_reset_accumulated_stats();
// Returns every cached pinned block (and idle staging buffers) to the driver.
void host_empty_cache();
// Notes that work just queued on `stream` of `device` reads or writes the pinned block that
// holds `ptr`, so the block is not reused before that work completes. False when `ptr` is
// not from host_allocator().
bool host_record_stream(const void* ptr, StreamHandle stream, int device);
// Page-locked: from host_allocator(), or allocated or registered with CUDA elsewhere.
bool is_pinned_ptr(const void* ptr);
// torch's Tensor.pin_memory(): a copy of `t` in pinned memory (parallel copy).
Tensor pin_memory(const Tensor& t);

}  // namespace cl::cuda
