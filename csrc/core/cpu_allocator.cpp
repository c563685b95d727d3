#include <sys/mman.h>

#include <cstdint>
#include <cstdlib>
#include <new>

#include "core/allocator.h"
#include "core/error.h"
#include "core/size_math.h"

namespace cl {
namespace {

// Note [Huge pages for large host tensors]
// A large tensor's memory comes straight from mmap, and each of its 4 KiB pages faults in on
// first write: 4,096 faults for 16 MiB, which cost more than an elementwise op over it and,
// from two threads, contend in the kernel (two threads running `a + b` on 4 Mi floats got
// 0.55x one thread's throughput). NumPy asks for transparent huge pages from 4 MiB on, and so
// does cudalite: 2 MiB pages fault 512 times less often. A no-op where THP is "never"; where
// it is "always", the kernel does this already.
constexpr size_t kHugePageMin = size_t(4) << 20;
constexpr size_t kAlign = 64;

// Note [Host memory from malloc]
// Tensors are 64-byte aligned (as torch's). aligned_alloc gives that, but glibc serves it by
// carving an aligned chunk out of a larger one, and the pieces it frees around it keep large
// blocks from being reused: a thread running `a + b` on 4 Mi floats took ~90 page faults per
// op, two threads ~290 (NumPy's malloc'd arrays: under 10). So the memory is malloc'd with
// 64 bytes to spare and the pointer aligned by hand; the DataPtr's context is what malloc
// returned, which free() takes.
constexpr uintptr_t kPage = 4096;

void advise_huge_pages(void* p, size_t n) {
  const uintptr_t begin = (reinterpret_cast<uintptr_t>(p) + kPage - 1) & ~(kPage - 1);
  const uintptr_t end = reinterpret_cast<uintptr_t>(p) + n;
  if (end > begin) (void)madvise(reinterpret_cast<void*>(begin), end - begin, MADV_HUGEPAGE);
}

class CpuAllocator final : public Allocator {
 public:
  DataPtr allocate(size_t nbytes) override {
    if (nbytes == 0) return DataPtr(nullptr, nullptr, nullptr, Device(DeviceType::CPU));
    // Note [Host memory from malloc]: malloc and align by hand. A size that cannot be
    // rounded up can never be allocated either.
    const size_t rounded = nbytes <= kMaxStorageSize ? (nbytes + 63) / 64 * 64 : 0;
    void* raw = rounded ? std::malloc(rounded + kAlign) : nullptr;
    void* p = raw ? reinterpret_cast<void*>((reinterpret_cast<uintptr_t>(raw) + kAlign) &
                                            ~uintptr_t(kAlign - 1))
                  : nullptr;
    if (!p) {
      throw OutOfMemoryError(
          detail::str("DefaultCPUAllocator: not enough memory: you tried to "
                      "allocate ",
                      nbytes, " bytes."));
    }
    if (rounded >= kHugePageMin) advise_huge_pages(p, rounded);
    return DataPtr(p, raw, &std::free, Device(DeviceType::CPU));
  }
};

}  // namespace

Allocator* cpu_allocator() {
  static CpuAllocator alloc;
  return &alloc;
}

}  // namespace cl
