// The pinned allocator's cache logic and the host thread pool, without a GPU.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <set>
#include <stdexcept>
#include <thread>
#include <vector>

#include "core/error.h"
#include "core/host_block_cache.h"
#include "core/parallel.h"

namespace {

// malloc'd "pinned" memory and events that complete when the test says so.
class FakeBackend final : public cl::PinnedBackend {
 public:
  void* allocate(size_t n) override {
    std::lock_guard<std::mutex> lock(mu);
    ++allocs;
    return std::malloc(n);
  }
  void free(void* p) override {
    std::lock_guard<std::mutex> lock(mu);
    ++frees;
    std::free(p);
  }
  void* record_event(int, void* stream) override {
    std::lock_guard<std::mutex> lock(mu);
    events.push_back({stream, false});
    return reinterpret_cast<void*>(events.size());
  }
  bool query_event(void* e) override {
    std::lock_guard<std::mutex> lock(mu);
    return events[reinterpret_cast<size_t>(e) - 1].done;
  }
  void release_event(void*) override {}
  void complete(void* stream) {
    std::lock_guard<std::mutex> lock(mu);
    for (auto& e : events) e.done = e.done || e.stream == stream;
  }

  struct Ev {
    void* stream;
    bool done;
  };
  std::mutex mu;
  std::vector<Ev> events;
  int allocs = 0, frees = 0;
};

TEST(HostBlockCache, ReusesOnlyAfterEventsComplete) {
  FakeBackend backend;
  cl::HostBlockCache cache(&backend);
  void* stream = reinterpret_cast<void*>(0x42);
  void* first;
  {
    cl::DataPtr p = cache.allocate(5000);
    first = p.get();
    ASSERT_TRUE(cache.record_stream(p.get(), 0, stream));
  }
  cl::DataPtr q = cache.allocate(5000);
  EXPECT_NE(q.get(), first);
  backend.complete(stream);
  cl::DataPtr r = cache.allocate(5000);
  EXPECT_EQ(r.get(), first);
  EXPECT_EQ(backend.allocs, 2);
}

// pin_memory(): new blocks come from the backend's allocate_copy, cached ones are copied into.
TEST(HostBlockCache, AllocateCopyFillsNewAndCachedBlocks) {
  FakeBackend backend;
  cl::HostBlockCache cache(&backend);
  std::vector<unsigned char> src(3 << 20), src2(3 << 20);
  for (size_t i = 0; i < src.size(); ++i) {
    src[i] = static_cast<unsigned char>(i * 7 + 1);
    src2[i] = static_cast<unsigned char>(i * 5 + 3);
  }
  void* first;
  {
    cl::DataPtr p = cache.allocate_copy(src.size(), src.data(), src.size());
    first = p.get();
    EXPECT_EQ(std::memcmp(p.get(), src.data(), src.size()), 0);
  }
  cl::DataPtr q = cache.allocate_copy(src2.size(), src2.data(), src2.size() - 100);
  EXPECT_EQ(q.get(), first);  // the cached block, copied into
  EXPECT_EQ(std::memcmp(q.get(), src2.data(), src2.size() - 100), 0);
  EXPECT_EQ(backend.allocs, 1);
  EXPECT_EQ(cache.stats().num_host_alloc, 1);
  EXPECT_THROW(cache.allocate_copy(10, src.data(), 11), cl::Error);
  EXPECT_EQ(cache.allocate_copy(0, src.data(), 0).get(), nullptr);
}

TEST(HostBlockCache, BlockSizesWasteLessThanAnEighth) {
  for (size_t n = 1; n < (size_t(1) << 40); n = n * 3 + 1) {
    size_t b = cl::HostBlockCache::block_size(n);
    ASSERT_GE(b, n);
    ASSERT_LT((b - n) * 8, b) << n;
    // Every size maps to a class that maps to itself.
    ASSERT_EQ(cl::HostBlockCache::block_size(b), b);
  }
}

TEST(HostBlockCache, ConcurrentAllocateAndFreeKeepStatsConsistent) {
  FakeBackend backend;
  cl::HostBlockCache cache(&backend);
  std::vector<std::thread> threads;
  std::atomic<bool> overlap{false};
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&, t] {
      std::vector<cl::DataPtr> live;
      for (int i = 0; i < 2000; ++i) {
        size_t n = 64 + size_t((i * 7 + t) % 5) * 1000;
        cl::DataPtr p = cache.allocate(n);
        std::memset(p.get(), t, n);  // a block handed to two owners would be overwritten
        for (size_t k = 0; k < n; k += 97) {
          if (static_cast<unsigned char*>(p.get())[k] != t) overlap = true;
        }
        if (i % 3 == 0) cache.record_stream(p.get(), 0, reinterpret_cast<void*>(t + 1));
        live.push_back(std::move(p));
        if (live.size() > 4) live.erase(live.begin());
        if (i % 50 == 0) backend.complete(reinterpret_cast<void*>(t + 1));
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_FALSE(overlap);
  for (int t = 0; t < 8; ++t) backend.complete(reinterpret_cast<void*>(t + 1));
  cache.empty_cache();
  cl::HostMemoryStats st = cache.stats();
  EXPECT_EQ(st.active_requests.current, 0);
  EXPECT_EQ(st.allocations.current, 0);
  EXPECT_EQ(st.num_host_alloc, st.num_host_free);
  EXPECT_EQ(backend.allocs, backend.frees);
}

TEST(Parallel, RunsEveryIndexOnceAndRethrows) {
  std::vector<std::atomic<int>> hits(100);
  cl::parallel_run(100, [&](int i) { hits[i]++; });
  for (auto& h : hits) EXPECT_EQ(h.load(), 1);
  EXPECT_THROW(cl::parallel_run(10,
                                [](int i) {
                                  if (i == 7) throw cl::ValueError("seven");
                                }),
               cl::ValueError);
}

TEST(Parallel, NestedAndConcurrentCallsDoNotDeadlock) {
  std::atomic<int> total{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back(
        [&] { cl::parallel_run(4, [&](int) { cl::parallel_run(4, [&](int) { total++; }); }); });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(total.load(), 64);
}

TEST(Parallel, MemcpyCopiesEverything) {
  size_t n = (size_t(9) << 20) + 123;
  std::vector<unsigned char> src(n), dst(n);
  for (size_t i = 0; i < n; ++i) src[i] = static_cast<unsigned char>(i * 31 + 7);
  cl::parallel_memcpy(dst.data(), src.data(), n);
  EXPECT_EQ(std::memcmp(dst.data(), src.data(), n), 0);
}

}  // namespace
