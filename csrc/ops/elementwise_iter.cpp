#include "ops/elementwise_iter.h"

#include <algorithm>

#include "core/error.h"

namespace cl {

ElementwiseIter make_elementwise_iter(const Tensor& out, Span<IterInput> inputs) {
  ElementwiseIter it;
  it.noperands = 1 + int(inputs.size());
  CL_CHECK(it.noperands <= kMaxOperands, "too many operands");
  it.device = out->device();
  it.out_dtype = out->dtype;
  it.numel = out->numel();
  int nd = int(out->dim());
  CL_CHECK(nd <= kMaxDims, "tensors with more than ", kMaxDims, " dims are not supported");

  // Data pointers, numbers and the input dtype.
  it.data[0] = out->data();
  it.exported = out->storage->exported.load(std::memory_order_relaxed);
  for (size_t k = 0; k < inputs.size(); ++k) {
    int op = int(k) + 1;
    const IterInput& in = inputs[k];
    if (!in.tensor) {
      it.is_scalar[op] = true;
      it.scalars[op] = in.scalar;
    } else {
      it.in_dtype = (*in.tensor)->dtype;
      it.data[op] = (*in.tensor)->data();
      it.exported |= (*in.tensor)->storage->exported.load(std::memory_order_relaxed);
    }
  }

  // Fast path, the common case: every tensor is contiguous with the output's shape, so the
  // loop is one dense dim (none for a single element), which is what the general path below
  // would make of it.
  bool dense = out->is_contiguous() && it.numel > 0;
  for (size_t k = 0; dense && k < inputs.size(); ++k) {
    const Tensor* t = inputs[k].tensor;
    dense = !t || ((*t)->is_contiguous() && (*t)->sizes == out->sizes);
  }
  if (dense) {
    it.ndim = it.numel > 1 ? 1 : 0;
    if (it.ndim) it.shape[0] = it.numel;
    for (int op = 0; op < it.noperands; ++op) {
      const Tensor* t = op == 0 ? &out : inputs[size_t(op - 1)].tensor;
      it.strides[op][0] = it.ndim && t ? int64_t((*t)->element_size()) : 0;
    }
    return it;
  }

  // Per-operand strides in bytes, innermost first, aligned to the output's dims.
  int64_t st[kMaxOperands][kMaxDims] = {};
  int64_t shape[kMaxDims];
  for (int d = 0; d < nd; ++d) {
    shape[d] = out->sizes[nd - 1 - d];
    st[0][d] = out->strides[nd - 1 - d] * int64_t(out->element_size());
  }
  for (size_t k = 0; k < inputs.size(); ++k) {
    if (!inputs[k].tensor) continue;
    int op = int(k) + 1;
    const Tensor& t = *inputs[k].tensor;
    int tn = int(t->dim());
    CL_CHECK(tn <= nd, "input has more dims than the output");
    for (int d = 0; d < tn; ++d) {
      int64_t size = t->sizes[tn - 1 - d];
      CL_CHECK(size == shape[d] || size == 1, "The size of tensor a (", size,
               ") must match the size of tensor b (", shape[d], ") at non-singleton dimension ",
               nd - 1 - d);
      st[op][d] = size == 1 ? 0 : t->strides[tn - 1 - d] * int64_t(t->element_size());
    }
  }

  // Iterate in the output's memory order: dims sorted by the output's stride, innermost
  // first (a stable insertion sort; an output in order, the common case, moves nothing). An
  // x.t()-ordered result of an x.t() input is then one dense run.
  for (int d = 1; d < nd; ++d) {
    for (int j = d; j > 0 && std::abs(st[0][j]) < std::abs(st[0][j - 1]); --j) {
      std::swap(shape[j], shape[j - 1]);
      for (int op = 0; op < it.noperands; ++op) std::swap(st[op][j], st[op][j - 1]);
    }
  }

  // Drop size-1 dims, then merge dims that are contiguous in every operand.
  int n = 0;
  for (int d = 0; d < nd; ++d) {
    if (shape[d] == 1) continue;
    if (n > 0) {
      bool can_merge = true;
      for (int op = 0; op < it.noperands; ++op) {
        // Against the kept dim n - 1 (size-1 dims before d were dropped, so it need not
        // be d - 1).
        if (st[op][d] != it.strides[op][n - 1] * it.shape[n - 1]) can_merge = false;
      }
      if (can_merge) {
        it.shape[n - 1] *= shape[d];
        continue;
      }
    }
    it.shape[n] = shape[d];
    for (int op = 0; op < it.noperands; ++op) it.strides[op][n] = st[op][d];
    ++n;
  }
  it.ndim = n;
  return it;
}

bool ElementwiseIter::contiguous() const {
  if (ndim > 1) return false;
  if (ndim == 0) return true;
  for (int op = 0; op < noperands; ++op) {
    if (is_scalar[op]) continue;
    int64_t isz = int64_t(itemsize(op == 0 ? out_dtype : in_dtype));
    if (strides[op][0] != isz) return false;
  }
  return true;
}

int64_t ElementwiseIter::max_offset_bytes() const {
  int64_t m = 0;
  for (int op = 0; op < noperands; ++op) {
    int64_t off = 0;
    for (int d = 0; d < ndim; ++d) off += (shape[d] - 1) * std::abs(strides[op][d]);
    m = std::max(m, off);
  }
  return m;
}

}  // namespace cl
