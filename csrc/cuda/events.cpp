// Events (Note [Lazy, pooled events] in events.h).
#include "cuda/events.h"

#include <cuda_runtime_api.h>

#include <cstring>
#include <mutex>
#include <vector>

#include "core/error.h"
#include "cuda/cuda_check.h"
#include "cuda/deferred.h"

namespace cl::cuda {

namespace {

// Pools by flag combination: timing x blocking-sync.
constexpr int kPoolKinds = 4;

int pool_kind(unsigned flags) {
  return ((flags & cudaEventBlockingSync) ? 2 : 0) + ((flags & cudaEventDisableTiming) ? 0 : 1);
}

struct EventPool {
  std::mutex mu;
  std::vector<cudaEvent_t> free[kMaxDevices][kPoolKinds];

  cudaEvent_t get(int device, unsigned flags) {
    {
      std::lock_guard<std::mutex> lock(mu);
      auto& list = free[device][pool_kind(flags)];
      if (!list.empty()) {
        cudaEvent_t ev = list.back();
        list.pop_back();
        return ev;
      }
    }
    DeviceGuard g(device);
    cudaEvent_t ev = nullptr;
    CL_CUDA_CHECK(cudaEventCreateWithFlags(&ev, flags));
    return ev;
  }

  void put(int device, unsigned flags, cudaEvent_t ev) {
    std::lock_guard<std::mutex> lock(mu);
    free[device][pool_kind(flags)].push_back(ev);
  }
};

// Never destroyed: events may be returned to it while the process exits.
EventPool& pool() {
  static auto* p = new EventPool;
  return *p;
}

}  // namespace

Event::Event(bool enable_timing, bool blocking, bool interprocess)
    : flags_((blocking ? cudaEventBlockingSync : 0u) |
             (enable_timing ? 0u : unsigned(cudaEventDisableTiming)) |
             (interprocess ? unsigned(cudaEventInterprocess) : 0u)),
      pooled_(!interprocess) {}

Event::Event(int device, const std::string& handle)
    : flags_(cudaEventDisableTiming | cudaEventInterprocess), pooled_(false) {
  CL_CHECK(handle.size() == sizeof(cudaIpcEventHandle_t),
           "cudaIpcEventHandle_t expects byte-like object of size ", sizeof(cudaIpcEventHandle_t),
           ", but got ", handle.size());
  DeviceGuard g(device);
  cudaIpcEventHandle_t h;
  std::memcpy(&h, handle.data(), sizeof(h));
  cudaEvent_t ev = nullptr;
  CL_CUDA_CHECK(cudaIpcOpenEventHandle(&ev, h));
  event_ = ev;
  device_ = device;
}

Event::~Event() { reset(); }

Event::Event(Event&& o) noexcept
    : flags_(o.flags_), device_(o.device_), event_(o.event_), pooled_(o.pooled_) {
  o.event_ = nullptr;
  o.device_ = -1;
}

Event& Event::operator=(Event&& o) noexcept {
  if (this != &o) {
    reset();
    flags_ = o.flags_;
    device_ = o.device_;
    event_ = o.event_;
    pooled_ = o.pooled_;
    o.event_ = nullptr;
    o.device_ = -1;
  }
  return *this;
}

void Event::reset() noexcept {
  if (!event_) return;
  auto ev = static_cast<cudaEvent_t>(event_);
  if (pooled_) {
    try {
      pool().put(device_, flags_, ev);
    } catch (...) {  // allocation failure in the pool: destroy instead
      CL_CUDA_CHECK_NOTHROW(cudaEventDestroy(ev));
    }
  } else {
    // Destroy on the creating device, so no context is created on another one.
    try {
      DeviceGuard g(device_);
      CL_CUDA_CHECK_NOTHROW(cudaEventDestroy(ev));
    } catch (...) {
      CL_CUDA_CHECK_NOTHROW(cudaEventDestroy(ev));
    }
  }
  event_ = nullptr;
}

void Event::create(int device) {
  if (pooled_) {
    event_ = pool().get(device, flags_);
  } else {
    DeviceGuard g(device);
    cudaEvent_t ev = nullptr;
    CL_CUDA_CHECK(cudaEventCreateWithFlags(&ev, flags_));
    event_ = ev;
  }
  device_ = device;
}

void Event::record(const Stream& stream) {
  flush_deferred();  // Note [Deferred launches]
  if (!event_) create(stream.device);
  CL_CHECK(device_ == stream.device, "Event device ", device_,
           " does not match recording stream's device ", stream.device, ".");
  DeviceGuard g(device_);
  CL_CUDA_CHECK(
      cudaEventRecord(static_cast<cudaEvent_t>(event_), static_cast<cudaStream_t>(stream.handle)));
}

void Event::wait(const Stream& stream) const {
  flush_deferred();  // Note [Deferred launches]
  if (!event_) return;
  DeviceGuard g(stream.device);
  CL_CUDA_CHECK(cudaStreamWaitEvent(static_cast<cudaStream_t>(stream.handle),
                                    static_cast<cudaEvent_t>(event_), 0));
}

bool Event::query() const {
  flush_deferred();  // Note [Deferred launches]
  if (!event_) return true;
  cudaError_t err = cudaEventQuery(static_cast<cudaEvent_t>(event_));
  if (err == cudaSuccess) return true;
  if (err != cudaErrorNotReady) throw_cuda_error(err, __FILE__, __LINE__);
  cudaGetLastError();  // clear "not ready"
  return false;
}

void Event::synchronize() const {
  flush_deferred();  // Note [Deferred launches]
  if (!event_) return;
  CL_CUDA_CHECK(cudaEventSynchronize(static_cast<cudaEvent_t>(event_)));
  process_record_stream_frees();
}

float Event::elapsed_time(const Event& end) const {
  CL_CHECK_VALUE(!(flags_ & cudaEventDisableTiming) && !(end.flags_ & cudaEventDisableTiming),
                 "Both events must be created with argument 'enable_timing=True'.");
  CL_CHECK_VALUE(created() && end.created(),
                 "Both events must be recorded before calculating elapsed time.");
  CL_CHECK(query() && end.query(),
           "Both events must be completed before calculating elapsed time.");
  // On the event's device, so no context is created on the current one.
  DeviceGuard g(device_);
  float ms = 0;
  CL_CUDA_CHECK(cudaEventElapsedTime(&ms, static_cast<cudaEvent_t>(event_),
                                     static_cast<cudaEvent_t>(end.event_)));
  return ms;
}

std::string Event::ipc_handle() {
  if (!event_) create(current_device());
  DeviceGuard g(device_);
  cudaIpcEventHandle_t h;
  CL_CUDA_CHECK(cudaIpcGetEventHandle(&h, static_cast<cudaEvent_t>(event_)));
  return std::string(reinterpret_cast<const char*>(&h), sizeof(h));
}

}  // namespace cl::cuda
