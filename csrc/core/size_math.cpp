#include "core/size_math.h"

#include "core/error.h"
#include "core/tensor.h"

namespace cl {

int64_t checked_numel(const Shape& sizes) {
  uint64_t n = 1;
  bool overflow = false;
  for (int64_t s : sizes) overflow |= __builtin_mul_overflow(n, uint64_t(s), &n);
  CL_CHECK(!overflow && n <= kMaxStorageSize, "numel: integer multiplication overflow");
  return int64_t(n);
}

size_t storage_nbytes_contiguous(const Shape& sizes, size_t itemsize, int64_t offset) {
  uint64_t n = 1;
  bool overflow = false;
  for (int64_t s : sizes) overflow |= __builtin_mul_overflow(n, uint64_t(s), &n);
  overflow |= __builtin_add_overflow(n, uint64_t(offset), &n);
  overflow |= __builtin_mul_overflow(n, uint64_t(itemsize), &n);
  CL_CHECK(!overflow && n <= kMaxStorageSize,
           "Storage size calculation overflowed with sizes=", shape_str(sizes));
  return size_t(n);
}

size_t storage_nbytes_strided(const Shape& sizes, const Shape& strides, int64_t offset,
                              size_t itemsize) {
  CL_CHECK(sizes.size() == strides.size(), "dimensionality of sizes (", sizes.size(),
           ") must match dimensionality of strides (", strides.size(), ")");
  for (int64_t s : sizes) {
    if (s == 0) return 0;
  }
  uint64_t n = 1;
  bool overflow = __builtin_add_overflow(n, uint64_t(offset), &n);
  for (size_t d = 0; d < sizes.size(); ++d) {
    uint64_t span;
    overflow |= __builtin_mul_overflow(uint64_t(sizes[d] - 1), uint64_t(strides[d]), &span);
    overflow |= __builtin_add_overflow(n, span, &n);
  }
  overflow |= __builtin_mul_overflow(n, uint64_t(itemsize), &n);
  CL_CHECK(!overflow && n <= kMaxStorageSize,
           "Storage size calculation overflowed with sizes=", shape_str(sizes),
           " and strides=", shape_str(strides));
  return size_t(n);
}

Shape checked_contiguous_strides(const Shape& sizes) {
  Shape st(sizes.size());
  int64_t s = 1;
  bool overflow = false;
  for (int64_t d = int64_t(sizes.size()) - 1; d >= 0; --d) {
    st[d] = s;
    if (d > 0) overflow |= !checked_mul(s, sizes[d] > 1 ? sizes[d] : 1, &s);
  }
  CL_CHECK(!overflow, "Stride calculation overflowed");
  return st;
}

}  // namespace cl
