// CUDA streams as small values, the per-thread current stream of each device, and the pool
// that hands out streams (csrc/cuda/streams.cpp; csrc/cuda_stub/streams_stub.cpp in CPU-only
// builds). No CUDA types here: the bindings include this header in every build.
//
// Note [Current streams]
// Each thread has one current stream per device, the legacy default stream (handle 0) until
// it is changed. It lives in a thread_local array indexed by device, so the lookup every
// kernel launch and copy makes (cl::cuda::current_stream in core/cuda_api.h) is one load.
// Streams from the pool are created with cudaStreamNonBlocking, as torch's are: they do not
// synchronise implicitly with the legacy stream, so work on them overlaps the default
// stream's, and code that shares tensors between them must synchronise explicitly.
#pragma once

#include <cstdint>
#include <functional>
#include <utility>

#include "core/cuda_api.h"

namespace cl::cuda {

// The largest device index the per-thread tables hold (torch's C10_COMPILE_TIME_MAX_GPUS).
constexpr int kMaxDevices = 120;

// A stream of one device. `handle` is the cudaStream_t; nullptr is the legacy default stream.
struct Stream {
  int device = 0;
  StreamHandle handle = nullptr;

  Stream() = default;
  Stream(int d, StreamHandle h) : device(d), handle(h) {}

  // The Python-visible id: 0 for the default stream, the handle's address otherwise.
  int64_t id() const { return int64_t(reinterpret_cast<intptr_t>(handle)); }
  int priority() const;      // cudaStreamGetPriority
  bool query() const;        // true once all queued work has completed
  void synchronize() const;  // blocks the calling thread (release the GIL around it)
  bool operator==(const Stream& o) const { return device == o.device && handle == o.handle; }
  bool operator!=(const Stream& o) const { return !(*this == o); }
};

// current_stream(device) without launching the deferred batch (kernels/deferred.cu only).
StreamHandle current_stream_unflushed(int device);

// The calling thread's current stream on `device` (-1: the current device).
Stream get_current_stream(int device = -1);
// Makes `s` the calling thread's current stream on s.device (other devices keep theirs).
void set_current_stream(const Stream& s);
// The legacy default stream of `device` (-1: the current device).
Stream default_stream(int device = -1);
// A stream from the pool of `device` (-1: current) for `priority`, clamped to
// priority_range(). Pools hold 32 streams per priority, created one at a time on first use
// and handed out round-robin, like torch's.
Stream stream_from_pool(int device = -1, int priority = 0);
// Wraps a stream created elsewhere; its lifetime stays with its creator.
Stream external_stream(StreamHandle handle, int device = -1);
// (least, greatest) priority cudalite supports: (0, max(-3, the device's greatest)), as torch.
std::pair<int, int> priority_range();
// Makes `waiting` wait (on the GPU) for the work queued so far on `stream`.
void wait_stream(const Stream& waiting, const Stream& stream);

}  // namespace cl::cuda

template <>
struct std::hash<cl::cuda::Stream> {
  size_t operator()(const cl::cuda::Stream& s) const {
    return std::hash<const void*>()(s.handle) ^ (size_t(s.device) << 1);
  }
};
