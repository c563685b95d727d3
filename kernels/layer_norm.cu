// native_layer_norm on CUDA (ops/layer_norm.cpp checks and lays out the operands).
//
// Forward: a warp or a block per row (kernels/nn_rows.cuh) reads the row three times (the
// second and third reads hit the cache): the mean, the biased variance about the mean (two
// passes, no cancellation), then y = (x - mean) * rstd * w + b; mean and rstd are saved in
// the accumulation type.
// Backward: grad_input per row with the same mapping, from the row's sums of g * w and
// g * w * xhat; grad_weight and grad_bias are column sums over the rows, taken in chunks of
// rows by 32 x 8 blocks (partial sums in the accumulation type), then each column's chunks
// summed in order by a second kernel, so that results do not depend on scheduling.
// Bytes moved: forward 2 * numel * itemsize (+ the parameters), backward 3 * numel * itemsize.
#include <cuda_runtime.h>

#include "core/cuda_api.h"
#include "cuda/cuda_check.h"
#include "kernels/nn_rows.cuh"
#include "ops/nn_ops.h"
#include "ops/ops.h"

namespace cl::cuda {
namespace {

using namespace ::cl::gpu::rows;

template <class T, class W, class A, bool kWarp>
__global__ void layer_norm_kernel(const T* __restrict__ x, const W* __restrict__ w,
                                  const W* __restrict__ b, T* __restrict__ y, A* __restrict__ mean,
                                  A* __restrict__ rstd, int64_t M, int64_t N, A eps) {
  __shared__ A shm[32];
  const RowMap rm = row_map<kWarp>();
  for (int64_t r = rm.first; r < M; r += rm.step) {
    const T* xr = x + r * N;
    A s = 0;
#pragma unroll 4
    for (int64_t i = rm.lane; i < N; i += rm.width) s += load<A>(xr, i);
    const A mu = row_reduce<kWarp>(s, Sum<A>(), shm) / A(N);
    A q = 0;
#pragma unroll 4
    for (int64_t i = rm.lane; i < N; i += rm.width) {
      const A d = load<A>(xr, i) - mu;
      q += d * d;
    }
    const A rs = rsqrt_of(row_reduce<kWarp>(q, Sum<A>(), shm) / A(N) + eps);
    T* yr = y + r * N;
#pragma unroll 4
    for (int64_t i = rm.lane; i < N; i += rm.width) {
      A v = (load<A>(xr, i) - mu) * rs;
      if (w) v = v * load<A>(w, i);
      if (b) v = v + load<A>(b, i);
      yr[i] = store<T>(v);
    }
    if (rm.lane == 0) {
      mean[r] = mu;
      rstd[r] = rs;
    }
  }
}

template <class T, class W, class A, bool kWarp>
__global__ void layer_norm_grad_input_kernel(const T* __restrict__ g, const T* __restrict__ x,
                                             const A* __restrict__ mean, const A* __restrict__ rstd,
                                             const W* __restrict__ w, T* __restrict__ dx, int64_t M,
                                             int64_t N) {
  __shared__ A shm[32];
  const RowMap rm = row_map<kWarp>();
  for (int64_t r = rm.first; r < M; r += rm.step) {
    const T* gr = g + r * N;
    const T* xr = x + r * N;
    const A mu = mean[r], rs = rstd[r];
    A sa = 0, sc = 0;
#pragma unroll 4
    for (int64_t i = rm.lane; i < N; i += rm.width) {
      A gw = load<A>(gr, i);
      if (w) gw = gw * load<A>(w, i);
      sa += gw;
      sc += gw * (load<A>(xr, i) - mu) * rs;
    }
    const A a = row_reduce<kWarp>(sa, Sum<A>(), shm) / A(N);
    const A c = row_reduce<kWarp>(sc, Sum<A>(), shm) / A(N);
    T* dr = dx + r * N;
#pragma unroll 4
    for (int64_t i = rm.lane; i < N; i += rm.width) {
      A gw = load<A>(gr, i);
      if (w) gw = gw * load<A>(w, i);
      const A xh = (load<A>(xr, i) - mu) * rs;
      dr[i] = store<T>(rs * (gw - a - xh * c));
    }
  }
}

constexpr int kColX = 32, kColY = 8;

// Block (bx, by): columns [bx * 32, +32) over rows [by * rows_per_chunk, +rows_per_chunk);
// writes the chunk's sums of g * xhat (pw) and g (pb) to pw/pb[by * N + col] (either null).
template <class T, class A>
__global__ void layer_norm_cols_kernel(const T* __restrict__ g, const T* __restrict__ x,
                                       const A* __restrict__ mean, const A* __restrict__ rstd,
                                       int64_t M, int64_t N, int64_t rows_per_chunk,
                                       A* __restrict__ pw, A* __restrict__ pb) {
  __shared__ A sw[kColY][kColX + 1];
  __shared__ A sb[kColY][kColX + 1];
  const int tx = threadIdx.x, ty = threadIdx.y;
  const int64_t col = int64_t(blockIdx.x) * kColX + tx;
  const int64_t r0 = int64_t(blockIdx.y) * rows_per_chunk;
  const int64_t r1 = r0 + rows_per_chunk < M ? r0 + rows_per_chunk : M;
  A aw = 0, ab = 0;
  if (col < N) {
    for (int64_t r = r0 + ty; r < r1; r += kColY) {
      const A gv = load<A>(g, r * N + col);
      if (pw) aw += gv * (load<A>(x, r * N + col) - mean[r]) * rstd[r];
      ab += gv;
    }
  }
  sw[ty][tx] = aw;
  sb[ty][tx] = ab;
  __syncthreads();
  if (ty == 0 && col < N) {
    A tw = 0, tb = 0;
#pragma unroll
    for (int j = 0; j < kColY; ++j) {
      tw += sw[j][tx];
      tb += sb[j][tx];
    }
    if (pw) pw[int64_t(blockIdx.y) * N + col] = tw;
    if (pb) pb[int64_t(blockIdx.y) * N + col] = tb;
  }
}

// dw[col], db[col] = sums over chunks of pw/pb[chunk * N + col], in chunk order (either
// pair may be null).
template <class W, class A>
__global__ void sum_chunks_kernel(const A* __restrict__ pw, const A* __restrict__ pb,
                                  int64_t chunks, int64_t N, W* __restrict__ dw,
                                  W* __restrict__ db) {
  for (int64_t col = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; col < N;
       col += int64_t(gridDim.x) * blockDim.x) {
    A sw = 0, sb = 0;
    for (int64_t c = 0; c < chunks; ++c) {
      if (pw) sw += pw[c * N + col];
      if (pb) sb += pb[c * N + col];
    }
    if (dw) dw[col] = store<W>(sw);
    if (db) db[col] = store<W>(sb);
  }
}

// The parameters' type W: float32 when either is float32 beside a float16/bfloat16 x (the
// other converted to it), else x's type (ops/layer_norm.cpp converted everything else).
bool params_in_float(ScalarType dt, const Tensor& w, const Tensor& b) {
  const bool half = dt == ScalarType::Float16 || dt == ScalarType::BFloat16;
  return half && ((w && w->dtype == ScalarType::Float32) || (b && b->dtype == ScalarType::Float32));
}

Tensor as_float(const Tensor& t) {
  if (!t || t->dtype == ScalarType::Float32) return t;
  return to(t, t->device(), ScalarType::Float32, false, false);
}

template <class T, class W>
void run_forward(const Tensor& x, const Tensor& w, const Tensor& b, int64_t M, int64_t N,
                 double eps, const Tensor& y, const Tensor& mean, const Tensor& rstd) {
  using A = acc_t<T>;
  const RowLaunch l = row_launch(M, N);
  cudaStream_t s = stream_of(x);
  if (l.warp) {
    layer_norm_kernel<T, W, A, true><<<l.grid, l.block, 0, s>>>(
        cptr<T>(x), cptr<W>(w), cptr<W>(b), mptr<T>(y), mptr<A>(mean), mptr<A>(rstd), M, N, A(eps));
  } else {
    layer_norm_kernel<T, W, A, false><<<l.grid, l.block, 0, s>>>(
        cptr<T>(x), cptr<W>(w), cptr<W>(b), mptr<T>(y), mptr<A>(mean), mptr<A>(rstd), M, N, A(eps));
  }
  CL_CUDA_KERNEL_LAUNCH_CHECK();
}

template <class T, class W>
void run_backward(const Tensor& g, const Tensor& x, const Tensor& mean, const Tensor& rstd,
                  const Tensor& w, int64_t M, int64_t N, const Tensor& dx, const Tensor& dw,
                  const Tensor& db) {
  using A = acc_t<T>;
  cudaStream_t s = stream_of(x);
  if (dx) {
    const RowLaunch l = row_launch(M, N);
    if (l.warp) {
      layer_norm_grad_input_kernel<T, W, A, true><<<l.grid, l.block, 0, s>>>(
          cptr<T>(g), cptr<T>(x), cptr<A>(mean), cptr<A>(rstd), cptr<W>(w), mptr<T>(dx), M, N);
    } else {
      layer_norm_grad_input_kernel<T, W, A, false><<<l.grid, l.block, 0, s>>>(
          cptr<T>(g), cptr<T>(x), cptr<A>(mean), cptr<A>(rstd), cptr<W>(w), mptr<T>(dx), M, N);
    }
    CL_CUDA_KERNEL_LAUNCH_CHECK();
  }
  if (!dw && !db) return;
  // Chunks of at least 64 rows, at most 1024 chunks (gridDim.y <= 65535).
  int64_t rows_per_chunk = std::max<int64_t>(64, (M + 1023) / 1024);
  const int64_t chunks = (M + rows_per_chunk - 1) / rows_per_chunk;
  const int64_t parts = (dw ? 1 : 0) + (db ? 1 : 0);
  Tensor buf = empty({parts * chunks * N}, TypeOf<A>::value, x->device());
  A* pw = dw ? mptr<A>(buf) : nullptr;
  A* pb = db ? mptr<A>(buf) + (dw ? chunks * N : 0) : nullptr;
  const dim3 grid(unsigned((N + kColX - 1) / kColX), unsigned(chunks));
  layer_norm_cols_kernel<T, A><<<grid, dim3(kColX, kColY), 0, s>>>(
      cptr<T>(g), cptr<T>(x), cptr<A>(mean), cptr<A>(rstd), M, N, rows_per_chunk, pw, pb);
  CL_CUDA_KERNEL_LAUNCH_CHECK();
  const unsigned cgrid = unsigned(std::min<int64_t>((N + 255) / 256, 65535));
  sum_chunks_kernel<W, A><<<cgrid, 256, 0, s>>>(pw, pb, chunks, N, mptr<W>(dw), mptr<W>(db));
  CL_CUDA_KERNEL_LAUNCH_CHECK();
}

}  // namespace

void layer_norm(const Tensor& x, const Tensor& w_in, const Tensor& b_in, int64_t M, int64_t N,
                double eps, const Tensor& y, const Tensor& mean, const Tensor& rstd) {
  const bool in_float = params_in_float(x->dtype, w_in, b_in);
  const Tensor w = in_float ? as_float(w_in) : w_in, b = in_float ? as_float(b_in) : b_in;
  CL_DISPATCH_FLOATING(x->dtype, "layer_norm_cuda", [&] {
    if constexpr (std::is_same_v<scalar_t, Half> || std::is_same_v<scalar_t, BFloat16>) {
      if (in_float) return run_forward<scalar_t, float>(x, w, b, M, N, eps, y, mean, rstd);
    }
    run_forward<scalar_t, scalar_t>(x, w, b, M, N, eps, y, mean, rstd);
  });
}

// dw and db have the parameters' type: float32 beside a float16/bfloat16 x when the weight
// is float32 (ops/layer_norm.cpp allocates them so), else x's type.
void layer_norm_backward(const Tensor& g, const Tensor& x, const Tensor& mean, const Tensor& rstd,
                         const Tensor& w, int64_t M, int64_t N, const Tensor& dx, const Tensor& dw,
                         const Tensor& db) {
  const Tensor& p = dw ? dw : db;
  const bool in_float = params_in_float(x->dtype, w, p);
  CL_CHECK(!w || !p || w->dtype == p->dtype, "layer_norm_backward: parameter dtypes differ");
  CL_DISPATCH_FLOATING(x->dtype, "layer_norm_backward_cuda", [&] {
    if constexpr (std::is_same_v<scalar_t, Half> || std::is_same_v<scalar_t, BFloat16>) {
      if (in_float) return run_backward<scalar_t, float>(g, x, mean, rstd, w, M, N, dx, dw, db);
    }
    run_backward<scalar_t, scalar_t>(g, x, mean, rstd, w, M, N, dx, dw, db);
  });
}

}  // namespace cl::cuda
