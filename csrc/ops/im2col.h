// im2col / col2im on the host (csrc/ops/im2col.cpp; used by python/cudalite/nn/_im2col.py).
#pragma once

#include "core/shape.h"
#include "core/tensor.h"

namespace cl {

// The columns (groups, N * L, C / groups * K) of a padded input (N, C, *spatial) of any
// strides, for kernel `k`, stride `s`, dilation `d` and output sizes `out`.
Tensor cpu_im2col(const Tensor& xp, int64_t groups, const Shape& k, const Shape& s, const Shape& d,
                  const Shape& out);
// The adjoint of a window view: `src` (*lead, *out, *k) (any strides; float32 or float64)
// added into a new zero tensor (*lead, *padded).
Tensor cpu_col2im(const Tensor& src, int64_t nlead, const Shape& padded, const Shape& s,
                  const Shape& d);

}  // namespace cl
