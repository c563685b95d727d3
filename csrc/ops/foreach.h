// Multi-tensor ops: torch's _foreach_* fast path, GradScaler's two AMP kernels and the fused
// optimizers (torch._fused_adam_, _fused_adamw_, _fused_sgd_). Each takes lists of tensors
// that the caller grouped by device and dtype; on CUDA one launch covers many tensors (the
// multi-tensor apply of kernels/multi_tensor.cuh), on the CPU a loop runs the same per-element
// math (ops/foreach_math.h).
//
// The entry points check what torch's kernels check and raise its messages; the Python layer
// (cudalite._foreach, cudalite.optim) picks between them and torch's per-tensor slow path.
#pragma once

#include <vector>

#include "core/tensor.h"
#include "ops/foreach_math.h"

namespace cl {

using TensorList = std::vector<Tensor>;

struct PointwiseArgs {
  ForeachOp op = ForeachOp::Add;
  int nin = 1;  // input lists (self first); lists[nin] is the output unless inplace
  bool inplace = true;
  ForeachOperand b_kind = ForeachOperand::List;
  bool lerp_list = false;
  double alpha = 1;
  Tensor b_device;              // DeviceScalar: a 0-dim tensor on the lists' device
  std::vector<double> scalars;  // one per tensor (Scalar operand, addcmul value, lerp weight)
};

struct AdamArgs {
  double lr = 1e-3;
  Tensor lr_tensor;  // a one-element float32 tensor on the device, or null
  double beta1 = 0.9, beta2 = 0.999, weight_decay = 0, eps = 1e-8;
  bool amsgrad = false, maximize = false, adamw = false;
  Tensor grad_scale, found_inf;
};

struct SgdArgs {
  double lr = 1e-3;
  Tensor lr_tensor;
  double weight_decay = 0, momentum = 0, dampening = 0;
  bool nesterov = false, maximize = false, is_first_step = false;
  Tensor grad_scale, found_inf;
};

// The fast path: every tensor dense, of one dtype (float16/bfloat16/float32/float64) and one
// device, with the same sizes and strides at each index of every list. False: the caller
// takes the per-tensor path.
bool foreach_fast_path_ok(const std::vector<TensorList>& lists);
void foreach_pointwise(const std::vector<TensorList>& lists, const PointwiseArgs& args);
// Norms of each tensor (ord 1, 2 or inf), as 0-dim tensors of out_dtype sharing one buffer.
TensorList foreach_norm(const TensorList& tensors, double ord, ScalarType out_dtype);
void amp_foreach_non_finite_check_and_unscale(const TensorList& grads, const Tensor& found_inf,
                                              const Tensor& inv_scale);
// Updates scale and growth_tracker in place; returns scale.
Tensor amp_update_scale(const Tensor& scale, const Tensor& growth_tracker, const Tensor& found_inf,
                        double growth_factor, double backoff_factor, int64_t growth_interval);
// lists: params, grads, exp_avgs, exp_avg_sqs[, max_exp_avg_sqs]; steps: float32 step counts.
void fused_adam(const std::vector<TensorList>& lists, const TensorList& steps,
                const AdamArgs& args);
// lists: params, grads[, momentum_buffers].
void fused_sgd(const std::vector<TensorList>& lists, const SgdArgs& args);

// The loops, one set per device (cpu: ops/cpu_foreach.cpp, cuda: kernels/foreach.cu). Inputs
// are checked; the lists are dense, one dtype, one device.
#define CL_DECLARE_FOREACH_KERNELS                                                             \
  void foreach_pointwise(const std::vector<TensorList>& lists, const PointwiseArgs& args);     \
  /* partial results of ord 1/2/inf into out (a float32/float64 buffer, one per tensor) */     \
  void foreach_norm(const TensorList& tensors, double ord, const Tensor& out);                 \
  void amp_unscale(const TensorList& grads, const Tensor& found_inf, const Tensor& inv_scale); \
  void amp_update_scale(const Tensor& scale, const Tensor& growth_tracker,                     \
                        const Tensor& found_inf, double growth_factor, double backoff_factor,  \
                        int64_t growth_interval);                                              \
  void fused_adam(const std::vector<TensorList>& lists, const TensorList& steps,               \
                  const AdamArgs& args);                                                       \
  void fused_sgd(const std::vector<TensorList>& lists, const SgdArgs& args);

namespace cpu {
CL_DECLARE_FOREACH_KERNELS
}
namespace cuda {
CL_DECLARE_FOREACH_KERNELS
}
#undef CL_DECLARE_FOREACH_KERNELS

}  // namespace cl
