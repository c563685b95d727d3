// A host-memory AllocBackend with a settable capacity, so that the caching allocator's logic
// (splitting, merging, arenas and page lending, stream-ordered reuse, the out-of-memory path,
// statistics) runs and is tested on machines without a GPU.
//
// Memory is real but costs nothing until touched: plain segments are anonymous mappings, and
// virtual memory works like CUDA's: address space is reserved with PROT_NONE, "physical"
// memory is a range of one memfd, and mapping it at an address (possibly at several addresses
// at once, as lending does) is mmap(MAP_SHARED | MAP_FIXED) of that range.
//
// Streams and events are simulated: launch(s) enqueues pretend work on stream s and
// complete(s) finishes everything enqueued so far; an event recorded on s completes once the
// work enqueued before it has.
#pragma once

#include <atomic>
#include <cstddef>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/alloc_backend.h"

namespace cl {

class HostBackend final : public AllocBackend {
 public:
  // use_vmm=false (or a system without memfd) gives a backend of plain segments only.
  explicit HostBackend(size_t capacity, bool use_vmm = true, int index = 0);
  ~HostBackend() override;
  HostBackend(const HostBackend&) = delete;
  HostBackend& operator=(const HostBackend&) = delete;

  Device device() const override { return Device(DeviceType::CPU, index_); }
  StreamId current_stream() override { return 0; }

  void* malloc(size_t nbytes) override;
  void free(void* ptr, size_t nbytes) override;

  bool supports_vmm() const override { return fd_ >= 0; }
  size_t vmm_granularity() const override { return kGranularity; }
  void* reserve_address(size_t nbytes) override;
  void release_address(void* base, size_t nbytes) override;
  PhysHandle create_physical(size_t nbytes) override;
  void release_physical(PhysHandle h, size_t nbytes) override;
  bool map(void* va, size_t nbytes, PhysHandle h) override;
  bool set_access(void* va, size_t nbytes) override;
  void unmap(void* va, size_t nbytes) override;

  EventHandle create_event() override;
  void destroy_event(EventHandle e) override;
  void record_event(EventHandle e, StreamId s) override;
  bool query_event(EventHandle e) override;
  void synchronize_event(EventHandle e) override;
  void synchronize_stream(StreamId s) override;

  void mem_get_info(size_t* free, size_t* total) override;
  const char* kind() const override { return "host"; }

  // Simulated streams (thread-safe).
  void launch(StreamId s);
  void complete(StreamId s);
  size_t used() const;
  size_t capacity() const { return capacity_; }
  void set_capacity(size_t c);

  static constexpr size_t kGranularity = size_t(2) << 20;

  // How many virtual-memory calls the allocator made, by kind, and the stream
  // synchronisations: what benchmarks/fragmentation.py prices with a GPU's measured costs.
  struct Calls {
    size_t create = 0, release = 0, map = 0, set_access = 0, unmap = 0, synchronize = 0;
    size_t mapped_pages = 0;  // granularity pages mapped, over all map calls
    double driver_us = 0;     // what the calls cost under the driver-cost model
  };
  Calls calls() const;

  // Simulated driver costs (Note [Driver costs] in host_backend.cpp): with them on, every
  // call lasts at least what the matching CUDA call costs on a GPU, so that replays on the
  // host backend time what the allocator's driver calls would cost there.
  void set_driver_costs(bool on);
  bool driver_costs() const { return costs_; }
  // The microseconds a call of `call` ("create_physical", "map", "set_access" (per mapping
  // since the last set_access), "unmap", "release_physical", "malloc", "free",
  // "synchronize") of `nbytes` costs under the model. Throws ValueError for an unknown name.
  static double driver_cost_us(const std::string& call, size_t nbytes);

  // Peer access: the devices added (set_access does nothing more for them on the host).
  bool add_peer(int device) override;
  std::vector<int> peers() const;

  // Failure injection, for tests of the allocator's error paths: after `after` more calls of
  // `call` ("free", "map", "set_access", "unmap", "create_physical", "release_physical",
  // "release_address", "synchronize") succeed, the next `count` do nothing and throw
  // AcceleratorError, as a failing driver call does; with out_of_memory, they report an
  // exhausted device instead (create_physical returns 0, map and set_access false), which
  // only those three calls can. count = 0 cancels a pending injection. Throws ValueError for
  // an unknown name, or out_of_memory for another call.
  void fail_next(const std::string& call, int count = 1, int after = 0, bool out_of_memory = false);

 private:
  struct FakeEvent {
    StreamId stream = 0;
    uint64_t seq = 0;
  };
  struct FakeStream {
    uint64_t launched = 0;
    uint64_t completed = 0;
  };

  enum Op {
    kFree,
    kMap,
    kSetAccess,
    kUnmap,
    kCreate,
    kRelease,
    kReleaseAddress,
    kSynchronize,
    kNumOps
  };
  // Throws the injected AcceleratorError, or returns true for an injected out-of-memory.
  bool maybe_fail(Op op);
  // Counts a call's modeled cost (Calls::driver_us); with driver costs on, also waits until
  // `us` microseconds have passed since `start_ns`.
  void charge(int64_t start_ns, double us);

  int index_;
  int fd_ = -1;
  std::atomic<bool> failing_{false};  // some fail_next() count is pending
  int fail_[kNumOps] = {};
  int fail_after_[kNumOps] = {};
  bool fail_oom_[kNumOps] = {};
  size_t capacity_;
  size_t used_ = 0;
  size_t file_end_ = 0;
  std::map<size_t, size_t> free_ranges_;  // reusable memfd ranges: offset -> size
  std::unordered_map<void*, std::pair<void*, size_t>> reservations_;  // aligned -> raw
  mutable std::mutex mu_;
  std::unordered_map<StreamId, FakeStream> streams_;
  Calls calls_;
  std::vector<int> peers_;
  std::atomic<bool> costs_{false};
  double access_due_us_ = 0;  // set_access's cost for the maps since the last one (mu_)
};

}  // namespace cl
