// native_batch_norm on CUDA (ops/batch_norm.cpp checks and lays out the operands): x is a
// contiguous (N, C, S), so each channel's M = N * S values are N runs of S.
//
// Statistics (training forward) and the backward's sums are taken in two levels, so that
// every SM has work whatever the shape: blocks reduce parts of a channel to partial states,
// then one warp per channel combines its partials in a fixed order (results don't depend on
// scheduling). The parts are laid out by the runs' length:
//  - "planes" (S >= kPlaneMin): a block takes a channel's runs n0..n1, its threads striding
//    along each run;
//  - "columns" (shorter runs, e.g. (N, C) inputs or 4x4 maps): x seen as rows of K = C * S,
//    a 32 x 8 block takes 32 neighbouring columns over a chunk of rows, so that a warp reads
//    128 contiguous bytes; each column's partial is then one of its channel's S * chunks.
// The forward's partial state is Welford's (count, mean, M2), combined with Chan's formula
// (no cancellation for large means); the backward's is the pair (sum g, sum g * (x - mean)).
// The finalising warp writes mean and 1 / sqrt(var + eps), updates the running statistics
// (unbiased variance) and, for the backward, grad_weight, grad_bias and the two per-channel
// coefficients of grad_input. A last elementwise kernel normalises (or writes grad_input),
// four elements of a channel per thread when S allows.
// Bytes moved: forward 3 * numel * itemsize (x read twice), backward 5 * numel * itemsize
// (g and x twice, grad_input once), plus the partials (at most a few % of x).
#include <cuda_runtime.h>

#include "core/cuda_api.h"
#include "cuda/cuda_check.h"
#include "kernels/nn_rows.cuh"
#include "ops/nn_ops.h"
#include "ops/ops.h"

namespace cl::cuda {
namespace {

using namespace ::cl::gpu::rows;

constexpr int64_t kPlaneMin = 512;  // runs at least this long use the planes layout
constexpr int kPlaneThreads = 256;
constexpr int kColX = 32, kColY = 8;
constexpr int64_t kTargetBlocks = 2048;  // enough blocks to fill an H100/H200 several times
constexpr int kApplyThreads = 256;

// ---- partial states ----

template <class A>
struct Welford {
  A n, mean, m2;
};

template <class A>
__device__ __forceinline__ Welford<A> combine(const Welford<A>& a, const Welford<A>& b) {
  const A n = a.n + b.n;
  if (b.n == A(0)) return a;
  if (a.n == A(0)) return b;
  const A d = b.mean - a.mean, fb = b.n / n;
  return {n, a.mean + d * fb, a.m2 + b.m2 + d * d * a.n * fb};
}

template <class A>
__device__ __forceinline__ Welford<A> shfl_xor(const Welford<A>& s, int o) {
  return {__shfl_xor_sync(0xffffffffu, s.n, o), __shfl_xor_sync(0xffffffffu, s.mean, o),
          __shfl_xor_sync(0xffffffffu, s.m2, o)};
}

template <class A>
struct Pair {
  A g, gx;  // sum of g, sum of g * (x - mean)
};

template <class A>
__device__ __forceinline__ Pair<A> combine(const Pair<A>& a, const Pair<A>& b) {
  return {a.g + b.g, a.gx + b.gx};
}

template <class A>
__device__ __forceinline__ Pair<A> shfl_xor(const Pair<A>& s, int o) {
  return {__shfl_xor_sync(0xffffffffu, s.g, o), __shfl_xor_sync(0xffffffffu, s.gx, o)};
}

template <class St>
__device__ __forceinline__ St warp_combine(St s) {
#pragma unroll
  for (int o = 1; o < 32; o <<= 1) s = combine(s, shfl_xor(s, o));
  return s;
}

// The values a partial reduces: x (forward) ...
template <class T, class A>
struct StatsIn {
  using State = Welford<A>;
  const T* x;
  __device__ __forceinline__ void add(State& s, int64_t i, int64_t) const {
    const A v = load<A>(x, i);
    s.n += A(1);
    const A d = v - s.mean;
    s.mean += d / s.n;
    s.m2 += d * (v - s.mean);
  }
};

// ... or g and x around the channel's mean (backward).
template <class T, class A>
struct GradIn {
  using State = Pair<A>;
  const T* g;
  const T* x;
  const A* mean;
  __device__ __forceinline__ void add(State& s, int64_t i, int64_t c) const {
    const A gv = load<A>(g, i);
    s.g += gv;
    s.gx += gv * (load<A>(x, i) - mean[c]);
  }
};

// Block (c, split): channel c's runs [split * rows, +rows); writes part[c * splits + split].
template <class In>
__global__ void planes_partials(In in, int64_t N, int64_t C, int64_t S, int64_t rows,
                                typename In::State* __restrict__ part) {
  using St = typename In::State;
  __shared__ St shm[kPlaneThreads / 32];
  const int64_t c = blockIdx.x, split = blockIdx.y;
  const int64_t n0 = split * rows, n1 = n0 + rows < N ? n0 + rows : N;
  St st{};
  for (int64_t n = n0; n < n1; ++n) {
    const int64_t base = (n * C + c) * S;
#pragma unroll 4
    for (int64_t s = threadIdx.x; s < S; s += kPlaneThreads) in.add(st, base + s, c);
  }
  st = warp_combine(st);
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  if (lane == 0) shm[warp] = st;
  __syncthreads();
  if (threadIdx.x == 0) {
    St t = shm[0];
#pragma unroll
    for (int j = 1; j < kPlaneThreads / 32; ++j) t = combine(t, shm[j]);
    part[c * gridDim.y + split] = t;
  }
}

// Block (bx, chunk): columns [bx * 32, +32) of the (N, K = C * S) view over rows
// [chunk * rows, +rows); writes part[chunk * K + col].
template <class In>
__global__ void columns_partials(In in, int64_t N, int64_t K, int64_t S, int64_t rows,
                                 typename In::State* __restrict__ part) {
  using St = typename In::State;
  __shared__ St shm[kColY][kColX + 1];
  const int tx = threadIdx.x, ty = threadIdx.y;
  const int64_t col = int64_t(blockIdx.x) * kColX + tx;
  const int64_t r0 = int64_t(blockIdx.y) * rows;
  const int64_t r1 = r0 + rows < N ? r0 + rows : N;
  St st{};
  if (col < K) {
    const int64_t c = col / S;
    for (int64_t r = r0 + ty; r < r1; r += kColY) in.add(st, r * K + col, c);
  }
  shm[ty][tx] = st;
  __syncthreads();
  if (ty == 0 && col < K) {
    St t = shm[0][tx];
#pragma unroll
    for (int j = 1; j < kColY; ++j) t = combine(t, shm[j][tx]);
    part[int64_t(blockIdx.y) * K + col] = t;
  }
}

// Where channel c's partials are: `count` of them, the p-th at part[at(c, p)].
struct PartialMap {
  bool planes;
  int64_t count;  // planes: splits; columns: chunks * S
  int64_t S, K;
  __device__ __forceinline__ int64_t at(int64_t c, int64_t p) const {
    if (planes) return c * count + p;
    return (p / S) * K + c * S + p % S;
  }
};

template <class St>
__device__ __forceinline__ St gather(const St* __restrict__ part, const PartialMap& pm, int64_t c,
                                     int lane) {
  St st{};
  for (int64_t p = lane; p < pm.count; p += 32) st = combine(st, part[pm.at(c, p)]);
  return warp_combine(st);
}

// One warp per channel: statistics, running statistics, saved mean / invstd.
template <class A>
__global__ void stats_finalize(const Welford<A>* __restrict__ part, PartialMap pm, int64_t C, A M,
                               A eps, A momentum, A* __restrict__ rm, A* __restrict__ rv,
                               A* __restrict__ mean, A* __restrict__ invstd) {
  const int64_t c = int64_t(blockIdx.x) * (blockDim.x / 32) + (threadIdx.x >> 5);
  if (c >= C) return;
  const int lane = threadIdx.x & 31;
  const Welford<A> st = gather(part, pm, c, lane);
  if (lane != 0) return;
  mean[c] = st.mean;
  invstd[c] = A(1) / sqrt(st.m2 / M + eps);
  if (rm) rm[c] = momentum * st.mean + (A(1) - momentum) * rm[c];
  if (rv) rv[c] = momentum * (st.m2 / (M - A(1))) + (A(1) - momentum) * rv[c];
}

template <class A>
__global__ void eval_stats(const A* __restrict__ rm, const A* __restrict__ rv, int64_t C, A eps,
                           A* __restrict__ mean, A* __restrict__ invstd) {
  const int64_t c = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (c >= C) return;
  mean[c] = rm[c];
  invstd[c] = A(1) / sqrt(rv[c] + eps);
}

// One warp per channel: grad_weight, grad_bias and grad_input's coefficients
// coef[c] = sum(g) / M, coef[C + c] = sum(g * (x - mean)) * invstd^2 / M.
template <class A>
__global__ void grad_finalize(const Pair<A>* __restrict__ part, PartialMap pm, int64_t C, A M,
                              const A* __restrict__ invstd, A* __restrict__ dw, A* __restrict__ db,
                              A* __restrict__ coef) {
  const int64_t c = int64_t(blockIdx.x) * (blockDim.x / 32) + (threadIdx.x >> 5);
  if (c >= C) return;
  const int lane = threadIdx.x & 31;
  const Pair<A> st = gather(part, pm, c, lane);
  if (lane != 0) return;
  const A is = invstd[c];
  if (dw) dw[c] = st.gx * is;
  if (db) db[c] = st.g;
  if (coef) {
    coef[c] = st.g / M;
    coef[C + c] = st.gx * is * is / M;
  }
}

// y = (x - mean) * invstd * w + b, torch's CUDA form; V elements of one channel per thread.
template <class T, class A, class I, int V>
__global__ void apply_forward(const T* __restrict__ x, T* __restrict__ y,
                              const A* __restrict__ mean, const A* __restrict__ invstd,
                              const A* __restrict__ w, const A* __restrict__ b, I groups, I S,
                              I C) {
  for (I q = I(blockIdx.x) * kApplyThreads + threadIdx.x; q < groups;
       q += I(gridDim.x) * kApplyThreads) {
    const I i = q * V;
    const I c = (i / S) % C;
    const A m = mean[c], is = invstd[c], wc = w ? w[c] : A(1), bc = b ? b[c] : A(0);
#pragma unroll
    for (int k = 0; k < V; ++k) y[i + k] = store<T>((load<A>(x, i + k) - m) * is * wc + bc);
  }
}

// grad_input: training (g - coef0 - (x - mean) * coef1) * invstd * w; evaluation
// g * invstd * w (coef null).
template <class T, class A, class I, int V>
__global__ void apply_backward(const T* __restrict__ g, const T* __restrict__ x, T* __restrict__ dx,
                               const A* __restrict__ mean, const A* __restrict__ invstd,
                               const A* __restrict__ w, const A* __restrict__ coef, I groups, I S,
                               I C) {
  for (I q = I(blockIdx.x) * kApplyThreads + threadIdx.x; q < groups;
       q += I(gridDim.x) * kApplyThreads) {
    const I i = q * V;
    const I c = (i / S) % C;
    const A scale = invstd[c] * (w ? w[c] : A(1));
    if (coef) {
      const A m = mean[c], gm = coef[c], proj = coef[C + c];
#pragma unroll
      for (int k = 0; k < V; ++k) {
        dx[i + k] = store<T>((load<A>(g, i + k) - gm - (load<A>(x, i + k) - m) * proj) * scale);
      }
    } else {
#pragma unroll
      for (int k = 0; k < V; ++k) dx[i + k] = store<T>(load<A>(g, i + k) * scale);
    }
  }
}

int64_t cdiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

// The partial reduction of `in` over every channel into a new buffer; returns the buffer
// (kept alive by the caller until the finaliser has run) and where each channel's partials
// are.
template <class In, class A>
std::pair<Tensor, PartialMap> partials(const In& in, int64_t N, int64_t C, int64_t S,
                                       const Tensor& like, cudaStream_t s) {
  using St = typename In::State;
  constexpr int64_t kPer = int64_t(sizeof(St) / sizeof(A));
  const int64_t M = N * S;
  if (S >= kPlaneMin) {
    int64_t splits = std::min<int64_t>(N, cdiv(kTargetBlocks, C));
    splits = std::max<int64_t>(1, std::min<int64_t>(splits, M / 4096));
    const int64_t rows = cdiv(N, splits);
    splits = cdiv(N, rows);  // at most kTargetBlocks
    Tensor buf = empty({C * splits * kPer}, TypeOf<A>::value, like->device());
    planes_partials<In><<<dim3(unsigned(C), unsigned(splits)), kPlaneThreads, 0, s>>>(
        in, N, C, S, rows, mptr<St>(buf));
    CL_CUDA_KERNEL_LAUNCH_CHECK();
    return {buf, PartialMap{true, splits, S, C * S}};
  }
  const int64_t K = C * S, colblocks = cdiv(K, kColX);
  int64_t chunks = std::max<int64_t>(1, std::min(cdiv(kTargetBlocks, colblocks), cdiv(N, 64)));
  const int64_t rows = cdiv(N, chunks);
  chunks = cdiv(N, rows);
  Tensor buf = empty({chunks * K * kPer}, TypeOf<A>::value, like->device());
  columns_partials<In><<<dim3(unsigned(colblocks), unsigned(chunks)), dim3(kColX, kColY), 0, s>>>(
      in, N, K, S, rows, mptr<St>(buf));
  CL_CUDA_KERNEL_LAUNCH_CHECK();
  return {buf, PartialMap{false, chunks * S, S, K}};
}

unsigned apply_grid(int64_t groups) {
  return unsigned(std::max<int64_t>(1, std::min<int64_t>(cdiv(groups, kApplyThreads), 65535 * 4)));
}

template <class T, class A, int V, class I>
void launch_forward(const Tensor& x, const Tensor& y, const Tensor& mean, const Tensor& invstd,
                    const Tensor& w, const Tensor& b, int64_t C, int64_t S, cudaStream_t s) {
  const int64_t groups = x->numel() / V;
  apply_forward<T, A, I, V><<<apply_grid(groups), kApplyThreads, 0, s>>>(
      cptr<T>(x), mptr<T>(y), cptr<A>(mean), cptr<A>(invstd), cptr<A>(w), cptr<A>(b), I(groups),
      I(S), I(C));
  CL_CUDA_KERNEL_LAUNCH_CHECK();
}

template <class T, class A, int V, class I>
void launch_backward(const Tensor& g, const Tensor& x, const Tensor& dx, const Tensor& mean,
                     const Tensor& invstd, const Tensor& w, const A* coef, int64_t C, int64_t S,
                     cudaStream_t s) {
  const int64_t groups = x->numel() / V;
  apply_backward<T, A, I, V><<<apply_grid(groups), kApplyThreads, 0, s>>>(
      cptr<T>(g), cptr<T>(x), mptr<T>(dx), cptr<A>(mean), cptr<A>(invstd), cptr<A>(w), coef,
      I(groups), I(S), I(C));
  CL_CUDA_KERNEL_LAUNCH_CHECK();
}

// Picks the elements per thread (4 when runs split evenly into fours) and the index width.
template <class F>
void by_layout(int64_t numel, int64_t S, F&& f) {
  const bool small = numel < (int64_t(1) << 31);
  if (S % 4 == 0) {
    if (small) return f(std::integral_constant<int, 4>(), uint32_t());
    return f(std::integral_constant<int, 4>(), int64_t());
  }
  if (small) return f(std::integral_constant<int, 1>(), uint32_t());
  f(std::integral_constant<int, 1>(), int64_t());
}

template <class T>
void run_forward(const Tensor& x, const Tensor& w, const Tensor& b, const Tensor& rm,
                 const Tensor& rv, int64_t N, int64_t C, int64_t S, bool training, double momentum,
                 double eps, const Tensor& y, const Tensor& mean, const Tensor& invstd) {
  using A = acc_t<T>;
  cudaStream_t s = stream_of(x);
  Tensor keep;
  if (training) {
    auto [buf, pm] = partials<StatsIn<T, A>, A>(StatsIn<T, A>{cptr<T>(x)}, N, C, S, x, s);
    keep = buf;
    stats_finalize<A><<<unsigned(cdiv(C, 8)), 256, 0, s>>>(
        cptr<Welford<A>>(buf), pm, C, A(N * S), A(eps), A(momentum), mptr<A>(rm), mptr<A>(rv),
        mptr<A>(mean), mptr<A>(invstd));
  } else {
    eval_stats<A><<<unsigned(cdiv(C, 256)), 256, 0, s>>>(cptr<A>(rm), cptr<A>(rv), C, A(eps),
                                                         mptr<A>(mean), mptr<A>(invstd));
  }
  CL_CUDA_KERNEL_LAUNCH_CHECK();
  if (x->numel() == 0) return;
  by_layout(x->numel(), S, [&](auto v, auto idx) {
    launch_forward<T, A, decltype(v)::value, decltype(idx)>(x, y, mean, invstd, w, b, C, S, s);
  });
}

template <class T>
void run_backward(const Tensor& g, const Tensor& x, const Tensor& w, const Tensor& mean,
                  const Tensor& invstd, int64_t N, int64_t C, int64_t S, bool training,
                  const Tensor& dx, const Tensor& dw, const Tensor& db) {
  using A = acc_t<T>;
  cudaStream_t s = stream_of(x);
  Tensor keep, coef;
  if (dw || db || (dx && training)) {
    GradIn<T, A> in{cptr<T>(g), cptr<T>(x), cptr<A>(mean)};
    auto [buf, pm] = partials<GradIn<T, A>, A>(in, N, C, S, x, s);
    keep = buf;
    if (dx && training) coef = empty({2 * C}, TypeOf<A>::value, x->device());
    grad_finalize<A><<<unsigned(cdiv(C, 8)), 256, 0, s>>>(cptr<Pair<A>>(buf), pm, C, A(N * S),
                                                          cptr<A>(invstd), mptr<A>(dw), mptr<A>(db),
                                                          mptr<A>(coef));
    CL_CUDA_KERNEL_LAUNCH_CHECK();
  }
  if (!dx || x->numel() == 0) return;
  by_layout(x->numel(), S, [&](auto v, auto idx) {
    launch_backward<T, A, decltype(v)::value, decltype(idx)>(g, x, dx, mean, invstd, w,
                                                             cptr<A>(coef), C, S, s);
  });
}

}  // namespace

void batch_norm(const Tensor& x, const Tensor& w, const Tensor& b, const Tensor& rm,
                const Tensor& rv, int64_t N, int64_t C, int64_t S, bool training, double momentum,
                double eps, const Tensor& y, const Tensor& mean, const Tensor& invstd) {
  CL_DISPATCH_FLOATING(x->dtype, "batch_norm_cuda", [&] {
    run_forward<scalar_t>(x, w, b, rm, rv, N, C, S, training, momentum, eps, y, mean, invstd);
  });
}

void batch_norm_backward(const Tensor& g, const Tensor& x, const Tensor& w, const Tensor& mean,
                         const Tensor& invstd, int64_t N, int64_t C, int64_t S, bool training,
                         const Tensor& dx, const Tensor& dw, const Tensor& db) {
  CL_DISPATCH_FLOATING(x->dtype, "batch_norm_backward_cuda", [&] {
    run_backward<scalar_t>(g, x, w, mean, invstd, N, C, S, training, dx, dw, db);
  });
}

}  // namespace cl::cuda
