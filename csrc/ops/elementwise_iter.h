// ElementwiseIter: the shared description of an elementwise loop, built once per op and
// handed to the CPU loops (ops/cpu_loops.h) or the CUDA loops (kernels/loops.cuh).
//
// Operand 0 is the output. Inputs already have the compute dtype; numbers ride along as
// scalars (no memory). Dims are stored in the output's memory order, innermost first;
// broadcast dims have stride 0, and adjacent dims that are contiguous in every operand are
// merged.
#pragma once

#include <cstdint>
#include <vector>

#include "core/scalar.h"
#include "core/tensor.h"
#include "ops/span.h"

namespace cl {

constexpr int kMaxDims = 16;
constexpr int kMaxOperands = 4;

struct ElementwiseIter {
  int ndim = 0;
  int noperands = 0;  // output included
  int64_t numel = 0;
  // Entries past ndim (and past noperands) are left unset: filling them cost a one-element
  // op a tenth of its host time.
  int64_t shape[kMaxDims];
  int64_t strides[kMaxOperands][kMaxDims];  // bytes, innermost first; 0 for scalars
  char* data[kMaxOperands] = {};
  bool is_scalar[kMaxOperands] = {};
  Scalar scalars[kMaxOperands];
  // Bit k: operand k's number is read at the compute precision (float for 16-bit floats)
  // rather than rounded to the input dtype first, as torch's kernels for some ops do
  // (Note [Numbers at compute precision] in ops/elementwise.cpp).
  unsigned scalar_opmath = 0;
  // Some operand's memory was exported (StorageImpl::exported): its op is never deferred.
  bool exported = false;
  ScalarType in_dtype = ScalarType::Float32;   // dtype of the inputs
  ScalarType out_dtype = ScalarType::Float32;  // dtype of operand 0
  Device device;

  // True when every tensor operand is dense and in order (scalars allowed).
  bool contiguous() const;
  // Largest byte offset reachable by any operand (for 32-bit indexing decisions).
  int64_t max_offset_bytes() const;
};

struct IterInput {
  const Tensor* tensor = nullptr;  // null: scalar
  Scalar scalar;
};

// `out` must already have the broadcast shape; inputs broadcast to it.
ElementwiseIter make_elementwise_iter(const Tensor& out, Span<IterInput> inputs);

}  // namespace cl
