// Streams: the per-thread current stream of each device and the stream pools
// (Note [Current streams] in streams.h).
#include "cuda/streams.h"

#include <cuda_runtime_api.h>

#include <algorithm>
#include <atomic>
#include <mutex>

#include "core/error.h"
#include "cuda/cuda_check.h"
#include "cuda/deferred.h"
#include "cuda/events.h"

namespace cl::cuda {

namespace {

constexpr int kStreamsPerPool = 32;
// torch's max_compile_time_stream_priorities: priorities 0, -1, -2, -3.
constexpr int kMaxPriorities = 4;

// Zero-initialised: every device starts on the legacy default stream (handle 0).
thread_local StreamHandle t_current[kMaxDevices];

struct Pool {
  std::atomic<StreamHandle> streams[kStreamsPerPool] = {};
  std::atomic<uint32_t> next{0};
};
struct DevicePools {
  Pool by_priority[kMaxPriorities];
  std::mutex create_mu;  // cudaStreamCreate is slow; one creation per device at a time
};
// Never destroyed, like torch's leaky stream pools: streams must outlive every static that
// might still use them while the process exits.
DevicePools* device_pools() {
  static auto* p = new DevicePools[kMaxDevices];
  return p;
}

int resolve(int device) {
  if (device < 0) return current_device();
  check_device_index(device);
  CL_CHECK(device < kMaxDevices, "cudalite supports at most ", kMaxDevices, " devices");
  return device;
}

}  // namespace

StreamHandle current_stream(int device) {
  CL_CHECK(unsigned(device) < unsigned(kMaxDevices), "invalid device index ", device);
  flush_deferred();  // whoever asks is about to use the stream (Note [Deferred launches])
  return t_current[device];
}

StreamHandle current_stream_unflushed(int device) {
  CL_CHECK(unsigned(device) < unsigned(kMaxDevices), "invalid device index ", device);
  return t_current[device];
}

Stream get_current_stream(int device) {
  device = resolve(device);
  return Stream(device, t_current[device]);
}

void set_current_stream(const Stream& s) {
  CL_CHECK(unsigned(s.device) < unsigned(kMaxDevices), "invalid device index ", s.device);
  flush_deferred();  // a batch never outlives its stream's turn (an external one may go)
  t_current[s.device] = s.handle;
}

Stream default_stream(int device) { return Stream(resolve(device), nullptr); }

std::pair<int, int> priority_range() {
  static std::once_flag once;
  static std::pair<int, int> range;
  lazy_init();
  std::call_once(once, [] {
    int least = 0, greatest = 0;
    CL_CUDA_CHECK(cudaDeviceGetStreamPriorityRange(&least, &greatest));
    range = {least, std::max(-kMaxPriorities + 1, greatest)};
  });
  return range;
}

Stream stream_from_pool(int device, int priority) {
  device = resolve(device);
  auto [least, greatest] = priority_range();
  priority = std::clamp(priority, greatest, least);
  DevicePools& dp = device_pools()[device];
  Pool& pool = dp.by_priority[-priority];
  uint32_t i = pool.next.fetch_add(1, std::memory_order_relaxed) % kStreamsPerPool;
  StreamHandle h = pool.streams[i].load(std::memory_order_acquire);
  if (!h) {
    // Each stream is created on its first hand-out, so the first Stream() costs one
    // cudaStreamCreate, not 32.
    std::lock_guard<std::mutex> lock(dp.create_mu);
    h = pool.streams[i].load(std::memory_order_acquire);
    if (!h) {
      DeviceGuard g(device);
      cudaStream_t s = nullptr;
      CL_CUDA_CHECK(cudaStreamCreateWithPriority(&s, cudaStreamNonBlocking, priority));
      h = s;
      pool.streams[i].store(h, std::memory_order_release);
    }
  }
  return Stream(device, h);
}

Stream external_stream(StreamHandle handle, int device) { return Stream(resolve(device), handle); }

int Stream::priority() const {
  DeviceGuard g(device);  // the legacy stream (handle 0) means the current device's
  int p = 0;
  CL_CUDA_CHECK(cudaStreamGetPriority(static_cast<cudaStream_t>(handle), &p));
  return p;
}

bool Stream::query() const {
  flush_deferred();
  DeviceGuard g(device);
  cudaError_t err = cudaStreamQuery(static_cast<cudaStream_t>(handle));
  if (err == cudaSuccess) return true;
  if (err != cudaErrorNotReady) throw_cuda_error(err, __FILE__, __LINE__);
  cudaGetLastError();  // clear "not ready"
  return false;
}

void Stream::synchronize() const {
  flush_deferred();
  {
    DeviceGuard g(device);
    CL_CUDA_CHECK(cudaStreamSynchronize(static_cast<cudaStream_t>(handle)));
  }
  process_record_stream_frees();
}

void wait_stream(const Stream& waiting, const Stream& stream) {
  if (waiting == stream) return;
  Event ev;
  ev.record(stream);
  ev.wait(waiting);
}

void stream_wait_stream(StreamHandle waiting, StreamHandle stream, int device) {
  wait_stream(Stream(device, waiting), Stream(device, stream));
}

}  // namespace cl::cuda
