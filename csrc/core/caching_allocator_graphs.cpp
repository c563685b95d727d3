// The caching allocator during CUDA graph captures: private pools keyed by a MempoolId, the
// capture filters that divert allocations into them, and the stream events deferred until no
// capture runs (Note [Private pools]). The rest of the policy is in caching_allocator.cpp.
#include <algorithm>

#include "core/caching_allocator.h"
#include "core/error.h"

namespace cl {

using detail::BlockState;

// Note [Private pools]
// A CUDA graph replays its kernels with the addresses they had at capture, so the memory
// allocated during a capture must stay the graph's for as long as the graph can be replayed,
// and must not be handed to other code in between. As in torch, allocations made during a
// capture on the capturing streams (the filter decides; other threads' streams keep using the
// default pools) come from a private pool, keyed by a MempoolId. Inside it blocks are freed
// and reused as usual: a replay runs the same allocations in the same order, so the pool
// holds the capture's high-water mark. Graphs may share a pool (`pool=` in Python); each
// capture adds one use, and reset() or the graph's death drops it. A pool without uses
// gives its segments back at the next empty_cache() (or out-of-memory retry) once every
// block in it is free, which is when the last tensor allocated during the capture has died,
// and then the pool itself goes. A failed or aborted capture drops its use like reset().
// Private pools use plain segments only: an arena's pages could be lent to other addresses
// or unmapped behind the graph's back.
// While any capture runs nothing waits on or frees device memory (both are errors inside a
// capture, and in "global" mode on any thread): events are not queried, cached segments are
// not released, and blocks freed while other streams used them (record_stream) get their
// events once no capture runs. Streams recorded during the capture are dropped then: that
// work belongs to the graph.

void CachingAllocator::begin_allocate_to_pool(MempoolId id, CaptureFilter filter) {
  CL_CHECK(id != MempoolId(0, 0), "begin_allocate_to_pool: {0, 0} names the default pools");
  std::lock_guard<std::mutex> lock(mu_);
  auto it = std::find_if(private_pools_.begin(), private_pools_.end(),
                         [&](const auto& p) { return p->id == id; });
  if (it == private_pools_.end()) {
    private_pools_.push_back(std::make_unique<PrivatePool>());
    private_pools_.back()->id = id;
  } else {
    ++(*it)->use_count;
  }
  captures_.push_back({id, std::move(filter)});
}

void CachingAllocator::end_allocate_to_pool(MempoolId id) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = std::find_if(captures_.begin(), captures_.end(),
                         [&](const Capture& c) { return c.id == id; });
  CL_CHECK(it != captures_.end(), "end_allocate_to_pool: no capture allocates to pool (", id.first,
           ", ", id.second, ")");
  captures_.erase(it);
}

void CachingAllocator::release_pool(MempoolId id) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = std::find_if(private_pools_.begin(), private_pools_.end(),
                         [&](const auto& p) { return p->id == id; });
  CL_CHECK(it != private_pools_.end() && (*it)->use_count > 0, "release_pool: no graph uses pool (",
           id.first, ", ", id.second, ")");
  if (--(*it)->use_count == 0) delete_private_pool_if_empty(id);
}

// With mu_ held, for a pool without uses: goes once it reserves nothing.
void CachingAllocator::delete_private_pool_if_empty(MempoolId id) {
  auto it = std::find_if(private_pools_.begin(), private_pools_.end(),
                         [&](const auto& p) { return p->id == id; });
  if (it == private_pools_.end() || (*it)->use_count > 0) return;
  for (Pool* p : (*it)->pools) {
    if (p && !p->segments.empty()) return;
  }
  for (Pool* p : (*it)->pools) {
    if (!p) continue;
    pools_.erase(
        std::find_if(pools_.begin(), pools_.end(), [p](const auto& q) { return q.get() == p; }));
  }
  private_pools_.erase(it);
}

bool CachingAllocator::capture_underway() const {
  std::lock_guard<std::mutex> lock(mu_);
  return !captures_.empty();
}

int CachingAllocator::private_pool_use_count(MempoolId id) const {
  std::lock_guard<std::mutex> lock(mu_);
  return use_count_locked(id);
}

int CachingAllocator::use_count_locked(MempoolId id) const {
  for (const auto& p : private_pools_) {
    if (p->id == id) return p->use_count;
  }
  return 0;
}

size_t CachingAllocator::private_pool_count() const {
  std::lock_guard<std::mutex> lock(mu_);
  return private_pools_.size();
}

// The pool an allocation on `stream` comes from: a capture's private pool when the stream
// is one it captures, else the stream's own.
CachingAllocator::Pool& CachingAllocator::pool_for(StreamId stream, bool small) {
  if (captures_.empty()) return get_pool(stream, small);
  for (const Capture& c : captures_) {
    if (!c.filter(stream)) continue;
    auto it = std::find_if(private_pools_.begin(), private_pools_.end(),
                           [&](const auto& p) { return p->id == c.id; });
    Pool*& p = (*it)->pools[small];
    if (!p) {
      detail::ArenaLedger& ledger = *this;
      pools_.push_back(std::make_unique<Pool>(stream, small, *backend_, store_, ledger));
      p = pools_.back().get();
      p->pool_id = c.id;
    }
    return *p;
  }
  return get_pool(stream, small);
}

void CachingAllocator::insert_events_deferred_until_no_capture() {
  if (deferred_until_no_capture_.empty() || !captures_.empty()) return;
  std::vector<Block*> blocks;
  blocks.swap(deferred_until_no_capture_);
  for (Block* b : blocks) {
    auto g = graph_stream_uses_.find(b);
    if (g != graph_stream_uses_.end()) {
      auto& uses = *b->stream_uses;
      for (StreamId s : g->second) uses.erase(std::remove(uses.begin(), uses.end(), s), uses.end());
      graph_stream_uses_.erase(g);
    }
    if (b->stream_uses && !b->stream_uses->empty()) {
      insert_events(b);
    } else {
      free_block(b);
    }
  }
}

}  // namespace cl
