// The caching allocator: one per device, device-agnostic (the memory comes from an
// AllocBackend). It keeps torch's policy (CUDACachingAllocator): pools per stream and size
// class, best fit in size bins, splitting and merging, stream events (record_stream),
// statistics, history, garbage collection and the out-of-memory path. New memory comes from
// plain segments (torch's cudaMalloc segments) or, by default, from each pool's arena
// (core/detail/arena.h): growable virtual memory whose free pages can back new addresses.
// The design is in docs/allocator.md.
#pragma once

#include <atomic>
#include <cstddef>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/alloc_backend.h"
#include "core/alloc_config.h"
#include "core/allocator.h"
#include "core/detail/pool.h"
#include "core/memory_stats.h"

namespace cl {

// A private pool's id (torch's MempoolId_t): {capture id, 0} for a graph's own pool,
// {0, handle} for one from graph_pool_handle(); {0, 0} names the default pools.
using MempoolId = std::pair<uint64_t, uint64_t>;

using detail::StackContext;
using detail::StackFrame;

struct BlockInfo {
  size_t size = 0;
  size_t requested_size = 0;
  bool allocated = false;
  bool active = false;  // allocated, or freed but waiting for stream events
  StackContext context;
};

// A contiguous range of reserved memory: a plain segment, or one run of an arena.
struct SegmentInfo {
  uintptr_t address = 0;
  size_t total_size = 0;
  size_t allocated_size = 0;
  size_t active_size = 0;
  size_t requested_size = 0;
  StreamId stream = 0;
  bool is_large = false;
  bool is_expandable = false;
  MempoolId pool_id{0, 0};
  std::vector<BlockInfo> blocks;
};

struct TraceEntry {
  enum Action {
    kAlloc,
    kFreeRequested,
    kFreeCompleted,
    kSegmentAlloc,
    kSegmentFree,
    kSegmentMap,
    kSegmentUnmap,
    kOom,
    kSnapshot,
  };
  Action action;
  uintptr_t addr;  // for kOom: the device's free memory
  size_t size;
  StreamId stream;
  int64_t time_us;
  StackContext context;
};
const char* trace_action_name(TraceEntry::Action a);

struct MemorySnapshot {
  std::vector<SegmentInfo> segments;
  std::vector<TraceEntry> trace;
  AllocatorSettings settings;
};

// How much stack context history recording keeps (torch's RecordContext).
enum class RecordContext : int { kNever = 0, kState = 1, kAlloc = 2, kAll = 3 };
using ContextRecorder = StackContext (*)();

class CachingAllocator final : public Allocator, private detail::ArenaLedger {
 public:
  CachingAllocator(std::unique_ptr<AllocBackend> backend, const AllocatorSettings& settings);
  // With page_lending, growth maps new pages rather than lending while reserved memory stays
  // within this share above the most memory ever allocated (Note [Growth budget]).
  static constexpr double kGrowthSlack = 0.02;
  ~CachingAllocator() override;
  CL_DISALLOW_COPY_AND_MOVE(CachingAllocator);

  // On the backend's current stream. The DataPtr's context is the block; its deleter frees it.
  DataPtr allocate(size_t nbytes) override;
  DataPtr allocate(size_t nbytes, StreamId stream);
  // Allocations named by their address (torch.cuda.caching_allocator_alloc/delete).
  void* raw_alloc(size_t nbytes, StreamId stream);
  void raw_delete(void* ptr);
  // The block behind `ctx` (a DataPtr's context) is also used on `stream`: when freed it is
  // reused only after the work queued on `stream` at free time has finished.
  void record_stream(void* ctx, StreamId stream);
  static void free_ctx(void* ctx);

  // CUDA graphs (Note [Private pools] in caching_allocator_graphs.cpp). While a capture runs,
  // allocations on the streams `filter` accepts come from the private pool `id` (created on
  // first use, else its use count grows). end_allocate_to_pool stops the diversion;
  // release_pool drops one use, and a pool without uses is returned to the backend by
  // empty_cache() (or the out-of-memory path) once every block in it has been freed.
  using CaptureFilter = std::function<bool(StreamId)>;
  void begin_allocate_to_pool(MempoolId id, CaptureFilter filter);
  void end_allocate_to_pool(MempoolId id);
  void release_pool(MempoolId id);
  bool capture_underway() const;
  // A private pool's use count (0 when it does not exist) and the number of private pools,
  // for tests and reports.
  int private_pool_use_count(MempoolId id) const;
  size_t private_pool_count() const;

  // Returns every cached block that can be returned to the backend (waits for events).
  void empty_cache();
  DeviceStats stats() const;
  void reset_peak_stats();
  void reset_accumulated_stats();
  MemorySnapshot snapshot();
  void record_history(bool enabled, ContextRecorder recorder, size_t max_entries,
                      RecordContext when, bool clear);

  void set_settings(const AllocatorSettings& s);
  AllocatorSettings settings() const;
  // Caps reserved memory at fraction * total memory (torch's set_per_process_memory_fraction).
  void set_memory_fraction(double fraction);
  double memory_fraction() const;

  AllocBackend& backend() { return *backend_; }
  // Makes this device's memory usable by `peer` (Note [Peer access] in
  // csrc/cuda/peer_access.cpp): the arenas' mapped ranges now and every range mapped later.
  void enable_peer_access(int peer);
  // The physical pages behind the allocated block `ctx` when it lives in an arena, in address
  // order (handle, size), and where the block starts in the first (CUDA IPC of expandable
  // segments, csrc/cuda/ipc.cpp); empty for a block of a plain segment.
  std::vector<std::pair<PhysHandle, size_t>> arena_pages(void* ctx, size_t* offset);

  Device device() const { return device_; }

 private:
  using Block = detail::Block;
  using Pool = detail::Pool;
  using Segment = detail::Segment;
  using Arena = detail::Arena;

  Block* malloc_block(size_t nbytes, StreamId stream);
  void free_block_request(Block* b);
  Pool& get_pool(StreamId stream, bool small);
  Pool& pool_for(StreamId stream, bool small);
  bool arenas_for(const Pool& pool) const { return use_arenas_ && !pool.is_private(); }
  void insert_events_deferred_until_no_capture();
  void delete_private_pool_if_empty(MempoolId id);
  int use_count_locked(MempoolId id) const;
  size_t page_size(bool small) const;
  Block* find_cached(Pool& pool, size_t size);
  Block* take_block(Pool& pool, Block* b, size_t size, size_t orig, StackContext ctx);
  bool should_split(const Block* b, size_t size) const;
  void free_block(Block* b);
  void place_free(Pool& pool, Block* b);
  void unbin(Pool& pool, Block* b);

  // Events deferring reuse of blocks used on other streams.
  void insert_events(Block* b);
  void process_events();
  void synchronize_and_free_events();
  EventHandle get_event();

  // New memory: a cached block, a reclaimed arena window, a new plain segment or arena
  // growth, then releases and retries, then out of memory.
  Block* allocate_new(Pool& pool, size_t size);
  Block* try_allocate(Pool& pool, size_t size, bool retry);
  bool use_arenas() const { return use_arenas_; }
  Block* alloc_plain_segment(Pool& pool, size_t size);
  Block* grow_arena(Pool& pool, size_t size);
  bool release_available_cached_blocks(Pool& pool, size_t size);
  bool release_cached_blocks();
  void release_plain_segment(Segment* seg);
  void garbage_collect();
  [[noreturn]] void raise_oom(size_t size);

  // detail::ArenaLedger: the arenas' limits and reports.
  size_t reserved() const override { return total_reserved_; }
  size_t growth_room() const override;
  bool may_reserve(size_t bytes) const override;
  void reserved_changed(const Arena& arena, int64_t delta) override;
  void runs_changed(const Arena& arena, int64_t delta) override;
  void device_calls(const Arena& arena, size_t maps, size_t unmaps) override;
  void mapped(const Arena& arena, char* va, size_t len) override;
  void unmapped(const Arena& arena, char* va, size_t len) override;

  void record_trace(TraceEntry::Action a, uintptr_t addr, size_t size, StreamId stream,
                    StackContext ctx);

  Device device_;
  std::unique_ptr<AllocBackend> backend_;
  mutable std::mutex mu_;
  AllocatorSettings settings_;
  DeviceStats stats_;
  detail::BlockStore store_;
  std::vector<std::unique_ptr<Pool>> pools_;
  Pool* last_pool_[2] = {nullptr, nullptr};
  bool gc_enabled_ = false;
  bool use_arenas_ = false;  // expandable_segments and the backend supports virtual memory

  struct PendingEvent {
    EventHandle event;
    Block* block;
  };
  std::vector<std::pair<StreamId, std::deque<PendingEvent>>> events_;
  size_t outstanding_events_ = 0;
  std::vector<EventHandle> event_cache_;

  std::unordered_map<void*, Block*> raw_;

  struct PrivatePool {
    MempoolId id;
    int use_count = 1;
    Pool* pools[2] = {nullptr, nullptr};  // [small]; also in pools_
  };
  std::vector<std::unique_ptr<PrivatePool>> private_pools_;
  struct Capture {
    MempoolId id;
    CaptureFilter filter;
  };
  std::vector<Capture> captures_;
  // Blocks freed during a capture while other streams used them: their events are recorded
  // once no capture runs (an event recorded in a capture can't be queried).
  std::vector<Block*> deferred_until_no_capture_;
  // Streams that record_stream added during a capture: that work is part of the graph, and
  // is not waited for when the deferred events are recorded.
  std::unordered_map<Block*, std::vector<StreamId>> graph_stream_uses_;

  size_t total_reserved_ = 0;  // bytes held from the backend
  size_t high_water_ = 0;      // the most memory allocated (and requested) at a growth
  bool fraction_set_ = false;
  double fraction_ = 1.0;
  size_t allowed_max_ = 0;

  std::atomic<int> record_context_{0};
  std::atomic<ContextRecorder> recorder_{nullptr};
  bool record_history_ = false;
  size_t trace_max_ = 1;
  size_t trace_next_ = 0;
  std::vector<TraceEntry> trace_;
};

}  // namespace cl
