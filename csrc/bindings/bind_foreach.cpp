// Multi-tensor ops (ops/foreach.h): the foreach fast path, the AMP kernels and the fused
// optimizers, for cudalite._foreach, cudalite.amp and cudalite.optim. Tensors written in place
// get their version bumped here.
#include "bindings/convert.h"
#include "ops/foreach.h"
#include "ops/multi_tensor_plan.h"

namespace cl::bind {
namespace {

Tensor opt(py::handle h) { return h.is_none() ? Tensor() : as_tensor(h); }

void bump(const TensorList& l) {
  for (const Tensor& t : l) t->bump_version();
}

// The launches multi-tensor apply makes for tensors of these sizes and D lists, as
// [[(tensor, chunk, slot numel, addresses right), ... per block], ... per launch]; the tensors'
// fake addresses encode (list, index), so that every slot's can be checked.
template <int D>
py::list plan_for(const std::vector<int64_t>& numels) {
  py::list launches;
  auto fake = [](int d, size_t i) { return reinterpret_cast<void*>((uintptr_t(i) + 1) * 16 + d); };
  mta::plan_launches<D>(
      numels.size(), [&](size_t i) { return numels[i]; }, fake, [](size_t i) { return double(i); },
      [](size_t i) { return reinterpret_cast<const float*>((uintptr_t(i) + 1) * 64); },
      [&](const mta::Meta<D>& m, int blocks) {
        py::list blocks_list;
        for (int b = 0; b < blocks; ++b) {
          const int t = m.block_to_tensor[b];
          const size_t i = size_t(m.scalar[t]);
          bool ok = m.step[t] == reinterpret_cast<const float*>((uintptr_t(i) + 1) * 64);
          for (int d = 0; d < D; ++d) ok = ok && m.addr[d][t] == fake(d, i);
          blocks_list.append(py::make_tuple(i, m.block_to_chunk[b], m.numel[t], ok, t));
        }
        launches.append(blocks_list);
      });
  return launches;
}

// The elementwise row a functor belongs to (its torch name and flags), for the foreach-only rows
// that run a row's functor; none for their own functors.
template <class F>
struct RowOf {
  static constexpr const char* name = "";
  static constexpr uint32_t flags = 0;
};
using namespace op_flags;
#define CL_ROW_OF(Enum, row_name, result, loop, row_flags, ...) \
  template <>                                                   \
  struct RowOf<fn::Enum> {                                      \
    static constexpr const char* name = row_name;               \
    static constexpr uint32_t flags = row_flags;                \
  };
#define CL_BINARY_OP CL_ROW_OF
#define CL_UNARY_OP CL_ROW_OF
#include "ops/ops.def"
#undef CL_BINARY_OP
#undef CL_UNARY_OP
#undef CL_ROW_OF

const char* form_name(ForeachForm f) {
  switch (f) {
    case ForeachForm::Binary:
      return "binary";
    case ForeachForm::Reversed:
      return "reversed";
    case ForeachForm::Zero:
      return "zero";
    case ForeachForm::Copy:
      return "copy";
    case ForeachForm::Scaled:
      return "scaled";
    case ForeachForm::Lerp:
      return "lerp";
    case ForeachForm::Norm:
      return "norm";
  }
  return "";
}

}  // namespace

void bind_foreach(py::module_& m) {
  // The multi-tensor ops of the registry (ops/ops.def) for cudalite/_foreach.py: the Foreach
  // rows and the foreach-only rows, as (name, ForeachOp code, form, alpha, tensor_only, runs:
  // the name of the elementwise row whose functor and per-tensor op it uses).
  py::list rows;
  {
    using namespace op_flags;
    auto add = [&](const char* name, ForeachOp code, const char* form, uint32_t flags,
                   const char* runs) {
      rows.append(py::make_tuple(name, int(code), form, bool(flags & Alpha),
                                 bool(flags & TensorOnly), *runs ? runs : name));
    };
#define CL_BINARY_OP(Enum, name, result, loop, flags, ...) \
  if ((flags)&Foreach) add(name, ForeachOp::Enum, "binary", flags, name);
#define CL_UNARY_OP(Enum, name, result, loop, flags, ...) \
  if ((flags)&Foreach) add(name, ForeachOp::Enum, "unary", flags, name);
#define CL_FOREACH_OP(Enum, op_name, form, functor)                                  \
  add(op_name, ForeachOp::Enum, form_name(ForeachForm::form), RowOf<functor>::flags, \
      RowOf<functor>::name);
#include "ops/ops.def"
#undef CL_BINARY_OP
#undef CL_UNARY_OP
#undef CL_FOREACH_OP
  }
  m.attr("_foreach_ops") = py::tuple(rows);

  m.def(
      "_multi_tensor_plan",
      [](const std::vector<int64_t>& numels, int depth) {
        switch (depth) {
          case 1:
            return plan_for<1>(numels);
          case 2:
            return plan_for<2>(numels);
          case 3:
            return plan_for<3>(numels);
          case 4:
            return plan_for<4>(numels);
          case 5:
            return plan_for<5>(numels);
          default:
            throw ValueError("depth must be 1 to 5");
        }
      },
      "the multi-tensor launches for tensors of these sizes: per launch, per block (tensor, "
      "chunk, numel, addresses right, slot)",
      py::arg("numels"), py::arg("depth"));
  m.attr("_multi_tensor_limits") = py::make_tuple(
      mta::kChunk, mta::kMaxBlocks,
      py::make_tuple(mta::max_tensors<1>(), mta::max_tensors<2>(), mta::max_tensors<3>(),
                     mta::max_tensors<4>(), mta::max_tensors<5>()));
  m.def("_foreach_fast_path_ok", &foreach_fast_path_ok,
        "whether the lists can take the multi-tensor path (dense, one floating dtype and "
        "device, matching layouts)");
  m.def(
      "_foreach_pointwise",
      [](const std::vector<TensorList>& lists, int op, int nin, bool inplace, int b_kind,
         double alpha, py::handle b_device, std::vector<double> scalars, bool lerp_list) {
        PointwiseArgs a;
        a.op = ForeachOp(op);
        a.nin = nin;
        a.inplace = inplace;
        a.b_kind = ForeachOperand(b_kind);
        a.alpha = alpha;
        a.b_device = opt(b_device);
        a.scalars = std::move(scalars);
        a.lerp_list = lerp_list;
        foreach_pointwise(lists, a);
        if (!lists.empty()) bump(lists[inplace ? 0 : size_t(nin)]);
      },
      "one multi-tensor launch of a pointwise op (codes: _foreach_ops); b_kind 0: list, "
      "1: one number per tensor, 2: a 0-dim tensor",
      py::arg("lists"), py::arg("op"), py::arg("nin"), py::arg("inplace"), py::arg("b_kind"),
      py::arg("alpha"), py::arg("b_device"), py::arg("scalars"), py::arg("lerp_list"));
  m.def(
      "_foreach_norm_fast",
      [](const TensorList& tensors, double ord, py::handle dtype) {
        return foreach_norm(tensors, ord, to_dtype(dtype));
      },
      "norms (ord 1, 2 or inf) of dense tensors of one dtype and device", py::arg("tensors"),
      py::arg("ord"), py::arg("dtype"));
  m.def(
      "_amp_foreach_non_finite_check_and_unscale_",
      [](const TensorList& grads, const Tensor& found_inf, const Tensor& inv_scale) {
        amp_foreach_non_finite_check_and_unscale(grads, found_inf, inv_scale);
        bump(grads);
        found_inf->bump_version();
      },
      py::arg("self"), py::arg("found_inf"), py::arg("inv_scale"));
  m.def(
      "_amp_update_scale_",
      [](const Tensor& self, const Tensor& growth_tracker, const Tensor& found_inf,
         double scale_growth_factor, double scale_backoff_factor, int64_t growth_interval) {
        Tensor r = amp_update_scale(self, growth_tracker, found_inf, scale_growth_factor,
                                    scale_backoff_factor, growth_interval);
        self->bump_version();
        growth_tracker->bump_version();
        return r;
      },
      py::arg("self"), py::arg("growth_tracker"), py::arg("found_inf"),
      py::arg("scale_growth_factor"), py::arg("scale_backoff_factor"), py::arg("growth_interval"));
  m.def(
      "_fused_adam",
      [](const std::vector<TensorList>& lists, const TensorList& steps, double lr,
         py::handle lr_tensor, double beta1, double beta2, double weight_decay, double eps,
         bool amsgrad, bool maximize, bool adamw, py::handle grad_scale, py::handle found_inf) {
        AdamArgs a;
        a.lr = lr;
        a.lr_tensor = opt(lr_tensor);
        a.beta1 = beta1;
        a.beta2 = beta2;
        a.weight_decay = weight_decay;
        a.eps = eps;
        a.amsgrad = amsgrad;
        a.maximize = maximize;
        a.adamw = adamw;
        a.grad_scale = opt(grad_scale);
        a.found_inf = opt(found_inf);
        fused_adam(lists, steps, a);
        for (size_t i = 0; i < lists.size(); ++i)
          if (i != 1 || a.grad_scale) bump(lists[i]);
      },
      "one fused Adam (adamw=True: AdamW) update of the lists params, grads, exp_avgs, "
      "exp_avg_sqs[, max_exp_avg_sqs]");
  m.def(
      "_fused_sgd",
      [](const std::vector<TensorList>& lists, double lr, py::handle lr_tensor, double weight_decay,
         double momentum, double dampening, bool nesterov, bool maximize, bool is_first_step,
         py::handle grad_scale, py::handle found_inf) {
        SgdArgs a;
        a.lr = lr;
        a.lr_tensor = opt(lr_tensor);
        a.weight_decay = weight_decay;
        a.momentum = momentum;
        a.dampening = dampening;
        a.nesterov = nesterov;
        a.maximize = maximize;
        a.is_first_step = is_first_step;
        a.grad_scale = opt(grad_scale);
        a.found_inf = opt(found_inf);
        fused_sgd(lists, a);
        for (size_t i = 0; i < lists.size(); ++i)
          if (i != 1 || a.grad_scale) bump(lists[i]);
      },
      "one fused SGD update of the lists params, grads[, momentum_buffers]");
}

}  // namespace cl::bind
