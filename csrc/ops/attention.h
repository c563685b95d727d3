// Fused scaled-dot-product attention on CUDA (FlashAttention-2): softmax(q k^T * scale) v
// computed tile by tile with an online softmax, never materialising the L x S score matrix.
// The op layer (ops/attention.cpp) checks and allocates; the kernels are in
// kernels/flash_attention.cu (csrc/cuda_stub/attention_stub.cpp in CPU-only builds).
#pragma once

#include <cstdint>
#include <tuple>
#include <utility>

#include "core/tensor.h"

namespace cl {

// q (B, H, L, D), k and v (B, H, S, D): float16 or bfloat16 CUDA tensors with a unit last
// stride, D a supported head dim (flash_attention_supported). Returns the output (B, H, L, D),
// contiguous, in q's dtype, and the row log-sum-exp of the scaled scores (B, H, L), float32.
// `causal`: query i sees keys j <= i (top-left aligned, as torch's is_causal).
std::pair<Tensor, Tensor> flash_attention_forward(const Tensor& q, const Tensor& k, const Tensor& v,
                                                  bool causal, double scale);

// The gradients (dq, dk, dv) of flash_attention_forward's output `out` (with its `lse`) for
// the incoming gradient `dout` (B, H, L, D, any strides with a unit last one).
std::tuple<Tensor, Tensor, Tensor> flash_attention_backward(const Tensor& dout, const Tensor& q,
                                                            const Tensor& k, const Tensor& v,
                                                            const Tensor& out, const Tensor& lse,
                                                            bool causal, double scale);

// Whether the fused kernels run for a head dim `head_dim` on CUDA device `device` (compute
// capability 8.0 or later and enough shared memory per block); false in CPU-only builds.
bool flash_attention_supported(int device, int64_t head_dim);

namespace cuda {

// Everything a kernel of the pair reads: pointers, sizes and strides in elements (the last
// dim's stride is 1). Batch b, head h of q is at q + b * q_sb + h * q_sh, row i at + i * q_sl.
struct FlashParams {
  ScalarType dtype;
  int64_t B, H, L, S, D;
  float scale;
  bool causal;
  bool vec;  // every 16-bit operand's rows start on 16 bytes: tiles load 8 elements at a time
  const void *q, *k, *v;
  int64_t q_sb, q_sh, q_sl, k_sb, k_sh, k_sl, v_sb, v_sh, v_sl;
  // forward: out (contiguous B, H, L, D) and lse (contiguous B, H, L, float32)
  // backward: out and lse as read back, plus the inputs and results below.
  void* out;
  float* lse;
  const void* dout;
  int64_t do_sb, do_sh, do_sl;
  float* delta;   // (B, H, L): rowsum(dout * out)
  float* dq_acc;  // (B, H, L, D) float32, zeroed, accumulated with atomics
  void *dk, *dv;  // contiguous (B, H, S, D) in the input dtype
};

void flash_attention_fwd(const FlashParams& p, int device);
void flash_attention_bwd(const FlashParams& p, int device);
// Bytes of dynamic shared memory the backward kernel takes for head dim d (the larger of the
// two), 0 for an unsupported head dim.
int64_t flash_attention_smem(int64_t d);

}  // namespace cuda
}  // namespace cl
