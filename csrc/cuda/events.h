// CUDA events: an RAII owner with torch's semantics (csrc/cuda/events.cpp; stubs in
// csrc/cuda_stub/streams_stub.cpp). No CUDA types here: the bindings use it in every build.
//
// Note [Lazy, pooled events]
// As in torch, an Event holds no CUDA event until it is first recorded (or its IPC handle is
// asked for); it then belongs to the recording stream's device. Creating and destroying CUDA
// events costs microseconds and serialises across threads, so ordinary (non-interprocess)
// events come from a per-device pool keyed by their flags and go back to it when the Event
// dies. Reusing an event that a stream still waits on is safe: cudaStreamWaitEvent waits for
// the record that was current when it was called.
#pragma once

#include <string>

#include "cuda/streams.h"

namespace cl::cuda {

class Event {
 public:
  explicit Event(bool enable_timing = false, bool blocking = false, bool interprocess = false);
  // Opens an event another process exported with ipc_handle() (64 bytes).
  Event(int device, const std::string& ipc_handle);
  ~Event();
  Event(Event&& o) noexcept;
  Event& operator=(Event&& o) noexcept;
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;

  // Captures the work queued so far on `stream`; the stream must be on the event's device.
  void record(const Stream& stream);
  // Makes future work on `stream` wait for the captured work (no host wait).
  void wait(const Stream& stream) const;
  bool query() const;        // true when not recorded, or once the captured work finished
  void synchronize() const;  // host wait; release the GIL around it
  // Milliseconds between this event and `end` (both timing events, both completed).
  float elapsed_time(const Event& end) const;
  // The cudaIpcEventHandle_t bytes; creates the event on the current device if needed.
  std::string ipc_handle();

  bool created() const { return event_ != nullptr; }
  int device() const { return device_; }  // -1 until created
  void* handle() const { return event_; }

 private:
  void create(int device);
  void reset() noexcept;

  unsigned flags_;
  int device_ = -1;
  void* event_ = nullptr;  // cudaEvent_t
  bool pooled_ = true;     // back to the pool on destruction (else cudaEventDestroy)
};

}  // namespace cl::cuda
