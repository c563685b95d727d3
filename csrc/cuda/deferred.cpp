// Note [Deferred launches]
// A one-element `a + b` on the GPU costs what the driver's launch call costs on the host,
// about 3 us (benchmarks/cpp/launch_overhead.cu); cudalite's own work around it is 0.3-0.5
// us. The GPU then runs the kernel in a fraction of that. So small ops (elementwise ops with
// dense operands and reductions of one dense row, at most kDeferredMaxNumel elements;
// kernels/deferred.cu decides) are not launched one by one: they are appended to one pending
// batch, and the batch is launched as one kernel whose single block runs the ops in order,
// with a barrier between them (so an op sees the results of the ops before it, as on a
// stream).
//
// The batch is launched before anything else could observe or reorder the work:
// - any other use of a stream: every launch and copy asks current_stream() first, which
//   flushes, and events, stream and device synchronisation, stream waits and queries flush
//   explicitly (so `.item()`, `.cpu()`, `synchronize()` and event timings see the ops);
// - an op for another stream or device, or a full batch;
// - the allocator's waits, frees and unmaps (csrc/cuda/device_allocator.cpp): freed memory
//   is reused on its stream in stream order, which the batch keeps, and memory is unmapped
//   or returned only after the stream's work has run, which needs the batch launched;
// - memory shared with other code (data_ptr(), __cuda_array_interface__, DLPack out or in):
//   the storage is marked `exported` (the export launches the batch), and ops on exported
//   storage are never deferred, because other libraries may read or write it on the same
//   stream at any time.
// So the order of every CUDA call cudalite makes is the order of the program; the ops of a
// batch only start later, when the next call is made. Results are bit for bit those of the
// regular loops: the batch runs the same functors on the same compute types, and a
// reduction the same one-block walk and tree as reduce.cu's block_rows.
// One batch for the process, behind a mutex (any thread may flush it); an atomic flag keeps
// the check in current_stream() to one load. While a CUDA graph is being captured, a batch
// belongs to the thread that queued it: another thread neither launches it (its launch would
// go into the capturing stream from a thread that is not capturing, which invalidates the
// capture) nor adds to it (its ops are launched directly). The capturing thread launches it
// at its next stream use, at the latest when the capture ends. CUDALITE_DEFER_LAUNCHES=0 turns
// deferral off, and so do CUDA_LAUNCH_BLOCKING=1 and CUDALITE_NO_CUDA_MEMORY_CACHING=1 (memory
// checkers want every op as its own kernel).
#include "cuda/deferred.h"

#include <cstdlib>
#include <cstring>
#include <mutex>
#include <thread>

#include "core/cuda_api.h"
#include "cuda/cuda_check.h"
#include "cuda/device_allocator.h"
#include "cuda/graphs.h"

namespace cl::cuda {

namespace deferred_detail {
std::atomic<bool> g_pending{false};
}  // namespace deferred_detail

namespace {

struct Pending {
  std::mutex mu;
  int device = -1;
  void* stream = nullptr;
  std::thread::id owner;  // the thread that queued the batch during a capture, else none
  DeferredBatch batch;
};

// With p.mu held: whether the pending batch belongs to another thread's capture.
bool owned_elsewhere(const Pending& p) {
  return p.batch.count && p.owner != std::thread::id() && p.owner != std::this_thread::get_id() &&
         captures_underway() > 0;
}

Pending& pending() {
  static Pending* p = new Pending();  // never destroyed: flushes may come during exit
  return *p;
}

bool env_is(const char* name, const char* value) {
  const char* v = std::getenv(name);
  return v && std::strcmp(v, value) == 0;
}

// With p.mu held.
void launch_locked(Pending& p) {
  if (p.batch.count == 0) return;
  struct Reset {  // the batch is gone whatever happens to its launch
    Pending& p;
    ~Reset() {
      p.batch.count = 0;
      deferred_detail::g_pending.store(false, std::memory_order_release);
    }
  } reset{p};
  DeviceGuard g(p.device);
  launch_deferred_batch(p.batch, p.stream);
}

}  // namespace

void deferred_detail::flush_slow() {
  Pending& p = pending();
  std::lock_guard<std::mutex> lock(p.mu);
  if (owned_elsewhere(p)) return;
  launch_locked(p);
}

namespace {
std::atomic<bool>& deferral_switch() {
  static std::atomic<bool> on{!launch_blocking() && !env_is("CUDALITE_DEFER_LAUNCHES", "0") &&
                              !caching_disabled()};
  return on;
}
}  // namespace

bool deferral_enabled() { return deferral_switch().load(std::memory_order_relaxed); }

bool set_deferred_launches(bool on) {
  flush_deferred();
  return deferral_switch().exchange(on);
}

bool defer(int device, void* stream, const DeferredOp& op) {
  Pending& p = pending();
  std::lock_guard<std::mutex> lock(p.mu);
  if (owned_elsewhere(p)) return false;
  if (p.batch.count &&
      (p.device != device || p.stream != stream || p.batch.count == kDeferredMaxOps)) {
    launch_locked(p);
  }
  p.device = device;
  p.stream = stream;
  p.owner = captures_underway() > 0 ? std::this_thread::get_id() : std::thread::id();
  p.batch.ops[p.batch.count++] = op;
  deferred_detail::g_pending.store(true, std::memory_order_release);
  return true;
}

void flush_deferred_launches() { flush_deferred(); }

int deferred_ops_pending() {
  Pending& p = pending();
  std::lock_guard<std::mutex> lock(p.mu);
  return p.batch.count;
}

}  // namespace cl::cuda
