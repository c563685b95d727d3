// Staged pageable copies (Note [Staged pageable copies] in staged_copy.h).
#include "cuda/staged_copy.h"

#include <algorithm>
#include <cstring>
#include <mutex>
#include <vector>

#include "core/cuda_api.h"
#include "core/error.h"
#include "core/parallel.h"
#include "cuda/cuda_check.h"
#include "cuda/streams.h"

namespace cl::cuda {

namespace {

constexpr size_t kChunk = size_t(2) << 20;  // staging buffer size, the largest chunk
constexpr size_t kMinChunk = size_t(256) << 10;
// Threads (so staging buffer pairs) per transfer: 8 copy threads move more than the link.
constexpr int kMaxSlots = 8;

// Two staging buffers of one host thread, each with the event of its last DMA.
struct Slot {
  char* buf[2] = {nullptr, nullptr};
  cudaEvent_t ev[2] = {nullptr, nullptr};
  bool pending[2] = {false, false};

  void prepare(int device) {
    for (int b = 0; b < 2; ++b) {
      if (!buf[b]) CL_CUDA_CHECK(cudaHostAlloc(reinterpret_cast<void**>(&buf[b]), kChunk, 0));
      if (!ev[b]) {
        DeviceGuard g(device);
        CL_CUDA_CHECK(cudaEventCreateWithFlags(&ev[b], cudaEventDisableTiming));
      }
    }
  }
  // Waits until the last DMA that used buffer `b` has completed.
  void wait(int b) {
    if (!pending[b]) return;
    CL_CUDA_CHECK(cudaEventSynchronize(ev[b]));
    pending[b] = false;
  }
  void queued(int b, cudaStream_t stream) {
    CL_CUDA_CHECK(cudaEventRecord(ev[b], stream));
    pending[b] = true;
  }
  void release() {
    for (int b = 0; b < 2; ++b) {
      wait(b);
      if (buf[b]) CL_CUDA_CHECK_NOTHROW(cudaFreeHost(buf[b]));
      buf[b] = nullptr;
    }
  }
};

struct DeviceStaging {
  std::mutex mu;  // one staged transfer per device at a time
  std::vector<Slot> slots;
};

DeviceStaging* staging() {
  static auto* p = new DeviceStaging[kMaxDevices];  // never destroyed (see streams.cpp)
  return p;
}

// How a transfer of n bytes is cut: chunks small enough that every thread gets at least
// two (so its two buffers overlap), within [kMinChunk, kChunk].
struct Plan {
  size_t chunk, chunks;
  int workers;
};
Plan make_plan(size_t n, int threads) {
  size_t chunk = n / (2 * size_t(threads));
  chunk = std::clamp((chunk + 65535) & ~size_t(65535), kMinChunk, kChunk);
  size_t chunks = (n + chunk - 1) / chunk;
  return {chunk, chunks, int(std::min<size_t>(size_t(threads), chunks))};
}

// Runs `body(slot, plan)` on the device's slots, or returns false when they are busy or
// can't be set up.
template <class Body>
bool with_slots(int device, size_t n, Body body) {
  DeviceStaging& st = staging()[device];
  std::unique_lock<std::mutex> lock(st.mu, std::try_to_lock);
  if (!lock.owns_lock()) return false;
  Plan plan = make_plan(n, std::min(host_threads(), kMaxSlots));
  if (st.slots.size() < size_t(plan.workers)) st.slots.resize(size_t(plan.workers));
  try {
    for (int w = 0; w < plan.workers; ++w) st.slots[w].prepare(device);
  } catch (const Error&) {
    return false;  // no pinned memory to stage through: the driver's path still works
  }
  parallel_run(plan.workers, [&](int w) {
    DeviceGuard g(device);  // worker threads start on device 0
    body(st.slots[w], plan, w);
  });
  return true;
}

}  // namespace

bool staged_h2d(void* dst, const void* src, size_t n, int device, cudaStream_t stream) {
  auto* d = static_cast<char*>(dst);
  auto* s = static_cast<const char*>(src);
  return with_slots(device, n, [&](Slot& slot, const Plan& p, int w) {
    int j = 0;
    for (size_t c = size_t(w); c < p.chunks; c += size_t(p.workers), ++j) {
      int b = j & 1;
      size_t off = c * p.chunk, len = std::min(p.chunk, n - off);
      slot.wait(b);
      std::memcpy(slot.buf[b], s + off, len);
      CL_CUDA_CHECK(cudaMemcpyAsync(d + off, slot.buf[b], len, cudaMemcpyHostToDevice, stream));
      slot.queued(b, stream);
    }
  });
}

bool staged_d2h(void* dst, const void* src, size_t n, int device, cudaStream_t stream) {
  auto* d = static_cast<char*>(dst);
  auto* s = static_cast<const char*>(src);
  return with_slots(device, n, [&](Slot& slot, const Plan& p, int w) {
    std::vector<size_t> mine;
    for (size_t c = size_t(w); c < p.chunks; c += size_t(p.workers)) mine.push_back(c);
    auto issue = [&](size_t k) {
      int b = int(k & 1);
      size_t off = mine[k] * p.chunk, len = std::min(p.chunk, n - off);
      slot.wait(b);  // an earlier H2D may still read this buffer
      CL_CUDA_CHECK(cudaMemcpyAsync(slot.buf[b], s + off, len, cudaMemcpyDeviceToHost, stream));
      slot.queued(b, stream);
    };
    issue(0);
    for (size_t k = 0; k < mine.size(); ++k) {
      if (k + 1 < mine.size()) issue(k + 1);
      int b = int(k & 1);
      slot.wait(b);
      size_t off = mine[k] * p.chunk, len = std::min(p.chunk, n - off);
      std::memcpy(d + off, slot.buf[b], len);
    }
  });
}

void release_staging_buffers() {
  if (!is_initialized()) return;
  for (int dev = 0; dev < std::min(device_count(), kMaxDevices); ++dev) {
    DeviceStaging& st = staging()[dev];
    std::unique_lock<std::mutex> lock(st.mu, std::try_to_lock);
    if (!lock.owns_lock()) continue;
    for (Slot& slot : st.slots) slot.release();
  }
}

}  // namespace cl::cuda
