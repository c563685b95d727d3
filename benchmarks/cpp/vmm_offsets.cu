// Whether physical memory can be created in large handles and mapped in pieces (cuMemMap at
// a non-zero offset into the handle), and what such mappings cost, on the device machine:
//   nvcc -O2 -std=c++17 -o /tmp/vmm_offsets benchmarks/cpp/vmm_offsets.cu -lcuda
//   /tmp/vmm_offsets
// - a 4 MiB piece of a 256 MiB handle mapped at another address: does it alias the right
//   bytes (written through one mapping, read through the other)?
// - the cost of mapping (map + setaccess) a piece of a large handle, against a whole handle;
// - one mapping of a run of pieces; unmapping part of a mapping (expected to fail) and
//   several whole mappings in one call;
// - when the memory of a handle is freed: after its last mapping goes (release first).
#include <cuda.h>
#include <cuda_runtime.h>

#include <cstdio>
#include <vector>

#include "vmm_common.h"

constexpr size_t kMiB = size_t(1) << 20;
constexpr size_t kPiece = 4 * kMiB;

static const char* err(CUresult r) {
  const char* s = nullptr;
  cuGetErrorName(r, &s);
  return s ? s : "?";
}

static size_t free_mib() {
  size_t f = 0, t = 0;
  cudaMemGetInfo(&f, &t);
  return f / kMiB;
}

int main() {
  cudaFree(nullptr);
  auto p = device_prop();
  auto a = rw_access();
  const size_t big = 256 * kMiB;
  CUdeviceptr va = 0;
  const size_t span = 4 * big;
  cuMemAddressReserve(&va, span, 0, 0, 0);
  CUmemGenericAllocationHandle h = 0;
  CUresult r = cuMemCreate(&h, big, &p, 0);
  std::printf("create 256 MiB handle: %s\n", err(r));

  // Whole handle at va, piece 5 (offset 20 MiB) at va + big.
  r = cuMemMap(va, big, 0, h, 0);
  std::printf("map whole: %s\n", err(r));
  cuMemSetAccess(va, big, &a, 1);
  r = cuMemMap(va + big, kPiece, 5 * kPiece, h, 0);
  std::printf("map piece at offset 20 MiB: %s\n", err(r));
  if (r != CUDA_SUCCESS) return 1;
  r = cuMemSetAccess(va + big, kPiece, &a, 1);
  std::printf("setaccess piece: %s\n", err(r));
  std::vector<unsigned> host(big / 4);
  for (size_t i = 0; i < host.size(); ++i) host[i] = unsigned(i);
  cudaMemcpy(reinterpret_cast<void*>(va), host.data(), big, cudaMemcpyHostToDevice);
  std::vector<unsigned> back(kPiece / 4);
  cudaMemcpy(back.data(), reinterpret_cast<void*>(va + big), kPiece, cudaMemcpyDeviceToHost);
  bool same = true;
  for (size_t i = 0; i < back.size(); ++i) same &= back[i] == unsigned(5 * kPiece / 4 + i);
  std::printf("piece reads the handle's bytes at its offset: %s\n", same ? "yes" : "NO");
  // Writing through the piece shows at the whole mapping.
  cudaMemset(reinterpret_cast<void*>(va + big), 0xab, kPiece);
  unsigned word = 0;
  cudaMemcpy(&word, reinterpret_cast<void*>(va + 5 * kPiece + 100), 4, cudaMemcpyDeviceToHost);
  std::printf("write through the piece seen through the whole mapping: %s\n",
              word == 0xabababab ? "yes" : "NO");

  // Unmapping part of the whole mapping: expected to fail.
  r = cuMemUnmap(va, kPiece);
  std::printf("unmap the first 4 MiB of a 256 MiB mapping: %s\n", err(r));
  cuMemUnmap(va + big, kPiece);

  // Costs: a piece of the big handle (map + setaccess) at fresh addresses, 64 times.
  {
    std::vector<double> map_t, acc_t;
    CUdeviceptr at = va + big;
    for (int i = 0; i < 64; ++i) {
      auto t0 = Clock::now();
      cuMemMap(at + i * kPiece, kPiece, (i % 64) * kPiece, h, 0);
      auto t1 = Clock::now();
      cuMemSetAccess(at + i * kPiece, kPiece, &a, 1);
      auto t2 = Clock::now();
      map_t.push_back(us(t0, t1));
      acc_t.push_back(us(t1, t2));
    }
    auto t3 = Clock::now();
    r = cuMemUnmap(at, 64 * kPiece);
    auto t4 = Clock::now();
    std::printf(
        "4 MiB piece of a 256 MiB handle: map %.1f us, setaccess %.1f us; "
        "one unmap over 64 pieces: %s, %.1f us per piece\n",
        median(map_t), median(acc_t), err(r), us(t3, t4) / 64);
  }
  // The same with 64 separate 4 MiB handles.
  {
    std::vector<CUmemGenericAllocationHandle> hs(64);
    for (auto& x : hs) cuMemCreate(&x, kPiece, &p, 0);
    std::vector<double> map_t, acc_t, un_t;
    CUdeviceptr at = va + big;
    for (int i = 0; i < 64; ++i) {
      auto t0 = Clock::now();
      cuMemMap(at + i * kPiece, kPiece, 0, hs[i], 0);
      auto t1 = Clock::now();
      cuMemSetAccess(at + i * kPiece, kPiece, &a, 1);
      auto t2 = Clock::now();
      map_t.push_back(us(t0, t1));
      acc_t.push_back(us(t1, t2));
    }
    for (int i = 0; i < 64; ++i) {
      auto t0 = Clock::now();
      cuMemUnmap(at + i * kPiece, kPiece);
      un_t.push_back(us(t0, Clock::now()));
    }
    std::printf("4 MiB handle, for comparison: map %.1f us, setaccess %.1f us, unmap %.1f us\n",
                median(map_t), median(acc_t), median(un_t));
    for (auto x : hs) cuMemRelease(x);
  }
  // A run of pieces as one mapping: 4, 16, 64 MiB from offset 32 MiB.
  for (size_t mib : {4, 16, 64, 192}) {
    std::vector<double> t;
    for (int rep = 0; rep < 9; ++rep) {
      auto t0 = Clock::now();
      cuMemMap(va + big, mib * kMiB, 32 * kMiB, h, 0);
      cuMemSetAccess(va + big, mib * kMiB, &a, 1);
      t.push_back(us(t0, Clock::now()));
      cuMemUnmap(va + big, mib * kMiB);
    }
    std::printf("one mapping of %3zu MiB of the big handle (map + setaccess): %.1f us\n", mib,
                median(t));
  }
  // Growth as one handle per growth: create + map + setaccess of n MiB.
  for (size_t mib : {4, 32, 128, 512}) {
    std::vector<double> t;
    for (int rep = 0; rep < 7; ++rep) {
      CUmemGenericAllocationHandle g = 0;
      auto t0 = Clock::now();
      cuMemCreate(&g, mib * kMiB, &p, 0);
      cuMemMap(va + big, mib * kMiB, 0, g, 0);
      cuMemSetAccess(va + big, mib * kMiB, &a, 1);
      t.push_back(us(t0, Clock::now()));
      cuMemUnmap(va + big, mib * kMiB);
      cuMemRelease(g);
    }
    std::printf("growth of %3zu MiB as one handle (create + map + setaccess): %.1f us\n", mib,
                median(t));
  }

  // When is the memory freed? Release the handle while two mappings hold it.
  {
    size_t f0 = free_mib();
    cuMemMap(va + big, kPiece, 0, h, 0);
    cuMemRelease(h);
    size_t f1 = free_mib();
    cuMemUnmap(va, big);
    size_t f2 = free_mib();
    cuMemUnmap(va + big, kPiece);
    size_t f3 = free_mib();
    std::printf(
        "free MiB: mapped %zu, released but mapped twice %zu, one piece still mapped "
        "%zu, none %zu\n",
        f0, f1, f2, f3);
  }
  cuMemAddressFree(va, span);
  return 0;
}
