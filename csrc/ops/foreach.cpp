// The multi-tensor entry points (ops/foreach.h): torch's checks, then the device's loop.
#include "ops/foreach.h"

#include <string>

#include "core/error.h"
#include "core/mem_overlap.h"
#include "ops/ops.h"

namespace cl {
namespace {

bool fast_dtype(ScalarType t) {
  return t == ScalarType::Float32 || t == ScalarType::Float64 || t == ScalarType::Float16 ||
         t == ScalarType::BFloat16;
}

ScalarType opmath_dtype(ScalarType t) {
  return t == ScalarType::Float64 ? ScalarType::Float64 : ScalarType::Float32;
}

void check_lists_equal_length(const std::vector<TensorList>& lists) {
  for (size_t i = 1; i < lists.size(); ++i)
    CL_CHECK(lists[i].size() == lists[0].size(),
             "Tensor lists must have the same number of tensors, got ", lists[0].size(), " and ",
             lists[i].size());
}

// A one-element float32 tensor on `dev` (grad_scale, found_inf, inv_scale, lr), or null.
void check_scalar_tensor(const Tensor& t, const char* name, Device dev) {
  if (!t) return;
  CL_CHECK(t->numel() == 1, name, " must be a 1-element tensor.");
  CL_CHECK(t->dtype == ScalarType::Float32, name, " must be a float tensor.");
  CL_CHECK(t->device() == dev, name, " must be on the same device as the params (", dev.str(),
           "), but is on ", t->device().str(), ".");
}

}  // namespace

bool foreach_fast_path_ok(const std::vector<TensorList>& lists) {
  if (lists.empty() || lists[0].empty()) return false;
  const Tensor& ref = lists[0][0];
  if (!ref || !fast_dtype(ref->dtype)) return false;
  for (const TensorList& l : lists) {
    if (l.size() != lists[0].size()) return false;
    for (size_t i = 0; i < l.size(); ++i) {
      const Tensor& t = l[i];
      const Tensor& first = lists[0][i];
      if (!t || t->dtype != ref->dtype || t->device() != ref->device()) return false;
      if (t->sizes != first->sizes || t->strides != first->strides) return false;
      if (!is_non_overlapping_and_dense(*t)) return false;
    }
  }
  return true;
}

void foreach_pointwise(const std::vector<TensorList>& lists, const PointwiseArgs& args) {
  CL_CHECK(!lists.empty() && !lists[0].empty(), "Tensor list must have at least one tensor.");
  check_lists_equal_length(lists);
  CL_CHECK(int(lists.size()) == args.nin + (args.inplace ? 0 : 1), "foreach_pointwise: expected ",
           args.nin + (args.inplace ? 0 : 1), " lists, got ", lists.size());
  CL_CHECK(foreach_fast_path_ok(lists),
           "foreach_pointwise: the tensors must be dense floating tensors of one dtype and "
           "device, with matching sizes and strides");
  CL_CHECK(args.b_kind != ForeachOperand::Scalar || args.scalars.size() == lists[0].size(),
           "Tensor list must have same number of elements as scalar list.");
  Device dev = lists[0][0]->device();
  if (args.b_kind == ForeachOperand::DeviceScalar) {
    CL_CHECK(args.b_device && args.b_device->numel() == 1 &&
                 args.b_device->dtype == opmath_dtype(lists[0][0]->dtype) &&
                 args.b_device->device() == dev,
             "foreach_pointwise: the scalar tensor must be a one-element tensor of the lists' "
             "op-math dtype on their device");
  }
  if (dev.is_cuda()) {
    cuda::foreach_pointwise(lists, args);
  } else {
    cpu::foreach_pointwise(lists, args);
  }
}

TensorList foreach_norm(const TensorList& tensors, double ord, ScalarType out_dtype) {
  CL_CHECK(!tensors.empty(), "Tensor list must have at least one tensor.");
  CL_CHECK(foreach_fast_path_ok({tensors}),
           "foreach_norm: the tensors must be dense floating tensors of one dtype and device");
  CL_CHECK(ord == 1 || ord == 2 || ord == INFINITY, "foreach_norm: ord must be 1, 2 or inf");
  Device dev = tensors[0]->device();
  ScalarType acc = opmath_dtype(tensors[0]->dtype);
  Tensor buf = empty({int64_t(tensors.size())}, acc, dev);
  if (dev.is_cuda()) {
    cuda::foreach_norm(tensors, ord, buf);
  } else {
    cpu::foreach_norm(tensors, ord, buf);
  }
  if (out_dtype != acc) buf = to(buf, dev, out_dtype, false, false);
  TensorList out;
  out.reserve(tensors.size());
  for (size_t i = 0; i < tensors.size(); ++i) out.push_back(select(buf, 0, int64_t(i)));
  return out;
}

void amp_foreach_non_finite_check_and_unscale(const TensorList& grads, const Tensor& found_inf,
                                              const Tensor& inv_scale) {
  if (grads.empty()) return;
  // torch dispatches on the gradients' device: the CUDA kernel for CUDA gradients, the loop
  // for CPU ones, each wanting its scalars on that device.
  const Device dev = grads[0]->device();
  const char* kind = dev.is_cuda() ? "CUDA" : "CPU";
  CL_CHECK(inv_scale->device().is_cuda() == dev.is_cuda(), "inv_scale must be a ", kind,
           " tensor.");
  CL_CHECK(found_inf->device().is_cuda() == dev.is_cuda(), "found_inf must be a ", kind,
           " tensor.");
  CL_CHECK(inv_scale->numel() == 1, "inv_scale must be a 1-element tensor.");
  CL_CHECK(found_inf->numel() == 1, "found_inf must be a 1-element tensor.");
  CL_CHECK(inv_scale->dtype == ScalarType::Float32, "inv_scale must be a float tensor.");
  CL_CHECK(found_inf->dtype == ScalarType::Float32, "found_inf must be a float tensor.");
  for (const Tensor& g : grads) {
    CL_CHECK(g->device().is_cuda() == dev.is_cuda(), "one of scaled_grads was not a ", kind,
             " tensor.");
    CL_CHECK(g->device() == dev, "scaled_grads must be on the same device.");
    CL_CHECK_AS(NotImplementedError, fast_dtype(g->dtype),
                "\"_amp_foreach_non_finite_check_and_unscale_", (dev.is_cuda() ? "cuda" : "cpu"),
                "\" not implemented for '", dtype_short_name(g->dtype), "'");
  }
  CL_CHECK(inv_scale->device() == dev && found_inf->device() == dev,
           "found_inf and inv_scale must be on the same device as scaled_grads.");
  // Dense tensors of one dtype go through one launch; the others one at a time, as torch does
  // (a non-dense tensor through a contiguous copy written back).
  std::vector<TensorList> groups;
  TensorList odd;
  for (const Tensor& g : grads) {
    if (!is_non_overlapping_and_dense(*g)) {
      odd.push_back(g);
      continue;
    }
    TensorList* group = nullptr;
    for (TensorList& l : groups)
      if (l[0]->dtype == g->dtype) group = &l;
    if (!group) group = &groups.emplace_back();
    group->push_back(g);
  }
  auto run = [&](const TensorList& l) {
    if (dev.is_cuda()) {
      cuda::amp_unscale(l, found_inf, inv_scale);
    } else {
      cpu::amp_unscale(l, found_inf, inv_scale);
    }
  };
  for (const TensorList& l : groups) run(l);
  for (const Tensor& g : odd) {
    Tensor c = contiguous(g);
    run({c});
    copy_(g, c);
  }
}

Tensor amp_update_scale(const Tensor& scale, const Tensor& growth_tracker, const Tensor& found_inf,
                        double growth_factor, double backoff_factor, int64_t growth_interval) {
  if (scale->is_cuda()) {
    CL_CHECK(growth_tracker->is_cuda(), "growth_tracker must be a CUDA tensor.");
    CL_CHECK(scale->is_cuda(), "current_scale must be a CUDA tensor.");
    CL_CHECK(found_inf->is_cuda(), "found_inf must be a CUDA tensor.");
  }
  CL_CHECK(growth_tracker->numel() == 1, "growth_tracker must be a 1-element tensor.");
  CL_CHECK(scale->numel() == 1, "current_scale must be a 1-element tensor.");
  CL_CHECK(found_inf->numel() == 1, "found_inf must be a 1-element tensor.");
  CL_CHECK(growth_tracker->dtype == ScalarType::Int32, "growth_tracker must be an int tensor.");
  CL_CHECK(scale->dtype == ScalarType::Float32, "current_scale must be a float tensor.");
  CL_CHECK(found_inf->dtype == ScalarType::Float32, "found_inf must be a float tensor.");
  CL_CHECK(growth_tracker->device() == scale->device() && found_inf->device() == scale->device(),
           "current_scale, growth_tracker and found_inf must be on the same device.");
  if (scale->is_cuda()) {
    cuda::amp_update_scale(scale, growth_tracker, found_inf, growth_factor, backoff_factor,
                           growth_interval);
  } else {
    cpu::amp_update_scale(scale, growth_tracker, found_inf, growth_factor, backoff_factor,
                          growth_interval);
  }
  return scale;
}

namespace {
void check_fused_lists(const std::vector<TensorList>& lists, const char* what) {
  check_lists_equal_length(lists);
  CL_CHECK(foreach_fast_path_ok(lists), what,
           ": params, grads and states must be dense floating tensors of one dtype and device, "
           "with matching sizes and strides");
}
}  // namespace

void fused_adam(const std::vector<TensorList>& lists, const TensorList& steps,
                const AdamArgs& args) {
  if (lists.empty() || lists[0].empty()) return;
  CL_CHECK(lists.size() == (args.amsgrad ? 5u : 4u), "fused_adam: expected ",
           (args.amsgrad ? 5 : 4), " lists of tensors");
  check_fused_lists(lists, "fused_adam");
  CL_CHECK(steps.size() == lists[0].size(),
           "Tensor lists must have the same number of tensors, got ", lists[0].size(), " and ",
           steps.size());
  Device dev = lists[0][0]->device();
  for (const Tensor& s : steps)
    CL_CHECK(s->numel() == 1 && s->dtype == ScalarType::Float32 && s->device() == dev,
             "fused_adam: state_steps must be one-element float32 tensors on the params' device");
  check_scalar_tensor(args.grad_scale, "grad_scale", dev);
  check_scalar_tensor(args.found_inf, "found_inf", dev);
  check_scalar_tensor(args.lr_tensor, "lr", dev);
  if (dev.is_cuda()) {
    cuda::fused_adam(lists, steps, args);
  } else {
    cpu::fused_adam(lists, steps, args);
  }
}

void fused_sgd(const std::vector<TensorList>& lists, const SgdArgs& args) {
  if (lists.empty() || lists[0].empty()) return;
  CL_CHECK(lists.size() == 2 || lists.size() == 3, "fused_sgd: expected 2 or 3 lists of tensors");
  check_fused_lists(lists, "fused_sgd");
  Device dev = lists[0][0]->device();
  check_scalar_tensor(args.grad_scale, "grad_scale", dev);
  check_scalar_tensor(args.found_inf, "found_inf", dev);
  check_scalar_tensor(args.lr_tensor, "lr", dev);
  if (dev.is_cuda()) {
    cuda::fused_sgd(lists, args);
  } else {
    cpu::fused_sgd(lists, args);
  }
}

}  // namespace cl
