#include "core/resize.h"

#include <cstdint>
#include <cstring>
#include <limits>

#include "core/cuda_api.h"
#include "core/error.h"

namespace cl {

namespace {

constexpr uint64_t kMax = uint64_t(std::numeric_limits<int64_t>::max());

// torch's safe_compute_numel: the sizes multiplied as unsigned 64-bit numbers, so that a
// negative size overflows (unless a 0 comes with it).
int64_t checked_numel(const Shape& sizes) {
  uint64_t n = 1;
  bool overflow = false;
  for (int64_t s : sizes) overflow |= __builtin_mul_overflow(n, uint64_t(s), &n);
  CL_CHECK(!overflow && n <= kMax, "numel: integer multiplication overflow");
  // torch lets a negative size through when the product is 0 ([0, -1]); cudalite's tensors
  // never have negative sizes.
  for (int64_t s : sizes) {
    CL_CHECK(s >= 0, "Trying to create tensor with negative dimension ", s, ": ", shape_str(sizes));
  }
  return int64_t(n);
}

// torch's computeStorageNbytes: the bytes from the storage's start to one past the last
// element, with its overflow error.
size_t needed_nbytes(const Shape& sizes, const Shape& strides, int64_t offset, size_t itemsize) {
  uint64_t extent = 1;
  bool overflow = false;
  for (size_t d = 0; d < sizes.size(); ++d) {
    uint64_t span;
    overflow |= __builtin_mul_overflow(uint64_t(sizes[d] - 1), uint64_t(strides[d]), &span);
    overflow |= __builtin_add_overflow(extent, span, &extent);
  }
  uint64_t n;
  overflow |= __builtin_add_overflow(extent, uint64_t(offset), &n);
  overflow |= __builtin_mul_overflow(n, uint64_t(itemsize), &n);
  CL_CHECK(!overflow && n <= kMax,
           "Storage size calculation overflowed with sizes=", shape_str(sizes));
  return size_t(n);
}

}  // namespace

void grow_storage(StorageImpl& storage, size_t nbytes) {
  if (nbytes <= storage.nbytes) return;
  CL_CHECK(storage.resizable, "Trying to resize storage that is not resizable");
  Device dev = storage.device();
  Allocator* alloc = storage.pinned ? cuda::host_allocator() : allocator_for(dev);
  DataPtr fresh = alloc->allocate(nbytes);
  if (storage.nbytes && storage.data.get()) {
    if (dev.is_cuda()) {
      cuda::memcpy_d2d(fresh.get(), dev.index, storage.data.get(), dev.index, storage.nbytes);
    } else {
      std::memcpy(fresh.get(), storage.data.get(), storage.nbytes);
    }
  }
  storage.data = std::move(fresh);  // frees the old memory
  storage.nbytes = nbytes;
}

void resize_(const Tensor& t, const Shape& sizes, const Shape* strides) {
  int64_t numel = checked_numel(sizes);
  if (!strides && sizes == t->sizes) return;
  Shape st = strides ? *strides : contiguous_strides(sizes);
  CL_CHECK(st.size() == sizes.size(), "resize_: ", sizes.size(), " sizes but ", st.size(),
           " strides");
  if (numel > 0) {
    size_t need = needed_nbytes(sizes, st, t->offset, t->element_size());
    if (need > t->storage->nbytes) grow_storage(*t->storage, need);
  }
  t->sizes = sizes;
  t->strides = std::move(st);
  t->refresh();
}

}  // namespace cl
