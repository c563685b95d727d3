// torch's memory-overlap checks (ATen's MemoryOverlap): see mem_overlap.h.
#include "core/mem_overlap.h"

#include <algorithm>

#include "core/error.h"

namespace cl {

bool is_non_overlapping_and_dense(const TensorImpl& t) {
  if (t.is_contiguous()) return true;
  int64_t nd = t.dim();
  int64_t order[64];
  int64_t n = 0;
  if (nd > 64) return false;
  for (int64_t d = 0; d < nd; ++d) {
    if (t.sizes[d] != 1) order[n++] = d;
  }
  std::sort(order, order + n, [&](int64_t a, int64_t b) { return t.strides[a] < t.strides[b]; });
  int64_t expected = 1;
  for (int64_t i = 0; i < n; ++i) {
    if (t.strides[order[i]] != expected) return false;
    expected *= t.sizes[order[i]];
  }
  return true;
}

void assert_no_internal_overlap(const Tensor& t) {
  if (is_non_overlapping_and_dense(*t)) return;
  for (int64_t d = 0; d < t->dim(); ++d) {
    CL_CHECK(!(t->strides[d] == 0 && t->sizes[d] > 1),
             "unsupported operation: more than one element of the written-to tensor refers to a "
             "single memory location. Please clone() the tensor before performing the operation.");
  }
}

namespace {
// torch's get_overlap_status: 0 none (or too costly to decide), 1 the same elements, 2 some.
int overlap(const Tensor& a, const Tensor& b) {
  if (a.get() == b.get()) return 1;
  if (a->numel() == 0 || b->numel() == 0 || a->storage.get() != b->storage.get()) return 0;
  if (!is_non_overlapping_and_dense(*a) || !is_non_overlapping_and_dense(*b)) return 0;
  const char* ab = a->data();
  const char* ae = ab + a->numel() * int64_t(a->element_size());
  const char* bb = b->data();
  const char* be = bb + b->numel() * int64_t(b->element_size());
  if (ab == bb && ae == be) return a->strides == b->strides ? 1 : 2;
  return ab < be && bb < ae ? 2 : 0;
}

void raise_overlap() {
  CL_THROW(
      "unsupported operation: some elements of the input tensor and the written-to tensor refer "
      "to a single memory location. Please clone() the tensor before performing the operation.");
}
}  // namespace

void assert_no_partial_overlap(const Tensor& out, const Tensor& in) {
  if (overlap(out, in) == 2) raise_overlap();
}

void assert_no_overlap(const Tensor& out, const Tensor& in) {
  if (overlap(out, in) != 0) raise_overlap();
}

}  // namespace cl
