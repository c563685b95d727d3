// The CPU loops of the multi-tensor ops (ops/foreach.h): each tensor of the lists in turn,
// every element through the per-element math the CUDA kernels run (ops/foreach_math.h).
// torch's public _foreach_* ops on the CPU take the per-tensor path in Python instead
// (cudalite._foreach); these loops back the fused optimizers and the AMP kernels on the CPU.
#include <cmath>

#include "core/error.h"
#include "ops/foreach.h"

namespace cl::cpu {
namespace {

#define CL_DISPATCH_FOREACH_TYPES(TYPE, NAME, ...)                    \
  [&] {                                                               \
    switch (TYPE) {                                                   \
      CL_CASE_TYPE(Float16, ::cl::Half, __VA_ARGS__)                  \
      CL_CASE_TYPE(BFloat16, ::cl::BFloat16, __VA_ARGS__)             \
      CL_CASE_TYPE(Float32, float, __VA_ARGS__)                       \
      CL_CASE_TYPE(Float64, double, __VA_ARGS__)                      \
      default:                                                        \
        throw ::cl::Error(std::string(NAME) + ": unsupported dtype"); \
    }                                                                 \
  }()

// Runs op over every element of tensor i of the D lists (dense, same layout: the elements are
// walked in memory order).
template <class T, int D, class Op>
void apply_lists(const std::vector<TensorList>& lists, const Op& op,
                 const std::vector<double>* scalars, const TensorList* steps) {
  using O = opmath_t<T>;
  const size_t n = lists[0].size();
  for (size_t i = 0; i < n; ++i) {
    const int64_t numel = lists[0][i]->numel();
    if (numel == 0) continue;
    auto ctx = op.prepare(scalars ? (*scalars)[i] : 0.0,
                          steps ? reinterpret_cast<const float*>((*steps)[i]->data()) : nullptr);
    if (ctx.skip) continue;
    T* p[D];
    for (int d = 0; d < D; ++d) p[d] = reinterpret_cast<T*>(lists[d][i]->data());
    for (int64_t e = 0; e < numel; ++e) {
      O v[D];
      for (int d = 0; d < D; ++d) v[d] = O(p[d][e]);
      op.element(v, ctx);
      for (int d = 0; d < D; ++d)
        if (op.writes(d)) p[d][e] = T(v[d]);
    }
  }
}

template <class T, class Op>
void apply_depth(const std::vector<TensorList>& lists, const Op& op,
                 const std::vector<double>* scalars, const TensorList* steps) {
  switch (lists.size()) {
    case 1:
      return apply_lists<T, 1>(lists, op, scalars, steps);
    case 2:
      return apply_lists<T, 2>(lists, op, scalars, steps);
    case 3:
      return apply_lists<T, 3>(lists, op, scalars, steps);
    case 4:
      return apply_lists<T, 4>(lists, op, scalars, steps);
    default:
      throw Error("foreach: at most 4 lists");
  }
}

}  // namespace

void foreach_pointwise(const std::vector<TensorList>& lists, const PointwiseArgs& a) {
  CL_DISPATCH_FOREACH_TYPES(lists[0][0]->dtype, "foreach_pointwise", [&] {
    using O = opmath_t<scalar_t>;
    foreach
      ::PointwiseOp<scalar_t> op{};
    op.op = a.op;
    op.nin = a.nin;
    op.inplace = a.inplace;
    op.b_kind = a.b_kind;
    op.lerp_list = a.lerp_list;
    op.alpha = O(a.alpha);
    op.b_device = a.b_device ? reinterpret_cast<const O*>(a.b_device->data()) : nullptr;
    std::vector<double> zeros;
    if (a.scalars.empty()) zeros.assign(lists[0].size(), 0.0);
    apply_depth<scalar_t>(lists, op, a.scalars.empty() ? &zeros : &a.scalars, nullptr);
  });
}

void foreach_norm(const TensorList& tensors, double ord, const Tensor& out) {
  CL_DISPATCH_FOREACH_TYPES(tensors[0]->dtype, "foreach_norm", [&] {
    using O = opmath_t<scalar_t>;
    O* res = reinterpret_cast<O*>(out->data());
    for (size_t i = 0; i < tensors.size(); ++i) {
      const scalar_t* p = reinterpret_cast<const scalar_t*>(tensors[i]->data());
      // one running sum in double: long tensors keep their small terms (the CUDA kernel sums
      // 64 Ki-element chunks, then the chunks)
      double acc = 0;
      for (int64_t e = 0; e < tensors[i]->numel(); ++e) {
        double v = double(O(p[e]));
        double a = v < 0 ? -v : v;
        if (ord == 2) {
          acc += v * v;
        } else if (ord == 1) {
          acc += a;
        } else {
          acc = fn::Maximum{}(acc, a);
        }
      }
      res[i] = O(ord == 2 ? std::sqrt(acc) : acc);
    }
  });
}

void amp_unscale(const TensorList& grads, const Tensor& found_inf, const Tensor& inv_scale) {
  CL_DISPATCH_FOREACH_TYPES(grads[0]->dtype, "_amp_foreach_non_finite_check_and_unscale_cpu", [&] {
    foreach
      ::UnscaleOp<scalar_t> op{};
    op.found_inf = reinterpret_cast<float*>(found_inf->data());
    op.inv_scale = reinterpret_cast<const float*>(inv_scale->data());
    apply_lists<scalar_t, 1>({grads}, op, nullptr, nullptr);
  });
}

void amp_update_scale(const Tensor& scale, const Tensor& growth_tracker, const Tensor& found_inf,
                      double growth_factor, double backoff_factor, int64_t growth_interval) {
  foreach
    ::update_scale(reinterpret_cast<float*>(scale->data()),
                   reinterpret_cast<int32_t*>(growth_tracker->data()),
                   reinterpret_cast<const float*>(found_inf->data()), growth_factor, backoff_factor,
                   int32_t(growth_interval));
}

void fused_adam(const std::vector<TensorList>& lists, const TensorList& steps, const AdamArgs& a) {
  CL_DISPATCH_FOREACH_TYPES(lists[0][0]->dtype, "_fused_adam", [&] {
    foreach
      ::AdamOp<scalar_t> op{};
    op.lr = a.lr;
    op.lr_device = a.lr_tensor ? reinterpret_cast<const float*>(a.lr_tensor->data()) : nullptr;
    op.beta1 = a.beta1;
    op.beta2 = a.beta2;
    op.weight_decay = a.weight_decay;
    op.eps = a.eps;
    op.maximize = a.maximize;
    op.adamw = a.adamw;
    op.grad_scale = a.grad_scale ? reinterpret_cast<const float*>(a.grad_scale->data()) : nullptr;
    op.found_inf = a.found_inf ? reinterpret_cast<const float*>(a.found_inf->data()) : nullptr;
    if (a.amsgrad) {
      apply_lists<scalar_t, 5>(lists, op, nullptr, &steps);
    } else {
      apply_lists<scalar_t, 4>(lists, op, nullptr, &steps);
    }
  });
}

void fused_sgd(const std::vector<TensorList>& lists, const SgdArgs& a) {
  CL_DISPATCH_FOREACH_TYPES(lists[0][0]->dtype, "_fused_sgd", [&] {
    foreach
      ::SgdOp<scalar_t> op{};
    op.lr = a.lr;
    op.lr_device = a.lr_tensor ? reinterpret_cast<const float*>(a.lr_tensor->data()) : nullptr;
    op.weight_decay = a.weight_decay;
    op.momentum = a.momentum;
    op.dampening = a.dampening;
    op.nesterov = a.nesterov;
    op.maximize = a.maximize;
    op.is_first_step = a.is_first_step;
    op.grad_scale = a.grad_scale ? reinterpret_cast<const float*>(a.grad_scale->data()) : nullptr;
    op.found_inf = a.found_inf ? reinterpret_cast<const float*>(a.found_inf->data()) : nullptr;
    if (lists.size() == 3) {
      apply_lists<scalar_t, 3>(lists, op, nullptr, nullptr);
    } else {
      apply_lists<scalar_t, 2>(lists, op, nullptr, nullptr);
    }
  });
}

}  // namespace cl::cpu
