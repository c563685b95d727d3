// Deferred launches of small elementwise ops (Note [Deferred launches] in deferred.cpp).
// Shared by the pending batch (csrc/cuda/deferred.cpp) and its kernel (kernels/deferred.cu).
#pragma once

#include <atomic>
#include <cstdint>

namespace cl::cuda {

// The largest op that is deferred, in elements: one block of kDeferredThreads runs it.
constexpr int64_t kDeferredMaxNumel = 1024;
constexpr int kDeferredThreads = 256;
// Ops per batch: the batch travels in the kernel's parameters (under their 4 KiB limit).
constexpr int kDeferredMaxOps = 40;

// One deferred op: the loop of its (op, dtypes) and its operands, dense or one element
// broadcast (scalars ride in `sval`, at the loop's compute precision, as in the dense CUDA
// loop). A reduction reads
// in[0] and writes its value to out and, for argmax/argmin, its index to in[1].
struct DeferredOp {
  const void* fn;  // device address of the loop (kernels/deferred.cu)
  char* out;
  const char* in[3];
  uint64_t sval[3];
  int32_t n;
  uint32_t scalar_mask;  // bit k: input k is sval[k]; bit 8 + k: in[k] is one element, broadcast
};

struct DeferredBatch {
  int32_t count = 0;
  DeferredOp ops[kDeferredMaxOps];
};
static_assert(sizeof(DeferredBatch) <= 4000, "a batch must fit the kernel parameter space");

namespace deferred_detail {
extern std::atomic<bool> g_pending;
void flush_slow();
}  // namespace deferred_detail

// Launches the pending batch, if any. Called before anything else uses a stream or the
// memory that queued work may touch: current_stream(), events, stream and device
// synchronisation, the allocator's frees and unmaps, exported pointers.
inline void flush_deferred() {
  if (deferred_detail::g_pending.load(std::memory_order_acquire)) deferred_detail::flush_slow();
}

// Whether deferral is on: not with CUDA_LAUNCH_BLOCKING=1, CUDALITE_DEFER_LAUNCHES=0 or
// CUDALITE_NO_CUDA_MEMORY_CACHING=1, nor after set_deferred_launches(false).
bool deferral_enabled();

// Appends `op` to the pending batch of (device, stream), launching the batch first when it
// belongs to another stream or is full. False (nothing queued: launch the op directly) when
// the pending batch belongs to another thread's capture (Note [Deferred launches]).
bool defer(int device, void* stream, const DeferredOp& op);

// The batch kernel's launch (kernels/deferred.cu), on the current device.
void launch_deferred_batch(const DeferredBatch& batch, void* stream);

}  // namespace cl::cuda
