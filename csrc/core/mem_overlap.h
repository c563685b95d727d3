// torch's memory-overlap checks for ops that write into an existing tensor (in-place ops,
// out=, copy_): a result computed while its own inputs change under it would depend on the
// order the loop runs in, which differs between the CPU, the GPU and launches.
#pragma once

#include "core/tensor.h"

namespace cl {

// Strides that are a permutation of a contiguous tensor's (size-1 dims ignored): every element
// has its own memory and the tensor covers one dense range.
bool is_non_overlapping_and_dense(const TensorImpl& t);

// Raises when several elements of `t` share memory (a dim of stride 0 and size > 1):
// "unsupported operation: more than one element of the written-to tensor refers to a single
// memory location. Please clone() the tensor before performing the operation."
void assert_no_internal_overlap(const Tensor& t);

// Raises when `out` and `in` share some memory but are not the same elements in the same
// order (x[1:].add_(x[:-1]), x.t().add_(x)); x.add_(x) is allowed. Like torch, tensors that are
// not dense are not checked (too costly to decide).
void assert_no_partial_overlap(const Tensor& out, const Tensor& in);

// The same, raising for the same elements too (ops that read an input after writing the
// output, such as cat).
void assert_no_overlap(const Tensor& out, const Tensor& in);

}  // namespace cl
