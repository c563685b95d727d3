// Checked size arithmetic: every size, stride, element count and byte count that a tensor's
// geometry implies is computed here, with torch's overflow errors, so that no wrapped product
// ever reaches an allocation or a loop (Note [Checked sizes] in docs/design.md).
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>

#include "core/shape.h"

namespace cl {

// The largest element count or byte count a storage may have (torch's storage_max()).
constexpr uint64_t kMaxStorageSize = uint64_t(std::numeric_limits<int64_t>::max());

// a * b and a + b, false when the result does not fit.
inline bool checked_mul(int64_t a, int64_t b, int64_t* out) {
  return !__builtin_mul_overflow(a, b, out);
}
inline bool checked_add(int64_t a, int64_t b, int64_t* out) {
  return !__builtin_add_overflow(a, b, out);
}

// The product of the sizes (torch's safe_compute_numel): multiplied as unsigned 64-bit
// numbers from the first, so a product that overflows before a 0 still overflows, and a
// negative size overflows unless a 0 came before it. RuntimeError "numel: integer
// multiplication overflow".
int64_t checked_numel(const Shape& sizes);

// The bytes of a contiguous tensor of these sizes that starts `offset` elements into its
// storage (torch's computeStorageNbytesContiguous). RuntimeError "Storage size calculation
// overflowed with sizes=[...]".
size_t storage_nbytes_contiguous(const Shape& sizes, size_t itemsize, int64_t offset = 0);

// The bytes from a storage's start to one past the last element of a strided view (torch's
// computeStorageNbytes): 0 when a size is 0. RuntimeError "Storage size calculation
// overflowed with sizes=[...] and strides=[...]".
size_t storage_nbytes_strided(const Shape& sizes, const Shape& strides, int64_t offset,
                              size_t itemsize);

// The contiguous strides of these sizes, checked as torch's empty_tensor_restride checks them:
// RuntimeError "Stride calculation overflowed".
Shape checked_contiguous_strides(const Shape& sizes);

}  // namespace cl
