// The loops behind the ops, one set per device. cpu:: is in ops/cpu_*.cpp; cuda:: is in
// kernels/*.cu (or raises in CPU-only builds, csrc/cuda_stub/).
#pragma once

#include "ops/dim_indexer.h"
#include "ops/elementwise_iter.h"
#include "ops/ops.h"
#include "ops/philox_args.h"

namespace cl {

#define CL_DECLARE_KERNELS                                                                         \
  void binary(const ElementwiseIter& it, BinaryOp op);                                             \
  void unary(const ElementwiseIter& it, UnaryOp op);                                               \
  void where(const ElementwiseIter& it);                                                           \
  void fma(const ElementwiseIter& it);                                                             \
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
            const Tensor& out);

namespace cpu {
CL_DECLARE_KERNELS
}
namespace cuda {
CL_DECLARE_KERNELS
// torch's CUDA random kernels (kernels/random.cu): the fill, and how many elements one
// curand4 draw serves (torch's unroll factor) for a kind of fill.
enum class TorchRandom : int8_t { Uniform, Normal, Exponential, Bernoulli, FromTo, Default };
int torch_random_unroll(TorchRandom kind, ScalarType dtype, uint64_t range);
// a, b: from/to, mean/std, lambda (a) or p (a); FromTo/Default: (draw % range) + base, range 0
// the full 64 bits. `grid` blocks of 256 threads; Philox (seed, offset) as curand_init takes.
void torch_random(const Tensor& t, TorchRandom kind, double a, double b, uint64_t range,
                  int64_t base, const PhiloxArgs& philox, unsigned grid);
// bernoulli_ with probabilities `p` (contiguous, t's shape; float64 for a float64 t, else
// float32) into a contiguous t, torch's layout: 4 elements per thread, one curand_uniform4.
void torch_bernoulli_tensor(const Tensor& t, const Tensor& p, const PhiloxArgs& philox);
// ---- torch's CUDA sampling kernels (kernels/random_sampling.cu, kernels/dropout.cu) ----
// randperm: `keys` (int32 or int64, one per position, drawn by the caller) sorted stably by
// their low `bits` bits with 0..n-1 into the contiguous int64 `out`, then equal-key runs
// shuffled from Philox (seed, offset).
void torch_randperm(const Tensor& keys, int bits, const Tensor& out, PhiloxArgs philox);
// multinomial with replacement of the contiguous [rows, cats] `probs` into int64 `out`
// [rows, samples]: torch's row normalisation and prefix sums, then a (grid_x, grid_y) grid of
// 128-thread blocks drawing from Philox (seed, offset).
void torch_multinomial(const Tensor& probs, int64_t samples, const Tensor& out, unsigned grid_x,
                       unsigned grid_y, PhiloxArgs philox);
// torch's fused dropout of a dense `x` (memory order when vec > 1, else x is contiguous) into
// `out` (x's strides) and the bool `mask`; an element is kept when its uniform is below `keep`.
void torch_dropout(const Tensor& x, const Tensor& out, const Tensor& mask, double keep, int vec,
                   PhiloxArgs philox, unsigned grid);
// A dense [outer, inner, cols] input reduced over `inner` into out[outer, cols].
void reduce_cols(ReduceOp op, const Tensor& in, int64_t outer, int64_t inner, int64_t cols,
                 const Tensor& out, const Tensor& idx);
}  // namespace cuda
#undef CL_DECLARE_KERNELS

}  // namespace cl
