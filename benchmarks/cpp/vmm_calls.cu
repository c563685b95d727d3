// What each virtual-memory driver call costs (the caching allocator's growth path), beside
// cudaMalloc/cudaFree, for several sizes, on the device machine:
//   nvcc -O2 -std=c++17 -o /tmp/vmm_calls benchmarks/cpp/vmm_calls.cu -lcuda && /tmp/vmm_calls
// Medians over 20 repetitions, microseconds per call.
#include <cuda.h>
#include <cuda_runtime.h>

#include <cstdio>
#include <vector>

#include "vmm_common.h"

int main() {
  cudaFree(nullptr);
  const CUmemAllocationProp prop = device_prop();
  const CUmemAccessDesc access = rw_access();
  std::printf("%-10s %9s %9s %9s %9s %9s %9s %9s\n", "size", "create", "map", "setaccess", "unmap",
              "release", "cudaMalloc", "cudaFree");
  for (size_t mib : {2, 4, 8, 20, 64, 256}) {
    size_t n = mib << 20;
    std::vector<double> c, m, a, u, r, cm, cf;
    CUdeviceptr va = 0;
    cuMemAddressReserve(&va, n, 0, 0, 0);
    for (int i = 0; i < 20; ++i) {
      CUmemGenericAllocationHandle h = 0;
      auto t0 = Clock::now();
      cuMemCreate(&h, n, &prop, 0);
      auto t1 = Clock::now();
      cuMemMap(va, n, 0, h, 0);
      auto t2 = Clock::now();
      cuMemSetAccess(va, n, &access, 1);
      auto t3 = Clock::now();
      cuMemUnmap(va, n);
      auto t4 = Clock::now();
      cuMemRelease(h);
      auto t5 = Clock::now();
      void* p = nullptr;
      cudaMalloc(&p, n);
      auto t6 = Clock::now();
      cudaFree(p);
      auto t7 = Clock::now();
      c.push_back(us(t0, t1));
      m.push_back(us(t1, t2));
      a.push_back(us(t2, t3));
      u.push_back(us(t3, t4));
      r.push_back(us(t4, t5));
      cm.push_back(us(t5, t6));
      cf.push_back(us(t6, t7));
    }
    cuMemAddressFree(va, n);
    std::printf("%4zu MiB   %9.1f %9.1f %9.1f %9.1f %9.1f %9.1f %9.1f\n", mib, median(c), median(m),
                median(a), median(u), median(r), median(cm), median(cf));
  }
  // Many 2 MiB pages mapped side by side, one cuMemSetAccess over all of them (a growth).
  const int pages = 64;
  CUdeviceptr va = 0;
  cuMemAddressReserve(&va, size_t(pages) << 21, 0, 0, 0);
  std::vector<CUmemGenericAllocationHandle> hs(pages);
  auto t0 = Clock::now();
  for (int i = 0; i < pages; ++i) cuMemCreate(&hs[i], 2 << 20, &prop, 0);
  auto t1 = Clock::now();
  for (int i = 0; i < pages; ++i) cuMemMap(va + (CUdeviceptr(i) << 21), 2 << 20, 0, hs[i], 0);
  auto t2 = Clock::now();
  cuMemSetAccess(va, size_t(pages) << 21, &access, 1);
  auto t3 = Clock::now();
  std::printf("64 pages of 2 MiB: create %.1f us/page, map %.1f us/page, one setaccess %.1f us\n",
              us(t0, t1) / pages, us(t1, t2) / pages, us(t2, t3));
  return 0;
}
