// The caching allocator's policy: pools, best fit, splitting and merging, stream events,
// where new memory comes from (plain segments, arenas), releasing cached memory, garbage
// collection and the out-of-memory path. The arenas' mechanics are in detail/arena.cpp, the
// reports (snapshots, history) in caching_allocator_history.cpp, the private pools of CUDA graph
// captures in caching_allocator_graphs.cpp.
#include "core/caching_allocator.h"

#include <algorithm>
#include <cstdio>

#include "core/error.h"

namespace cl {

using detail::BlockState;

CachingAllocator::CachingAllocator(std::unique_ptr<AllocBackend> backend,
                                   const AllocatorSettings& settings)
    : device_(backend->device()), backend_(std::move(backend)) {
  set_settings(settings);
}

CachingAllocator::~CachingAllocator() {
  // Only test allocators are destroyed (device allocators live as long as the process), and
  // their owners free every allocation first. Hand everything back to the backend.
  std::lock_guard<std::mutex> lock(mu_);
  try {
    for (auto& q : events_) {
      for (auto& e : q.second) backend_->destroy_event(e.event);
    }
    for (EventHandle e : event_cache_) backend_->destroy_event(e);
    for (auto& pool : pools_) {
      for (auto& seg : pool->segments) backend_->free(seg->base, seg->size);
      pool->arena.release_all();
    }
  } catch (const std::exception&) {
    // Destructors must not throw; whatever could not be returned is left to the process.
  }
}

// ---------------------------------------------------------------------------------------
// Allocation and free.

DataPtr CachingAllocator::allocate(size_t nbytes) {
  return allocate(nbytes, backend_->current_stream());
}

DataPtr CachingAllocator::allocate(size_t nbytes, StreamId stream) {
  if (nbytes == 0) return DataPtr(nullptr, nullptr, nullptr, device_);
  Block* b = malloc_block(nbytes, stream);
  return DataPtr(b->ptr, b, &CachingAllocator::free_ctx, device_);
}

void CachingAllocator::free_ctx(void* ctx) {
  Block* b = static_cast<Block*>(ctx);
  b->owner->free_block_request(b);
}

void* CachingAllocator::raw_alloc(size_t nbytes, StreamId stream) {
  if (nbytes == 0) return nullptr;
  Block* b = malloc_block(nbytes, stream);
  std::lock_guard<std::mutex> lock(mu_);
  raw_[b->ptr] = b;
  return b->ptr;
}

void CachingAllocator::raw_delete(void* ptr) {
  if (!ptr) return;
  Block* b = nullptr;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = raw_.find(ptr);
    if (it == raw_.end()) {
      char buf[64];
      std::snprintf(buf, sizeof(buf), "%p", ptr);
      throw Error(std::string("invalid device pointer: ") + buf);
    }
    b = it->second;
    raw_.erase(it);
  }
  free_block_request(b);
}

CachingAllocator::Block* CachingAllocator::malloc_block(size_t nbytes, StreamId stream) {
  // Python stacks are gathered before taking the lock: the recorder may need the GIL.
  StackContext ctx;
  if (record_context_.load(std::memory_order_relaxed) >= int(RecordContext::kState)) {
    if (ContextRecorder rec = recorder_.load()) ctx = rec();
  }
  std::lock_guard<std::mutex> lock(mu_);
  // No device holds more; rounding such a size could wrap around.
  if (nbytes > kMaxRequest) raise_oom(nbytes);
  if (outstanding_events_ || !deferred_until_no_capture_.empty()) process_events();
  size_t size = settings_.round_size(nbytes);
  Pool& pool = pool_for(stream, size <= kSmallSize);
  Block* b = find_cached(pool, size);
  if (!b) b = allocate_new(pool, size);
  return take_block(pool, b, size, nbytes, std::move(ctx));
}

CachingAllocator::Pool& CachingAllocator::get_pool(StreamId stream, bool small) {
  Pool* last = last_pool_[small];
  if (last && last->stream == stream) return *last;
  for (auto& p : pools_) {
    if (p->stream == stream && p->small == small && !p->is_private()) {
      return *(last_pool_[small] = p.get());
    }
  }
  detail::ArenaLedger& ledger = *this;
  pools_.push_back(std::make_unique<Pool>(stream, small, *backend_, store_, ledger));
  Pool* p = pools_.back().get();
  p->arena.set_page_size(page_size(small));
  p->arena.set_whole_growths(!settings_.page_lending);
  return *(last_pool_[small] = p);
}

// Arenas grow in multiples of the device's granularity (Note [Growth granules]); with page
// lending the large pool's pages are large_segment_size rounded to it. 0 when the backend
// has no virtual memory.
size_t CachingAllocator::page_size(bool small) const {
  if (!backend_->supports_vmm()) return 0;
  const size_t g = backend_->vmm_granularity();
  if (small || !settings_.page_lending) return g;
  return detail::round_up(std::max(settings_.large_segment_size, g), g);
}

CachingAllocator::Block* CachingAllocator::find_cached(Pool& pool, size_t size) {
  if (gc_enabled_) ++pool.gc_clock;
  Block* best = nullptr;
  bool arenas = arenas_for(pool);
  if (arenas) best = pool.arena.best_fit(size);
  if (!pool.plain_bins.empty()) {
    Block* p = pool.plain_bins.best_fit(size);
    if (p && (!best || p->size < best->size)) best = p;
  }
  if (best) {
    // torch's rules for oversize blocks: a request below max_split_size never takes one,
    // and an oversize request takes one only if it wastes little.
    size_t max_split = settings_.max_split_size;
    if (size < max_split && best->size >= max_split) return nullptr;
    if (size >= max_split && best->size >= size + settings_.max_non_split_rounding_size) {
      return nullptr;
    }
    unbin(pool, best);
    return best;
  }
  // The end of the growing arena is used last: it can grow to fit any request, so handing
  // it to a request that fits elsewhere only moves the next growth further out.
  return arenas ? pool.arena.take_tail(size) : nullptr;
}

bool CachingAllocator::should_split(const Block* b, size_t size) const {
  size_t rest = b->size - size;
  if (b->seg->pool->small || b->seg->is_arena) return rest >= kMinBlockSize;
  return size < settings_.max_split_size && rest > kSmallSize;
}

CachingAllocator::Block* CachingAllocator::take_block(Pool& pool, Block* b, size_t size,
                                                      size_t orig, StackContext ctx) {
  const bool small = pool.small;
  const bool plain = !b->seg->is_arena;
  const bool was_split = b->prev || b->next;
  if (should_split(b, size)) {
    Block* rest = detail::split_front(store_, b, size);
    place_free(pool, rest);
    if (plain) {
      if (was_split) {
        stats_.inactive_split_bytes.decrease(small, int64_t(size));
      } else {
        stats_.inactive_split.increase(small, 1);
        stats_.inactive_split_bytes.increase(small, int64_t(rest->size));
      }
    }
  } else if (plain && was_split) {
    stats_.inactive_split.decrease(small, 1);
    stats_.inactive_split_bytes.decrease(small, int64_t(b->size));
  }
  b->state = BlockState::kAllocated;
  b->requested_size = orig;
  b->owner = this;
  if (ctx) b->context = std::move(ctx);
  stats_.allocation.increase(small, 1);
  stats_.allocated_bytes.increase(small, int64_t(b->size));
  stats_.active.increase(small, 1);
  stats_.active_bytes.increase(small, int64_t(b->size));
  stats_.requested_bytes.increase(small, int64_t(orig));
  if (b->size >= settings_.max_split_size) stats_.oversize_allocations.increase(1);
  if (record_history_) {
    record_trace(TraceEntry::kAlloc, uintptr_t(b->ptr), orig, pool.stream,
                 record_context_ >= int(RecordContext::kAlloc) ? b->context : nullptr);
  }
  return b;
}

void CachingAllocator::free_block_request(Block* b) {
  StackContext ctx;
  if (record_context_.load(std::memory_order_relaxed) >= int(RecordContext::kAll)) {
    if (ContextRecorder rec = recorder_.load()) ctx = rec();
  }
  std::lock_guard<std::mutex> lock(mu_);
  const bool small = b->seg->pool->small;
  stats_.allocation.decrease(small, 1);
  stats_.allocated_bytes.decrease(small, int64_t(b->size));
  if (b->size >= settings_.max_split_size) stats_.oversize_allocations.decrease(1);
  if (record_history_) {
    record_trace(TraceEntry::kFreeRequested, uintptr_t(b->ptr), b->requested_size,
                 b->seg->pool->stream, ctx ? ctx : b->context);
  }
  if (b->stream_uses && !b->stream_uses->empty()) {
    b->state = BlockState::kPending;
    if (!captures_.empty()) {
      deferred_until_no_capture_.push_back(b);
    } else {
      if (!graph_stream_uses_.empty()) graph_stream_uses_.erase(b);
      insert_events(b);
    }
  } else {
    if (!graph_stream_uses_.empty()) graph_stream_uses_.erase(b);
    free_block(b);
  }
}

// Returns a block to its pool, merging it with free neighbours.
void CachingAllocator::free_block(Block* b) {
  Pool& pool = *b->seg->pool;
  const bool small = pool.small;
  const bool plain = !b->seg->is_arena;
  if (record_history_) {
    record_trace(TraceEntry::kFreeCompleted, uintptr_t(b->ptr), b->requested_size, pool.stream,
                 b->context);
  }
  const int64_t orig_size = int64_t(b->size);
  const int64_t requested = int64_t(b->requested_size);
  b->state = BlockState::kFree;
  b->context.reset();
  b->stream_uses.reset();
  int64_t split_blocks = 0, split_bytes = 0;
  for (Block* nb : {b->prev, b->next}) {
    if (nb && nb->state == BlockState::kFree) {
      unbin(pool, nb);
      split_blocks -= 1;
      split_bytes -= int64_t(nb->size);
      detail::absorb(store_, b, nb);
    }
  }
  if (b->prev || b->next) {
    split_blocks += 1;
    split_bytes += int64_t(b->size);
  }
  place_free(pool, b);
  if (plain) {
    if (split_blocks > 0) stats_.inactive_split.increase(small, split_blocks);
    if (split_blocks < 0) stats_.inactive_split.decrease(small, -split_blocks);
    if (split_bytes > 0) stats_.inactive_split_bytes.increase(small, split_bytes);
    if (split_bytes < 0) stats_.inactive_split_bytes.decrease(small, -split_bytes);
  }
  stats_.active.decrease(small, 1);
  stats_.active_bytes.decrease(small, orig_size);
  stats_.requested_bytes.decrease(small, requested);
}

void CachingAllocator::place_free(Pool& pool, Block* b) {
  b->gc_base = pool.gc_clock;
  Segment* seg = b->seg;
  if (!seg->is_arena) {
    pool.plain_bins.insert(b);
  } else {
    pool.arena.place_free(b);
  }
}

void CachingAllocator::unbin(Pool& pool, Block* b) {
  if (b->seg->is_arena) {
    pool.arena.unbin(b);
  } else {
    pool.plain_bins.remove(b);
  }
}

// ---------------------------------------------------------------------------------------
// Streams.

void CachingAllocator::record_stream(void* ctx, StreamId stream) {
  if (!ctx) return;
  Block* b = static_cast<Block*>(ctx);
  std::lock_guard<std::mutex> lock(mu_);
  CL_CHECK(b->owner == this && b->state == BlockState::kAllocated,
           "record_stream: the memory is not an allocation of this caching allocator");
  // Uses on the allocation stream need nothing: the stream orders them before any reuse.
  if (stream == b->seg->pool->stream) return;
  if (!b->stream_uses) b->stream_uses = std::make_unique<std::vector<StreamId>>();
  auto& uses = *b->stream_uses;
  if (std::find(uses.begin(), uses.end(), stream) == uses.end()) uses.push_back(stream);
  if (!captures_.empty()) {
    auto& g = graph_stream_uses_[b];
    if (std::find(g.begin(), g.end(), stream) == g.end()) g.push_back(stream);
  }
}

void CachingAllocator::enable_peer_access(int peer) {
  std::lock_guard<std::mutex> lock(mu_);
  if (!backend_->add_peer(peer)) return;
  for (const auto& pool : pools_) {
    for (const auto& r : pool->arena.reservations()) {
      for (const auto& [va, extent] : r->extents) {
        CL_CHECK(backend_->set_access(va, extent.size), "out of memory while mapping ", extent.size,
                 " bytes of cuda:", device_.index, " for peer access from cuda:", peer);
      }
    }
  }
}

std::vector<std::pair<PhysHandle, size_t>> CachingAllocator::arena_pages(void* ctx,
                                                                         size_t* offset) {
  std::lock_guard<std::mutex> lock(mu_);
  const Block* b = static_cast<const Block*>(ctx);
  CL_CHECK(b->owner == this && b->state == detail::BlockState::kAllocated,
           "arena_pages: the memory is not an allocation of this caching allocator");
  std::vector<std::pair<PhysHandle, size_t>> pages;
  if (!b->seg->is_arena) return pages;
  const auto& extents = detail::reservation_of(b)->extents;
  auto it = extents.upper_bound(b->ptr);
  CL_CHECK(it != extents.begin(), "arena_pages: the block is not mapped");
  --it;
  *offset = size_t(b->ptr - it->first);
  size_t total = 0;
  for (char* next = it->first; it != extents.end() && it->first < b->ptr + b->size; ++it) {
    CL_CHECK(it->first == next, "arena_pages: the block's pages are not contiguous");
    pages.emplace_back(it->second.chunk->handle, it->second.size);
    total += it->second.size;
    next = it->first + it->second.size;
  }
  CL_CHECK(*offset + b->size <= total, "arena_pages: the block is not entirely mapped");
  return pages;
}

EventHandle CachingAllocator::get_event() {
  if (event_cache_.empty()) return backend_->create_event();
  EventHandle e = event_cache_.back();
  event_cache_.pop_back();
  return e;
}

void CachingAllocator::insert_events(Block* b) {
  for (StreamId s : *b->stream_uses) {
    EventHandle e = get_event();
    backend_->record_event(e, s);
    ++b->event_count;
    auto it =
        std::find_if(events_.begin(), events_.end(), [s](const auto& q) { return q.first == s; });
    if (it == events_.end()) {
      events_.emplace_back(s, std::deque<PendingEvent>());
      it = events_.end() - 1;
    }
    it->second.push_back({e, b});
    ++outstanding_events_;
  }
  b->stream_uses.reset();
}

// Frees the blocks whose events have all completed. Each stream's events complete in order,
// so a stream's queue is only checked up to its first pending event.
void CachingAllocator::process_events() {
  if (!captures_.empty()) return;  // querying an event recorded in a capture is an error
  insert_events_deferred_until_no_capture();
  for (auto& q : events_) {
    auto& dq = q.second;
    while (!dq.empty() && backend_->query_event(dq.front().event)) {
      PendingEvent pe = dq.front();
      dq.pop_front();
      --outstanding_events_;
      event_cache_.push_back(pe.event);
      if (--pe.block->event_count == 0) free_block(pe.block);
    }
  }
}

void CachingAllocator::synchronize_and_free_events() {
  insert_events_deferred_until_no_capture();
  ++stats_.num_sync_all_streams;
  for (auto& q : events_) {
    for (PendingEvent& pe : q.second) {
      backend_->synchronize_event(pe.event);
      event_cache_.push_back(pe.event);
      if (--pe.block->event_count == 0) free_block(pe.block);
    }
    q.second.clear();
  }
  outstanding_events_ = 0;
}

// ---------------------------------------------------------------------------------------
// Settings, statistics, snapshots, history.

void CachingAllocator::set_settings(const AllocatorSettings& s) {
  std::lock_guard<std::mutex> lock(mu_);
  settings_ = s;
  stats_.max_split_size =
      s.max_split_size == std::numeric_limits<size_t>::max() ? -1 : int64_t(s.max_split_size);
  gc_enabled_ = fraction_set_ && s.garbage_collection_threshold > 0.0;
  use_arenas_ = s.expandable_segments && backend_->supports_vmm();
  for (auto& pool : pools_) {
    pool->arena.set_page_size(page_size(pool->small));
    pool->arena.set_whole_growths(!s.page_lending);
  }
}

AllocatorSettings CachingAllocator::settings() const {
  std::lock_guard<std::mutex> lock(mu_);
  return settings_;
}

void CachingAllocator::set_memory_fraction(double fraction) {
  CL_CHECK_AS(ValueError, fraction >= 0.0 && fraction <= 1.0, "Invalid fraction value: ", fraction,
              ". Allowed range: 0~1");
  size_t free_b = 0, total = 0;
  backend_->mem_get_info(&free_b, &total);
  std::lock_guard<std::mutex> lock(mu_);
  fraction_ = fraction;
  fraction_set_ = true;
  allowed_max_ = size_t(fraction * double(total));
  gc_enabled_ = settings_.garbage_collection_threshold > 0.0;
}

double CachingAllocator::memory_fraction() const {
  std::lock_guard<std::mutex> lock(mu_);
  return fraction_;
}

DeviceStats CachingAllocator::stats() const {
  std::lock_guard<std::mutex> lock(mu_);
  return stats_;
}

void CachingAllocator::reset_peak_stats() {
  std::lock_guard<std::mutex> lock(mu_);
  stats_.reset_peak();
}

void CachingAllocator::reset_accumulated_stats() {
  std::lock_guard<std::mutex> lock(mu_);
  stats_.reset_accumulated();
}

// Note [Waiting outside the lock]
// Releasing cached memory waits for the device: blocks deferred by stream events are freed
// once their events complete, and pages are unmapped only once their stream has passed the
// work queued on them. torch waits with its allocator lock held, and so does the release
// itself here (work queued while the lock was free could use the memory again). But a wait
// under the lock stalls every thread's allocations, cache hits included, for as long as the
// device is busy. So empty_cache() first waits without the lock, for the events pending and
// the streams of the arenas that have pages to release; the wait under the lock is then
// short, unless work was queued in between.
void CachingAllocator::empty_cache() {
  std::vector<EventHandle> events;
  std::vector<StreamId> streams;
  {
    std::lock_guard<std::mutex> lock(mu_);
    // Waiting for events and freeing memory are not allowed while a stream captures.
    if (!captures_.empty()) return;
    insert_events_deferred_until_no_capture();
    for (auto& q : events_) {
      for (PendingEvent& pe : q.second) events.push_back(pe.event);
    }
    for (auto& pool : pools_) {
      if (pool->arena.has_unused()) streams.push_back(pool->stream);
    }
  }
  // Events are destroyed only with the allocator, so they stay valid here; one recycled
  // meanwhile is waited for at its new point in its stream, which is merely longer.
  for (EventHandle e : events) backend_->synchronize_event(e);
  std::sort(streams.begin(), streams.end());
  streams.erase(std::unique(streams.begin(), streams.end()), streams.end());
  for (StreamId s : streams) backend_->synchronize_stream(s);
  std::lock_guard<std::mutex> lock(mu_);
  if (!captures_.empty()) return;  // one began while the lock was free
  release_cached_blocks();
  // A fresh start: the growth budget (Note [Growth budget]) is measured from what is live
  // now, not from an earlier phase's peak, which would let reserved memory grow far past
  // the new phase's peak without lending.
  high_water_ = size_t(stats_.allocated_bytes[kAggregate].current);
}

// ---------------------------------------------------------------------------------------
// New memory.

namespace {
// torch's segment sizes: small requests share 2 MiB segments, medium ones 20 MiB segments,
// large ones get a segment of their own rounded to 2 MiB.
size_t plain_segment_size(size_t size) {
  if (size <= kSmallSize) return kSmallBuffer;
  if (size < kMinLargeAlloc) return kLargeBuffer;
  return detail::round_up(size, kRoundLarge);
}
}  // namespace

CachingAllocator::Block* CachingAllocator::allocate_new(Pool& pool, size_t size) {
  if (arenas_for(pool)) {
    if (Block* b = pool.arena.reclaim(size)) return b;
  }
  if (gc_enabled_) garbage_collect();
  Block* b = try_allocate(pool, size, false);
  if (!b && release_available_cached_blocks(pool, size)) b = try_allocate(pool, size, false);
  if (!b && release_cached_blocks()) b = try_allocate(pool, size, true);
  if (!b) raise_oom(size);
  return b;
}

CachingAllocator::Block* CachingAllocator::try_allocate(Pool& pool, size_t size, bool retry) {
  if (retry) ++stats_.num_alloc_retries;
  // release_cached_blocks may have freed event-deferred blocks into the cache.
  if (retry) {
    if (Block* b = find_cached(pool, size)) return b;
  }
  return arenas_for(pool) ? grow_arena(pool, size) : alloc_plain_segment(pool, size);
}

CachingAllocator::Block* CachingAllocator::alloc_plain_segment(Pool& pool, size_t size) {
  const size_t n = plain_segment_size(size);
  if (fraction_set_ && total_reserved_ + n > allowed_max_) return nullptr;
  void* p = backend_->malloc(n);
  if (!p) return nullptr;
  total_reserved_ += n;
  pool.segments.push_back(std::make_unique<Segment>());
  Segment* seg = pool.segments.back().get();
  seg->base = static_cast<char*>(p);
  seg->size = n;
  seg->pool = &pool;
  Block* b = store_.get();
  b->ptr = seg->base;
  b->size = n;
  b->seg = seg;
  b->owner = this;
  b->state = BlockState::kFree;
  seg->head = seg->last = b;
  stats_.segment.increase(pool.small, 1);
  stats_.reserved_bytes.increase(pool.small, int64_t(n));
  if (n >= settings_.max_split_size) stats_.oversize_segments.increase(1);
  ++stats_.num_device_alloc;
  record_trace(TraceEntry::kSegmentAlloc, uintptr_t(p), n, pool.stream, nullptr);
  return b;
}

CachingAllocator::Block* CachingAllocator::grow_arena(Pool& pool, size_t size) {
  // The growth budget counts from the most memory allocated, this request included.
  high_water_ = std::max(high_water_, size_t(stats_.allocated_bytes[kAggregate].current) + size);
  return pool.arena.grow(size);
}

// ---------------------------------------------------------------------------------------
// The arenas' ledger.

size_t CachingAllocator::growth_room() const {
  // Without page lending, growth creates memory and lends only when none is left.
  if (!settings_.page_lending) return std::numeric_limits<size_t>::max() / 2;
  const size_t budget = size_t((1.0 + kGrowthSlack) * double(high_water_));
  return total_reserved_ < budget ? budget - total_reserved_ : 0;
}

bool CachingAllocator::may_reserve(size_t bytes) const {
  return !fraction_set_ || total_reserved_ + bytes <= allowed_max_;
}

void CachingAllocator::reserved_changed(const Arena& arena, int64_t delta) {
  total_reserved_ = size_t(int64_t(total_reserved_) + delta);
  if (delta > 0) stats_.reserved_bytes.increase(arena.small(), delta);
  if (delta < 0) stats_.reserved_bytes.decrease(arena.small(), -delta);
}

void CachingAllocator::runs_changed(const Arena& arena, int64_t delta) {
  if (delta > 0) stats_.segment.increase(arena.small(), delta);
  if (delta < 0) stats_.segment.decrease(arena.small(), -delta);
}

void CachingAllocator::device_calls(const Arena&, size_t maps, size_t unmaps) {
  stats_.num_device_alloc += int64_t(maps);
  stats_.num_device_free += int64_t(unmaps);
}

void CachingAllocator::mapped(const Arena& arena, char* va, size_t len) {
  record_trace(TraceEntry::kSegmentMap, uintptr_t(va), len, arena.stream(), nullptr);
}

void CachingAllocator::unmapped(const Arena& arena, char* va, size_t len) {
  record_trace(TraceEntry::kSegmentUnmap, uintptr_t(va), len, arena.stream(), nullptr);
}

// ---------------------------------------------------------------------------------------
// Releasing cached memory. Each backend call comes before the bookkeeping it implies, so
// that when one fails (a cudaFree or cuMemUnmap error) the allocator stays consistent: what
// was not released stays cached, and the error propagates.

// With max_split_size set: frees oversize cached plain segments, the smallest one that
// covers the request, else the largest ones until the request is covered (torch's rule).
bool CachingAllocator::release_available_cached_blocks(Pool& pool, size_t size) {
  if (settings_.max_split_size == std::numeric_limits<size_t>::max()) return false;
  if (!captures_.empty()) return false;  // no frees in a capture
  const size_t key = std::max(size, settings_.max_split_size);
  std::vector<Block*> oversize;
  pool.plain_bins.for_each_descending([&](Block* b) {
    if (b->size >= settings_.max_split_size && !b->prev && !b->next) oversize.push_back(b);
    return true;
  });
  if (oversize.empty()) return false;
  std::sort(oversize.begin(), oversize.end(),
            [](const Block* x, const Block* y) { return x->size < y->size; });
  auto fit = std::lower_bound(oversize.begin(), oversize.end(), key,
                              [](const Block* b, size_t k) { return b->size < k; });
  if (fit != oversize.end()) {
    release_plain_segment((*fit)->seg);
    return true;
  }
  size_t released = 0;
  for (auto it = oversize.rbegin(); it != oversize.rend() && released < key; ++it) {
    released += (*it)->size;
    release_plain_segment((*it)->seg);
  }
  return released >= key;
}

// Waits for outstanding stream events, then returns every cached segment and every
// physical page that holds no live data. Like torch's release_cached_blocks, this waits for
// the device with the lock held: the pages to release must be idle when they are unmapped,
// and work queued after a wait without the lock could use them again. empty_cache() does
// the long wait before taking the lock (Note [Waiting outside the lock]).
bool CachingAllocator::release_cached_blocks() {
  // No waits, frees or unmaps while a stream captures (they are errors in a capture).
  if (!captures_.empty()) return false;
  synchronize_and_free_events();
  for (auto& pool : pools_) {
    // A private pool still used by a graph keeps its memory (Note [Private pools]).
    if (pool->is_private() && use_count_locked(pool->pool_id) > 0) continue;
    std::vector<Segment*> unused;
    for (auto& seg : pool->segments) {
      Block* h = seg->head;
      if (h->state == BlockState::kFree && !h->next) unused.push_back(seg.get());
    }
    for (Segment* seg : unused) release_plain_segment(seg);
    if (!pool->arena.empty()) pool->arena.release_unused();
  }
  std::vector<MempoolId> unused_pools;
  for (auto& pp : private_pools_) {
    if (pp->use_count == 0) unused_pools.push_back(pp->id);
  }
  for (const MempoolId& id : unused_pools) delete_private_pool_if_empty(id);
  return true;
}

void CachingAllocator::release_plain_segment(Segment* seg) {
  Pool& pool = *seg->pool;
  backend_->free(seg->base, seg->size);  // first: when it fails, the segment stays cached
  Block* b = seg->head;
  pool.plain_bins.remove(b);
  record_trace(TraceEntry::kSegmentFree, uintptr_t(seg->base), seg->size, pool.stream, nullptr);
  ++stats_.num_device_free;
  total_reserved_ -= seg->size;
  stats_.segment.decrease(pool.small, 1);
  stats_.reserved_bytes.decrease(pool.small, int64_t(seg->size));
  if (seg->size >= settings_.max_split_size) stats_.oversize_segments.decrease(1);
  store_.put(b);
  auto it = std::find_if(pool.segments.begin(), pool.segments.end(),
                         [seg](const auto& s) { return s.get() == seg; });
  pool.segments.erase(it);
}

// torch's garbage_collection_threshold: once reserved memory passes the threshold share of
// the allowed memory, free cached memory that has gone unused the longest.
void CachingAllocator::garbage_collect() {
  const size_t threshold = size_t(settings_.garbage_collection_threshold * double(allowed_max_));
  if (total_reserved_ <= threshold || !captures_.empty()) return;
  const size_t target = total_reserved_ - threshold;
  size_t reclaimed = 0;
  for (auto& pool : pools_) {
    if (pool->is_private()) continue;
    std::vector<Block*> candidates;
    pool->plain_bins.for_each_descending([&](Block* b) {
      if (!b->prev && !b->next) candidates.push_back(b);
      return true;
    });
    std::sort(candidates.begin(), candidates.end(), [&](const Block* x, const Block* y) {
      return pool->gc_clock - x->gc_base > pool->gc_clock - y->gc_base;
    });
    for (Block* b : candidates) {
      if (reclaimed >= target) break;
      reclaimed += b->size;
      release_plain_segment(b->seg);
    }
  }
  if (reclaimed < target) {
    for (auto& pool : pools_) {
      if (!pool->is_private() && !pool->arena.empty()) pool->arena.release_unused();
    }
  }
}

void CachingAllocator::raise_oom(size_t size) {
  size_t free_b = 0, total = 0;
  backend_->mem_get_info(&free_b, &total);
  ++stats_.num_ooms;
  record_trace(TraceEntry::kOom, free_b, size, 0, nullptr);
  const int64_t allocated = stats_.allocated_bytes[kAggregate].current;
  const int64_t reserved = stats_.reserved_bytes[kAggregate].current;
  const bool cuda = std::string(backend_->kind()) == "CUDA";
  const size_t tried = use_arenas() || size > kMaxRequest ? size : plain_segment_size(size);
  std::string msg =
      detail::str(cuda ? "CUDA out of memory. Tried to allocate "
                       : "Host backend out of memory. Tried "
                         "to allocate ",
                  format_size(tried), ". ", cuda ? "GPU " : "Host backend ",
                  device_.index < 0 ? 0 : device_.index, " has a total capacity of ",
                  format_size(total), " of which ", format_size(free_b), " is free. ",
                  fraction_set_ ? format_size(allowed_max_) + " allowed; " : std::string(),
                  "Of the allocated memory ", format_size(uint64_t(allocated)),
                  " is allocated by cudalite, and ", format_size(uint64_t(reserved - allocated)),
                  " is reserved by cudalite but unallocated.");
  if (!use_arenas()) {
    msg +=
        " If reserved but unallocated memory is large try setting "
        "CUDALITE_ALLOC_CONF=expandable_segments:True to avoid fragmentation.";
  }
  throw OutOfMemoryError(msg);
}

}  // namespace cl
