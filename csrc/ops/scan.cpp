// Scans (cumsum, cumprod): the input is converted to the result dtype and made dense, then
// each of its [outer, n, inner] lines along `dim` is scanned by the device's loop
// (ops/cpu_scan.cpp, kernels/scan.cu).
#include "core/cuda_api.h"
#include "core/error.h"
#include "ops/kernels.h"
#include "ops/ops.h"

namespace cl {

Tensor scan(ScanOp op, const Tensor& t_in, int64_t dim, ScalarType dtype) {
  const int64_t nd = t_in->dim();
  dim = wrap_dim(dim, nd);
  Tensor t = t_in->dtype == dtype ? t_in : to(t_in, t_in->device(), dtype, false, false);
  t = contiguous(t);
  Tensor out = empty(t->sizes, dtype, t->device());
  if (out->numel() == 0) return out;
  int64_t outer = 1, n = nd ? t->sizes[dim] : 1, inner = 1;
  for (int64_t d = 0; d < dim; ++d) outer *= t->sizes[d];
  for (int64_t d = dim + 1; d < nd; ++d) inner *= t->sizes[d];
  if (t->is_cuda()) {
    cuda::DeviceGuard g(t->device().index);
    if (inner > 1 && outer * inner < 131072 && n >= 64) {
      // Too few lines for one thread each to keep the GPU's memory busy (each thread walks
      // its line in order): scan the rows of a transposed copy (two tiled copies, and a
      // block per row) instead.
      Tensor rows = contiguous(transpose(view(t, {outer, n, inner}), 1, 2));
      Tensor scanned = empty(rows->sizes, dtype, t->device());
      cuda::scan(op, rows, outer * inner, n, 1, scanned);
      copy_(view(out, {outer, n, inner}), transpose(scanned, 1, 2));
      return out;
    }
    cuda::scan(op, t, outer, n, inner, out);
  } else {
    cpu::scan(op, t, outer, n, inner, out);
  }
  return out;
}

}  // namespace cl
