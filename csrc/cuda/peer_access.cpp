// Peer access between GPUs and copies from one GPU to another.
//
// Note [Peer access]
// As torch (aten/src/ATen/cuda/PeerToPeerAccess.cpp), peer access is enabled lazily, on the
// first copy between a pair of devices, and the answer is cached per ordered pair: -1 not
// asked yet, 0 off, 1 on. Enabling it for (device, peer) lets work queued on `device` read
// and write `peer`'s memory: cudaDeviceEnablePeerAccess covers cudaMalloc memory, and the
// peer's caching allocator maps its virtual-memory arenas (expandable segments) for `device`,
// the ones that exist and the ones it maps later (CachingAllocator::enable_peer_access).
// CUDALITE_DISABLE_P2P=1 keeps it off for every pair: copies then go through
// cudaMemcpyPeerAsync, which the driver stages itself.
//
// Note [Peer access self-check]
// Some machines report peer access that silently corrupts data (an IOMMU or PCIe ACS in the
// way: pytorch#84803, #87363, #132397). The first time peer access is enabled for a pair, a
// small pattern is written from `device` into `peer`'s memory and read back from it, both
// through peer access, and compared on the host; a mismatch raises a RuntimeError that says
// what to do (CUDALITE_DISABLE_P2P=1) rather than letting later copies return wrong data. The
// pair stays marked broken: every later copy between them raises the same error.
//
// Note [Copies between devices]
// A copy from `src` to `dst` on another device runs on the source device's current stream,
// behind a two-way barrier with the destination's current stream, as torch's
// copy_device_to_device: an event recorded on the destination's stream makes the copy wait
// for the work queued there (which may still use the destination memory), and an event
// recorded after the copy makes the destination's stream wait for it. The host never waits:
// work queued on either device after the copy is ordered after it, and the caller
// synchronises before reading the data on the host. With peer access the copy is a plain
// cudaMemcpyAsync (the copy engine of the source device writes the peer's memory directly);
// without it, cudaMemcpyPeerAsync.
#include <cuda_runtime_api.h>

#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <vector>

#include "core/caching_allocator.h"
#include "core/cuda_api.h"
#include "cuda/cuda_check.h"
#include "cuda/streams.h"

namespace cl::cuda {

namespace {

// State of each ordered pair: 0 not asked yet, 1 off, 2 on, 3 on but failed the self-check.
enum : int8_t { kUnknown = 0, kOff = 1, kOn = 2, kBroken = 3 };
std::atomic<int8_t> g_state[kMaxDevices][kMaxDevices];
std::mutex g_mu;

bool p2p_disabled() {
  static const bool off = [] {
    const char* v = std::getenv("CUDALITE_DISABLE_P2P");
    return v && v[0] == '1' && v[1] == '\0';
  }();
  return off;
}

[[noreturn]] void throw_broken(int device, int peer) {
  throw Error(detail::str(
      "Peer-to-peer self-check failed: data copied between cuda:", device, " and cuda:", peer,
      " through peer access came back different. Copies between these GPUs would be silently "
      "wrong on this machine (the IOMMU or PCIe ACS settings are a common cause). Set "
      "CUDALITE_DISABLE_P2P=1 to copy between GPUs without peer access."));
}

// One event per device and thread for each side of the barrier, created on first use. Reusing
// them is safe: cudaStreamWaitEvent waits for the event's state when it is called.
cudaEvent_t barrier_event(int device, int which) {
  thread_local cudaEvent_t events[kMaxDevices][2] = {};
  cudaEvent_t& e = events[device][which];
  if (!e) CL_CUDA_CHECK(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
  return e;
}

bool selfcheck_passes(int device, int peer, bool p2p, bool inject_fault);

int8_t enable(int device, int peer) {
  int can = 0;
  CL_CUDA_CHECK(cudaDeviceCanAccessPeer(&can, device, peer));
  if (!can) return kOff;
  {
    DeviceGuard g(device);
    cudaError_t err = cudaDeviceEnablePeerAccess(peer, 0);
    if (err == cudaErrorPeerAccessAlreadyEnabled) {
      cudaGetLastError();  // enabled by other code in this process: fine
    } else if (err != cudaSuccess) {
      throw_cuda_error(err, __FILE__, __LINE__);
    }
  }
  // The peer's arenas are not covered by cudaDeviceEnablePeerAccess (Note [Peer access]).
  if (CachingAllocator* a = caching_allocator(peer)) a->enable_peer_access(device);
  return selfcheck_passes(device, peer, true, false) ? kOn : kBroken;
}

}  // namespace

bool get_p2p_access(int device, int peer) {
  if (device == peer) return true;
  CL_CHECK(unsigned(device) < unsigned(kMaxDevices) && unsigned(peer) < unsigned(kMaxDevices),
           "invalid device index ", device < 0 || device >= kMaxDevices ? device : peer);
  int8_t s = g_state[device][peer].load(std::memory_order_acquire);
  if (s == kUnknown) {
    check_device_index(device);
    check_device_index(peer);
    std::lock_guard<std::mutex> lock(g_mu);
    s = g_state[device][peer].load(std::memory_order_relaxed);
    if (s == kUnknown) {
      s = p2p_disabled() ? int8_t(kOff) : enable(device, peer);
      g_state[device][peer].store(s, std::memory_order_release);
    }
  }
  if (s == kBroken) throw_broken(device, peer);
  return s == kOn;
}

int p2p_access_state(int device, int peer) {
  check_device_index(device);
  check_device_index(peer);
  if (device == peer) return 1;
  switch (g_state[device][peer].load(std::memory_order_acquire)) {
    case kOff:
      return 0;
    case kOn:
      return 1;
    case kBroken:
      return 2;
    default:
      return -1;
  }
}

void p2p_selfcheck(int device, int peer, bool inject_fault) {
  check_device_index(device);
  check_device_index(peer);
  const bool p2p = get_p2p_access(device, peer);
  if (!selfcheck_passes(device, peer, p2p, inject_fault)) throw_broken(device, peer);
}

namespace {
// Note [Peer access self-check]. Uses the caching allocators' memory (arenas included), so
// that it checks the mappings later copies use, on a stream of its own.
bool selfcheck_passes(int device, int peer, bool p2p, bool inject_fault) {
  constexpr size_t kWords = 4096;
  constexpr size_t kBytes = kWords * sizeof(uint32_t);
  std::vector<uint32_t> pattern(kWords), back(kWords), there(kWords);
  for (size_t i = 0; i < kWords; ++i) {
    pattern[i] = uint32_t(0x9E3779B9u * (i + 1)) ^ uint32_t(device << 16 | peer);
  }
  DataPtr mine = device_allocator(device)->allocate(kBytes);
  DataPtr theirs = device_allocator(peer)->allocate(kBytes);
  {
    DeviceGuard g(peer);
    CL_CUDA_CHECK(cudaDeviceSynchronize());  // the allocation's stream may still use it
    CL_CUDA_CHECK(cudaMemset(theirs.get(), 0, kBytes));
    CL_CUDA_CHECK(cudaDeviceSynchronize());
  }
  DeviceGuard g(device);
  CL_CUDA_CHECK(cudaDeviceSynchronize());
  cudaStream_t s = nullptr;
  CL_CUDA_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  cudaError_t err = cudaMemcpyAsync(mine.get(), pattern.data(), kBytes, cudaMemcpyHostToDevice, s);
  // Write into the peer's memory, clear ours, read it back from the peer.
  auto d2d = [&](void* dst, int dst_device, const void* src, int src_device) {
    return p2p ? cudaMemcpyAsync(dst, src, kBytes, cudaMemcpyDeviceToDevice, s)
               : cudaMemcpyPeerAsync(dst, dst_device, src, src_device, kBytes, s);
  };
  if (err == cudaSuccess) err = d2d(theirs.get(), peer, mine.get(), device);
  if (err == cudaSuccess) err = cudaMemsetAsync(mine.get(), 0, kBytes, s);
  if (err == cudaSuccess) err = d2d(mine.get(), device, theirs.get(), peer);
  if (err == cudaSuccess) {
    err = cudaMemcpyAsync(back.data(), mine.get(), kBytes, cudaMemcpyDeviceToHost, s);
  }
  cudaError_t sync = cudaStreamSynchronize(s);
  if (err == cudaSuccess) err = sync;
  (void)cudaStreamDestroy(s);
  if (err != cudaSuccess) throw_cuda_error(err, __FILE__, __LINE__);
  {
    DeviceGuard gp(peer);
    CL_CUDA_CHECK(cudaMemcpy(there.data(), theirs.get(), kBytes, cudaMemcpyDeviceToHost));
  }
  if (inject_fault) back[kWords / 2] ^= 1u;  // tests: what a broken link would do
  return std::memcmp(there.data(), pattern.data(), kBytes) == 0 &&
         std::memcmp(back.data(), pattern.data(), kBytes) == 0;
}
}  // namespace

// Note [Copies between devices]
void memcpy_peer(void* dst, int dst_device, const void* src, int src_device, size_t n) {
  if (n == 0) return;
  const bool p2p = get_p2p_access(src_device, dst_device);
  cudaStream_t dst_stream = static_cast<cudaStream_t>(current_stream(dst_device));
  cudaStream_t copy_stream = static_cast<cudaStream_t>(current_stream(src_device));
  {
    DeviceGuard g(dst_device);
    CL_CUDA_CHECK(cudaEventRecord(barrier_event(dst_device, 0), dst_stream));
  }
  DeviceGuard g(src_device);
  CL_CUDA_CHECK(cudaStreamWaitEvent(copy_stream, barrier_event(dst_device, 0), 0));
  if (p2p) {
    CL_CUDA_CHECK(cudaMemcpyAsync(dst, src, n, cudaMemcpyDeviceToDevice, copy_stream));
  } else {
    CL_CUDA_CHECK(cudaMemcpyPeerAsync(dst, dst_device, src, src_device, n, copy_stream));
  }
  cudaEvent_t src_ready = barrier_event(src_device, 1);
  CL_CUDA_CHECK(cudaEventRecord(src_ready, copy_stream));
  DeviceGuard g2(dst_device);
  CL_CUDA_CHECK(cudaStreamWaitEvent(dst_stream, src_ready, 0));
}

}  // namespace cl::cuda
