// The fused attention op (ops/attention.h): checks, allocation and the parameters of the
// kernels in kernels/flash_attention.cu.
#include "ops/attention.h"

#include <cstdint>
#include <string>

#include "core/cuda_api.h"
#include "core/error.h"
#include "ops/ops.h"

namespace cl {
namespace {

bool is_16bit_float(ScalarType t) { return t == ScalarType::Float16 || t == ScalarType::BFloat16; }

// A (B, H, n, D) operand as the kernels take it: a unit last stride, else a contiguous copy.
Tensor unit_last(const Tensor& t) { return t->strides[3] == 1 ? t : contiguous(t); }

// Whether every row of `t` starts on 16 bytes (8 elements of 16 bits).
bool rows_aligned(const Tensor& t) {
  return reinterpret_cast<uintptr_t>(t->data()) % 16 == 0 && t->strides[0] % 8 == 0 &&
         t->strides[1] % 8 == 0 && t->strides[2] % 8 == 0;
}

void check_operand(const Tensor& t, const char* name, const Tensor& q) {
  CL_CHECK(t->dim() == 4, "flash attention: expected ", name, " of 4 dims (B, H, n, D), got ",
           t->dim());
  CL_CHECK(t->is_cuda(), "flash attention: expected CUDA tensors, got ", name, " on ",
           t->device().str());
  CL_CHECK(t->device() == q->device(), "flash attention: expected all tensors on ",
           q->device().str(), ", got ", name, " on ", t->device().str());
  CL_CHECK(is_16bit_float(t->dtype) && t->dtype == q->dtype,
           "flash attention: expected float16 or bfloat16 tensors of one dtype");
  CL_CHECK(t->sizes[0] == q->sizes[0] && t->sizes[1] == q->sizes[1] && t->sizes[3] == q->sizes[3],
           "flash attention: ", name, " has another batch, head count or head dim than query");
}

cuda::FlashParams params(const Tensor& q, const Tensor& k, const Tensor& v, bool causal,
                         double scale) {
  cuda::FlashParams p{};
  p.dtype = q->dtype;
  p.B = q->sizes[0];
  p.H = q->sizes[1];
  p.L = q->sizes[2];
  p.S = k->sizes[2];
  p.D = q->sizes[3];
  p.scale = float(scale);
  p.causal = causal;
  p.vec = p.D % 8 == 0 && rows_aligned(q) && rows_aligned(k) && rows_aligned(v);
  p.q = q->data();
  p.k = k->data();
  p.v = v->data();
  p.q_sb = q->strides[0], p.q_sh = q->strides[1], p.q_sl = q->strides[2];
  p.k_sb = k->strides[0], p.k_sh = k->strides[1], p.k_sl = k->strides[2];
  p.v_sb = v->strides[0], p.v_sh = v->strides[1], p.v_sl = v->strides[2];
  return p;
}

void check_inputs(const Tensor& q, const Tensor& k, const Tensor& v) {
  check_operand(q, "query", q);
  check_operand(k, "key", q);
  check_operand(v, "value", q);
  CL_CHECK(k->sizes[2] == v->sizes[2], "flash attention: key and value have different lengths (",
           k->sizes[2], " and ", v->sizes[2], ")");
  const int device = resolve_device(q->device()).index;
  CL_CHECK(flash_attention_supported(device, q->sizes[3]), "flash attention: head dim ",
           q->sizes[3], " is not supported on this device");
  // grid: x batch * heads, y tiles of 64 queries (forward) or keys (backward)
  CL_CHECK(q->sizes[0] * q->sizes[1] <= INT32_MAX, "flash attention: batch * heads too large");
  CL_CHECK(q->sizes[2] <= int64_t(65535) * 64 && k->sizes[2] <= int64_t(65535) * 64,
           "flash attention: sequence too long");
}

}  // namespace

bool flash_attention_supported(int device, int64_t head_dim) {
  const int64_t smem = cuda::flash_attention_smem(head_dim);
  if (smem == 0 || device < 0 || device >= cuda::device_count()) return false;
  const cuda::DeviceProperties& props = cuda::get_device_properties(device);
  return props.major >= 8 && size_t(smem) <= props.shared_memory_per_block_optin;
}

std::pair<Tensor, Tensor> flash_attention_forward(const Tensor& q_in, const Tensor& k_in,
                                                  const Tensor& v_in, bool causal, double scale) {
  check_inputs(q_in, k_in, v_in);
  const Tensor q = unit_last(q_in), k = unit_last(k_in), v = unit_last(v_in);
  const Device d = resolve_device(q->device());
  cuda::DeviceGuard guard(d.index);
  Tensor out = empty(q->sizes, q->dtype, d);
  Tensor lse = empty({q->sizes[0], q->sizes[1], q->sizes[2]}, ScalarType::Float32, d);
  if (q->numel() == 0) return {out, lse};
  CL_CHECK(k->sizes[2] > 0, "flash attention: no keys");
  cuda::FlashParams p = params(q, k, v, causal, scale);
  p.out = out->data();
  p.lse = reinterpret_cast<float*>(lse->data());
  cuda::flash_attention_fwd(p, d.index);
  return {out, lse};
}

std::tuple<Tensor, Tensor, Tensor> flash_attention_backward(const Tensor& dout_in,
                                                            const Tensor& q_in, const Tensor& k_in,
                                                            const Tensor& v_in, const Tensor& out,
                                                            const Tensor& lse, bool causal,
                                                            double scale) {
  check_inputs(q_in, k_in, v_in);
  check_operand(dout_in, "grad_output", q_in);
  CL_CHECK(dout_in->sizes == q_in->sizes && out->sizes == q_in->sizes && out->is_contiguous() &&
               out->dtype == q_in->dtype,
           "flash attention backward: grad_output and out must have query's shape");
  CL_CHECK(lse->dtype == ScalarType::Float32 && lse->is_contiguous() &&
               lse->numel() == q_in->sizes[0] * q_in->sizes[1] * q_in->sizes[2],
           "flash attention backward: expected a contiguous float32 (B, H, L) logsumexp");
  const Tensor q = unit_last(q_in), k = unit_last(k_in), v = unit_last(v_in);
  const Tensor dout = unit_last(dout_in);
  const Device d = resolve_device(q->device());
  cuda::DeviceGuard guard(d.index);
  Tensor dk = empty(k->sizes, k->dtype, d), dv = empty(v->sizes, v->dtype, d);
  if (q->numel() == 0 || k->numel() == 0) {
    fill_(dk, Scalar(0.0));
    fill_(dv, Scalar(0.0));
    return {full(q->sizes, Scalar(0.0), q->dtype, d), dk, dv};
  }
  Tensor dq_acc = full(q->sizes, Scalar(0.0), ScalarType::Float32, d);
  Tensor delta = empty(lse->sizes, ScalarType::Float32, d);
  cuda::FlashParams p = params(q, k, v, causal, scale);
  p.vec = p.vec && rows_aligned(dout);
  p.out = out->data();
  p.lse = reinterpret_cast<float*>(lse->data());
  p.dout = dout->data();
  p.do_sb = dout->strides[0], p.do_sh = dout->strides[1], p.do_sl = dout->strides[2];
  p.delta = reinterpret_cast<float*>(delta->data());
  p.dq_acc = reinterpret_cast<float*>(dq_acc->data());
  p.dk = dk->data();
  p.dv = dv->data();
  cuda::flash_attention_bwd(p, d.index);
  return {to(dq_acc, d, q->dtype, false, false), dk, dv};
}

}  // namespace cl
