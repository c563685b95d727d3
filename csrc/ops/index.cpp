// Indexing primitives. Advanced indexing in the Python layer turns index tensors into
// element offsets with ordinary elementwise ops, then reads or writes through these.
#include <algorithm>

#include "core/cuda_api.h"
#include "core/error.h"
#include "core/size_math.h"
#include "ops/kernels.h"
#include "ops/ops.h"

namespace cl {

Tensor gather_offsets(const Tensor& src, const Tensor& offsets_in) {
  CL_CHECK(offsets_in->dtype == ScalarType::Int64, "offsets must be int64");
  check_same_device({&src, &offsets_in});
  Tensor offsets = contiguous(offsets_in);
  Tensor out = empty(offsets->sizes, src->dtype, src->device());
  if (out->numel() == 0) return out;
  if (src->is_cuda()) {
    cuda::DeviceGuard g(src->device().index);
    cuda::gather_offsets(src, offsets, out);
  } else {
    cpu::gather_offsets(src, offsets, out);
  }
  return out;
}

void scatter_offsets(const Tensor& dst, const Tensor& offsets_in, const Tensor& values_in,
                     int mode) {
  CL_CHECK(mode >= 0 && mode <= 2, "scatter mode must be 0 (assign), 1 (add) or 2 (multiply)");
  CL_CHECK(offsets_in->dtype == ScalarType::Int64, "offsets must be int64");
  check_same_device({&dst, &offsets_in, &values_in});
  Tensor offsets = contiguous(offsets_in);
  Tensor values = values_in;
  if (values->dtype != dst->dtype) values = to(values, dst->device(), dst->dtype, false, false);
  if (values->sizes != offsets->sizes) values = expand(values, offsets->sizes);
  values = contiguous(values);
  if (offsets->numel() == 0) return;
  if (dst->is_cuda()) {
    cuda::DeviceGuard g(dst->device().index);
    cuda::scatter_offsets(dst, offsets, values, mode);
  } else {
    cpu::scatter_offsets(dst, offsets, values, mode);
  }
}

// ---- gather/scatter along a dim ----

namespace {

DimIndexer make_indexer(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& other) {
  const int64_t nd = index->dim();
  CL_CHECK(nd >= 1 && nd <= kMaxDims && self->dim() == nd,
           "gather/scatter along a dim: self and index need the same number of dims (1 to ",
           kMaxDims, "), got ", self->dim(), " and ", nd);
  CL_CHECK(index->dtype == ScalarType::Int64 || index->dtype == ScalarType::Int32,
           "gather/scatter along a dim: the index must be int64 or int32");
  CL_CHECK(other->dim() == nd || other->dim() == 0,
           "gather/scatter along a dim: the source needs the index's number of dims or none");
  dim = wrap_dim(dim, nd);
  DimIndexer g;
  g.nd = int(nd);
  g.numel = index->numel();
  for (int64_t d = 0; d < nd; ++d) {
    const int64_t n = index->sizes[d];
    CL_CHECK(d == dim || n <= self->sizes[d], "gather/scatter along a dim: index ",
             shape_str(index->sizes), " is larger than self ", shape_str(self->sizes));
    CL_CHECK(other->dim() == 0 || n <= other->sizes[d], "gather/scatter along a dim: index ",
             shape_str(index->sizes), " is larger than the source ", shape_str(other->sizes));
    g.sizes[d] = n;
    g.strides[0][d] = d == dim ? 0 : self->strides[d];
    g.strides[1][d] = index->strides[d];
    g.strides[2][d] = other->dim() ? other->strides[d] : 0;
  }
  g.dim_stride = self->strides[dim];
  g.base = self->offset;
  return g;
}

}  // namespace

Tensor gather_dim(const Tensor& self, int64_t dim, const Tensor& index) {
  check_same_device({&self, &index});
  Tensor out = empty(index->sizes, self->dtype, self->device());
  const DimIndexer g = make_indexer(self, dim, index, out);
  if (g.numel == 0) return out;
  if (self->is_cuda()) {
    cuda::DeviceGuard guard(self->device().index);
    cuda::gather_dim(g, self, index, out);
  } else {
    cpu::gather_dim(g, self, index, out);
  }
  return out;
}

void scatter_dim(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& src,
                 int mode) {
  CL_CHECK(mode >= 0 && mode <= 4,
           "scatter mode must be 0 (assign), 1 (add), 2 (multiply), 3 (max) or 4 (min)");
  CL_CHECK(src->dtype == self->dtype, "scatter along a dim: the source needs self's dtype");
  check_same_device({&self, &index, &src});
  const DimIndexer g = make_indexer(self, dim, index, src);
  if (g.numel == 0) return;
  if (self->is_cuda()) {
    cuda::DeviceGuard guard(self->device().index);
    cuda::scatter_dim(g, self, index, src, mode);
  } else {
    cpu::scatter_dim(g, self, index, src, mode);
  }
}

Tensor nonzero(const Tensor& t) {
  // The output size depends on the data, so the mask is read on the host (as torch does,
  // nonzero synchronises with the device).
  Tensor mask = t->dtype == ScalarType::Bool ? t : binary(BinaryOp::Ne, Operand(t), Scalar(0));
  Tensor host = contiguous(to(mask, Device(DeviceType::CPU), ScalarType::Bool, false, false));
  const bool* m = reinterpret_cast<const bool*>(host->data());
  int64_t nd = t->dim(), n = host->numel();
  int64_t count = std::count(m, m + n, true);
  Tensor out = empty({count, nd}, ScalarType::Int64, Device(DeviceType::CPU));
  int64_t* o = reinterpret_cast<int64_t*>(out->data());
  Shape idx(nd, 0);
  for (int64_t i = 0; i < n; ++i) {
    if (m[i]) {
      for (int64_t d = 0; d < nd; ++d) *o++ = idx[d];
    }
    for (int64_t d = nd - 1; d >= 0; --d) {
      if (++idx[d] < t->sizes[d]) break;
      idx[d] = 0;
    }
  }
  return to(out, t->device(), ScalarType::Int64, false, false);
}

Tensor cat(const std::vector<Tensor>& ts_in, int64_t dim) {
  CL_CHECK_VALUE(!ts_in.empty(), "cudalite.cat(): expected a non-empty list of Tensors");
  // Legacy behaviour kept by torch: 1-D empty tensors are skipped.
  std::vector<Tensor> ts;
  for (auto& t : ts_in) {
    if (!(t->dim() == 1 && t->numel() == 0)) ts.push_back(t);
  }
  std::vector<const Tensor*> ptrs;
  std::vector<Operand> operands;
  for (auto& t : ts_in) ptrs.push_back(&t);
  check_same_device(ptrs);
  for (auto& t : ts_in) operands.emplace_back(t);
  std::vector<const Operand*> op_ptrs;
  for (auto& o : operands) op_ptrs.push_back(&o);
  ScalarType dt = result_type(op_ptrs);
  if (ts.empty()) return empty({0}, dt, ts_in[0]->device());
  const Tensor& ref = ts[0];
  CL_CHECK(ref->dim() > 0, "zero-dimensional tensor (at position 0) cannot be concatenated");
  dim = wrap_dim(dim, ref->dim());
  Shape shape = ref->sizes;
  shape[dim] = 0;
  for (size_t k = 0; k < ts.size(); ++k) {
    const Tensor& t = ts[k];
    CL_CHECK(t->dim() > 0, "zero-dimensional tensor (at position ", k, ") cannot be concatenated");
    CL_CHECK(t->dim() == ref->dim(), "Tensors must have same number of dimensions: got ",
             ref->dim(), " and ", t->dim());
    for (int64_t d = 0; d < ref->dim(); ++d) {
      if (d == dim) continue;
      CL_CHECK(t->sizes[d] == ref->sizes[d], "Sizes of tensors must match except in dimension ",
               dim, ". Expected size ", ref->sizes[d], " but got size ", t->sizes[d],
               " for tensor number ", k, " in the list.");
    }
    CL_CHECK(checked_add(shape[dim], t->sizes[dim], &shape[dim]),
             "cat(): the sizes along dimension ", dim, " add up to more than a tensor can hold (",
             INT64_MAX, " elements)");
  }
  Tensor out = empty(shape, dt, ref->device());
  int64_t pos = 0;
  for (auto& t : ts) {
    copy_(slice(out, dim, pos, pos + t->sizes[dim], 1), t);
    pos += t->sizes[dim];
  }
  return out;
}

}  // namespace cl
