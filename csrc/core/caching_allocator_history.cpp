// The caching allocator's reports: snapshots of its segments and blocks (torch's
// memory_snapshot layout) and the history of its actions (torch's _record_memory_history).
#include <algorithm>
#include <chrono>

#include "core/caching_allocator.h"

namespace cl {

using detail::Block;
using detail::BlockState;

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
      si.pool_id = pool->pool_id;
      return si;
    };
    for (auto& seg : pool->segments) {
      SegmentInfo& si = start(seg->head, false);
      for (const Block* b = seg->head; b; b = b->next) add_block(si, b);
      total_active += si.active_size;
    }
    // An arena is reported as one segment per run of live (mapped, not lent) memory: the
    // sum of segment sizes is then the physical memory held, as reserved_bytes counts it.
    for (auto& a : pool->arena.reservations()) {
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
