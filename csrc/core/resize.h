// Tensor.resize_: new sizes on the same storage, which grows in place when too small.
#pragma once

#include "core/tensor.h"

namespace cl {

// Grows `storage` to `nbytes` (never shrinks it): new memory from the allocator that made the
// old (the pinned host allocator for pinned storages), the old bytes copied in (on a GPU: on
// the current stream), then swapped into the StorageImpl itself, so that every tensor sharing
// the storage sees the new memory. Throws torch's error for storages that are not resizable.
void grow_storage(StorageImpl& storage, size_t nbytes);

// torch's resize_: `t` gets `sizes` with contiguous strides (`strides` when given), keeping its
// storage offset; the storage grows when offset + extent needs more bytes than it has. Without
// `strides`, the same sizes change nothing (the strides are kept). New elements are
// uninitialised. Checks come first: on an error, `t` is unchanged.
void resize_(const Tensor& t, const Shape& sizes, const Shape* strides = nullptr);

}  // namespace cl
