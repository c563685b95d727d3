// CUDA IPC of expandable segments: the physical pages behind a block, exported as file
// descriptors.
//
// Note [IPC of expandable segments]
// cudaIpcGetMemHandle can't name virtual memory, so a block of the caching allocator's arenas
// is shared page by page, as torch shares its expandable segments: the allocator lists the
// pages (cuMemCreate handles) that back the block, in address order, and each is exported with
// cuMemExportToShareableHandle as a POSIX file descriptor (the arena creates its pages
// exportable where the device supports it: csrc/cuda/device_allocator.cpp). The descriptors
// travel to the consumer over a Unix socket (multiprocessing's DupFd, which needs no
// privileges, unlike torch's pidfd_getfd); the consumer imports each one, maps the pages one
// after another in a reserved range of its own address space and makes them accessible to
// its device and to the devices that already have peer access to it (asking others would
// create their contexts; a GPU that enables peer access later can't copy into this memory
// directly), and its tensor starts where the block starts in the first page. The mapping is undone
// when the tensor dies (after the consumer's stream has finished with it), and the producer's
// reference count is decremented as for cudaIpcGetMemHandle memory (Note [Shared memory in limbo]
// in ipc.cpp).
#include <cuda.h>
#include <cuda_runtime_api.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <vector>

#include "core/cuda_api.h"
#include "cuda/cuda_check.h"
#include "cuda/driver.h"
#include "cuda/ipc.h"

namespace cl::cuda {

namespace {

#define CL_IPC_DRIVER_FUNCTIONS(X)  \
  X(cuGetErrorString)               \
  X(cuMemExportToShareableHandle)   \
  X(cuMemImportFromShareableHandle) \
  X(cuMemAddressReserve)            \
  X(cuMemAddressFree)               \
  X(cuMemMap)                       \
  X(cuMemUnmap)                     \
  X(cuMemSetAccess)                 \
  X(cuMemRelease)                   \
  X(cuMemGetAllocationGranularity)

struct Api {
#define CL_DECLARE(name) decltype(&::name) name = nullptr;
  CL_IPC_DRIVER_FUNCTIONS(CL_DECLARE)
#undef CL_DECLARE
  bool loaded = false;
};

const Api& api() {
  static const Api a = [] {
    Api d;
    bool ok = true;
#define CL_LOAD(name)                                                     \
  d.name = reinterpret_cast<decltype(d.name)>(driver_entry_point(#name)); \
  ok = ok && d.name;
    CL_IPC_DRIVER_FUNCTIONS(CL_LOAD)
#undef CL_LOAD
    d.loaded = ok;
    return d;
  }();
  return a;
}

std::string driver_error(CUresult r) {
  const char* msg = nullptr;
  if (api().cuGetErrorString) api().cuGetErrorString(r, &msg);
  return detail::str(msg ? msg : "unknown error", " (", int(r), ")");
}

// The consumer's mapping of the pages.
struct Imported {
  CUdeviceptr va = 0;
  size_t total = 0;
  std::vector<std::pair<CUmemGenericAllocationHandle, size_t>> pages;  // mapped in order
  size_t mapped = 0;                                                   // pages mapped so far
  int device = 0;
  int64_t* counter = nullptr;

  // Undoes whatever was done (never throws).
  void undo() {
    const Api& a = api();
    size_t at = 0;
    for (size_t i = 0; i < pages.size(); ++i) {
      if (i < mapped) (void)a.cuMemUnmap(va + at, pages[i].second);
      (void)a.cuMemRelease(pages[i].first);
      at += pages[i].second;
    }
    if (va) (void)a.cuMemAddressFree(va, total);
    pages.clear();
    mapped = 0;
    va = 0;
  }
};

void release_imported(void* ctx) {
  auto* m = static_cast<Imported*>(ctx);
  try {
    DeviceGuard g(m->device);
    (void)cudaFree(nullptr);  // the context current for the driver calls
    (void)cudaStreamSynchronize(static_cast<cudaStream_t>(current_stream(m->device)));
    if (m->counter) __atomic_fetch_sub(m->counter, int64_t(1), __ATOMIC_SEQ_CST);
    m->undo();
    cudaGetLastError();
  } catch (...) {  // a deleter never throws (at exit the runtime may be gone)
  }
  delete m;
}

}  // namespace

std::vector<int> export_pages(const std::vector<std::pair<uint64_t, size_t>>& pages,
                              std::string* why) {
  std::vector<int> fds;
  const Api& a = api();
  if (!a.loaded) {
    *why = "the driver lacks the virtual memory IPC functions";
    return fds;
  }
  for (const auto& page : pages) {
    int fd = -1;
    CUresult r = a.cuMemExportToShareableHandle(&fd, CUmemGenericAllocationHandle(page.first),
                                                CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0);
    if (r != CUDA_SUCCESS) {
      for (int f : fds) close(f);
      fds.clear();
      *why = "cuMemExportToShareableHandle: " + driver_error(r);
      return fds;
    }
    fds.push_back(fd);
  }
  return fds;
}

Tensor ipc_open_pages(const std::vector<int>& fds, const std::vector<size_t>& sizes, int device,
                      size_t offset, size_t nbytes, ScalarType dtype, int64_t* counter) {
  auto close_all = [&] {
    for (int fd : fds) close(fd);
  };
  size_t total = 0;
  for (size_t s : sizes) total += s;
  if (fds.size() != sizes.size() || fds.empty() || offset + nbytes > total ||
      nbytes % itemsize(dtype) != 0) {
    close_all();
    throw ValueError(detail::str("invalid CUDA IPC pages: ", fds.size(), " descriptors, ",
                                 sizes.size(), " sizes (", total, " bytes) for ", nbytes,
                                 " bytes from offset ", offset));
  }
  const Api& a = api();
  if (!a.loaded) {
    close_all();
    throw Error("CUDA IPC of expandable segments: the driver lacks the virtual memory functions");
  }
  check_device_index(device);
  DeviceGuard g(device);
  cudaError_t err = cudaFree(nullptr);  // the driver calls need the context current here
  if (err != cudaSuccess) {
    close_all();
    throw_cuda_error(err, __FILE__, __LINE__);
  }
  auto* m = new Imported;
  m->total = total;
  m->device = device;
  m->counter = counter;
  auto fail = [&](const char* what, CUresult r) {
    m->undo();
    delete m;
    throw Error(detail::str("CUDA IPC of expandable segments: ", what, ": ", driver_error(r)));
  };
  for (size_t i = 0; i < fds.size(); ++i) {
    CUmemGenericAllocationHandle h = 0;
    CUresult r =
        a.cuMemImportFromShareableHandle(&h, reinterpret_cast<void*>(static_cast<intptr_t>(fds[i])),
                                         CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR);
    close(fds[i]);  // the imported handle holds the memory
    if (r != CUDA_SUCCESS) {
      for (size_t j = i + 1; j < fds.size(); ++j) close(fds[j]);
      fail("cuMemImportFromShareableHandle", r);
    }
    m->pages.emplace_back(h, sizes[i]);
  }
  // Aligned as the producer's arenas are: to the device's granularity, at least 2 MiB.
  CUmemAllocationProp prop{};
  prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
  prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  prop.location.id = device;
  size_t align = 0;
  CUresult r = a.cuMemGetAllocationGranularity(&align, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM);
  if (r != CUDA_SUCCESS) fail("cuMemGetAllocationGranularity", r);
  align = std::max<size_t>(align, size_t(2) << 20);
  r = a.cuMemAddressReserve(&m->va, total, align, 0, 0);
  if (r != CUDA_SUCCESS) fail("cuMemAddressReserve", r);
  size_t at = 0;
  for (const auto& page : m->pages) {
    r = a.cuMemMap(m->va + at, page.second, 0, page.first, 0);
    if (r != CUDA_SUCCESS) fail("cuMemMap", r);
    ++m->mapped;
    at += page.second;
  }
  // The device, and the devices that already reach it through peer access (copies from
  // them write here directly). Others are left alone: asking would create their contexts.
  std::vector<CUmemAccessDesc> desc;
  for (int d = 0; d < device_count(); ++d) {
    if (d != device && p2p_access_state(d, device) != 1) continue;
    CUmemAccessDesc ad{};
    ad.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    ad.location.id = d;
    ad.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
    desc.push_back(ad);
  }
  r = a.cuMemSetAccess(m->va, total, desc.data(), desc.size());
  if (r != CUDA_SUCCESS) fail("cuMemSetAccess", r);
  char* ptr = reinterpret_cast<char*>(m->va) + offset;
  DataPtr data(ptr, m, &release_imported, Device(DeviceType::CUDA, device));
  auto storage = std::make_shared<StorageImpl>(std::move(data), nbytes);
  storage->resizable = false;  // the producer's memory
  storage->exported = true;    // which the producer may use at any time
  const int64_t numel = int64_t(nbytes / itemsize(dtype));
  return std::make_shared<TensorImpl>(std::move(storage), Shape{numel}, Shape{1}, 0, dtype);
}

}  // namespace cl::cuda
