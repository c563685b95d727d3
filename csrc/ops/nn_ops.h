// The fused row kernels of the neural-network layers (torch's native_layer_norm, _softmax,
// _log_softmax, nll_loss and gelu, each one kernel forward and one backward): the entries in
// ops/layer_norm.cpp, ops/softmax.cpp and ops/gelu.cpp check and lay out the operands, then
// call the device's loop (cpu:: in the same files, cuda:: in kernels/layer_norm.cu,
// kernels/softmax.cu and kernels/gelu.cu). Float16 and bfloat16 compute in float32 inside
// the kernels and write their own type.
#pragma once

#include <array>
#include <tuple>
#include <utility>

#include "core/dtype.h"
#include "core/error.h"
#include "core/tensor.h"
#include "ops/elementwise_iter.h"

// Dispatch of the four floating dtypes (scalar_t inside the body).
#define CL_DISPATCH_FLOATING(TYPE, NAME, ...)                                 \
  [&] {                                                                       \
    switch (TYPE) {                                                           \
      CL_CASE_TYPE(Float16, ::cl::Half, __VA_ARGS__)                          \
      CL_CASE_TYPE(BFloat16, ::cl::BFloat16, __VA_ARGS__)                     \
      CL_CASE_TYPE(Float32, float, __VA_ARGS__)                               \
      CL_CASE_TYPE(Float64, double, __VA_ARGS__)                              \
      default:                                                                \
        throw ::cl::Error(std::string(NAME) + ": expected a floating dtype"); \
    }                                                                         \
  }()

namespace cl {

// The dtype a float16/bfloat16 computation is carried in (float32), else the dtype itself.
inline ScalarType nn_acc_dtype(ScalarType t) {
  return t == ScalarType::Float16 || t == ScalarType::BFloat16 ? ScalarType::Float32 : t;
}

// ---- layer_norm ----
// x normalised over its last `k` dims (rows of their n elements), then * weight + bias
// (either may be undefined; of x's dtype, or float32 for a float16/bfloat16 x). Returns
// (y, mean[M], rstd[M]); mean and rstd are float32 for float16/bfloat16 inputs.
std::tuple<Tensor, Tensor, Tensor> native_layer_norm(const Tensor& x, int64_t k,
                                                     const Tensor& weight, const Tensor& bias,
                                                     double eps);
// The gradients of native_layer_norm: (grad_input, grad_weight, grad_bias), each computed
// only where `mask` asks (undefined otherwise); grad_weight/grad_bias have weight's dtype.
std::tuple<Tensor, Tensor, Tensor> native_layer_norm_backward(const Tensor& grad, const Tensor& x,
                                                              int64_t k, const Tensor& mean,
                                                              const Tensor& rstd,
                                                              const Tensor& weight,
                                                              std::array<bool, 3> mask);

// ---- batch_norm ----
// x (N, C, *spatial) normalised per channel (dim 1), then * weight + bias (either may be
// undefined). Training: with the batch's mean and biased variance, and running_mean /
// running_var (when defined) updated in place: (1 - momentum) * running + momentum * stat,
// the variance unbiased. Otherwise with the running statistics. Returns (y, save_mean[C],
// save_invstd[C]) in the accumulation dtype (float32 for float16/bfloat16 inputs; in
// evaluation the running statistics' mean and 1 / sqrt(var + eps)). Parameters and running
// statistics of float32 beside a float16/bfloat16 x are taken as they are (torch's mixed
// types); on the CPU other dtype mixes raise torch's CPU errors.
std::tuple<Tensor, Tensor, Tensor> native_batch_norm(const Tensor& x, const Tensor& weight,
                                                     const Tensor& bias, const Tensor& running_mean,
                                                     const Tensor& running_var, bool training,
                                                     double momentum, double eps);
// The gradients of native_batch_norm from its saved statistics: (grad_input, grad_weight,
// grad_bias), each only where `mask` asks; grad_weight/grad_bias have weight's dtype (x's
// when weight is undefined).
std::tuple<Tensor, Tensor, Tensor> native_batch_norm_backward(
    const Tensor& grad, const Tensor& x, const Tensor& weight, const Tensor& save_mean,
    const Tensor& save_invstd, bool training, std::array<bool, 3> mask);

// ---- softmax ----
// softmax (log_softmax when `log`) of a floating x along `dim`, in x's dtype (contiguous).
Tensor softmax(const Tensor& x, int64_t dim, bool log);
// Its gradient from the output y and the output's gradient:
// softmax: y * (g - sum(g * y)); log_softmax: g - exp(y) * sum(g).
Tensor softmax_backward(const Tensor& grad, const Tensor& y, int64_t dim, bool log);

// ---- nll_loss ----
// Rows [N, C] of log-probabilities and int64 targets [N]: losses -w[t] * x[i, t] (0 where
// t == ignore_index). reduction 0: none ([N]), 1: mean over the total weight, 2: sum.
// Returns (loss, total_weight); targets outside [0, C) raise IndexError (CPU) or trap the
// kernel (CUDA, as torch's device-side assert).
std::pair<Tensor, Tensor> nll_loss(const Tensor& x, const Tensor& target, const Tensor& weight,
                                   int reduction, int64_t ignore_index);
// grad_input [N, C]: -w[t] * g (over total_weight for 'mean') at (i, t[i]), 0 elsewhere.
Tensor nll_loss_backward(const Tensor& grad, const Tensor& x, const Tensor& target,
                         const Tensor& weight, int reduction, int64_t ignore_index,
                         const Tensor& total_weight);

// ---- gelu ----
// x * Phi(x) (tanh: its tanh approximation), and the gradient of a gradient g through it.
Tensor gelu(const Tensor& x, bool tanh);
Tensor gelu_backward(const Tensor& grad, const Tensor& x, bool tanh);

// The loops, on dense operands that the entries laid out.
#define CL_DECLARE_NN_KERNELS                                                                      \
  void layer_norm(const Tensor& x, const Tensor& w, const Tensor& b, int64_t M, int64_t N,         \
                  double eps, const Tensor& y, const Tensor& mean, const Tensor& rstd);            \
  /* dx, dw, db: undefined where not wanted */                                                     \
  void layer_norm_backward(const Tensor& g, const Tensor& x, const Tensor& mean,                   \
                           const Tensor& rstd, const Tensor& w, int64_t M, int64_t N,              \
                           const Tensor& dx, const Tensor& dw, const Tensor& db);                  \
  /* x, y, g, dx: [N, C, S] contiguous; w, b, rm, rv, mean, invstd, dw, db: [C] of the      */     \
  /* accumulation dtype (w, b, rm, rv, dw, db undefined where absent). Training writes mean  */    \
  /* and invstd and updates rm/rv; evaluation computes them from rm/rv. */                         \
  void batch_norm(const Tensor& x, const Tensor& w, const Tensor& b, const Tensor& rm,             \
                  const Tensor& rv, int64_t N, int64_t C, int64_t S, bool training,                \
                  double momentum, double eps, const Tensor& y, const Tensor& mean,                \
                  const Tensor& invstd);                                                           \
  void batch_norm_backward(const Tensor& g, const Tensor& x, const Tensor& w, const Tensor& mean,  \
                           const Tensor& invstd, int64_t N, int64_t C, int64_t S, bool training,   \
                           const Tensor& dx, const Tensor& dw, const Tensor& db);                  \
  /* [outer, n, inner] lines along n */                                                            \
  void softmax(const Tensor& x, int64_t outer, int64_t n, int64_t inner, bool log,                 \
               const Tensor& y);                                                                   \
  void softmax_backward(const Tensor& g, const Tensor& y, int64_t outer, int64_t n, int64_t inner, \
                        bool log, const Tensor& gx);                                               \
  /* out: [N] (reduction 0) or 0-dim; total_weight 0-dim */                                        \
  void nll_loss(const Tensor& x, const Tensor& t, const Tensor& w, int reduction,                  \
                int64_t ignore_index, const Tensor& out, const Tensor& total_weight);              \
  void nll_loss_backward(const Tensor& g, const Tensor& t, const Tensor& w, int reduction,         \
                         int64_t ignore_index, const Tensor& total_weight, const Tensor& gx);      \
  /* it: (y, x) and (gx, g, x), inputs of one floating dtype */                                    \
  void gelu(const ElementwiseIter& it, bool tanh);                                                 \
  void gelu_backward(const ElementwiseIter& it, bool tanh);

namespace cpu {
CL_DECLARE_NN_KERNELS
}
namespace cuda {
CL_DECLARE_NN_KERNELS
}
#undef CL_DECLARE_NN_KERNELS

}  // namespace cl
