// Sorting along a dim: the dim is moved innermost (a copy unless it is already the dense last
// dim), the device's loop sorts the rows, and the results are moved back, dense.
#include "ops/sort.h"

#include "core/cuda_api.h"
#include "core/error.h"
#include "ops/ops.h"

namespace cl {

std::tuple<Tensor, Tensor> sort(const Tensor& t, int64_t dim, bool descending, int64_t k) {
  const int64_t nd = t->dim();
  const int64_t d = wrap_dim(dim, nd);
  const int64_t n = nd ? t->sizes[d] : 1;
  if (k < 0) k = n;
  CL_CHECK(k <= n, "selected index k out of range");
  if (nd == 0) k = 1;  // a 0-dim tensor is its own topk(0), as in torch
  const bool last = nd == 0 || d == nd - 1;
  Shape perm;
  for (int64_t i = 0; i < nd; ++i)
    if (i != d) perm.push_back(i);
  if (nd) perm.push_back(d);
  Tensor rows = contiguous(last ? t : permute(t, perm));
  Shape out_shape = rows->sizes;
  if (nd) out_shape.back() = k;
  Tensor values = empty(out_shape, t->dtype, t->device());
  Tensor indices = empty(out_shape, ScalarType::Int64, t->device());
  const int64_t outer = n ? rows->numel() / n : 0;
  if (outer > 0 && k > 0) {
    if (t->is_cuda()) {
      cuda::DeviceGuard g(t->device().index);
      cuda::sort_rows(rows, outer, n, k, descending, values, indices);
    } else {
      cpu::sort_rows(rows, outer, n, k, descending, values, indices);
    }
  }
  if (!last) {
    Shape inv(size_t(nd), 0);
    for (int64_t i = 0; i < nd; ++i) inv[perm[i]] = i;
    values = contiguous(permute(values, inv));
    indices = contiguous(permute(indices, inv));
  }
  return {values, indices};
}

}  // namespace cl
