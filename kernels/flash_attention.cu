// Fused attention (FlashAttention-2) for float16 / bfloat16 on tensor cores (WMMA 16x16x16
// fragments, sm_80 on; compute_75 PTX gets a body that traps, never launched: the op layer
// checks the device first).
//
// Forward: one CTA of 4 warps per (batch * head, 64-query tile). The query tile stays in shared
// memory; tiles of 64 keys / values are staged in shared memory one after the other. Warp w owns
// query rows 16w .. 16w + 15 of the tile: it computes its 16 x 64 block of scores S = Q K^T
// with WMMA (float32 accumulators stored to shared memory), then two lanes per row keep the
// online softmax (running max m and sum l, in log2 units: exp(x) = exp2(x * log2 e)), write
// P = exp2(S - m) in the input dtype and add P V to the warp's float32 output accumulators,
// which stay in registers. A row's m moves only when a tile's max passes it by more than
// kSlack; only then are the accumulators rescaled by exp2(m_old - m_new), through shared
// memory (WMMA's element order is opaque). At the end O = acc / l, lse = (m + log2 l) ln 2.
// With is_causal, query i sees keys j <= i: key tiles past the tile's last query are skipped,
// and inside a tile the masked scores are -inf.
//
// Backward: one CTA per (batch * head, 64-key tile), looping over the query tiles that see
// its keys. Per query tile it recomputes S and P = exp(S * scale - lse) (warp w: query rows
// 16w..), dP = dO V^T, dS = P (dP - delta) with delta = rowsum(dO * O) (a first kernel), then
// dQ += dS K * scale through float32 atomics (a separate dQ buffer, converted afterwards), and
// (warp w: key rows 16w..) dV += P^T dO and dK += dS^T Q in float32 (registers up to head
// dim 64, shared memory above), written once at the end (dK times scale).
//
// tests/flash_attention_model.py is a NumPy model of both, tile for tile.
//
// Memory: the forward reads q once and k, v ceil(L / 64) times (half that when causal) and
// writes out and lse; the backward reads k, v once and q, dO ceil(S / 64) times.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <mma.h>

#include <climits>
#include <string>
#include <type_traits>

#include "core/cuda_api.h"
#include "core/error.h"
#include "cuda/cuda_check.h"
#include "ops/attention.h"

namespace cl::cuda {
namespace {

#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 800
#define CL_FLASH_BODY 1
#endif

constexpr int kBQ = 64;  // queries per tile
constexpr int kBK = 64;  // keys per tile
constexpr int kWarps = 4;
constexpr int kThreads = kWarps * 32;
static_assert(kBQ == kWarps * 16, "each warp owns 16 query rows of a tile");
static_assert(kBQ == kBK, "the causal tile bounds assume square tiles");

template <class T>
__device__ __forceinline__ T from_float(float x);
template <>
__device__ __forceinline__ __half from_float<__half>(float x) {
  return __float2half_rn(x);
}
template <>
__device__ __forceinline__ __nv_bfloat16 from_float<__nv_bfloat16>(float x) {
  return __float2bfloat16_rn(x);
}
__device__ __forceinline__ float to_float(__half x) { return __half2float(x); }
__device__ __forceinline__ float to_float(__nv_bfloat16 x) { return __bfloat162float(x); }

// Row pitches (in elements) of the shared-memory tiles. 16-bit tiles: D + 8 (WMMA wants a
// multiple of 8; the extra 16 bytes move consecutive rows to other banks); float tiles: + 4.
// Every region below starts on a multiple of 32 bytes, as WMMA's loads and stores need
// (16 rows of any of these pitches are a multiple of 32 bytes).
template <int D>
struct Layout {
  static constexpr int kLd = D + 8;     // q, k, v, dO tiles (16-bit)
  static constexpr int kLdS = kBK + 4;  // scores, dP (float)
  static constexpr int kLdP = kBK + 8;  // P, dS (16-bit)
  static constexpr int kLdO = D + 4;    // output / dK / dV accumulators (float)
  static constexpr int kTile16 = kBQ * kLd * 2;
  static constexpr int kScore = kBQ * kLdS * 4;
  static constexpr int kP = kBQ * kLdP * 2;
  static constexpr int kAcc = kBQ * kLdO * 4;
  // forward: Q, K, V, S, P, O (the output accumulators live in registers; O is where they
  // are rescaled and where the result is staged for the store)
  static constexpr int kFwdBytes = 3 * kTile16 + kScore + kP + kAcc;
  // backward: dK and dV accumulate in registers (WMMA fragments) up to head dim 64, in
  // shared memory above (8 fragments each would be 128 registers a thread)
  static constexpr bool kBwdRegAcc = D <= 64;
  static_assert(!kBwdRegAcc || kLdO <= kLdS, "dK / dV are staged in the S / dP regions");
  // backward: K, V, Q, dO, S, dP, P, dS, [dK, dV], one 16 x 16 float scratch per warp, lse,
  // delta
  static constexpr int kBwdBytes = 4 * kTile16 + 2 * kScore + 2 * kP + (kBwdRegAcc ? 0 : 2 * kAcc) +
                                   kWarps * 256 * 4 + 2 * kBQ * 4;
  // CTAs per SM that the shared memory allows on sm_90 (227 KiB): the register budget
  // (__launch_bounds__) is set so that registers allow as many
  static constexpr int kFwdBlocks = D <= 64 ? 3 : 2;
  static constexpr int kBwdBlocks = D <= 64 ? 2 : 1;
};

// Copies rows [r0, r0 + 64) of a (n, D) matrix `g` (row stride `ld`, unit column stride)
// into the shared tile `s` (pitch LD); rows at or past n are zeros. With `vec`, 8 elements
// (16 bytes) per load; the 128 threads walk the tile in row-major order, so consecutive
// threads read consecutive bytes of a row.
template <class T, int D, int LD>
__device__ __forceinline__ void load_tile(T* s, const T* g, int64_t ld, int64_t r0, int64_t n,
                                          bool vec) {
  if (vec) {
    constexpr int kChunks = D / 8;
    for (int i = threadIdx.x; i < kBQ * kChunks; i += kThreads) {
      const int r = i / kChunks, c = (i % kChunks) * 8;
      uint4 x = make_uint4(0, 0, 0, 0);
      if (r0 + r < n) x = *reinterpret_cast<const uint4*>(g + (r0 + r) * ld + c);
      *reinterpret_cast<uint4*>(s + r * LD + c) = x;
    }
  } else {
    for (int i = threadIdx.x; i < kBQ * D; i += kThreads) {
      const int r = i / D, c = i % D;
      s[r * LD + c] = r0 + r < n ? g[(r0 + r) * ld + c] : from_float<T>(0.0f);
    }
  }
}

using namespace nvcuda;
using Acc = wmma::fragment<wmma::accumulator, 16, 16, 16, float>;
template <class T, class Layout_>
using FragA = wmma::fragment<wmma::matrix_a, 16, 16, 16, T, Layout_>;
template <class T, class Layout_>
using FragB = wmma::fragment<wmma::matrix_b, 16, 16, 16, T, Layout_>;

// out[16 x 64] (float, pitch ldo) = A[16 x D] (row-major, pitch lda) times B^T, where B is
// [64 x D] row-major (pitch ldb): B^T read as a column-major matrix_b. Used for S = Q K^T and
// dP = dO V^T.
template <class T, int D>
__device__ __forceinline__ void mm_abt(float* out, int ldo, const T* a, int lda, const T* b,
                                       int ldb) {
#ifdef CL_FLASH_BODY
  Acc acc[kBK / 16];
#pragma unroll
  for (int n = 0; n < kBK / 16; ++n) wmma::fill_fragment(acc[n], 0.0f);
#pragma unroll
  for (int kk = 0; kk < D; kk += 16) {
    FragA<T, wmma::row_major> fa;
    wmma::load_matrix_sync(fa, a + kk, lda);
#pragma unroll
    for (int n = 0; n < kBK / 16; ++n) {
      FragB<T, wmma::col_major> fb;
      // element (r = d, c = key) of B^T is b[(n * 16 + c) * ldb + kk + r]: column-major
      wmma::load_matrix_sync(fb, b + n * 16 * ldb + kk, ldb);
      wmma::mma_sync(acc[n], fa, fb, acc[n]);
    }
  }
#pragma unroll
  for (int n = 0; n < kBK / 16; ++n) {
    wmma::store_matrix_sync(out + n * 16, acc[n], ldo, wmma::mem_row_major);
  }
#endif
}

// acc[16 x D] (D / 16 fragments) += A[16 x 64] times B[64 x D] (row-major, pitch ldb). A is
// row-major at `a` (pitch lda), or, with ATrans, the transpose of a row-major [64 x 16] block
// at `a` (read as a column-major matrix_a): P V, dS K, P^T dO and dS^T Q.
template <class T, int D, bool ATrans>
__device__ __forceinline__ void mm_acc(Acc (&acc)[D / 16], const T* a, int lda, const T* b,
                                       int ldb) {
#ifdef CL_FLASH_BODY
  using AL = std::conditional_t<ATrans, wmma::col_major, wmma::row_major>;
#pragma unroll
  for (int kk = 0; kk < kBK; kk += 16) {
    FragA<T, AL> fa;
    // row-major: element (r, c = kk + j) at a[r * lda + kk + j]; transposed: element
    // (r, c = kk + j) is a[(kk + j) * lda + r], column-major from a + kk * lda
    wmma::load_matrix_sync(fa, ATrans ? a + kk * lda : a + kk, lda);
#pragma unroll
    for (int n = 0; n < D / 16; ++n) {
      FragB<T, wmma::row_major> fb;
      wmma::load_matrix_sync(fb, b + kk * ldb + n * 16, ldb);
      wmma::mma_sync(acc[n], fa, fb, acc[n]);
    }
  }
#endif
}

template <int N>
__device__ __forceinline__ void store_frags(float* c, int ldc, Acc (&acc)[N]) {
#ifdef CL_FLASH_BODY
#pragma unroll
  for (int n = 0; n < N; ++n) wmma::store_matrix_sync(c + n * 16, acc[n], ldc, wmma::mem_row_major);
#endif
}

template <int N>
__device__ __forceinline__ void load_frags(Acc (&acc)[N], const float* c, int ldc) {
#ifdef CL_FLASH_BODY
#pragma unroll
  for (int n = 0; n < N; ++n) wmma::load_matrix_sync(acc[n], c + n * 16, ldc, wmma::mem_row_major);
#endif
}

// The exponents of a row stay relative to its running max m until a tile's max exceeds m by
// more than kSlack (log2 units), so the output accumulators are rescaled only then (almost
// only on the first tile); P = exp2(s - m) is then at most 2^8, well inside float16's range.
// out = acc / l and lse = m + log2 l hold for any such m.
constexpr float kSlack = 8.0f;

template <class T, int D>
__global__ void __launch_bounds__(kThreads, Layout<D>::kFwdBlocks) flash_fwd_kernel(FlashParams p) {
#ifdef CL_FLASH_BODY
  using Ly = Layout<D>;
  extern __shared__ __align__(128) unsigned char smem[];
  T* sQ = reinterpret_cast<T*>(smem);
  T* sK = sQ + kBQ * Ly::kLd;
  T* sV = sK + kBK * Ly::kLd;
  float* sS = reinterpret_cast<float*>(sV + kBK * Ly::kLd);
  T* sP = reinterpret_cast<T*>(sS + kBQ * Ly::kLdS);
  float* sO = reinterpret_cast<float*>(sP + kBQ * Ly::kLdP);

  // first query of this tile: the last tiles first, as blocks start in index order and with
  // is_causal the last tiles read the most keys (the short ones then fill the tail)
  const int64_t q0 = int64_t(gridDim.y - 1 - blockIdx.y) * kBQ;
  const int64_t bh = blockIdx.x, b = bh / p.H, h = bh % p.H;
  const T* q = static_cast<const T*>(p.q) + b * p.q_sb + h * p.q_sh;
  const T* k = static_cast<const T*>(p.k) + b * p.k_sb + h * p.k_sh;
  const T* v = static_cast<const T*>(p.v) + b * p.v_sb + h * p.v_sh;
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int wr = warp * 16;  // this warp's first row in the tile
  // Softmax bookkeeping: lanes 2r and 2r + 1 share the tile row wr + r; lane `half` takes the
  // columns 2c + half (interleaved, so the pair reads neighbouring words, not one bank).
  const int row = wr + lane / 2, half = lane % 2;
  const int64_t qi = q0 + row;
  const float sl2 = p.scale * 1.4426950408889634f;  // scale * log2(e)

  load_tile<T, D, Ly::kLd>(sQ, q, p.q_sl, q0, p.L, p.vec);
  Acc o[D / 16];  // this warp's 16 x D output accumulators
#pragma unroll
  for (int n = 0; n < D / 16; ++n) wmma::fill_fragment(o[n], 0.0f);
  float m = -INFINITY, l = 0.0f;  // running max (log2 units) and sum of this row
  const float* srow = sS + row * Ly::kLdS;
  T* prow = sP + row * Ly::kLdP;
  float* orow = sO + row * Ly::kLdO;

  // Keys past the tile's last query are masked for every row of it.
  const int64_t kv_end = p.causal && q0 + kBQ < p.S ? q0 + kBQ : p.S;
  for (int64_t k0 = 0; k0 < kv_end; k0 += kBK) {
    __syncthreads();  // the previous tile's K and V are no longer read
    load_tile<T, D, Ly::kLd>(sK, k, p.k_sl, k0, p.S, p.vec);
    load_tile<T, D, Ly::kLd>(sV, v, p.v_sl, k0, p.S, p.vec);
    __syncthreads();
    mm_abt<T, D>(sS + wr * Ly::kLdS, Ly::kLdS, sQ + wr * Ly::kLd, Ly::kLd, sK, Ly::kLd);
    __syncwarp();
    float s[kBK / 2];
    float mx = -INFINITY;
#pragma unroll
    for (int c = 0; c < kBK / 2; ++c) {
      const int col = 2 * c + half;
      const int64_t kj = k0 + col;
      s[c] = kj >= p.S || (p.causal && kj > qi) ? -INFINITY : srow[col] * sl2;
      mx = fmaxf(mx, s[c]);
    }
    mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 1));
    // grow: false while the row has no visible key (-inf > -inf is false), true on its first
    // tile with one (m = -inf), then only when the max moves past m + kSlack
    const bool grow = mx > m + kSlack;
    float alpha = 1.0f;
    if (grow) {
      alpha = exp2f(m - mx);  // 0 on the first tile
      m = mx;
    }
    const float base = m == -INFINITY ? 0.0f : m;
    float sum = 0.0f;
#pragma unroll
    for (int c = 0; c < kBK / 2; ++c) {
      const float e = exp2f(s[c] - base);
      sum += e;
      prow[2 * c + half] = from_float<T>(e);
    }
    sum += __shfl_xor_sync(0xffffffffu, sum, 1);
    l = l * alpha + sum;
    if (__any_sync(0xffffffffu, grow)) {
      // the fragments' element order is opaque: rescale rows through shared memory
      store_frags(sO + wr * Ly::kLdO, Ly::kLdO, o);
      __syncwarp();
      for (int c = half; c < D; c += 2) orow[c] *= alpha;
      __syncwarp();
      load_frags(o, sO + wr * Ly::kLdO, Ly::kLdO);
    }
    __syncwarp();  // the warp's P rows are written
    mm_acc<T, D, false>(o, sP + wr * Ly::kLdP, Ly::kLdP, sV, Ly::kLd);
  }
  store_frags(sO + wr * Ly::kLdO, Ly::kLdO, o);
  __syncwarp();
  const float inv = l > 0.0f ? 1.0f / l : 0.0f;
  for (int c = half; c < D; c += 2) orow[c] *= inv;
  if (half == 0 && qi < p.L) {
    p.lse[bh * p.L + qi] = l > 0.0f ? (m + log2f(l)) * 0.6931471805599453f : -INFINITY;
  }
  __syncthreads();
  // out is contiguous (B, H, L, D): consecutive threads write consecutive elements of a row
  T* out = static_cast<T*>(p.out) + (bh * p.L + q0) * D;
  for (int i = threadIdx.x; i < kBQ * D; i += kThreads) {
    const int r = i / D, c = i % D;
    if (q0 + r < p.L) out[int64_t(r) * D + c] = from_float<T>(sO[r * Ly::kLdO + c]);
  }
#endif
}

// delta[row] = sum over d of dout[row, d] * out[row, d] in float32: one warp per row.
template <class T>
__global__ void flash_bwd_delta_kernel(FlashParams p) {
  const int64_t row = int64_t(blockIdx.x) * (blockDim.x / 32) + threadIdx.x / 32;
  const int lane = threadIdx.x % 32;
  if (row >= p.B * p.H * p.L) return;
  const int64_t bh = row / p.L, i = row % p.L, b = bh / p.H, h = bh % p.H;
  const T* o = static_cast<const T*>(p.out) + row * p.D;
  const T* d = static_cast<const T*>(p.dout) + b * p.do_sb + h * p.do_sh + i * p.do_sl;
  float s = 0.0f;
  for (int64_t c = lane; c < p.D; c += 32) s += to_float(o[c]) * to_float(d[c]);
#pragma unroll
  for (int off = 16; off > 0; off /= 2) s += __shfl_xor_sync(0xffffffffu, s, off);
  if (lane == 0) p.delta[row] = s;
}

template <class T, int D>
__global__ void __launch_bounds__(kThreads, Layout<D>::kBwdBlocks) flash_bwd_kernel(FlashParams p) {
#ifdef CL_FLASH_BODY
  using Ly = Layout<D>;
  extern __shared__ __align__(128) unsigned char smem[];
  T* sK = reinterpret_cast<T*>(smem);
  T* sV = sK + kBK * Ly::kLd;
  T* sQ = sV + kBK * Ly::kLd;
  T* sdO = sQ + kBQ * Ly::kLd;
  float* sS = reinterpret_cast<float*>(sdO + kBQ * Ly::kLd);
  float* sdP = sS + kBQ * Ly::kLdS;
  T* sP = reinterpret_cast<T*>(sdP + kBQ * Ly::kLdS);
  T* sdS = sP + kBQ * Ly::kLdP;
  // dK, dV in shared memory (large head dims) or staged for the store in the S, dP regions
  float* sdK = reinterpret_cast<float*>(sdS + kBQ * Ly::kLdP);
  float* sdV = sdK + kBK * Ly::kLdO;
  float* sScr = Ly::kBwdRegAcc ? sdK : sdV + kBK * Ly::kLdO;  // kWarps x 256
  float* sLse = sScr + kWarps * 256;                          // kBQ, in log2 units
  float* sDelta = sLse + kBQ;                                 // kBQ
  if (Ly::kBwdRegAcc) sdK = sS, sdV = sdP;

  // first key of this tile (with is_causal the first tiles see the most queries: they start
  // first)
  const int64_t k0 = int64_t(blockIdx.y) * kBK;
  const int64_t bh = blockIdx.x, b = bh / p.H, h = bh % p.H;
  const T* q = static_cast<const T*>(p.q) + b * p.q_sb + h * p.q_sh;
  const T* k = static_cast<const T*>(p.k) + b * p.k_sb + h * p.k_sh;
  const T* v = static_cast<const T*>(p.v) + b * p.v_sb + h * p.v_sh;
  const T* dout = static_cast<const T*>(p.dout) + b * p.do_sb + h * p.do_sh;
  const float* lse = p.lse + bh * p.L;
  const float* delta = p.delta + bh * p.L;
  float* dq = p.dq_acc + bh * p.L * D;
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int wr = warp * 16;
  const int row = wr + lane / 2, half = lane % 2;  // as in the forward
  const float sl2 = p.scale * 1.4426950408889634f;
  float* scr = sScr + warp * 256;

  load_tile<T, D, Ly::kLd>(sK, k, p.k_sl, k0, p.S, p.vec);
  load_tile<T, D, Ly::kLd>(sV, v, p.v_sl, k0, p.S, p.vec);
  Acc dk_acc[D / 16], dv_acc[D / 16];  // key rows wr.. of dK, dV (register variant)
  if constexpr (Ly::kBwdRegAcc) {
#pragma unroll
    for (int n = 0; n < D / 16; ++n) {
      wmma::fill_fragment(dk_acc[n], 0.0f);
      wmma::fill_fragment(dv_acc[n], 0.0f);
    }
  } else {
    for (int i = threadIdx.x; i < kBK * Ly::kLdO; i += kThreads) sdK[i] = sdV[i] = 0.0f;
  }

  // Causal: a query q sees key k0 only when q >= k0; the tiles before k0's hold none.
  const int64_t q_begin = p.causal ? k0 : 0;
  for (int64_t q0 = q_begin; q0 < p.L; q0 += kBQ) {
    __syncthreads();  // the previous query tile is no longer read
    load_tile<T, D, Ly::kLd>(sQ, q, p.q_sl, q0, p.L, p.vec);
    load_tile<T, D, Ly::kLd>(sdO, dout, p.do_sl, q0, p.L, p.vec);
    for (int i = threadIdx.x; i < kBQ; i += kThreads) {
      const bool in = q0 + i < p.L;
      sLse[i] = in ? lse[q0 + i] * 1.4426950408889634f : 0.0f;
      sDelta[i] = in ? delta[q0 + i] : 0.0f;
    }
    __syncthreads();
    // Warp w, query rows wr..: S = Q K^T and dP = dO V^T, 16 x 64 each.
    mm_abt<T, D>(sS + wr * Ly::kLdS, Ly::kLdS, sQ + wr * Ly::kLd, Ly::kLd, sK, Ly::kLd);
    mm_abt<T, D>(sdP + wr * Ly::kLdS, Ly::kLdS, sdO + wr * Ly::kLd, Ly::kLd, sV, Ly::kLd);
    __syncwarp();
    {
      const int64_t qi = q0 + row;
      const float lse_i = sLse[row], delta_i = sDelta[row];
#pragma unroll 4
      for (int c = half; c < kBK; c += 2) {
        const int64_t kj = k0 + c;
        const bool keep = qi < p.L && kj < p.S && !(p.causal && kj > qi);
        const float pv = keep ? exp2f(sS[row * Ly::kLdS + c] * sl2 - lse_i) : 0.0f;
        const float ds = pv * (sdP[row * Ly::kLdS + c] - delta_i);
        sP[row * Ly::kLdP + c] = from_float<T>(pv);
        sdS[row * Ly::kLdP + c] = from_float<T>(ds);
      }
    }
    __syncwarp();
    // dQ rows wr.. += dS K * scale, one 16 x 16 block at a time through the warp's scratch.
#pragma unroll 1
    for (int n = 0; n < D / 16; ++n) {
      Acc dq_part[1];
      wmma::fill_fragment(dq_part[0], 0.0f);
      mm_acc<T, 16, false>(dq_part, sdS + wr * Ly::kLdP, Ly::kLdP, sK + n * 16, Ly::kLd);
      store_frags(scr, 16, dq_part);
      __syncwarp();
      for (int i = lane; i < 256; i += 32) {
        const int r = i / 16, c = i % 16;
        const int64_t qi = q0 + wr + r;
        if (qi < p.L) atomicAdd(dq + qi * D + n * 16 + c, scr[i] * p.scale);
      }
      __syncwarp();
    }
    __syncthreads();  // every warp's P and dS rows are written
    // Warp w, key rows wr..: dV += P^T dO, dK += dS^T Q.
    if constexpr (Ly::kBwdRegAcc) {
      mm_acc<T, D, true>(dv_acc, sP + wr, Ly::kLdP, sdO, Ly::kLd);
      mm_acc<T, D, true>(dk_acc, sdS + wr, Ly::kLdP, sQ, Ly::kLd);
    } else {
      Acc acc[D / 16];
      load_frags(acc, sdV + wr * Ly::kLdO, Ly::kLdO);
      mm_acc<T, D, true>(acc, sP + wr, Ly::kLdP, sdO, Ly::kLd);
      store_frags(sdV + wr * Ly::kLdO, Ly::kLdO, acc);
      load_frags(acc, sdK + wr * Ly::kLdO, Ly::kLdO);
      mm_acc<T, D, true>(acc, sdS + wr, Ly::kLdP, sQ, Ly::kLd);
      store_frags(sdK + wr * Ly::kLdO, Ly::kLdO, acc);
    }
  }
  __syncthreads();  // S, dP, P, dS are no longer read
  if constexpr (Ly::kBwdRegAcc) {
    store_frags(sdK + wr * Ly::kLdO, Ly::kLdO, dk_acc);
    store_frags(sdV + wr * Ly::kLdO, Ly::kLdO, dv_acc);
    __syncthreads();
  }
  // dk, dv are contiguous (B, H, S, D)
  T* dk = static_cast<T*>(p.dk) + (bh * p.S + k0) * D;
  T* dv = static_cast<T*>(p.dv) + (bh * p.S + k0) * D;
  for (int i = threadIdx.x; i < kBK * D; i += kThreads) {
    const int r = i / D, c = i % D;
    if (k0 + r < p.S) {
      dk[int64_t(r) * D + c] = from_float<T>(sdK[r * Ly::kLdO + c] * p.scale);
      dv[int64_t(r) * D + c] = from_float<T>(sdV[r * Ly::kLdO + c]);
    }
  }
#endif
}

// cudaFuncSetAttribute for more than 48 KiB of dynamic shared memory, once per kernel and
// device (the attribute belongs to the device's context).
template <auto K>
void allow_smem(int device, int bytes) {
  static bool done[64] = {};
  if (device < 64 && done[device]) return;
  CL_CUDA_CHECK(cudaFuncSetAttribute(reinterpret_cast<const void*>(K),
                                     cudaFuncAttributeMaxDynamicSharedMemorySize, bytes));
  if (device < 64) done[device] = true;
}

template <class T, int D>
void fwd_typed(const FlashParams& p, int device) {
  constexpr auto kernel = flash_fwd_kernel<T, D>;
  constexpr int bytes = Layout<D>::kFwdBytes;
  allow_smem<kernel>(device, bytes);
  // x: batch * head (up to 2^31 - 1), y: query tile
  const dim3 grid(unsigned(p.B * p.H), unsigned((p.L + kBQ - 1) / kBQ));
  cudaStream_t s = static_cast<cudaStream_t>(current_stream(device));
  kernel<<<grid, kThreads, bytes, s>>>(p);
  CL_CUDA_KERNEL_LAUNCH_CHECK();
}

template <class T, int D>
void bwd_typed(const FlashParams& p, int device) {
  cudaStream_t s = static_cast<cudaStream_t>(current_stream(device));
  const int64_t rows = p.B * p.H * p.L;
  constexpr int kRowsPerBlock = 8;  // warps of 256 threads
  flash_bwd_delta_kernel<T><<<unsigned((rows + kRowsPerBlock - 1) / kRowsPerBlock), 256, 0, s>>>(p);
  CL_CUDA_KERNEL_LAUNCH_CHECK();
  constexpr auto kernel = flash_bwd_kernel<T, D>;
  constexpr int bytes = Layout<D>::kBwdBytes;
  allow_smem<kernel>(device, bytes);
  const dim3 grid(unsigned(p.B * p.H), unsigned((p.S + kBK - 1) / kBK));
  kernel<<<grid, kThreads, bytes, s>>>(p);
  CL_CUDA_KERNEL_LAUNCH_CHECK();
}

template <class T>
void fwd_dim(const FlashParams& p, int device) {
  switch (p.D) {
    case 32:
      return fwd_typed<T, 32>(p, device);
    case 64:
      return fwd_typed<T, 64>(p, device);
    case 96:
      return fwd_typed<T, 96>(p, device);
    case 128:
      return fwd_typed<T, 128>(p, device);
    default:
      throw Error("flash attention: unsupported head dim " + std::to_string(p.D));
  }
}

template <class T>
void bwd_dim(const FlashParams& p, int device) {
  switch (p.D) {
    case 32:
      return bwd_typed<T, 32>(p, device);
    case 64:
      return bwd_typed<T, 64>(p, device);
    case 96:
      return bwd_typed<T, 96>(p, device);
    case 128:
      return bwd_typed<T, 128>(p, device);
    default:
      throw Error("flash attention: unsupported head dim " + std::to_string(p.D));
  }
}

}  // namespace

int64_t flash_attention_smem(int64_t d) {
  switch (d) {
    case 32:
      return Layout<32>::kBwdBytes;
    case 64:
      return Layout<64>::kBwdBytes;
    case 96:
      return Layout<96>::kBwdBytes;
    case 128:
      return Layout<128>::kBwdBytes;
    default:
      return 0;
  }
}

void flash_attention_fwd(const FlashParams& p, int device) {
  if (p.dtype == ScalarType::BFloat16) return fwd_dim<__nv_bfloat16>(p, device);
  return fwd_dim<__half>(p, device);
}

void flash_attention_bwd(const FlashParams& p, int device) {
  if (p.dtype == ScalarType::BFloat16) return bwd_dim<__nv_bfloat16>(p, device);
  return bwd_dim<__half>(p, device);
}

}  // namespace cl::cuda
