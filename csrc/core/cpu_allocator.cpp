#include <cstdlib>
#include <new>

#include "core/allocator.h"
#include "core/error.h"
#include "core/size_math.h"

namespace cl {
namespace {

class CpuAllocator final : public Allocator {
 public:
  DataPtr allocate(size_t nbytes) override {
    if (nbytes == 0) return DataPtr(nullptr, nullptr, nullptr, Device(DeviceType::CPU));
    // aligned_alloc wants a multiple of the alignment; a size that cannot be rounded up can
    // never be allocated either.
    void* p = nbytes <= kMaxStorageSize ? std::aligned_alloc(64, (nbytes + 63) / 64 * 64) : nullptr;
    if (!p) {
      throw OutOfMemoryError(
          detail::str("DefaultCPUAllocator: not enough memory: you tried to "
                      "allocate ",
                      nbytes, " bytes."));
    }
    return DataPtr(p, p, &std::free, Device(DeviceType::CPU));
  }
};

}  // namespace

Allocator* cpu_allocator() {
  static CpuAllocator alloc;
  return &alloc;
}

}  // namespace cl
