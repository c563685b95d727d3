// The caching allocator's fast paths (allocate, free, stream events) and its reports
// (statistics, snapshots, history). Getting and returning memory is in
// caching_allocator_segments.cpp.
#include "core/caching_allocator.h"

#include <algorithm>
#include <chrono>
#include <cstdio>

#include "core/error.h"

namespace cl {

using detail::Block;
using detail::BlockState;
using detail::Pool;
using detail::Segment;

const char* trace_action_name(TraceEntry::Action a) {
  switch (a) {
    case TraceEntry::kAlloc:
      return "alloc";
    case TraceEntry::kFreeRequested:
      return "free_requested";
    case TraceEntry::kFreeCompleted:
      return "free_completed";
    case TraceEntry::kSegmentAlloc:
      return "segment_alloc";
    case TraceEntry::kSegmentFree:
      return "segment_free";
    case TraceEntry::kSegmentMap:
      return "segment_map";
    case TraceEntry::kSegmentUnmap:
      return "segment_unmap";
    case TraceEntry::kOom:
      return "oom";
    case TraceEntry::kSnapshot:
      return "snapshot";
  }
  return "unknown";
}

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
      for (auto& a : pool->arenas) {
        for (auto& kv : a->extents) backend_->unmap(kv.first, kv.second.size);
        backend_->release_address(a->base, a->size);
      }
    }
    for (auto& c : chunks_) backend_->release_physical(c->handle, c->size);
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

Block* CachingAllocator::malloc_block(size_t nbytes, StreamId stream) {
  // Python stacks are gathered before taking the lock: the recorder may need the GIL.
  StackContext ctx;
  if (record_context_.load(std::memory_order_relaxed) >= int(RecordContext::kState)) {
    if (ContextRecorder rec = recorder_.load()) ctx = rec();
  }
  std::lock_guard<std::mutex> lock(mu_);
  if (outstanding_events_) process_events();
  size_t size = settings_.round_size(nbytes);
  Pool& pool = get_pool(stream, size <= kSmallSize);
  Block* b = find_cached(pool, size);
  if (!b) b = allocate_new(pool, size);
  return take_block(pool, b, size, nbytes, std::move(ctx));
}

Pool& CachingAllocator::get_pool(StreamId stream, bool small) {
  Pool* last = last_pool_[small];
  if (last && last->stream == stream) return *last;
  for (auto& p : pools_) {
    if (p->stream == stream && p->small == small) return *(last_pool_[small] = p.get());
  }
  pools_.push_back(std::make_unique<Pool>());
  Pool* p = pools_.back().get();
  p->stream = stream;
  p->small = small;
  return *(last_pool_[small] = p);
}

bool CachingAllocator::use_arenas() const { return use_arenas_; }

Block* CachingAllocator::find_cached(Pool& pool, size_t size) {
  if (gc_enabled_) ++pool.gc_clock;
  Block* best = nullptr;
  bool arenas = use_arenas();
  if (arenas && !pool.arena_bins.empty()) best = pool.arena_bins.best_fit(size);
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
  if (arenas && pool.tail_free && pool.tail_free->size >= size) {
    Block* b = pool.tail_free;
    pool.tail_free = nullptr;
    return b;
  }
  return nullptr;
}

bool CachingAllocator::should_split(const Block* b, size_t size) const {
  size_t rest = b->size - size;
  if (b->seg->pool->small || b->seg->is_arena) return rest >= kMinBlockSize;
  return size < settings_.max_split_size && rest > kSmallSize;
}

Block* CachingAllocator::split_front(Block* b, size_t size) {
  Block* rest = store_.get();
  rest->ptr = b->ptr + size;
  rest->size = b->size - size;
  rest->seg = b->seg;
  rest->owner = this;
  rest->state = BlockState::kFree;
  rest->prev = b;
  rest->next = b->next;
  if (b->next) b->next->prev = rest;
  b->next = rest;
  if (b->seg->last == b) b->seg->last = rest;
  b->size = size;
  return rest;
}

void CachingAllocator::absorb(Block* dst, Block* src) {
  if (src == dst->prev) {
    dst->ptr = src->ptr;
    dst->prev = src->prev;
    if (dst->prev) {
      dst->prev->next = dst;
    } else {
      dst->seg->head = dst;
    }
  } else {
    dst->next = src->next;
    if (dst->next) dst->next->prev = dst;
    if (dst->seg->last == src) dst->seg->last = dst;
  }
  dst->size += src->size;
  store_.put(src);
}

Block* CachingAllocator::take_block(Pool& pool, Block* b, size_t size, size_t orig,
                                    StackContext ctx) {
  const bool small = pool.small;
  const bool plain = !b->seg->is_arena;
  const bool was_split = b->prev || b->next;
  if (should_split(b, size)) {
    Block* rest = split_front(b, size);
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
    insert_events(b);
  } else {
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
      absorb(b, nb);
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
  } else if (seg == pool.active_arena() && b == seg->last) {
    pool.tail_free = b;
  } else {
    pool.arena_bins.insert(b);
  }
}

void CachingAllocator::unbin(Pool& pool, Block* b) {
  if (b == pool.tail_free) {
    pool.tail_free = nullptr;
  } else {
    (b->seg->is_arena ? pool.arena_bins : pool.plain_bins).remove(b);
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

void CachingAllocator::empty_cache() {
  std::lock_guard<std::mutex> lock(mu_);
  release_cached_blocks();
  // A fresh start: the growth budget (Note [Growth budget]) is measured from what is live
  // now, not from an earlier phase's peak, which would let reserved memory grow far past
  // the new phase's peak without lending.
  high_water_ = size_t(stats_.allocated_bytes[kAggregate].current);
}

MemorySnapshot CachingAllocator::snapshot() {
  std::lock_guard<std::mutex> lock(mu_);
  MemorySnapshot snap;
  size_t total_active = 0;
  auto add_block = [&](SegmentInfo& si, const Block* b) {
    BlockInfo bi;
    bi.size = b->size;
    bi.requested_size = b->requested_size;
    bi.allocated = b->state == BlockState::kAllocated;
    bi.active = bi.allocated || b->state == BlockState::kPending;
    bi.context = b->context;
    si.total_size += bi.size;
    if (bi.allocated) si.allocated_size += bi.size;
    if (bi.active) {
      si.active_size += bi.size;
      si.requested_size += bi.requested_size;
    }
    si.blocks.push_back(std::move(bi));
  };
  for (auto& pool : pools_) {
    auto start = [&](const Block* b, bool arena) -> SegmentInfo& {
      snap.segments.emplace_back();
      SegmentInfo& si = snap.segments.back();
      si.address = uintptr_t(b->ptr);
      si.stream = pool->stream;
      si.is_large = !pool->small;
      si.is_expandable = arena;
      return si;
    };
    for (auto& seg : pool->segments) {
      SegmentInfo& si = start(seg->head, false);
      for (const Block* b = seg->head; b; b = b->next) add_block(si, b);
      total_active += si.active_size;
    }
    // An arena is reported as one segment per run of live (mapped, not lent) memory: the
    // sum of segment sizes is then the physical memory held, as reserved_bytes counts it.
    for (auto& a : pool->arenas) {
      SegmentInfo* si = nullptr;
      for (const Block* b = a->head; b; b = b->next) {
        if (!b->live()) {
          if (si) total_active += si->active_size;
          si = nullptr;
          continue;
        }
        if (!si) si = &start(b, true);
        add_block(*si, b);
      }
      if (si) total_active += si->active_size;
    }
  }
  std::sort(snap.segments.begin(), snap.segments.end(),
            [](const SegmentInfo& x, const SegmentInfo& y) { return x.address < y.address; });
  if (record_history_) record_trace(TraceEntry::kSnapshot, 0, total_active, 0, nullptr);
  snap.trace.reserve(trace_.size());
  for (size_t i = 0; i < trace_.size(); ++i) {
    snap.trace.push_back(trace_[(trace_next_ + i) % trace_.size()]);
  }
  snap.settings = settings_;
  return snap;
}

void CachingAllocator::record_history(bool enabled, ContextRecorder recorder, size_t max_entries,
                                      RecordContext when, bool clear) {
  std::lock_guard<std::mutex> lock(mu_);
  record_history_ = enabled;
  recorder_.store(enabled ? recorder : nullptr);
  record_context_.store(enabled && recorder ? int(when) : 0);
  max_entries = std::max<size_t>(1, max_entries);
  if (!enabled || clear || max_entries != trace_max_) {
    std::vector<TraceEntry> keep;
    if (enabled && !clear) {
      for (size_t i = 0; i < trace_.size(); ++i) {
        keep.push_back(trace_[(trace_next_ + i) % trace_.size()]);
      }
      if (keep.size() > max_entries) keep.erase(keep.begin(), keep.end() - long(max_entries));
    }
    trace_ = std::move(keep);
    trace_next_ = 0;
  }
  trace_max_ = max_entries;
}

void CachingAllocator::record_trace(TraceEntry::Action a, uintptr_t addr, size_t size,
                                    StreamId stream, StackContext ctx) {
  if (!record_history_) return;
  int64_t us = std::chrono::duration_cast<std::chrono::microseconds>(
                   std::chrono::system_clock::now().time_since_epoch())
                   .count();
  TraceEntry te{a, addr, size, stream, us, std::move(ctx)};
  if (trace_.size() < trace_max_) {
    trace_.push_back(std::move(te));
    trace_next_ = 0;
  } else {
    trace_[trace_next_] = std::move(te);
    trace_next_ = (trace_next_ + 1) % trace_max_;
  }
}

}  // namespace cl
