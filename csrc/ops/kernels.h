// The loops behind the ops, one set per device. cpu:: is in ops/cpu_*.cpp; cuda:: is in
// kernels/*.cu (or raises in CPU-only builds, csrc/cuda_stub/).
#pragma once

#include "ops/dim_indexer.h"
#include "ops/elementwise_iter.h"
#include "ops/ops.h"

namespace cl {

#define CL_DECLARE_KERNELS                                                                         \
  void binary(const ElementwiseIter& it, BinaryOp op);                                             \
  void unary(const ElementwiseIter& it, UnaryOp op);                                               \
  void where(const ElementwiseIter& it);                                                           \
  /* copy with conversion from it.in_dtype to it.out_dtype (also fill, with a scalar) */           \
  void cast(const ElementwiseIter& it);                                                            \
  /* out[i] = start + i * step for a contiguous tensor */                                          \
  void affine_fill(const Tensor& t, double start, double step);                                    \
  /* rows of a contiguous [outer, inner] input reduced into out[outer] (and idx[outer]) */         \
  void reduce_rows(ReduceOp op, const Tensor& in, int64_t outer, int64_t inner, const Tensor& out, \
                   const Tensor& idx);                                                             \
  void gather_offsets(const Tensor& src, const Tensor& offsets, const Tensor& out);                \
  void scatter_offsets(const Tensor& dst, const Tensor& offsets, const Tensor& values, int mode);  \
  /* gather/scatter along a dim through a DimIndexer (ops/dim_indexer.h) */                        \
  void gather_dim(const DimIndexer& g, const Tensor& self, const Tensor& index,                    \
                  const Tensor& out);                                                              \
  void scatter_dim(const DimIndexer& g, const Tensor& self, const Tensor& index,                   \
                   const Tensor& src, int mode);                                                   \
  /* inclusive scan of a dense [outer, n, inner] input along n into a dense out (same dtype) */    \
  void scan(ScanOp op, const Tensor& in, int64_t outer, int64_t n, int64_t inner,                  \
            const Tensor& out);                                                                    \
  /* Philox: kind 0 uniform [a, b), 1 normal(a, b) */                                              \
  void random_fill(const Tensor& t, int kind, double a, double b, uint64_t seed, uint64_t offset); \
  /* Philox integers in [lo, lo + range), exactly (range 0: all 64 bits) */                        \
  void random_int_fill(const Tensor& t, int64_t lo, uint64_t range, uint64_t seed, uint64_t offset);

namespace cpu {
CL_DECLARE_KERNELS
}
namespace cuda {
CL_DECLARE_KERNELS
// A dense [outer, inner, cols] input reduced over `inner` into out[outer, cols].
void reduce_cols(ReduceOp op, const Tensor& in, int64_t outer, int64_t inner, int64_t cols,
                 const Tensor& out, const Tensor& idx);
}  // namespace cuda
#undef CL_DECLARE_KERNELS

}  // namespace cl
