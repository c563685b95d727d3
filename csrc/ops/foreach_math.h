// The per-element math of the multi-tensor ops (ops/foreach.h), shared by the CPU loops
// (ops/cpu_foreach.cpp) and the CUDA multi-tensor kernels (kernels/foreach.cu): the foreach
// pointwise ops, GradScaler's unscale-and-check, and the fused Adam/AdamW and SGD updates.
// The foreach pointwise ops are the registry's (ops/ops.def): the elementwise rows with the
// Foreach flag run their own functor (ops/functors.h), the foreach-only rows the functor
// they name; pointwise() is generated from the rows.
//
// Every op is a struct with a per-tensor context (`prepare(scalar, step)`, computed once per
// tensor and thread) and `element(v, ctx)`, which reads and rewrites the operands of one
// element in v[0..D) (already converted to the op-math type: float for the 16-bit floats);
// `writes(d)` says which operands go back to memory; a context whose `skip` is set leaves the
// tensor untouched (a fused optimizer after an inf). The arithmetic follows torch's CUDA
// functors (ForeachFunctors.cuh, FusedAdamKernel.cu, FusedSgdKernel.cu, AmpKernels.cu),
// including where they compute in double.
#pragma once

#include <cmath>
#include <cstdint>
#include <type_traits>

#include "core/half.h"
#include "core/macros.h"
#include "ops/functors.h"
#include "ops/ops.h"

namespace cl {

// The ops the multi-tensor kernels run: every elementwise row of ops/ops.def (only those with
// the Foreach flag have a case in pointwise()) and the foreach-only rows.
enum class ForeachOp : int16_t {
#define CL_BINARY_OP(Enum, ...) Enum,
#define CL_UNARY_OP(Enum, ...) Enum,
#define CL_FOREACH_OP(Enum, ...) Enum,
#include "ops/ops.def"
#undef CL_BINARY_OP
#undef CL_UNARY_OP
#undef CL_FOREACH_OP
};

// The forms of the foreach-only rows (ops/ops.def).
enum class ForeachForm : int8_t { Binary, Reversed, Zero, Copy, Scaled, Lerp, Norm };

// Where a binary op's second operand comes from.
enum class ForeachOperand : int8_t { List, Scalar, DeviceScalar };

namespace foreach {

// The per-element math of the foreach-only rows of ops/ops.def.
struct Zero {
  template <class O>
  CL_HOST_DEVICE O operator()(O) const {
    return O(0);
  }
};
struct Copy {  // out = b
  template <class O>
  CL_HOST_DEVICE O operator()(O, O b) const {
    return b;
  }
};
struct Addcmul {  // a + value * (b * c)
  template <class O>
  CL_HOST_DEVICE O operator()(O a, O b, O c, O value) const {
    return a + value * (b * c);
  }
};
struct Addcdiv {  // a + value * (b / c)
  template <class O>
  CL_HOST_DEVICE O operator()(O a, O b, O c, O value) const {
    return a + value * (b / c);
  }
};
// torch's lerp (Lerp.h): the two formulas that keep lerp(a, b, 1) == b exact.
struct Lerp {
  template <class O>
  CL_HOST_DEVICE O operator()(O a, O b, O w) const {
    return (w < O(0) ? -w : w) < O(0.5) ? a + w * (b - a) : b - (b - a) * (O(1) - w);
  }
};

// A foreach-only row's functor called as its form says.
template <ForeachForm form, class F, class O>
CL_HOST_DEVICE inline O call_form(O a, O b, O c, O s) {
  if constexpr (form == ForeachForm::Binary || form == ForeachForm::Copy) {
    return O(F{}(a, b));
  } else if constexpr (form == ForeachForm::Reversed) {
    return O(F{}(b, a));
  } else if constexpr (form == ForeachForm::Zero) {
    return O(F{}(a));
  } else if constexpr (form == ForeachForm::Scaled) {
    return O(F{}(a, b, c, s));
  } else if constexpr (form == ForeachForm::Lerp) {
    return O(F{}(a, b, c));
  } else {
    return a;  // Norm: its own kernels
  }
}

// One element of op: a is self, b the second operand (a list's element or the number), c the
// third list's element or the number s; alpha scales b for the rows with the Alpha flag.
template <class O>
CL_HOST_DEVICE inline O pointwise(ForeachOp op, O a, O b, O c, O s, O alpha) {
  using namespace op_flags;
  switch (op) {
#define CL_BINARY_OP(Enum, name, result, loop, flags, ...)           \
  case ForeachOp::Enum:                                              \
    if constexpr (((flags)&Foreach) != 0)                            \
      return O(fn::Enum{}(a, ((flags)&Alpha) != 0 ? alpha * b : b)); \
    break;
#define CL_UNARY_OP(Enum, name, result, loop, flags, ...)          \
  case ForeachOp::Enum:                                            \
    if constexpr (((flags)&Foreach) != 0) return O(fn::Enum{}(a)); \
    break;
#define CL_FOREACH_OP(Enum, name, form, functor) \
  case ForeachOp::Enum:                          \
    return call_form<ForeachForm::form, functor>(a, b, c, s);
#include "ops/ops.def"
#undef CL_BINARY_OP
#undef CL_UNARY_OP
#undef CL_FOREACH_OP
  }
  return a;
}

// The pointwise ops over D operands: nin inputs (self first), then the output unless in place.
template <class T>
struct PointwiseOp {
  using O = opmath_t<T>;
  ForeachOp op;
  int nin;
  bool inplace;
  ForeachOperand b_kind;
  bool lerp_list;  // Lerp's weight is the third list (else the number)
  O alpha;
  const O* b_device;  // DeviceScalar: the 0-dim tensor, in op-math type
  struct Ctx {
    bool skip;
    O s;
    O b;
  };
  CL_HOST_DEVICE Ctx prepare(double scalar, const float*) const {
    Ctx c{false, O(scalar), O(scalar)};
    if (b_kind == ForeachOperand::DeviceScalar) c.b = *b_device;
    return c;
  }
  CL_HOST_DEVICE bool writes(int d) const { return d == (inplace ? 0 : nin); }
  // Operands are read and written at constant indices (D = the number of lists), so that they
  // stay in registers on the GPU.
  template <class V>
  CL_HOST_DEVICE void element(V& v, const Ctx& ctx) const {
    constexpr int D = int(std::extent_v<V>);
    O a = v[0];
    O b = ctx.b;
    O c = ctx.s;
    if constexpr (D > 1) {
      if (b_kind == ForeachOperand::List && nin > 1) b = v[1];
    }
    if constexpr (D > 2) {
      if (nin > 2 && (op != ForeachOp::Lerp || lerp_list)) c = v[2];
    }
    const O r = pointwise(op, a, b, c, ctx.s, alpha);
    if (inplace) {
      v[0] = r;
    } else {
      v[D - 1] = r;
    }
  }
};

CL_HOST_DEVICE inline bool is_finite(float v) { return v == v && v - v == 0.f; }
CL_HOST_DEVICE inline bool is_finite(double v) { return v == v && v - v == 0.0; }

// _amp_foreach_non_finite_check_and_unscale_: flags inf/NaN in *found_inf (written, never
// cleared), multiplies by *inv_scale unless it is 1.
template <class T>
struct UnscaleOp {
  using O = opmath_t<T>;
  float* found_inf;
  const float* inv_scale;
  struct Ctx {
    bool skip;
    float inv;
  };
  CL_HOST_DEVICE Ctx prepare(double, const float*) const { return {false, *inv_scale}; }
  CL_HOST_DEVICE bool writes(int) const { return true; }
  template <class V>
  CL_HOST_DEVICE void element(V& v, const Ctx& ctx) const {
    O val = v[0];
    if (!is_finite(val)) *found_inf = 1.f;
    v[0] = ctx.inv == 1.f ? val : O(val * ctx.inv);
  }
};

// _amp_update_scale_, one thread: backoff after an inf, growth after `interval` clean steps
// while the grown scale stays finite in float.
CL_HOST_DEVICE inline void update_scale(float* scale, int32_t* tracker, const float* found_inf,
                                        double growth, double backoff, int32_t interval) {
  if (*found_inf) {
    *scale = float(double(*scale) * backoff);
    *tracker = 0;
  } else {
    int32_t successful = *tracker + 1;
    if (successful == interval) {
      float grown = float(double(*scale) * growth);
      if (is_finite(grown)) *scale = grown;
      *tracker = 0;
    } else {
      *tracker = successful;
    }
  }
}

// torch._fused_adam_ / _fused_adamw_ over (param, grad, exp_avg, exp_avg_sq[, max_exp_avg_sq]);
// hyperparameters are doubles as in torch, so much of the update runs in double. The grad is
// written back (unscaled) only when grad_scale is given; nothing runs when *found_inf == 1.
template <class T>
struct AdamOp {
  using O = opmath_t<T>;
  double lr;
  const float* lr_device;  // lr as a tensor on the device, or null
  double beta1, beta2, weight_decay, eps;
  bool maximize, adamw;  // amsgrad: a fifth list (max_exp_avg_sq)
  const float* grad_scale;
  const float* found_inf;
  struct Ctx {
    bool skip;
    double lr;
    O bias_correction1, bias_correction2_sqrt;
  };
  CL_HOST_DEVICE Ctx prepare(double, const float* step) const {
    Ctx c{};
    c.skip = found_inf && *found_inf == 1.f;
    if (c.skip) return c;
    c.lr = lr_device ? double(*lr_device) : lr;
    double st = double(*step);
    c.bias_correction1 = O(1 - std::pow(beta1, st));
    c.bias_correction2_sqrt = O(std::sqrt(1 - std::pow(beta2, st)));
    return c;
  }
  CL_HOST_DEVICE bool writes(int d) const { return d != 1 || grad_scale != nullptr; }
  template <class V>
  CL_HOST_DEVICE void element(V& v, const Ctx& c) const {
    static_assert(std::extent_v<V> == 4 || std::extent_v<V> == 5, "Adam takes 4 or 5 lists");
    O param = v[0];
    O grad = v[1];
    if (grad_scale) grad = O(grad / double(*grad_scale));
    const O grad_to_store = grad;
    if (maximize) grad = -grad;
    O exp_avg = v[2];
    O exp_avg_sq = v[3];
    if (weight_decay != 0) {
      if (adamw) {
        param = O(param - c.lr * weight_decay * param);
      } else {
        grad = O(grad + param * weight_decay);
      }
    }
    exp_avg = O(beta1 * exp_avg + (1 - beta1) * grad);
    exp_avg_sq = O(beta2 * exp_avg_sq + (1 - beta2) * grad * grad);
    const O step_size = O(c.lr / c.bias_correction1);
    O denom;
    if constexpr (std::extent_v<V> == 5) {  // amsgrad
      O mx = v[4];
      mx = mx > exp_avg_sq ? mx : exp_avg_sq;
      v[4] = mx;
      denom = O(std::sqrt(mx) / c.bias_correction2_sqrt + eps);
    } else {
      denom = O(std::sqrt(exp_avg_sq) / c.bias_correction2_sqrt + eps);
    }
    param -= step_size * exp_avg / denom;
    v[0] = param;
    v[1] = grad_to_store;
    v[2] = exp_avg;
    v[3] = exp_avg_sq;
  }
};

// torch._fused_sgd_ over (param, grad[, momentum_buffer]).
template <class T>
struct SgdOp {
  using O = opmath_t<T>;
  double lr;
  const float* lr_device;
  double weight_decay, momentum, dampening;
  bool nesterov, maximize, is_first_step;
  const float* grad_scale;
  const float* found_inf;
  struct Ctx {
    bool skip;
    double lr;
  };
  CL_HOST_DEVICE Ctx prepare(double, const float*) const {
    Ctx c{};
    c.skip = found_inf && *found_inf == 1.f;
    c.lr = lr_device ? double(*lr_device) : lr;
    return c;
  }
  CL_HOST_DEVICE bool writes(int d) const { return d != 1 || grad_scale != nullptr; }
  template <class V>
  CL_HOST_DEVICE void element(V& v, const Ctx& c) const {
    O p = v[0];
    O g = v[1];
    if (grad_scale) {
      g = O(g / double(*grad_scale));
      v[1] = g;
    }
    if (maximize) g = O(g * -1.0);
    if (weight_decay != 0) g = O(g + weight_decay * p);
    if constexpr (std::extent_v<V> == 3) {  // with momentum buffers
      O buf = is_first_step ? g : O(momentum * O(v[2]) + (1 - dampening) * g);
      v[2] = buf;
      g = nesterov ? O(g + momentum * buf) : buf;
    }
    p = O(p - c.lr * g);
    v[0] = p;
  }
};

}  // namespace foreach
}  // namespace cl
