// Memory statistics of a caching allocator: plain data with torch's names and meanings, so
// that memory_stats() returns the same keys as torch.cuda.memory_stats().
#pragma once

#include <array>
#include <cstdint>

namespace cl {

// One statistic: its current value, the highest value since the last reset_peak, and the
// totals added and removed since the last reset_accumulated.
struct Stat {
  int64_t current = 0;
  int64_t peak = 0;
  int64_t allocated = 0;
  int64_t freed = 0;

  void increase(int64_t n) {
    current += n;
    if (current > peak) peak = current;
    allocated += n;
  }
  void decrease(int64_t n) {
    current -= n;
    freed += n;
  }
  void reset_accumulated() { allocated = freed = 0; }
  void reset_peak() { peak = current; }
};

// torch's three views of every array statistic: "all", "small_pool" and "large_pool".
enum StatType : int { kAggregate = 0, kSmallPool = 1, kLargePool = 2, kNumStatTypes = 3 };
inline const char* stat_type_name(int t) {
  return t == kAggregate ? "all" : t == kSmallPool ? "small_pool" : "large_pool";
}

struct StatArray {
  std::array<Stat, kNumStatTypes> s;
  // Every change lands in "all" and in the pool it happened in.
  void increase(bool small, int64_t n) {
    s[kAggregate].increase(n);
    s[small ? kSmallPool : kLargePool].increase(n);
  }
  void decrease(bool small, int64_t n) {
    s[kAggregate].decrease(n);
    s[small ? kSmallPool : kLargePool].decrease(n);
  }
  const Stat& operator[](int t) const { return s[t]; }
  Stat& operator[](int t) { return s[t]; }
};

struct DeviceStats {
  StatArray allocation;            // allocation requests being served
  StatArray segment;               // memory runs obtained from the driver
  StatArray active;                // blocks in use, or freed but awaiting stream events
  StatArray inactive_split;        // free blocks that cannot be released (part of a segment)
  StatArray allocated_bytes;       // bytes handed out (rounded block sizes)
  StatArray reserved_bytes;        // bytes held from the driver
  StatArray active_bytes;          // bytes of active blocks
  StatArray inactive_split_bytes;  // bytes of inactive split blocks
  StatArray requested_bytes;       // bytes the callers asked for (before rounding)

  int64_t num_alloc_retries = 0;     // driver allocations retried after freeing the cache
  int64_t num_ooms = 0;              // OutOfMemoryErrors raised
  int64_t num_sync_all_streams = 0;  // waits for every outstanding stream event
  int64_t num_device_alloc = 0;      // cudaMalloc + cuMemMap calls
  int64_t num_device_free = 0;       // cudaFree + cuMemUnmap calls

  Stat oversize_allocations;    // allocations of at least max_split_size
  Stat oversize_segments;       // segments of at least max_split_size
  int64_t max_split_size = -1;  // torch reports SIZE_MAX as -1

  template <class F>
  void for_each_array(F f) {
    f("allocation", allocation);
    f("segment", segment);
    f("active", active);
    f("inactive_split", inactive_split);
    f("allocated_bytes", allocated_bytes);
    f("reserved_bytes", reserved_bytes);
    f("active_bytes", active_bytes);
    f("inactive_split_bytes", inactive_split_bytes);
    f("requested_bytes", requested_bytes);
  }
  template <class F>
  void for_each_array(F f) const {
    const_cast<DeviceStats*>(this)->for_each_array(
        [&](const char* name, StatArray& a) { f(name, static_cast<const StatArray&>(a)); });
  }

  void reset_accumulated() {
    for_each_array([](const char*, StatArray& a) {
      for (Stat& st : a.s) st.reset_accumulated();
    });
    num_alloc_retries = num_ooms = num_sync_all_streams = 0;
    num_device_alloc = num_device_free = 0;
    oversize_allocations.reset_accumulated();
    oversize_segments.reset_accumulated();
  }
  void reset_peak() {
    for_each_array([](const char*, StatArray& a) {
      for (Stat& st : a.s) st.reset_peak();
    });
    oversize_allocations.reset_peak();
    oversize_segments.reset_peak();
  }
};

}  // namespace cl
