// Reductions: dims are permuted so the reduced ones are innermost, then rows of a dense
// [outer, inner] view are reduced by the device's loop (ops/cpu_reduce.cpp,
// kernels/reduce.cu).
#include <algorithm>

#include "core/cuda_api.h"
#include "core/error.h"
#include "ops/kernels.h"
#include "ops/ops.h"

namespace cl {

namespace {

// What a row of ops/reductions.def says (Note [Reduction rows]).
enum class ReduceResult : uint8_t { Promote, Same, Index, Bool };
enum class ReduceEmpty : uint8_t { Identity, Raises };
struct ReduceInfo {
  const char* name;
  ReduceResult result;
  ReduceEmpty empty;
};
constexpr ReduceInfo kReduceOps[] = {
#define CL_REDUCE_OP(Enum, name, result, empty) {name, ReduceResult::result, ReduceEmpty::empty},
#include "ops/reductions.def"
#undef CL_REDUCE_OP
};

struct Plan {
  Tensor rows;  // dense, viewed as [outer, inner] (or [outer, inner, cols])
  int64_t outer, inner;
  Shape out_shape;   // with or without the kept 1s
  int64_t cols = 0;  // > 0: column mode, rows is [outer, inner, cols] reduced over inner
};

Plan plan_reduce(const Tensor& t, Shape dims, bool keepdim) {
  int64_t nd = t->dim();
  Shape red(size_t(std::max<int64_t>(nd, 1)), 0);  // 1 for the reduced dims
  if (dims.empty()) {
    std::fill(red.begin(), red.end(), 1);
  } else {
    for (auto d : dims) {
      int64_t w = wrap_dim(d, nd);
      CL_CHECK(!red[w], "dim ", w, " appears multiple times in the list of dims");
      red[w] = 1;
    }
  }
  // Column mode (CUDA): a dense tensor whose reduced dims are one block followed by kept
  // dims (x.sum(dim=0) of a matrix) is reduced in place, with coalesced reads across the
  // kept trailing dims, instead of being transposed into rows first.
  int64_t first = -1, last = -1;
  for (int64_t d = 0; d < nd; ++d) {
    if (red[d]) {
      if (first < 0) first = d;
      last = d;
    }
  }
  bool block = first >= 0;
  for (int64_t d = first; block && d <= last; ++d) block = red[d];
  if (t->is_cuda() && t->is_contiguous() && block && last < nd - 1) {
    int64_t outer = 1, inner = 1, cols = 1;
    Shape out_shape;
    for (int64_t d = 0; d < nd; ++d) {
      if (d < first)
        outer *= t->sizes[d];
      else if (d <= last)
        inner *= t->sizes[d];
      else
        cols *= t->sizes[d];
      if (!red[d])
        out_shape.push_back(t->sizes[d]);
      else if (keepdim)
        out_shape.push_back(1);
    }
    if (cols > 1 && outer <= 65535) return {t, outer, inner, out_shape, cols};
  }
  Shape perm, out_shape;
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < nd; ++d) {
    if (!red[d]) {
      perm.push_back(d);
      outer *= t->sizes[d];
      out_shape.push_back(t->sizes[d]);
    } else if (keepdim) {
      out_shape.push_back(1);
    }
  }
  for (int64_t d = 0; d < nd; ++d) {
    if (red[d]) {
      perm.push_back(d);
      inner *= t->sizes[d];
    }
  }
  bool in_order = true;  // the reduced dims already innermost: no permuted view needed
  for (int64_t d = 0; d < nd; ++d) in_order = in_order && perm[d] == d;
  Tensor rows = in_order ? contiguous(t) : contiguous(permute(t, perm));
  return {rows, outer, inner, out_shape, 0};
}

void run_rows(ReduceOp op, const Plan& p, const Tensor& out, const Tensor& idx) {
  if (p.outer == 0) return;
  if (p.rows->is_cuda()) {
    cuda::DeviceGuard g(p.rows->device().index);
    if (p.cols > 0) {
      cuda::reduce_cols(op, p.rows, p.outer, p.inner, p.cols, out, idx);
    } else {
      cuda::reduce_rows(op, p.rows, p.outer, p.inner, out, idx);
    }
  } else {
    cpu::reduce_rows(op, p.rows, p.outer, p.inner, out, idx);
  }
}

}  // namespace

Tensor reduce(ReduceOp op, const Tensor& t_in, Shape dims, bool keepdim,
              std::optional<ScalarType> dtype) {
  const ReduceInfo& info = kReduceOps[int(op)];
  Tensor t = t_in;
  ScalarType out_dtype = t->dtype;
  switch (info.result) {
    case ReduceResult::Promote:
      out_dtype = dtype ? *dtype : is_floating(t->dtype) ? t->dtype : ScalarType::Int64;
      if (t->dtype != out_dtype) t = to(t, t->device(), out_dtype, false, false);
      break;
    case ReduceResult::Bool:
      out_dtype = ScalarType::Bool;
      break;
    case ReduceResult::Index:
      out_dtype = ScalarType::Int64;
      break;
    case ReduceResult::Same:
      break;
  }
  Plan p = plan_reduce(t, std::move(dims), keepdim);
  if (p.inner == 0 && info.empty == ReduceEmpty::Raises) {
    throw IndexError(detail::str(info.name,
                                 "(): Expected reduction dim to be specified for input.numel() "
                                 "== 0."));
  }
  Tensor out = empty(p.out_shape, out_dtype, t->device());
  if (info.result == ReduceResult::Index) {  // the values too, then the positions
    Tensor vals = empty({out->numel()}, t->dtype, t->device());
    run_rows(op, p, vals, out);
  } else {
    run_rows(op, p, out, nullptr);
  }
  return out;
}

std::tuple<Tensor, Tensor> reduce_with_indices(bool is_max, const Tensor& t, int64_t dim,
                                               bool keepdim) {
  Plan p = plan_reduce(t, {dim}, keepdim);
  if (p.inner == 0) {
    throw IndexError(detail::str(is_max ? "max" : "min", "(): Expected reduction dim ",
                                 wrap_dim(dim, t->dim()), " to have non-zero size."));
  }
  Tensor vals = empty(p.out_shape, t->dtype, t->device());
  Tensor idx = empty(p.out_shape, ScalarType::Int64, t->device());
  run_rows(is_max ? ReduceOp::ArgMax : ReduceOp::ArgMin, p, vals, idx);
  return {vals, idx};
}

}  // namespace cl
