// Deferral of small elementwise ops (Note [Deferred launches] in csrc/cuda/deferred.cpp):
// each returns false when the op must be launched as usual (kernels/deferred.cu).
#pragma once

#include "core/tensor.h"
#include "ops/elementwise_iter.h"
#include "ops/ops.h"

namespace cl::cuda {

bool defer_binary(const ElementwiseIter& it, BinaryOp op);
bool defer_unary(const ElementwiseIter& it, UnaryOp op);
bool defer_where(const ElementwiseIter& it);
bool defer_cast(const ElementwiseIter& it);
bool defer_fma(const ElementwiseIter& it);
// A dense row of `inner` elements reduced into out[0] (and idx[0]), as reduce.cu's block_rows.
bool defer_reduce(ReduceOp op, const Tensor& in, int64_t inner, const Tensor& out,
                  const Tensor& idx);

}  // namespace cl::cuda
