#include "core/host_backend.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstring>

#include "core/error.h"

namespace cl {

namespace {
[[noreturn]] void sys_fail(const char* what) {
  throw Error(detail::str("host allocator backend: ", what, " failed: ", std::strerror(errno)));
}
}  // namespace

HostBackend::HostBackend(size_t capacity, bool use_vmm, int index)
    : index_(index), capacity_(capacity) {
  if (use_vmm) fd_ = memfd_create("cudalite-host-backend", MFD_CLOEXEC);
}

HostBackend::~HostBackend() {
  for (auto& kv : reservations_) munmap(kv.second.first, kv.second.second);
  if (fd_ >= 0) close(fd_);
}

// Note [Driver costs]
// The host backend's calls cost a few microseconds of system calls; the driver's cost tens
// (docs/allocator.md, "What those calls cost"). With driver costs on, each call waits until
// the matching CUDA call's measured time has passed since it began: cuMemCreate, cuMemMap,
// cuMemUnmap, cuMemRelease, cudaMalloc and cudaFree as medians measured on an H200
// (benchmarks/cpp/vmm_calls.cu) at 2, 20, 64 and 256 MiB, linear in the size between those
// points and beyond the last two; cuMemSetAccess per mapping it covers (it costs per mapping,
// not per call), charged by size for every map since the previous set_access. A 2 MiB page
// made live (create + map + access) then costs 36.3 us, the ~38 us measured on an H100. A
// stream synchronisation is taken as 5 us (an idle stream). Replays on the host backend
// then cost what the allocator's logic costs on the host plus what its calls cost on a GPU.
namespace {
struct CostPoint {
  double mib, us;
};
using CostTable = CostPoint[4];
const CostTable kCreateCost = {{2, 10.2}, {20, 10.4}, {64, 11.3}, {256, 15.5}};
const CostTable kMapCost = {{2, 1.0}, {20, 0.9}, {64, 1.1}, {256, 1.2}};
const CostTable kAccess = {{2, 25.1}, {20, 25.6}, {64, 41.4}, {256, 44.1}};
const CostTable kUnmapCost = {{2, 16.9}, {20, 16.8}, {64, 24.5}, {256, 25.1}};
const CostTable kReleaseCost = {{2, 11.7}, {20, 25.5}, {64, 52.3}, {256, 116.4}};
const CostTable kMalloc = {{2, 42.6}, {20, 45.6}, {64, 63.9}, {256, 73.2}};
const CostTable kFreeCost = {{2, 34.5}, {20, 50.7}, {64, 85.1}, {256, 151.9}};
constexpr double kSynchronizeUs = 5.0;

double interpolate(const CostTable& t, size_t nbytes) {
  const double mib = double(nbytes) / double(size_t(1) << 20);
  if (mib <= t[0].mib) return t[0].us;
  size_t i = 1;
  while (i < 3 && mib > t[i].mib) ++i;
  const CostPoint& a = t[i - 1];
  const CostPoint& b = t[i];
  return std::max(0.0, a.us + (b.us - a.us) * (mib - a.mib) / (b.mib - a.mib));
}

int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}
}  // namespace

double HostBackend::driver_cost_us(const std::string& call, size_t nbytes) {
  if (call == "create_physical") return interpolate(kCreateCost, nbytes);
  if (call == "map") return interpolate(kMapCost, nbytes);
  if (call == "set_access") return interpolate(kAccess, nbytes);
  if (call == "unmap") return interpolate(kUnmapCost, nbytes);
  if (call == "release_physical") return interpolate(kReleaseCost, nbytes);
  if (call == "malloc") return interpolate(kMalloc, nbytes);
  if (call == "free") return interpolate(kFreeCost, nbytes);
  if (call == "synchronize") return kSynchronizeUs;
  throw ValueError(detail::str("HostBackend.driver_cost_us: unknown call '", call, "'"));
}

void HostBackend::set_driver_costs(bool on) { costs_.store(on); }

void HostBackend::charge(int64_t start_ns, double us) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    calls_.driver_us += us;
  }
  if (!costs_.load(std::memory_order_relaxed)) return;
  const int64_t until = start_ns + int64_t(us * 1000.0);
  while (now_ns() < until) {
  }
}

namespace {
const char* const kOpNames[] = {"free",
                                "map",
                                "set_access",
                                "unmap",
                                "create_physical",
                                "release_physical",
                                "release_address",
                                "synchronize"};
}  // namespace

void HostBackend::fail_next(const std::string& call, int count, int after, bool out_of_memory) {
  for (int op = 0; op < kNumOps; ++op) {
    if (call == kOpNames[op]) {
      if (out_of_memory && op != kMap && op != kSetAccess && op != kCreate) {
        throw ValueError(detail::str("HostBackend.fail_next: ", call,
                                     " cannot report out of memory (only create_physical, map "
                                     "and set_access can)"));
      }
      std::lock_guard<std::mutex> lock(mu_);
      fail_[op] = count;
      fail_after_[op] = after;
      fail_oom_[op] = out_of_memory;
      bool any = false;
      for (int c : fail_) any = any || c > 0;
      failing_.store(any);
      return;
    }
  }
  throw ValueError(detail::str("HostBackend.fail_next: unknown call '", call, "'"));
}

bool HostBackend::maybe_fail(Op op) {
  if (!failing_.load(std::memory_order_relaxed)) return false;
  std::lock_guard<std::mutex> lock(mu_);
  if (fail_[op] <= 0) return false;
  if (fail_after_[op] > 0) {
    --fail_after_[op];
    return false;
  }
  --fail_[op];
  bool any = false;
  for (int c : fail_) any = any || c > 0;
  failing_.store(any);
  if (fail_oom_[op]) return true;
  throw AcceleratorError(999, detail::str("host backend: injected failure of ", kOpNames[op]));
}

void* HostBackend::malloc(size_t nbytes) {
  charge(now_ns(), interpolate(kMalloc, nbytes));
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (nbytes > capacity_ - std::min(used_, capacity_)) return nullptr;
    used_ += nbytes;
  }
  void* p = mmap(nullptr, nbytes, PROT_READ | PROT_WRITE,
                 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (p == MAP_FAILED) {
    std::lock_guard<std::mutex> lock(mu_);
    used_ -= nbytes;
    return nullptr;
  }
  return p;
}

void HostBackend::free(void* ptr, size_t nbytes) {
  maybe_fail(kFree);
  const int64_t t0 = now_ns();
  munmap(ptr, nbytes);
  charge(t0, interpolate(kFreeCost, nbytes));
  std::lock_guard<std::mutex> lock(mu_);
  used_ -= nbytes;
}

void* HostBackend::reserve_address(size_t nbytes) {
  if (nbytes > SIZE_MAX - kGranularity) return nullptr;
  // Over-reserve by one granule so that the range can start on a granule boundary.
  size_t raw_len = nbytes + kGranularity;
  void* raw = mmap(nullptr, raw_len, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (raw == MAP_FAILED) return nullptr;
  uintptr_t aligned = (uintptr_t(raw) + kGranularity - 1) / kGranularity * kGranularity;
  std::lock_guard<std::mutex> lock(mu_);
  reservations_[reinterpret_cast<void*>(aligned)] = {raw, raw_len};
  return reinterpret_cast<void*>(aligned);
}

void HostBackend::release_address(void* base, size_t) {
  maybe_fail(kReleaseAddress);
  std::lock_guard<std::mutex> lock(mu_);
  auto it = reservations_.find(base);
  if (it == reservations_.end()) return;
  munmap(it->second.first, it->second.second);
  reservations_.erase(it);
}

PhysHandle HostBackend::create_physical(size_t nbytes) {
  if (maybe_fail(kCreate)) return 0;
  charge(now_ns(), interpolate(kCreateCost, nbytes));
  std::lock_guard<std::mutex> lock(mu_);
  if (nbytes > capacity_ - std::min(used_, capacity_)) return 0;
  size_t off = 0;
  auto it = std::find_if(free_ranges_.begin(), free_ranges_.end(),
                         [&](const auto& r) { return r.second >= nbytes; });
  if (it != free_ranges_.end()) {
    off = it->first;
    size_t rest = it->second - nbytes;
    free_ranges_.erase(it);
    if (rest) free_ranges_[off + nbytes] = rest;
  } else {
    off = file_end_;
    if (ftruncate(fd_, off_t(file_end_ + nbytes)) != 0) return 0;
    file_end_ += nbytes;
  }
  used_ += nbytes;
  ++calls_.create;
  return PhysHandle(off) + 1;  // 0 means "none"
}

void HostBackend::release_physical(PhysHandle h, size_t nbytes) {
  maybe_fail(kRelease);
  charge(now_ns(), interpolate(kReleaseCost, nbytes));
  std::lock_guard<std::mutex> lock(mu_);
  size_t off = size_t(h - 1);
  // Give the pages back to the system; the range is reused by later create_physical calls.
  fallocate(fd_, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, off_t(off), off_t(nbytes));
  used_ -= nbytes;
  ++calls_.release;
  auto next = free_ranges_.find(off + nbytes);
  if (next != free_ranges_.end()) {
    nbytes += next->second;
    free_ranges_.erase(next);
  }
  auto it = free_ranges_.lower_bound(off);
  if (it != free_ranges_.begin()) {
    auto prev = std::prev(it);
    if (prev->first + prev->second == off) {
      prev->second += nbytes;
      return;
    }
  }
  free_ranges_[off] = nbytes;
}

bool HostBackend::map(void* va, size_t nbytes, PhysHandle h) {
  if (maybe_fail(kMap)) return false;
  const int64_t t0 = now_ns();
  void* p = mmap(va, nbytes, PROT_NONE, MAP_SHARED | MAP_FIXED, fd_, off_t(h - 1));
  if (p == MAP_FAILED) {
    if (errno == ENOMEM) return false;
    sys_fail("mmap");
  }
  charge(t0, interpolate(kMapCost, nbytes));
  std::lock_guard<std::mutex> lock(mu_);
  ++calls_.map;
  calls_.mapped_pages += nbytes / kGranularity;
  access_due_us_ += interpolate(kAccess, nbytes);
  return true;
}

bool HostBackend::set_access(void* va, size_t nbytes) {
  if (maybe_fail(kSetAccess)) return false;
  const int64_t t0 = now_ns();
  double due = 0;
  {
    std::lock_guard<std::mutex> lock(mu_);
    due = access_due_us_;
    access_due_us_ = 0;
  }
  if (mprotect(va, nbytes, PROT_READ | PROT_WRITE) != 0) {
    if (errno == ENOMEM) return false;
    sys_fail("mprotect");
  }
  charge(t0, due);
  std::lock_guard<std::mutex> lock(mu_);
  ++calls_.set_access;
  return true;
}

bool HostBackend::add_peer(int device) {
  std::lock_guard<std::mutex> lock(mu_);
  if (!supports_vmm() || std::find(peers_.begin(), peers_.end(), device) != peers_.end()) {
    return false;
  }
  peers_.push_back(device);
  return true;
}

std::vector<int> HostBackend::peers() const {
  std::lock_guard<std::mutex> lock(mu_);
  return peers_;
}

void HostBackend::unmap(void* va, size_t nbytes) {
  maybe_fail(kUnmap);
  const int64_t t0 = now_ns();
  // Back to a reservation: the address range stays owned by its arena.
  void* p =
      mmap(va, nbytes, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED, -1, 0);
  if (p == MAP_FAILED) sys_fail("mmap");
  charge(t0, interpolate(kUnmapCost, nbytes));
  std::lock_guard<std::mutex> lock(mu_);
  ++calls_.unmap;
}

EventHandle HostBackend::create_event() { return new FakeEvent(); }

void HostBackend::destroy_event(EventHandle e) { delete static_cast<FakeEvent*>(e); }

void HostBackend::record_event(EventHandle e, StreamId s) {
  std::lock_guard<std::mutex> lock(mu_);
  auto* ev = static_cast<FakeEvent*>(e);
  ev->stream = s;
  ev->seq = streams_[s].launched;
}

bool HostBackend::query_event(EventHandle e) {
  std::lock_guard<std::mutex> lock(mu_);
  auto* ev = static_cast<FakeEvent*>(e);
  return streams_[ev->stream].completed >= ev->seq;
}

void HostBackend::synchronize_event(EventHandle e) {
  std::lock_guard<std::mutex> lock(mu_);
  auto* ev = static_cast<FakeEvent*>(e);
  FakeStream& st = streams_[ev->stream];
  st.completed = std::max(st.completed, ev->seq);
}

void HostBackend::synchronize_stream(StreamId s) {
  maybe_fail(kSynchronize);
  charge(now_ns(), kSynchronizeUs);
  complete(s);
  std::lock_guard<std::mutex> lock(mu_);
  ++calls_.synchronize;
}

void HostBackend::launch(StreamId s) {
  std::lock_guard<std::mutex> lock(mu_);
  ++streams_[s].launched;
}

void HostBackend::complete(StreamId s) {
  std::lock_guard<std::mutex> lock(mu_);
  FakeStream& st = streams_[s];
  st.completed = st.launched;
}

void HostBackend::mem_get_info(size_t* free, size_t* total) {
  std::lock_guard<std::mutex> lock(mu_);
  *total = capacity_;
  *free = capacity_ > used_ ? capacity_ - used_ : 0;
}

size_t HostBackend::used() const {
  std::lock_guard<std::mutex> lock(mu_);
  return used_;
}

HostBackend::Calls HostBackend::calls() const {
  std::lock_guard<std::mutex> lock(mu_);
  return calls_;
}

void HostBackend::set_capacity(size_t c) {
  std::lock_guard<std::mutex> lock(mu_);
  capacity_ = c;
}

}  // namespace cl
