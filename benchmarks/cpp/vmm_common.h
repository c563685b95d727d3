// What the virtual-memory benchmarks (vmm_calls.cu, vmm_threads.cu, vmm_offsets.cu) share:
// timing helpers and the allocation properties the caching allocator uses on device 0.
#pragma once

#include <cuda.h>

#include <algorithm>
#include <chrono>
#include <vector>

using Clock = std::chrono::steady_clock;

static double us(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double, std::micro>(b - a).count();
}

static double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// Pinned device memory on device 0, as cuMemCreate takes it.
static CUmemAllocationProp device_prop() {
  CUmemAllocationProp p{};
  p.type = CU_MEM_ALLOCATION_TYPE_PINNED;
  p.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  p.location.id = 0;
  return p;
}

// Read-write access for device 0, as cuMemSetAccess takes it.
static CUmemAccessDesc rw_access() {
  CUmemAccessDesc a{};
  a.location = device_prop().location;
  a.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
  return a;
}
