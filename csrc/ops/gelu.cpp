// gelu and its backward as one elementwise pass each (torch's GeluKernelImpl /
// GeluBackwardKernelImpl formulas, computed in float32 for float16/bfloat16 and in the
// dtype itself otherwise) over the memory of dense operands: the result takes the input's
// layout when it is non-overlapping and dense (x.t() gives a transposed result, as torch's),
// other inputs are made contiguous first. The CPU loop is below, the CUDA one in
// kernels/gelu.cu; both instantiate the functors of ops/gelu_math.h.
#include "core/cuda_api.h"
#include "core/mem_overlap.h"
#include "ops/gelu_math.h"
#include "ops/nn_ops.h"
#include "ops/ops.h"

namespace cl {

namespace {

// x itself when its elements fill its memory span once (any order of dims), else a
// contiguous copy: the loops walk that span linearly.
Tensor dense(const Tensor& x) { return is_non_overlapping_and_dense(*x) ? x : contiguous(x); }

}  // namespace

Tensor gelu(const Tensor& x_in, bool tanh) {
  Tensor x = dense(x_in);
  Tensor y = empty_preserve(x, x->dtype, x->device());
  CL_CHECK(y->strides == x->strides, "gelu: internal error: result layout differs");
  if (y->numel() == 0) return y;
  if (x->is_cuda()) {
    cuda::DeviceGuard g(x->device().index);
    cuda::gelu(x, tanh, y);
  } else {
    cpu::gelu(x, tanh, y);
  }
  return y;
}

Tensor gelu_backward(const Tensor& grad, const Tensor& x_in, bool tanh) {
  check_same_device({&grad, &x_in});
  CL_CHECK(grad->sizes == x_in->sizes, "gelu_backward: grad and input shapes differ");
  Tensor x = contiguous(x_in);
  Tensor g =
      contiguous(grad->dtype == x->dtype ? grad : to(grad, grad->device(), x->dtype, false, false));
  Tensor gx = empty(x->sizes, x->dtype, x->device());
  if (gx->numel() == 0) return gx;
  if (x->is_cuda()) {
    cuda::DeviceGuard guard(x->device().index);
    cuda::gelu_backward(g, x, tanh, gx);
  } else {
    cpu::gelu_backward(g, x, tanh, gx);
  }
  return gx;
}

namespace cpu {

void gelu(const Tensor& x, bool tanh, const Tensor& y) {
  const int64_t n = x->numel();
  CL_DISPATCH_FLOATING(x->dtype, "gelu", [&] {
    using A = gelu_acc_t<scalar_t>;
    const auto* xp = reinterpret_cast<const scalar_t*>(x->data());
    auto* yp = reinterpret_cast<scalar_t*>(y->data());
    if (tanh) {
      for (int64_t i = 0; i < n; ++i) yp[i] = scalar_t(gelu_tanh<A>(A(xp[i])));
    } else {
      for (int64_t i = 0; i < n; ++i) yp[i] = scalar_t(gelu_erf<A>(A(xp[i])));
    }
  });
}

void gelu_backward(const Tensor& g, const Tensor& x, bool tanh, const Tensor& gx) {
  const int64_t n = x->numel();
  CL_DISPATCH_FLOATING(x->dtype, "gelu_backward", [&] {
    using A = gelu_acc_t<scalar_t>;
    const auto* gp = reinterpret_cast<const scalar_t*>(g->data());
    const auto* xp = reinterpret_cast<const scalar_t*>(x->data());
    auto* op = reinterpret_cast<scalar_t*>(gx->data());
    if (tanh) {
      for (int64_t i = 0; i < n; ++i) op[i] = scalar_t(A(gp[i]) * gelu_tanh_grad<A>(A(xp[i])));
    } else {
      for (int64_t i = 0; i < n; ++i) op[i] = scalar_t(A(gp[i]) * gelu_erf_grad<A>(A(xp[i])));
    }
  });
}

}  // namespace cpu

}  // namespace cl
