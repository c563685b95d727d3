// Device properties (torch's _CudaDeviceProperties), read once per device.
//
// cudaGetDeviceProperties is slow (it fills ~100 fields, some through driver queries), so
// each device is read once, on first use, and kept for the life of the process.
#include <cuda_runtime_api.h>

#include <cstdio>
#include <memory>
#include <mutex>
#include <vector>

#include "core/cuda_api.h"
#include "cuda/cuda_check.h"

namespace cl::cuda {

namespace {
DeviceProperties read_properties(int device) {
  cudaDeviceProp p{};
  CL_CUDA_CHECK(cudaGetDeviceProperties(&p, device));
  DeviceProperties d;
  d.name = p.name;
  d.major = p.major;
  d.minor = p.minor;
  d.is_multi_gpu_board = p.isMultiGpuBoard != 0;
  d.is_integrated = p.integrated != 0;
  d.multi_processor_count = p.multiProcessorCount;
  d.total_memory = p.totalGlobalMem;
  d.max_threads_per_multi_processor = p.maxThreadsPerMultiProcessor;
  d.max_threads_per_block = p.maxThreadsPerBlock;
  d.warp_size = p.warpSize;
  d.shared_memory_per_block = p.sharedMemPerBlock;
  d.shared_memory_per_block_optin = p.sharedMemPerBlockOptin;
  d.shared_memory_per_multiprocessor = p.sharedMemPerMultiprocessor;
  d.regs_per_multiprocessor = p.regsPerMultiprocessor;
  d.memory_bus_width = p.memoryBusWidth;
  d.L2_cache_size = p.l2CacheSize;
  d.pci_bus_id = p.pciBusID;
  d.pci_device_id = p.pciDeviceID;
  d.pci_domain_id = p.pciDomainID;
  for (size_t i = 0; i < d.uuid.size(); ++i) d.uuid[i] = uint8_t(p.uuid.bytes[i]);
  // CUDA 13 dropped the clock fields from cudaDeviceProp; the attributes remain.
  CL_CUDA_CHECK(cudaDeviceGetAttribute(&d.clock_rate, cudaDevAttrClockRate, device));
  CL_CUDA_CHECK(cudaDeviceGetAttribute(&d.memory_clock_rate, cudaDevAttrMemoryClockRate, device));
  return d;
}
}  // namespace

const DeviceProperties& get_device_properties(int device) {
  static std::mutex mu;
  static std::vector<std::unique_ptr<DeviceProperties>> cache;
  check_device_index(device);
  std::lock_guard<std::mutex> lock(mu);
  if (cache.empty()) cache.resize(size_t(device_count()));
  if (!cache[device]) cache[device] = std::make_unique<DeviceProperties>(read_properties(device));
  return *cache[device];
}

std::string uuid_string(const std::array<uint8_t, 16>& u) {
  char buf[40];
  std::snprintf(buf, sizeof(buf),
                "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", u[0], u[1],
                u[2], u[3], u[4], u[5], u[6], u[7], u[8], u[9], u[10], u[11], u[12], u[13], u[14],
                u[15]);
  return buf;
}

}  // namespace cl::cuda
