#include "core/resize.h"

#include <cstdint>
#include <cstring>
#include <limits>

#include "core/cuda_api.h"
#include "core/error.h"
#include "core/size_math.h"

namespace cl {

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
  // torch lets a negative size through when the product is 0 ([0, -1]); cudalite's tensors
  // never have negative sizes.
  for (int64_t s : sizes) {
    CL_CHECK(s >= 0, "Trying to create tensor with negative dimension ", s, ": ", shape_str(sizes));
  }
  if (!strides && sizes == t->sizes) return;
  Shape st = strides ? *strides : checked_contiguous_strides(sizes);
  CL_CHECK(st.size() == sizes.size(), "resize_: ", sizes.size(), " sizes but ", st.size(),
           " strides");
  if (numel > 0) {
    size_t need = strides ? storage_nbytes_strided(sizes, st, t->offset, t->element_size())
                          : storage_nbytes_contiguous(sizes, t->element_size(), t->offset);
    if (need > t->storage->nbytes) grow_storage(*t->storage, need);
  }
  t->sizes = sizes;
  t->strides = std::move(st);
  t->refresh();
}

}  // namespace cl
