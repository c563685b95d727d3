// CUDA IPC over the caching allocator's memory.
//
// Note [CUDA IPC and the caching allocator]
// cudaIpcGetMemHandle names a whole cudaMalloc allocation, and the caching allocator carves
// many storages out of one such segment, so a share is the segment's handle plus the
// storage's offset in it (torch's note of the same name). The consumer maps the segment once
// per process (a second cudaIpcOpenMemHandle of one handle fails), so opened handles are
// cached here with a count of the tensors over them. Memory of the allocator's arenas
// (expandable segments) is virtual memory that cudaIpcGetMemHandle can't name: it is shared
// page by page instead (Note [IPC of expandable segments] in ipc_pages.cpp).
//
// Note [Shared memory in limbo]
// The producer keeps shared memory until every consumer has released it (torch's
// CudaIPCSentData): the first share of a storage moves its DataPtr into a SentData and gives
// the storage a DataPtr whose deleter is sent_delete. Each share adds the address of a counter
// that its consumer decrements when it lets go (python/cudalite/multiprocessing/_cuda_ipc.py
// hands the slots out, in mappings that live as long as the process). When the producer's
// storage dies with every counter at 0 the memory is freed at once; otherwise the SentData
// waits in limbo, and ipc_collect() frees those whose counters have all reached 0.
#include "cuda/ipc.h"

#include <cuda.h>
#include <cuda_runtime_api.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <map>
#include <mutex>
#include <utility>
#include <vector>

#include "core/caching_allocator.h"
#include "core/cuda_api.h"
#include "core/detail/block.h"
#include "cuda/cuda_check.h"
#include "cuda/driver.h"

namespace cl::cuda {

namespace {

struct OpenHandle {
  void* base = nullptr;
  int64_t tensors = 0;
};
using HandleKey = std::pair<std::string, int>;  // (handle bytes, device)

std::mutex g_mu;
std::map<HandleKey, OpenHandle>* g_open = new std::map<HandleKey, OpenHandle>();  // leaked
std::atomic<size_t> g_open_calls{0};

struct SentData {
  DataPtr original;
  std::vector<const int64_t*> counters;
  bool released() const {
    for (const int64_t* c : counters) {
      if (__atomic_load_n(c, __ATOMIC_ACQUIRE) > 0) return false;
    }
    return true;
  }
};

std::mutex g_limbo_mu;
std::vector<SentData*>* g_limbo = new std::vector<SentData*>();  // leaked, as g_open

void sent_delete(void* ctx) {
  auto* s = static_cast<SentData*>(ctx);
  if (s->released()) {
    delete s;  // frees the memory
    return;
  }
  std::lock_guard<std::mutex> lock(g_limbo_mu);
  g_limbo->push_back(s);
}

struct Received {
  HandleKey key;
  int64_t* counter;
};

// The base and size of the allocation holding `p` (cuMemGetAddressRange); false when the
// driver can't tell.
bool address_range(const void* p, char** base, size_t* size) {
  using Fn = CUresult (*)(CUdeviceptr*, size_t*, CUdeviceptr);
  static const Fn fn = driver_function<Fn>("cuMemGetAddressRange");
  CUdeviceptr b = 0;
  if (!fn || fn(&b, size, CUdeviceptr(p)) != CUDA_SUCCESS) return false;
  *base = reinterpret_cast<char*>(b);
  return true;
}

void release_received(void* ctx) {
  auto* r = static_cast<Received*>(ctx);
  try {
    // The consumer's queued work on the memory must finish before the producer may reuse it.
    const int device = r->key.second;
    DeviceGuard g(device);
    (void)cudaStreamSynchronize(static_cast<cudaStream_t>(current_stream(device)));
    if (r->counter) __atomic_fetch_sub(r->counter, int64_t(1), __ATOMIC_SEQ_CST);
    void* close = nullptr;
    {
      std::lock_guard<std::mutex> lock(g_mu);
      auto it = g_open->find(r->key);
      if (it != g_open->end() && --it->second.tensors == 0) {
        close = it->second.base;
        g_open->erase(it);
      }
    }
    if (close) (void)cudaIpcCloseMemHandle(close);
    cudaGetLastError();
  } catch (...) {  // a deleter never throws (at exit the runtime may be gone)
  }
  delete r;
}

// The storage keeps its memory while `counter` is above 0 (Note [Shared memory in limbo]).
void hold_for(StorageImpl& storage, SentData* sent, const int64_t* counter) {
  if (!counter) return;
  if (!sent) {
    void* ptr = storage.data.get();
    const Device dev = storage.data.device();
    sent = new SentData{std::move(storage.data), {}};
    storage.data = DataPtr(ptr, sent, &sent_delete, dev);
  }
  auto& cs = sent->counters;  // forget the sends already released
  cs.erase(
      std::remove_if(cs.begin(), cs.end(),
                     [](const int64_t* c) { return __atomic_load_n(c, __ATOMIC_ACQUIRE) <= 0; }),
      cs.end());
  cs.push_back(counter);
}

}  // namespace

IpcShare ipc_share(StorageImpl& storage, const int64_t* counter) {
  SentData* sent = storage.data.deleter() == &sent_delete
                       ? static_cast<SentData*>(storage.data.context())
                       : nullptr;
  const DataPtr& data = sent ? sent->original : storage.data;
  CL_CHECK(data.device().is_cuda(), "ipc_share: the storage is not on a CUDA device");
  const int device = data.device().index;
  char* ptr = static_cast<char*>(data.get());
  char* base = nullptr;
  size_t size = 0;
  IpcShare out;
  if (data.deleter() == &CachingAllocator::free_ctx) {
    const auto* b = static_cast<const detail::Block*>(data.context());
    if (b->seg->is_arena) {  // Note [IPC of expandable segments]
      auto pages = b->owner->arena_pages(data.context(), &out.offset);
      std::string why;
      flush_deferred_launches();
      {
        DeviceGuard g(device);
        CL_CUDA_CHECK(cudaFree(nullptr));  // the driver calls need the context current here
        out.fds = export_pages(pages, &why);
      }
      if (out.fds.empty()) {
        throw Error(
            "cudalite.multiprocessing: this CUDA tensor lives in an expandable segment whose "
            "memory can't be exported (" +
            why +
            "). Share CUDA tensors from a process started with "
            "CUDALITE_ALLOC_CONF=expandable_segments:False, or call "
            "cudalite.cuda.memory._set_allocator_settings('expandable_segments:False') before "
            "allocating the tensors to share.");
      }
      for (const auto& page : pages) {
        out.page_sizes.push_back(page.second);
        out.segment_size += page.second;
      }
      storage.exported.store(true);
      hold_for(storage, sent, counter);
      return out;
    }
    base = b->seg->base;
    size = b->seg->size;
  } else if (!ptr || !address_range(ptr, &base, &size)) {
    throw Error(
        "cudalite.multiprocessing: this CUDA tensor's memory can't be shared with CUDA IPC (it "
        "was not allocated by cudalite's caching allocator)");
  }
  flush_deferred_launches();
  storage.exported.store(true);
  DeviceGuard g(device);
  cudaIpcMemHandle_t h;
  cudaError_t err = cudaIpcGetMemHandle(&h, base);
  if (err == cudaErrorInvalidValue || err == cudaErrorNotSupported) {
    cudaGetLastError();
    throw Error(detail::str(
        "cudalite.multiprocessing: this CUDA tensor's memory can't be shared with CUDA IPC "
        "(cudaIpcGetMemHandle: ",
        cudaGetErrorString(err), ")"));
  }
  if (err != cudaSuccess) throw_cuda_error(err, __FILE__, __LINE__);
  out.handle.assign(reinterpret_cast<const char*>(&h), sizeof(h));
  out.offset = size_t(ptr - base);
  out.segment_size = size;
  hold_for(storage, sent, counter);
  return out;
}

size_t ipc_collect() {
  std::vector<SentData*> done;
  {
    std::lock_guard<std::mutex> lock(g_limbo_mu);
    auto keep = std::partition(g_limbo->begin(), g_limbo->end(),
                               [](const SentData* s) { return !s->released(); });
    done.assign(keep, g_limbo->end());
    g_limbo->erase(keep, g_limbo->end());
  }
  for (SentData* s : done) delete s;  // outside the lock: frees go to the allocator
  return done.size();
}

size_t ipc_limbo_size() {
  std::lock_guard<std::mutex> lock(g_limbo_mu);
  return g_limbo->size();
}

Tensor ipc_open(const std::string& handle, int device, size_t offset, size_t nbytes,
                ScalarType dtype, int64_t* counter) {
  CL_CHECK_VALUE(handle.size() == sizeof(cudaIpcMemHandle_t),
                 "invalid CUDA IPC handle: ", handle.size(), " bytes, expected ",
                 sizeof(cudaIpcMemHandle_t));
  CL_CHECK_VALUE(nbytes % itemsize(dtype) == 0, "ipc_open: ", nbytes,
                 " bytes are not a whole number of elements");
  check_device_index(device);
  HandleKey key(handle, device);
  char* base = nullptr;
  {
    std::lock_guard<std::mutex> lock(g_mu);
    auto it = g_open->find(key);
    if (it == g_open->end()) {
      cudaIpcMemHandle_t h;
      std::memcpy(&h, handle.data(), sizeof(h));
      DeviceGuard g(device);
      void* p = nullptr;
      CL_CUDA_CHECK(cudaIpcOpenMemHandle(&p, h, cudaIpcMemLazyEnablePeerAccess));
      g_open_calls.fetch_add(1);
      it = g_open->emplace(key, OpenHandle{p, 0}).first;
    }
    ++it->second.tensors;
    base = static_cast<char*>(it->second.base);
  }
  auto* ctx = new Received{std::move(key), counter};
  DataPtr ptr(base + offset, ctx, &release_received, Device(DeviceType::CUDA, device));
  auto storage = std::make_shared<StorageImpl>(std::move(ptr), nbytes);
  storage->resizable = false;  // the producer's memory
  storage->exported = true;    // which the producer may use at any time
  const int64_t numel = int64_t(nbytes / itemsize(dtype));
  return std::make_shared<TensorImpl>(std::move(storage), Shape{numel}, Shape{1}, 0, dtype);
}

size_t ipc_open_handles() {
  std::lock_guard<std::mutex> lock(g_mu);
  return g_open->size();
}

size_t ipc_open_calls() { return g_open_calls.load(); }

}  // namespace cl::cuda
