// The CUDA backend of the caching allocator, and cuda::device_allocator().
//
// Plain segments come from cudaMalloc. Arenas use the driver's virtual memory API
// (cuMemAddressReserve, cuMemCreate, cuMemMap, cuMemSetAccess, ...), reached through the
// runtime's cudaGetDriverEntryPointByVersion: cudalite links the static runtime only, never
// libcuda, so the module still imports on machines without a driver. When the entry points
// or the device's virtual memory support are missing, the allocator uses plain segments.
#include "cuda/device_allocator.h"

#include <cuda.h>  // driver types only; the functions come from the entry points below
#include <cuda_runtime_api.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <vector>

#include "core/caching_allocator.h"
#include "core/cuda_api.h"
#include "cuda/cuda_check.h"
#include "cuda/deferred.h"
#include "cuda/driver.h"
#include "cuda/graphs.h"
#include "cuda/streams.h"

namespace cl::cuda {

namespace {

#define CL_DRIVER_FUNCTIONS(X)     \
  X(cuGetErrorString)              \
  X(cuDeviceGet)                   \
  X(cuDeviceGetAttribute)          \
  X(cuMemGetAllocationGranularity) \
  X(cuMemAddressReserve)           \
  X(cuMemAddressFree)              \
  X(cuMemCreate)                   \
  X(cuMemRelease)                  \
  X(cuMemMap)                      \
  X(cuMemUnmap)                    \
  X(cuMemSetAccess)

struct DriverApi {
#define CL_DECLARE(name) decltype(&::name) name = nullptr;
  CL_DRIVER_FUNCTIONS(CL_DECLARE)
#undef CL_DECLARE
  bool loaded = false;
};

const DriverApi& driver() {
  static const DriverApi api = [] {
    DriverApi d;
    bool ok = true;
    auto load = [&](const char* name, void** fn) {
      *fn = driver_entry_point(name);
      ok = ok && *fn;
    };
#define CL_LOAD(name) load(#name, reinterpret_cast<void**>(&d.name));
    CL_DRIVER_FUNCTIONS(CL_LOAD)
#undef CL_LOAD
    d.loaded = ok;
    return d;
  }();
  return api;
}

[[noreturn]] void throw_driver_error(CUresult r, const char* what) {
  const char* msg = nullptr;
  if (driver().cuGetErrorString) driver().cuGetErrorString(r, &msg);
  throw AcceleratorError(int(r), detail::str("CUDA driver error in ", what, ": ",
                                             msg ? msg : "unknown error", " (", int(r), ")"));
}

#define CL_DRIVER_CHECK(call, what)                             \
  do {                                                          \
    CUresult cl_r_ = (call);                                    \
    if (cl_r_ != CUDA_SUCCESS) throw_driver_error(cl_r_, what); \
  } while (0)

class CudaBackend final : public AllocBackend {
 public:
  explicit CudaBackend(int device) : device_(device) {
    DeviceGuard g(device_);
    const DriverApi& d = driver();
    prop_.type = CU_MEM_ALLOCATION_TYPE_PINNED;
    prop_.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    prop_.location.id = device_;
    if (!d.loaded) return;
    CUdevice dev = 0;
    int supported = 0;
    if (d.cuDeviceGet(&dev, device_) != CUDA_SUCCESS) return;
    if (d.cuDeviceGetAttribute(&supported, CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED,
                               dev) != CUDA_SUCCESS ||
        !supported) {
      return;
    }
    size_t g_min = 0;
    if (d.cuMemGetAllocationGranularity(&g_min, &prop_, CU_MEM_ALLOC_GRANULARITY_MINIMUM) !=
        CUDA_SUCCESS) {
      return;
    }
    // Pages are at least 2 MiB, the size torch's expandable segments use for small pools.
    granularity_ = std::max<size_t>(g_min, size_t(2) << 20);
    vmm_ = true;
    // Pages that can be exported as file descriptors, so that CUDA IPC can share them
    // (csrc/cuda/ipc.cpp), as torch's expandable segments do on Linux.
    int fd_supported = 0;
    if (d.cuDeviceGetAttribute(&fd_supported,
                               CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR_SUPPORTED,
                               dev) == CUDA_SUCCESS &&
        fd_supported) {
      prop_.requestedHandleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
    }
  }

  Device device() const override { return Device(DeviceType::CUDA, device_); }
  // Only picks the pool: no work is queued, so the deferred batch can wait.
  StreamId current_stream() override {
    return reinterpret_cast<StreamId>(cuda::current_stream_unflushed(device_));
  }

  void* malloc(size_t nbytes) override {
    DeviceGuard g(device_);
    RelaxedCaptureGuard relaxed;  // Note [Capturing CUDA graphs]
    void* p = nullptr;
    cudaError_t err = cudaMalloc(&p, nbytes);
    if (err == cudaErrorMemoryAllocation) {
      cudaGetLastError();  // forgive: the allocator frees its cache and retries
      return nullptr;
    }
    if (err != cudaSuccess) throw_cuda_error(err, __FILE__, __LINE__);
    return p;
  }
  void free(void* ptr, size_t) override {
    flush_deferred();  // Note [Deferred launches]
    DeviceGuard g(device_);
    CL_CUDA_CHECK(cudaFree(ptr));
  }

  bool supports_vmm() const override { return vmm_; }
  size_t vmm_granularity() const override { return granularity_; }

  void* reserve_address(size_t nbytes) override {
    DeviceGuard g(device_);
    RelaxedCaptureGuard relaxed;  // Note [Capturing CUDA graphs]
    CUdeviceptr p = 0;
    if (driver().cuMemAddressReserve(&p, nbytes, granularity_, 0, 0) != CUDA_SUCCESS) {
      return nullptr;
    }
    return reinterpret_cast<void*>(p);
  }
  void release_address(void* base, size_t nbytes) override {
    DeviceGuard g(device_);
    CL_DRIVER_CHECK(driver().cuMemAddressFree(CUdeviceptr(base), nbytes), "cuMemAddressFree");
  }
  PhysHandle create_physical(size_t nbytes) override {
    DeviceGuard g(device_);
    RelaxedCaptureGuard relaxed;  // Note [Capturing CUDA graphs]
    CUmemGenericAllocationHandle h = 0;
    CUresult r = driver().cuMemCreate(&h, nbytes, &prop_, 0);
    if (r != CUDA_SUCCESS && r != CUDA_ERROR_OUT_OF_MEMORY && prop_.requestedHandleTypes) {
      // Exportable pages refused (a driver or system without them): plain pages from now on;
      // CUDA IPC then refuses to share them.
      prop_.requestedHandleTypes = CU_MEM_HANDLE_TYPE_NONE;
      r = driver().cuMemCreate(&h, nbytes, &prop_, 0);
    }
    if (r == CUDA_ERROR_OUT_OF_MEMORY) return 0;
    if (r != CUDA_SUCCESS) throw_driver_error(r, "cuMemCreate");
    return PhysHandle(h);
  }
  void release_physical(PhysHandle h, size_t) override {
    DeviceGuard g(device_);
    CL_DRIVER_CHECK(driver().cuMemRelease(CUmemGenericAllocationHandle(h)), "cuMemRelease");
  }
  // Out of memory is a result, not an error (Note [Growth is all or nothing]): the
  // allocator undoes the growth, frees its cache and retries before it raises.
  bool map(void* va, size_t nbytes, PhysHandle h) override {
    DeviceGuard g(device_);
    RelaxedCaptureGuard relaxed;  // Note [Capturing CUDA graphs]
    CUresult r = driver().cuMemMap(CUdeviceptr(va), nbytes, 0, CUmemGenericAllocationHandle(h), 0);
    if (r == CUDA_ERROR_OUT_OF_MEMORY) return false;
    if (r != CUDA_SUCCESS) throw_driver_error(r, "cuMemMap");
    return true;
  }
  // This device and its peers (Note [Peer access] in peer_access.cpp).
  bool set_access(void* va, size_t nbytes) override {
    DeviceGuard g(device_);
    RelaxedCaptureGuard relaxed;  // Note [Capturing CUDA graphs]
    std::vector<CUmemAccessDesc> desc(1 + peers_.size());
    for (size_t i = 0; i < desc.size(); ++i) {
      desc[i].location.type = CU_MEM_LOCATION_TYPE_DEVICE;
      desc[i].location.id = i == 0 ? device_ : peers_[i - 1];
      desc[i].flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
    }
    CUresult r = driver().cuMemSetAccess(CUdeviceptr(va), nbytes, desc.data(), desc.size());
    if (r == CUDA_ERROR_OUT_OF_MEMORY) return false;
    if (r != CUDA_SUCCESS) throw_driver_error(r, "cuMemSetAccess");
    return true;
  }
  bool add_peer(int device) override {
    if (!vmm_ || device == device_ ||
        std::find(peers_.begin(), peers_.end(), device) != peers_.end()) {
      return false;
    }
    peers_.push_back(device);
    return true;
  }
  void unmap(void* va, size_t nbytes) override {
    flush_deferred();  // Note [Deferred launches]
    DeviceGuard g(device_);
    CL_DRIVER_CHECK(driver().cuMemUnmap(CUdeviceptr(va), nbytes), "cuMemUnmap");
  }

  EventHandle create_event() override {
    DeviceGuard g(device_);
    cudaEvent_t e = nullptr;
    CL_CUDA_CHECK(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
    return e;
  }
  void destroy_event(EventHandle e) override {
    CL_CUDA_CHECK_NOTHROW(cudaEventDestroy(static_cast<cudaEvent_t>(e)));
  }
  void record_event(EventHandle e, StreamId s) override {
    flush_deferred();  // Note [Deferred launches]
    DeviceGuard g(device_);
    CL_CUDA_CHECK(cudaEventRecord(static_cast<cudaEvent_t>(e), reinterpret_cast<cudaStream_t>(s)));
  }
  bool query_event(EventHandle e) override {
    flush_deferred();  // Note [Deferred launches]
    cudaError_t err = cudaEventQuery(static_cast<cudaEvent_t>(e));
    if (err == cudaErrorNotReady) {
      cudaGetLastError();
      return false;
    }
    if (err != cudaSuccess) throw_cuda_error(err, __FILE__, __LINE__);
    return true;
  }
  void synchronize_event(EventHandle e) override {
    flush_deferred();  // Note [Deferred launches]
    CL_CUDA_CHECK(cudaEventSynchronize(static_cast<cudaEvent_t>(e)));
  }
  void synchronize_stream(StreamId s) override {
    flush_deferred();  // Note [Deferred launches]
    DeviceGuard g(device_);
    CL_CUDA_CHECK(cudaStreamSynchronize(reinterpret_cast<cudaStream_t>(s)));
  }

  void mem_get_info(size_t* free, size_t* total) override {
    DeviceGuard g(device_);
    CL_CUDA_CHECK(cudaMemGetInfo(free, total));
  }
  const char* kind() const override { return "CUDA"; }

 private:
  int device_;
  bool vmm_ = false;
  size_t granularity_ = size_t(2) << 20;
  std::vector<int> peers_;  // guarded by the allocator's lock, as every call here
  CUmemAllocationProp prop_{};
};

constexpr int kMaxFastDevices = 64;
// Every tensor allocation looks its allocator up: a lock-free table after the first use.
std::array<std::atomic<CachingAllocator*>, kMaxFastDevices> g_fast{};
std::mutex g_mu;
// Leaked on purpose: tensors freed during interpreter shutdown still return their memory.
std::vector<CachingAllocator*>* g_allocators = new std::vector<CachingAllocator*>();

}  // namespace

bool caching_disabled() {
  static const bool off = [] {
    const char* v = std::getenv("CUDALITE_NO_CUDA_MEMORY_CACHING");
    return v && v[0] == '1';
  }();
  return off;
}

CachingAllocator* caching_allocator(int device) {
  if (device >= 0 && device < kMaxFastDevices) {
    if (CachingAllocator* a = g_fast[size_t(device)].load(std::memory_order_acquire)) return a;
  }
  if (caching_disabled()) return nullptr;
  check_device_index(device);
  std::lock_guard<std::mutex> lock(g_mu);
  if (g_allocators->size() < size_t(device_count())) g_allocators->resize(size_t(device_count()));
  CachingAllocator*& a = (*g_allocators)[size_t(device)];
  if (!a) {
    a = new CachingAllocator(std::make_unique<CudaBackend>(device), global_allocator_settings());
    if (device < kMaxFastDevices) g_fast[size_t(device)].store(a, std::memory_order_release);
  }
  return a;
}

std::vector<CachingAllocator*> caching_allocators() {
  if (!is_initialized()) return {};
  std::lock_guard<std::mutex> lock(g_mu);
  return *g_allocators;
}

Allocator* device_allocator(int device) {
  if (CachingAllocator* a = caching_allocator(device)) return a;
  return uncached_device_allocator(device);
}

void record_stream(const DataPtr& data, StreamHandle stream) {
  // Memory from the uncached allocator needs nothing: cudaFree waits for the device.
  if (!data.get() || data.deleter() != &CachingAllocator::free_ctx) return;
  caching_allocator(data.device().index)
      ->record_stream(data.context(), reinterpret_cast<StreamId>(stream));
}

}  // namespace cl::cuda
