// Caching allocator settings: CUDALITE_ALLOC_CONF, parsed with torch's PYTORCH_ALLOC_CONF
// syntax ("key:value,key:value", roundup_power2_divisions also as "[256:4,>:1]").
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>

namespace cl {

constexpr size_t kMiB = size_t(1) << 20;
constexpr size_t kMinBlockSize = 512;         // every request is rounded up to 512 B
constexpr size_t kSmallSize = 1 * kMiB;       // the largest request served by the small pool
constexpr size_t kSmallBuffer = 2 * kMiB;     // small-pool segments
constexpr size_t kLargeBuffer = 20 * kMiB;    // segments for 1-10 MiB requests
constexpr size_t kMinLargeAlloc = 10 * kMiB;  // from here segments are the request size
constexpr size_t kRoundLarge = 2 * kMiB;      // ... rounded up to 2 MiB
constexpr int kRoundupIntervals = 16;         // power-of-two intervals from 1 MiB to 64 GiB
// The largest request the caching allocator rounds and tries to serve (4 EiB, far beyond any
// device). Larger ones raise OutOfMemoryError at once: below it, no size computed from a
// request (rounding, segment and page sizes, address space to reserve) can wrap around.
constexpr size_t kMaxRequest = size_t(1) << 62;

struct AllocatorSettings {
  // Blocks of at least this size are never split (and count as "oversize").
  size_t max_split_size = std::numeric_limits<size_t>::max();
  // An oversize request may take a cached oversize block at most this much larger.
  size_t max_non_split_rounding_size = kLargeBuffer;
  // With a memory fraction set: free cached blocks once reserved memory passes this share.
  double garbage_collection_threshold = 0.0;
  // Per power-of-two interval (1 MiB, 2 MiB, ... 32 GiB+): round requests up to 1/n steps.
  std::array<size_t, kRoundupIntervals> roundup_power2_divisions{};
  // cudalite's default: grow one virtual-memory segment per stream and pool (see
  // docs/allocator.md). False gives torch's default cudaMalloc segments.
  bool expandable_segments = true;
  // cudalite's key: with page_lending, the page (physical allocation) size of large-pool
  // arenas. Pages are the unit arenas grow and lend in: small pages waste least, large pages
  // take fewer driver calls. Rounded up to the device granularity.
  size_t large_segment_size = 4 * kMiB;
  // cudalite's key: arenas grow in pages (large_segment_size) that free holes lend to the
  // growing end, under a 2 % growth budget: about 2 % less memory than the default, which
  // makes one physical allocation per growth, and a driver call per page (docs/allocator.md,
  // Note [Growth granules]).
  bool page_lending = false;
  bool release_lock_on_cudamalloc = false;
  // Pinned-memory keys, accepted for compatibility with torch's syntax.
  bool pinned_use_cuda_host_register = false;
  size_t pinned_num_register_threads = 1;
  bool pinned_use_background_threads = false;
  bool graph_capture_record_stream_reuse = false;
  std::string text;  // the string these settings were parsed from

  size_t roundup_divisions(size_t size) const;
  // torch's round_size: 512 B steps, or a power-of-two division when configured. Sizes
  // above kMaxRequest are returned unchanged (rounding them could wrap around).
  size_t round_size(size_t size) const;
};

// Parses a settings string on top of the defaults. Throws cl::ValueError naming the key and
// the problem on unknown keys and bad values.
AllocatorSettings parse_allocator_settings(const std::string& conf);

// The process-wide settings: CUDALITE_ALLOC_CONF at first use, then whatever
// set_global_allocator_settings() installed. Thread-safe.
AllocatorSettings global_allocator_settings();
void set_global_allocator_settings(const AllocatorSettings& s);

// "20.00 MiB": c10's format_size, used in out-of-memory messages.
std::string format_size(uint64_t size);

}  // namespace cl
