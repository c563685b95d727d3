// The core from several threads at once, as the bindings run it once they release the GIL
// (Note [Releasing the GIL] in csrc/bindings/gil.h): generators, the CPU allocator, the
// host thread pool and ops on independent tensors.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstring>
#include <thread>
#include <utility>
#include <vector>

#include "core/allocator.h"
#include "core/parallel.h"
#include "core/tensor.h"
#include "ops/generator.h"
#include "ops/ops.h"

using namespace cl;

namespace {

template <class F>
void on_threads(int n, F f) {
  std::vector<std::thread> ts;
  for (int i = 0; i < n; ++i) ts.emplace_back(f, i);
  for (auto& t : ts) t.join();
}

}  // namespace

TEST(Threads, GeneratorReservesDisjointRanges) {
  // A CUDA generator's Philox offsets (the bookkeeping needs no GPU): threads reserving at
  // once get disjoint ranges that tile the counter.
  Generator g{Device(DeviceType::CUDA, 0)};
  g.manual_seed(7);
  constexpr int kThreads = 8, kDraws = 2000;
  std::vector<std::vector<std::pair<uint64_t, uint64_t>>> got(kThreads);
  on_threads(kThreads, [&](int i) {
    for (int k = 0; k < kDraws; ++k) {
      uint64_t n = 4 * uint64_t(1 + (i * 131 + k * 17) % 97);
      auto [seed, base] = g.philox_reserve(n);
      EXPECT_EQ(seed, 7u);
      got[size_t(i)].push_back({base, base + n});
    }
  });
  std::vector<std::pair<uint64_t, uint64_t>> all;
  for (auto& v : got) all.insert(all.end(), v.begin(), v.end());
  std::sort(all.begin(), all.end());
  EXPECT_EQ(all.front().first, 0u);
  for (size_t k = 1; k < all.size(); ++k) EXPECT_EQ(all[k].first, all[k - 1].second);
  EXPECT_EQ(g.state().second, all.back().second);  // no counter lost or drawn twice
}

TEST(Threads, CpuAllocatorFromManyThreads) {
  on_threads(8, [](int i) {
    std::vector<std::pair<DataPtr, size_t>> live;
    for (int k = 0; k < 300; ++k) {
      size_t n = size_t(1 + (k * 7919 + i * 104729) % (6 << 20));
      DataPtr p = cpu_allocator()->allocate(n);
      ASSERT_EQ(reinterpret_cast<uintptr_t>(p.get()) % 64, 0u);
      std::memset(p.get(), i + 1, n);
      live.emplace_back(std::move(p), n);
      if (live.size() > 4) live.erase(live.begin());
    }
    for (auto& [p, n] : live) {
      auto* b = static_cast<unsigned char*>(p.get());
      EXPECT_EQ(b[0], i + 1);
      EXPECT_EQ(b[n - 1], i + 1);
    }
  });
}

TEST(Threads, ParallelRunFromManyThreads) {
  // A call made while another runs goes serially in its caller: every call still runs each
  // index exactly once.
  on_threads(6, [](int i) {
    for (int k = 0; k < 200; ++k) {
      std::vector<std::atomic<int>> hits(size_t(5 + i));
      parallel_run(int(hits.size()), [&](int j) { hits[size_t(j)].fetch_add(1); });
      for (auto& h : hits) ASSERT_EQ(h.load(), 1);
    }
  });
}

TEST(Threads, OpsOnIndependentTensors) {
  on_threads(8, [](int i) {
    const int64_t n = 1 << 16;
    Tensor a = arange(0, double(n), 1, ScalarType::Float32, Device(DeviceType::CPU));
    Tensor b = full({n}, Scalar(double(i)), ScalarType::Float32, Device(DeviceType::CPU));
    for (int k = 0; k < 20; ++k) {
      Tensor c = binary(BinaryOp::Add, Operand(a), Operand(b));
      Tensor s = reduce(ReduceOp::Sum, c, {}, false, ScalarType::Float64);
      // sum(0..n-1) + n * i
      EXPECT_EQ(item(s).to_double(), double(n) * double(n - 1) / 2 + double(n) * i);
      Tensor d = to(c, Device(DeviceType::CPU), ScalarType::Int64, false, false);
      EXPECT_EQ(item(select(d, 0, n - 1)).to_int(), n - 1 + i);
    }
  });
}
