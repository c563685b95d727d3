// copy_ in every direction (with dtype conversion and broadcasting), and the conversions
// built on it: contiguous, clone, to, item.
#include <algorithm>
#include <cstring>

#include "core/cuda_api.h"
#include "core/error.h"
#include "core/mem_overlap.h"
#include "ops/kernels.h"
#include "ops/ops.h"

namespace cl {

namespace {

// Same-device copy with conversion; `src` already has dst's shape (possibly via stride 0).
void copy_same_device(const Tensor& dst, const Tensor& src) {
  if (dst->numel() == 0) return;
  if (dst->dtype == src->dtype && dst->is_contiguous() && src->is_contiguous() &&
      dst->numel() == src->numel()) {
    size_t n = size_t(dst->numel()) * dst->element_size();
    if (dst->data() == src->data()) return;
    if (dst->is_cuda()) {
      cuda::memcpy_d2d(dst->data(), dst->device().index, src->data(), src->device().index, n);
    } else {
      std::memmove(dst->data(), src->data(), n);
    }
    return;
  }
  IterInput in;
  in.tensor = &src;
  ElementwiseIter it = make_elementwise_iter(dst, {in});
  it.in_dtype = src->dtype;
  if (dst->is_cuda()) {
    cuda::DeviceGuard g(dst->device().index);
    cuda::cast(it);
  } else {
    cpu::cast(it);
  }
}

bool is_dense(const Tensor& t) { return t->is_contiguous(); }

}  // namespace

void copy_(const Tensor& dst, const Tensor& src_in, bool non_blocking) {
  if (dst.get() == src_in.get()) return;
  assert_no_internal_overlap(dst);
  assert_no_partial_overlap(dst, src_in);
  if (src_in->sizes != dst->sizes) {  // torch's broadcast errors, then the output's
    Shape b = broadcast_shapes(dst->sizes, src_in->sizes);
    CL_CHECK(b == dst->sizes, "output with shape ", shape_str(dst->sizes),
             " doesn't match the broadcast shape ", shape_str(b));
  }
  Tensor src = src_in->sizes == dst->sizes ? src_in : expand(src_in, dst->sizes);
  Device dd = dst->device(), sd = src->device();
  if (dd == sd) {
    copy_same_device(dst, src);
    return;
  }
  if (dst->numel() == 0) return;
  // Across devices: move dense bytes in the source dtype, convert on the destination. Dense
  // tensors of one layout (x.t().cuda() keeps x.t()'s strides, as torch) move as they are.
  bool same_layout = src->strides == dst->strides && is_non_overlapping_and_dense(*src) &&
                     is_non_overlapping_and_dense(*dst);
  Tensor dense_src = same_layout ? src : contiguous(src);
  bool direct = dst->dtype == src->dtype && (same_layout || is_dense(dst));
  Tensor landing = direct        ? dst
                   : same_layout ? empty_preserve(dst, src->dtype, dd)
                                 : empty(dst->sizes, src->dtype, dd);
  size_t n = size_t(dst->numel()) * src->element_size();
  if (sd.is_cpu()) {
    cuda::memcpy_h2d(landing->data(), dense_src->data(), n, dd.index,
                     non_blocking && dense_src->storage->pinned);
  } else if (dd.is_cpu()) {
    cuda::memcpy_d2h(landing->data(), dense_src->data(), n, sd.index,
                     non_blocking && landing->storage->pinned);
  } else {
    cuda::memcpy_d2d(landing->data(), dd.index, dense_src->data(), sd.index, n);
  }
  if (!direct) copy_same_device(dst, landing);
}

// The dims of a non-contiguous tensor from outermost to innermost in memory, as torch
// orders an elementwise result's dims: an insertion sort by stride in which size-1 and
// broadcast dims decide nothing. Empty when that order is the contiguous one.
static std::vector<int64_t> dense_order(const Tensor& t) {
  if (t->is_contiguous()) return {};
  int64_t nd = t->dim();
  std::vector<int64_t> order(nd);
  for (int64_t d = 0; d < nd; ++d) order[d] = d;
  auto decides = [&](int64_t d) { return t->sizes[d] > 1 && t->strides[d] != 0; };
  auto swap_needed = [&](int64_t outer, int64_t inner) {
    return decides(outer) && decides(inner) && t->strides[outer] < t->strides[inner];
  };
  for (int64_t i = 1; i < nd; ++i) {
    for (int64_t j = i; j > 0 && swap_needed(order[j - 1], order[j]); --j) {
      std::swap(order[j - 1], order[j]);
    }
  }
  for (int64_t d = 0; d < nd; ++d) {
    if (order[d] != d) return order;
  }
  return {};
}

// The output of an elementwise op, dense, with its dims in the memory order of `like` when
// that has the output's shape (torch's rule: x.t() * 2 is x.t()-ordered in memory), else
// contiguous.
Tensor empty_like_layout(const Shape& shape, ScalarType dtype, Device dev, const Tensor* like) {
  if (like && (*like)->sizes == shape) {
    std::vector<int64_t> order = dense_order(*like);
    if (!order.empty()) {
      Shape sizes(order.size()), inverse(order.size());
      for (size_t i = 0; i < order.size(); ++i) {
        sizes[i] = shape[order[i]];
        inverse[order[i]] = int64_t(i);
      }
      return permute(empty(sizes, dtype, dev), inverse);
    }
  }
  return empty(shape, dtype, dev);
}

Tensor contiguous(const Tensor& t) {
  if (t->is_contiguous()) return t;
  Tensor out = empty(t->sizes, t->dtype, t->device());
  copy_(out, t);
  return out;
}

// torch's infer_dense_strides: dims sorted by stride, innermost first (an insertion sort in
// which a 0 stride decides nothing and equal strides put the smaller size inside), then
// dense strides in that order; size-1 dims take the stride of the next dim out.
static Shape infer_dense_strides(const Shape& sizes, const Shape& strides) {
  const int64_t nd = int64_t(sizes.size());
  std::vector<int64_t> perm(nd);
  for (int64_t i = 0; i < nd; ++i) perm[i] = nd - 1 - i;
  auto compare = [&](int64_t d0, int64_t d1) {
    if (strides[d0] == 0 || strides[d1] == 0) return 0;
    if (strides[d0] != strides[d1]) return strides[d0] < strides[d1] ? -1 : 1;
    return sizes[d0] > sizes[d1] ? 1 : 0;
  };
  for (int64_t i = 1; i < nd; ++i) {
    int64_t d1 = i;
    for (int64_t d0 = i - 1; d0 >= 0; --d0) {
      int c = compare(perm[d0], perm[d1]);
      if (c > 0) {
        std::swap(perm[d0], perm[d1]);
        d1 = d0;
      } else if (c < 0) {
        break;
      }
    }
  }
  Shape out(nd);
  int64_t stride = 1;
  for (int64_t i = 0; i < nd; ++i) {
    out[perm[i]] = stride;
    if (sizes[perm[i]] > 1) stride *= sizes[perm[i]];
  }
  return out;
}

Tensor empty_preserve(const Tensor& t, ScalarType dtype, Device dev, bool pin_memory) {
  const Shape& sizes = t->sizes;
  bool plain = t->is_contiguous() && t->numel() > 0;  // the common case: contiguous strides
  for (int64_t d = int64_t(sizes.size()) - 1, s = 1; plain && d >= 0; s *= sizes[d--]) {
    plain = t->strides[d] == s;
  }
  if (plain) return empty(sizes, dtype, dev, pin_memory);
  Shape strides =
      is_non_overlapping_and_dense(*t) ? t->strides : infer_dense_strides(sizes, t->strides);
  int64_t extent = t->numel() == 0 ? 0 : 1;  // the storage the strides reach
  for (size_t d = 0; d < sizes.size() && extent; ++d) extent += (sizes[d] - 1) * strides[d];
  return as_strided(empty({extent}, dtype, dev, pin_memory), sizes, strides, 0);
}

// clone() and conversions (to another device too) keep the layout as torch's
// preserve_format does.
Tensor clone(const Tensor& t) {
  Tensor out = empty_preserve(t, t->dtype, t->device());
  copy_(out, t);
  return out;
}

Tensor to(const Tensor& t, Device device, ScalarType dtype, bool non_blocking, bool copy) {
  device = resolve_device(device);
  if (!copy && device == t->device() && dtype == t->dtype) return t;
  // As torch's _to_copy, a non-blocking copy to the host lands in pinned memory, so that it
  // is asynchronous (the caller synchronizes before reading it).
  bool pin = non_blocking && t->is_cuda() && device.is_cpu();
  Tensor out = empty_preserve(t, dtype, device, pin);
  copy_(out, t, non_blocking);
  return out;
}

Scalar item(const Tensor& t) {
  CL_CHECK(t->numel() == 1, "a Tensor with ", t->numel(),
           " elements cannot be converted to Scalar");
  alignas(8) char buf[8];
  if (t->is_cuda()) {
    cuda::memcpy_d2h(buf, t->data(), t->element_size(), t->device().index, false);
  } else {
    std::memcpy(buf, t->data(), t->element_size());
  }
  Scalar out;
  CL_DISPATCH_ALL_TYPES(t->dtype, "item", [&] {
    scalar_t v;
    std::memcpy(&v, buf, sizeof(v));
    if constexpr (std::is_same_v<scalar_t, bool>) {
      out = Scalar(v);
    } else if constexpr (std::is_integral_v<scalar_t>) {
      out = Scalar(int64_t(v));
    } else {
      out = Scalar(double(v));
    }
  });
  return out;
}

}  // namespace cl
