// VersionCounter: how many times the values of a tensor (and of every tensor that shares its
// counter) have been written in place; torch's Tensor._version.
//
// Note [Version counters]
// Autograd saves tensors for the backward pass together with their version and refuses to
// use one whose version changed since ("one of the variables needed for gradient computation
// has been modified by an inplace operation"). Views, detach() and the tensor they come from
// see the same memory, so they must share one counter: it lives in the StorageImpl, which
// they already share, so making a tensor costs nothing more. The exception is `x.data` (and a
// tensor given new memory by `x.data = y`), which torch gives a counter of its own: such a
// tensor holds one in TensorImpl::own_version, and views of it share that.
//
// Counters are bumped by the bindings (csrc/bindings), after an op that wrote into an existing
// tensor succeeded: the in-place methods and dunders, out= writes, copy_, fills, index
// assignment, random fills, in-place view ops and resize_ when the sizes change. The core's
// own writes into tensors it is making (clone, cat, ...) are not counted, so a new tensor is at
// version 0 as in torch. The bindings bump with the GIL held, also for ops whose work ran
// without it (Note [Releasing the GIL] in bindings/gil.h), which orders the bumps; the
// counter is atomic only so that reading it from another thread is not a data race, and its
// increment is a plain load and store (no locked instruction on the hot path).
#pragma once

#include <atomic>
#include <cstdint>

#include "core/macros.h"

namespace cl {

struct VersionCounter {
  VersionCounter() = default;
  explicit VersionCounter(uint32_t v) : value(v) {}
  uint32_t get() const { return value.load(std::memory_order_relaxed); }
  void bump() { value.store(get() + 1, std::memory_order_relaxed); }
  CL_DISALLOW_COPY_AND_MOVE(VersionCounter);

 private:
  std::atomic<uint32_t> value{0};
};

}  // namespace cl
