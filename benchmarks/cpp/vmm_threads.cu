// Whether the allocator's growth path could go faster than one page after another, on the
// device machine:
//   nvcc -O2 -std=c++17 -o /tmp/vmm_threads benchmarks/cpp/vmm_threads.cu -lcuda -lpthread
//   /tmp/vmm_threads
// - pages made live (cuMemCreate + cuMemMap + cuMemSetAccess) by 1, 2, 4 and 8 threads at
//   once: does the driver run them in parallel?
// - unmapping 64 mappings with one cuMemUnmap call or with 64;
// - mapping a page again at an address it was mapped at before (a lent page coming back);
// - cuMemSetAccess while a kernel keeps the GPU busy: does it wait for the GPU?
#include <cuda.h>
#include <cuda_runtime.h>

#include <cstdio>
#include <thread>
#include <vector>

#include "vmm_common.h"

constexpr size_t kPage = size_t(4) << 20;

__global__ void spin(long long cycles) {
  long long t0 = clock64();
  while (clock64() - t0 < cycles) {
  }
}

// `pages` pages made live at va, one after another, in the calling thread.
static void grow(CUdeviceptr va, int pages, CUmemGenericAllocationHandle* hs) {
  CUcontext ctx = nullptr;
  cuDevicePrimaryCtxRetain(&ctx, 0);
  cuCtxSetCurrent(ctx);
  auto p = device_prop();
  auto a = rw_access();
  for (int i = 0; i < pages; ++i) {
    cuMemCreate(&hs[i], kPage, &p, 0);
    cuMemMap(va + i * kPage, kPage, 0, hs[i], 0);
    cuMemSetAccess(va + i * kPage, kPage, &a, 1);
  }
}

static void release(CUdeviceptr va, int pages, CUmemGenericAllocationHandle* hs) {
  cuMemUnmap(va, pages * kPage);
  for (int i = 0; i < pages; ++i) cuMemRelease(hs[i]);
}

int main() {
  cudaFree(nullptr);
  const int total = 128;  // 512 MiB
  CUdeviceptr va = 0;
  cuMemAddressReserve(&va, 2 * total * kPage, 0, 0, 0);
  std::vector<CUmemGenericAllocationHandle> hs(total);
  auto a = rw_access();
  auto p = device_prop();

  std::printf("%d pages of 4 MiB made live (create + map + setaccess):\n", total);
  for (int threads : {1, 2, 4, 8}) {
    std::vector<double> runs;
    for (int r = 0; r < 5; ++r) {
      auto t0 = Clock::now();
      std::vector<std::thread> ts;
      int per = total / threads;
      for (int t = 0; t < threads; ++t)
        ts.emplace_back(grow, va + t * per * kPage, per, hs.data() + t * per);
      for (auto& t : ts) t.join();
      runs.push_back(us(t0, Clock::now()) / total);
      release(va, total, hs.data());
    }
    std::sort(runs.begin(), runs.end());
    std::printf("  %d thread(s): %7.1f us per page\n", threads, runs[runs.size() / 2]);
  }

  // Unmap: one call over 64 mappings, or one call each.
  {
    grow(va, 64, hs.data());
    auto t0 = Clock::now();
    cuMemUnmap(va, 64 * kPage);
    auto t1 = Clock::now();
    for (int i = 0; i < 64; ++i) cuMemMap(va + i * kPage, kPage, 0, hs[i], 0);
    cuMemSetAccess(va, 64 * kPage, &a, 1);
    auto t2 = Clock::now();
    for (int i = 0; i < 64; ++i) cuMemUnmap(va + i * kPage, kPage);
    auto t3 = Clock::now();
    std::printf("unmap 64 mappings: one call %.1f us per mapping, 64 calls %.1f us each\n",
                us(t0, t1) / 64, us(t2, t3) / 64);
    // Mapping the same pages again at the same addresses (remap + one setaccess).
    auto t4 = Clock::now();
    for (int i = 0; i < 64; ++i) cuMemMap(va + i * kPage, kPage, 0, hs[i], 0);
    auto t5 = Clock::now();
    cuMemSetAccess(va, 64 * kPage, &a, 1);
    auto t6 = Clock::now();
    std::printf("remap 64 pages at their old addresses: map %.1f us, setaccess %.1f us per page\n",
                us(t4, t5) / 64, us(t5, t6) / 64);
    // A second alias of each page (lending), setaccess per alias.
    CUdeviceptr alias = va + total * kPage;
    auto t7 = Clock::now();
    for (int i = 0; i < 64; ++i) cuMemMap(alias + i * kPage, kPage, 0, hs[i], 0);
    auto t8 = Clock::now();
    for (int i = 0; i < 64; ++i) cuMemSetAccess(alias + i * kPage, kPage, &a, 1);
    auto t9 = Clock::now();
    std::printf("second alias of 64 pages: map %.1f us, setaccess %.1f us per page\n",
                us(t7, t8) / 64, us(t8, t9) / 64);
    cuMemUnmap(alias, 64 * kPage);
    release(va, 64, hs.data());
  }

  // cuMemSetAccess with the GPU busy for ~20 ms.
  {
    grow(va, 1, hs.data());
    cuMemUnmap(va, kPage);
    cuMemMap(va, kPage, 0, hs[0], 0);
    spin<<<1, 1>>>(40'000'000LL);
    auto t0 = Clock::now();
    cuMemSetAccess(va, kPage, &a, 1);
    auto t1 = Clock::now();
    cuMemUnmap(va, kPage);
    auto t2 = Clock::now();
    cudaDeviceSynchronize();
    auto t3 = Clock::now();
    std::printf("GPU busy: setaccess %.1f us, unmap %.1f us, then the kernel's rest %.1f us\n",
                us(t0, t1), us(t1, t2), us(t2, t3));
    cuMemRelease(hs[0]);
  }

  // Larger handles: one 64 MiB handle versus sixteen 4 MiB pages.
  for (size_t mib : {4, 16, 64}) {
    size_t n = mib << 20;
    std::vector<double> runs;
    for (int r = 0; r < 9; ++r) {
      CUmemGenericAllocationHandle h = 0;
      auto t0 = Clock::now();
      cuMemCreate(&h, n, &p, 0);
      cuMemMap(va, n, 0, h, 0);
      cuMemSetAccess(va, n, &a, 1);
      runs.push_back(us(t0, Clock::now()));
      cuMemUnmap(va, n);
      cuMemRelease(h);
    }
    std::sort(runs.begin(), runs.end());
    std::printf("one %3zu MiB handle made live: %7.1f us (%.2f us per MiB)\n", mib,
                runs[runs.size() / 2], runs[runs.size() / 2] / mib);
  }
  cuMemAddressFree(va, 2 * total * kPage);
  return 0;
}
