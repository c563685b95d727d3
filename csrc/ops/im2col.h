// im2col / col2im on the host (csrc/ops/im2col.cpp; used by python/cudalite/nn/_im2col.py
// and nn/_functional_conv.py).
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

// torch's column layout, for the CPU convolutions: the windows of an unpadded input x (N, C,
// *sp) (1 to 3 spatial dims, any strides) with `pad` zeros before each spatial dim, as
// (N, C * K, L) (batch_inner: (C * K, N, L)): row c * K + j holds kernel position j of
// channel c at every output position (windows reaching outside the input read zeros).
// One contiguous row at a time, spread over the host threads.
Tensor cpu_unfold_rows(const Tensor& x, const Shape& k, const Shape& s, const Shape& d,
                       const Shape& pad, const Shape& out, bool batch_inner);
// Its adjoint (float32 / float64): cols (N, C * K, L) (batch_inner: (C * K, N, L)),
// contiguous, added into a new zero tensor (N, C, *size) where unfold_rows read them.
Tensor cpu_fold_rows(const Tensor& cols, const Shape& size, int64_t n, const Shape& k,
                     const Shape& s, const Shape& d, const Shape& pad, const Shape& out,
                     bool batch_inner);

}  // namespace cl
