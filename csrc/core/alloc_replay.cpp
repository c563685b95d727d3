#include "core/alloc_replay.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <functional>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <unordered_map>

#include "core/error.h"

namespace cl {

ReplayResult replay_trace(CachingAllocator& a, const std::vector<TraceOp>& ops, StreamId stream) {
  a.reset_peak_stats();
  std::unordered_map<int64_t, DataPtr> live;
  live.reserve(ops.size() / 2 + 1);
  ReplayResult r;
  auto t0 = std::chrono::steady_clock::now();
  for (const TraceOp& op : ops) {
    if (op.alloc) {
      live.emplace(op.id, a.allocate(op.nbytes, stream));
      ++r.allocs;
    } else {
      auto it = live.find(op.id);
      CL_CHECK_AS(ValueError, it != live.end(), "trace frees id ", op.id,
                  " which is not allocated");
      live.erase(it);
      ++r.frees;
    }
  }
  auto t1 = std::chrono::steady_clock::now();
  r.seconds = std::chrono::duration<double>(t1 - t0).count();
  live.clear();
  DeviceStats st = a.stats();
  r.peak_reserved = st.reserved_bytes[kAggregate].peak;
  r.peak_allocated = st.allocated_bytes[kAggregate].peak;
  r.peak_requested = st.requested_bytes[kAggregate].peak;
  return r;
}

double time_alloc_free_ns(CachingAllocator& a, size_t nbytes, size_t iters, int rounds) {
  { DataPtr warm = a.allocate(nbytes, 0); }
  std::vector<double> per_round;
  for (int r = 0; r < rounds; ++r) {
    auto t0 = std::chrono::steady_clock::now();
    for (size_t i = 0; i < iters; ++i) {
      DataPtr p = a.allocate(nbytes, 0);
      // Keep the compiler from eliding the pair.
      asm volatile("" : : "r"(p.get()) : "memory");
    }
    auto t1 = std::chrono::steady_clock::now();
    per_round.push_back(std::chrono::duration<double, std::nano>(t1 - t0).count() / double(iters));
  }
  std::sort(per_round.begin(), per_round.end());
  return per_round[per_round.size() / 2];
}

int64_t stress_threads(CachingAllocator& a, int threads, int iters, size_t max_bytes, int streams,
                       uint64_t seed) {
  std::atomic<int64_t> ops{0};
  std::atomic<bool> failed{false};
  std::mutex err_mu;
  std::string error;
  std::vector<std::thread> pool;
  std::function<void(int)> run;
  auto work = [&](int t) {
    try {
      run(t);
    } catch (const std::exception& e) {
      std::lock_guard<std::mutex> lock(err_mu);
      if (error.empty()) error = e.what();
      failed = true;
    }
  };
  run = [&](int t) {
    std::mt19937_64 rng(seed + uint64_t(t) * 7919);
    struct Live {
      DataPtr p;
      size_t n;
      unsigned char tag;
    };
    std::vector<Live> live;
    for (int i = 0; i < iters && !failed; ++i) {
      if (!live.empty() && (rng() % 100 < 45 || live.size() > 64)) {
        size_t j = rng() % live.size();
        Live& l = live[j];
        auto* c = static_cast<unsigned char*>(l.p.get());
        // Another thread writing its own tag here means two live blocks overlapped.
        if (c[0] != l.tag || c[l.n - 1] != l.tag || c[l.n / 2] != l.tag) failed = true;
        live.erase(live.begin() + long(j));
      } else {
        size_t n = 1 + size_t(rng() % max_bytes);
        StreamId s = StreamId(rng() % uint64_t(streams));
        Live l{a.allocate(n, s), n, static_cast<unsigned char>(rng() | 1)};
        auto* c = static_cast<unsigned char*>(l.p.get());
        c[0] = c[n / 2] = c[n - 1] = l.tag;
        live.push_back(std::move(l));
      }
      ++ops;
    }
  };
  for (int t = 0; t < threads; ++t) pool.emplace_back(work, t);
  for (auto& th : pool) th.join();
  if (!error.empty()) throw Error(error);
  CL_CHECK(!failed, "caching allocator stress test: two live blocks overlapped");
  return ops.load();
}

}  // namespace cl
