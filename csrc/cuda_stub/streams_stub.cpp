// CPU-only builds: streams, events, pinned memory and record_stream exist and raise torch's
// errors for a build without CUDA, so the bindings compile the same way in every build.
#include "core/error.h"
#include "cuda/events.h"
#include "cuda/host_allocator.h"
#include "cuda/streams.h"

namespace cl::cuda {
namespace {
[[noreturn]] void fail() { throw AssertionError("cudalite not compiled with CUDA enabled"); }
}  // namespace

int Stream::priority() const { fail(); }
bool Stream::query() const { fail(); }
void Stream::synchronize() const { fail(); }
StreamHandle current_stream(int) { fail(); }
Stream get_current_stream(int) { fail(); }
void set_current_stream(const Stream&) { fail(); }
Stream default_stream(int) { fail(); }
Stream stream_from_pool(int, int) { fail(); }
Stream external_stream(StreamHandle, int) { fail(); }
std::pair<int, int> priority_range() { fail(); }
void wait_stream(const Stream&, const Stream&) { fail(); }
void stream_wait_stream(StreamHandle, StreamHandle, int) { fail(); }

// An Event holds nothing until it is recorded, so creating one needs no CUDA.
Event::Event(bool, bool, bool) : flags_(0) {}
Event::Event(int, const std::string&) : flags_(0) { fail(); }
Event::~Event() = default;
Event::Event(Event&& o) noexcept : flags_(o.flags_) {}
Event& Event::operator=(Event&& o) noexcept {
  flags_ = o.flags_;
  return *this;
}
void Event::record(const Stream&) { fail(); }
void Event::wait(const Stream&) const { fail(); }
bool Event::query() const { return true; }
void Event::synchronize() const {}
float Event::elapsed_time(const Event&) const { fail(); }
std::string Event::ipc_handle() { fail(); }

void record_stream(StorageImpl*, StreamHandle) { fail(); }
void process_record_stream_frees() {}
size_t pending_record_stream_frees() { return 0; }

HostMemoryStats host_memory_stats() { return {}; }
void host_reset_peak_stats() {}
void host_reset_accumulated_stats() {}
void host_empty_cache() {}
bool host_record_stream(const void*, StreamHandle, int) { return false; }
bool is_pinned_ptr(const void*) { return false; }
// torch's CPU-only builds fail to find an accelerator for the pinned copy.
Tensor pin_memory(const Tensor&) {
  throw Error("Cannot access accelerator device when none is available.");
}

}  // namespace cl::cuda
