// Storage: a reference-counted block of memory on one device that tensors view.
#pragma once

#include <atomic>
#include <memory>

#include "core/allocator.h"
#include "core/version_counter.h"

namespace cl {

struct StorageImpl {
  StorageImpl(DataPtr d, size_t n) : data(std::move(d)), nbytes(n) {}
  DataPtr data;
  size_t nbytes;
  bool pinned = false;  // page-locked host memory (pin_memory)
  // False for memory cudalite does not own (from_numpy, DLPack): resize_ can't grow it.
  bool resizable = true;
  // Set once its address has been handed to other code (data_ptr(), DLPack,
  // __cuda_array_interface__) or when it is another library's memory: work on it is then
  // never deferred (Note [Deferred launches] in csrc/cuda/deferred.cpp).
  std::atomic<bool> exported{false};
  // The version counter of the tensors that view this memory (Note [Version counters]).
  VersionCounter version;
  Device device() const { return data.device(); }
  CL_DISALLOW_COPY_AND_MOVE(StorageImpl);
};
using Storage = std::shared_ptr<StorageImpl>;

}  // namespace cl
