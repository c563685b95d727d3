// gelu and its backward, each one pass of the elementwise loops (ops/cpu_loops.h,
// kernels/loops.cuh: dense operands in 16-byte vectors on CUDA, strided ones without a copy)
// with the functors of ops/gelu_math.h, torch's GeluKernelImpl / GeluBackwardKernelImpl
// formulas computed in float32 for float16/bfloat16 and in the dtype itself otherwise. The
// result takes the input's layout (torch's preserve rule: x.t() gives a transposed result).
#include "core/cuda_api.h"
#include "ops/cpu_loops.h"
#include "ops/elementwise_iter.h"
#include "ops/gelu_math.h"
#include "ops/nn_ops.h"
#include "ops/ops.h"

namespace cl {

Tensor gelu(const Tensor& x, bool tanh) {
  Tensor y = empty_preserve(x, x->dtype, x->device());
  if (y->numel() == 0) return y;
  ElementwiseIter it = make_elementwise_iter(y, {IterInput{&x}});
  if (x->is_cuda()) {
    cuda::DeviceGuard g(x->device().index);
    cuda::gelu(it, tanh);
  } else {
    cpu::gelu(it, tanh);
  }
  return y;
}

Tensor gelu_backward(const Tensor& grad, const Tensor& x, bool tanh) {
  check_same_device({&grad, &x});
  CL_CHECK(grad->sizes == x->sizes, "gelu_backward: grad and input shapes differ");
  Tensor g = grad->dtype == x->dtype ? grad : to(grad, grad->device(), x->dtype, false, false);
  Tensor gx = empty_preserve(x, x->dtype, x->device());
  if (gx->numel() == 0) return gx;
  ElementwiseIter it = make_elementwise_iter(gx, {IterInput{&g}, IterInput{&x}});
  if (x->is_cuda()) {
    cuda::DeviceGuard guard(x->device().index);
    cuda::gelu_backward(it, tanh);
  } else {
    cpu::gelu_backward(it, tanh);
  }
  return gx;
}

namespace cpu {

void gelu(const ElementwiseIter& it, bool tanh) {
  CL_DISPATCH_FLOATING(it.in_dtype, "GeluKernelImpl", [&] {
    if (tanh) {
      cpu_kernel<scalar_t, scalar_t, 1>(it, GeluFn<true>());
    } else {
      cpu_kernel<scalar_t, scalar_t, 1>(it, GeluFn<false>());
    }
  });
}

void gelu_backward(const ElementwiseIter& it, bool tanh) {
  CL_DISPATCH_FLOATING(it.in_dtype, "GeluBackwardKernelImpl", [&] {
    if (tanh) {
      cpu_kernel<scalar_t, scalar_t, 2>(it, GeluBackwardFn<true>());
    } else {
      cpu_kernel<scalar_t, scalar_t, 2>(it, GeluBackwardFn<false>());
    }
  });
}

}  // namespace cpu

}  // namespace cl
