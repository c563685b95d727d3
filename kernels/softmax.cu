// _softmax / _log_softmax, their backward, and nll_loss forward and backward on CUDA
// (ops/softmax.cpp checks and lays out the operands).
//
// Softmax over the last dim (inner == 1): a warp or a block per row (kernels/nn_rows.cuh)
// finds the row's maximum, the sum of exp(x - max), then writes every element: three reads
// of the row (the later ones from the cache) and one write; a long row that fits in shared
// memory is read from global memory once (softmax_rows_smem_kernel). Over another dim (inner > 1):
// one thread per line walks it with stride `inner`, neighbouring threads reading
// neighbouring elements. The backward reads g and y the same way: one sum per line, then
// the elementwise formula.
// nll_loss: one thread per row picks -w[t] * x[i, t]; 'mean' and 'sum' run as one block
// that reduces the losses and the weights in a fixed order. Its backward writes the whole
// gradient in one pass (zeros except at (i, t[i])). A target outside [0, C) that is not
// ignore_index stops the kernel (__trap), as torch's device-side assert does.
#include <cuda_runtime.h>

#include "core/cuda_api.h"
#include "cuda/cuda_check.h"
#include "kernels/nn_rows.cuh"
#include "ops/nn_ops.h"

namespace cl::cuda {
namespace {

using namespace ::cl::gpu::rows;

__device__ __forceinline__ float ex(float v) { return expf(v); }
__device__ __forceinline__ double ex(double v) { return ::exp(v); }
__device__ __forceinline__ float lg(float v) { return logf(v); }
__device__ __forceinline__ double lg(double v) { return ::log(v); }

template <class T, class A, bool kWarp, bool kLog>
__global__ void softmax_rows_kernel(const T* __restrict__ x, T* __restrict__ y, int64_t rows,
                                    int64_t n) {
  __shared__ A shm[32];
  const RowMap rm = row_map<kWarp>();
  for (int64_t r = rm.first; r < rows; r += rm.step) {
    const T* xr = x + r * n;
    T* yr = y + r * n;
    A m = A(-INFINITY);
#pragma unroll 4
    for (int64_t i = rm.lane; i < n; i += rm.width) m = Max<A>()(m, load<A>(xr, i));
    m = row_reduce<kWarp>(m, Max<A>(), shm);
    A s = 0;
#pragma unroll 4
    for (int64_t i = rm.lane; i < n; i += rm.width) s += ex(load<A>(xr, i) - m);
    s = row_reduce<kWarp>(s, Sum<A>(), shm);
    if constexpr (kLog) {
      const A ls = lg(s);
#pragma unroll 4
      for (int64_t i = rm.lane; i < n; i += rm.width) yr[i] = store<T>(load<A>(xr, i) - m - ls);
    } else {
#pragma unroll 4
      for (int64_t i = rm.lane; i < n; i += rm.width) yr[i] = store<T>(ex(load<A>(xr, i) - m) / s);
    }
  }
}

template <class T, class A, bool kWarp, bool kLog>
__global__ void softmax_backward_rows_kernel(const T* __restrict__ g, const T* __restrict__ y,
                                             T* __restrict__ gx, int64_t rows, int64_t n) {
  __shared__ A shm[32];
  const RowMap rm = row_map<kWarp>();
  for (int64_t r = rm.first; r < rows; r += rm.step) {
    const T* gr = g + r * n;
    const T* yr = y + r * n;
    T* out = gx + r * n;
    A s = 0;
#pragma unroll 4
    for (int64_t i = rm.lane; i < n; i += rm.width) {
      s += kLog ? load<A>(gr, i) : load<A>(gr, i) * load<A>(yr, i);
    }
    s = row_reduce<kWarp>(s, Sum<A>(), shm);
#pragma unroll 4
    for (int64_t i = rm.lane; i < n; i += rm.width) {
      const A gv = load<A>(gr, i), yv = load<A>(yr, i);
      out[i] = store<T>(kLog ? gv - ex(yv) * s : yv * (gv - s));
    }
  }
}

// Long rows that fit in shared memory (Note [Rows staged in shared memory]): a block per
// row copies it in once with 16-byte loads, then computes exactly as softmax_rows_kernel
// (each thread the same elements in the same order, so the results are the same bits) from
// shared memory, writes the result in place there and copies it out with 16-byte stores.
// One read and one write of the row in global memory instead of three reads and a write.
template <class T, class A, bool kLog>
__global__ void softmax_rows_smem_kernel(const T* __restrict__ x, T* __restrict__ y, int64_t rows,
                                         int64_t n) {
  __shared__ A shm[32];
  T* row = staged_row<T>();
  const RowMap rm = row_map<false>();
  for (int64_t r = rm.first; r < rows; r += rm.step) {
    stage_in(x + r * n, row, n);
    A m = A(-INFINITY);
#pragma unroll 4
    for (int64_t i = rm.lane; i < n; i += rm.width) m = Max<A>()(m, load<A>(row, i));
    m = block_reduce(m, Max<A>(), shm);
    A s = 0;
#pragma unroll 4
    for (int64_t i = rm.lane; i < n; i += rm.width) s += ex(load<A>(row, i) - m);
    s = block_reduce(s, Sum<A>(), shm);
    if constexpr (kLog) {
      const A ls = lg(s);
#pragma unroll 4
      for (int64_t i = rm.lane; i < n; i += rm.width) row[i] = store<T>(load<A>(row, i) - m - ls);
    } else {
#pragma unroll 4
      for (int64_t i = rm.lane; i < n; i += rm.width)
        row[i] = store<T>(ex(load<A>(row, i) - m) / s);
    }
    stage_out(row, y + r * n, n);
  }
}

// The backward of long rows: the incoming gradient staged (and for softmax, whose formula
// reads y twice, y too), then softmax_backward_rows_kernel's arithmetic.
template <class T, class A, bool kLog>
__global__ void softmax_backward_rows_smem_kernel(const T* __restrict__ g, const T* __restrict__ y,
                                                  T* __restrict__ gx, int64_t rows, int64_t n) {
  __shared__ A shm[32];
  T* gs = staged_row<T>();
  T* ys = gs + staged_elems<T>(n);
  const RowMap rm = row_map<false>();
  for (int64_t r = rm.first; r < rows; r += rm.step) {
    stage_in(g + r * n, gs, n);
    if constexpr (!kLog) stage_in(y + r * n, ys, n);
    const T* yr = kLog ? y + r * n : ys;
    A s = 0;
#pragma unroll 4
    for (int64_t i = rm.lane; i < n; i += rm.width) {
      s += kLog ? load<A>(gs, i) : load<A>(gs, i) * load<A>(yr, i);
    }
    s = block_reduce(s, Sum<A>(), shm);
#pragma unroll 4
    for (int64_t i = rm.lane; i < n; i += rm.width) {
      const A gv = load<A>(gs, i), yv = load<A>(yr, i);
      gs[i] = store<T>(kLog ? gv - ex(yv) * s : yv * (gv - s));
    }
    stage_out(gs, gx + r * n, n);
  }
}

// Lines along a middle dim of [outer, n, inner]: one thread per (outer, inner) line.
template <class T, class A, bool kLog>
__global__ void softmax_cols_kernel(const T* __restrict__ x, T* __restrict__ y, int64_t outer,
                                    int64_t n, int64_t inner) {
  const int64_t lines = outer * inner;
  for (int64_t l = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; l < lines;
       l += int64_t(gridDim.x) * blockDim.x) {
    const int64_t base = (l / inner) * n * inner + l % inner;
    A m = A(-INFINITY);
    for (int64_t i = 0; i < n; ++i) m = Max<A>()(m, load<A>(x, base + i * inner));
    A s = 0;
    for (int64_t i = 0; i < n; ++i) s += ex(load<A>(x, base + i * inner) - m);
    const A ls = kLog ? lg(s) : A(0);
    for (int64_t i = 0; i < n; ++i) {
      const A v = load<A>(x, base + i * inner) - m;
      y[base + i * inner] = store<T>(kLog ? v - ls : ex(v) / s);
    }
  }
}

template <class T, class A, bool kLog>
__global__ void softmax_backward_cols_kernel(const T* __restrict__ g, const T* __restrict__ y,
                                             T* __restrict__ gx, int64_t outer, int64_t n,
                                             int64_t inner) {
  const int64_t lines = outer * inner;
  for (int64_t l = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; l < lines;
       l += int64_t(gridDim.x) * blockDim.x) {
    const int64_t base = (l / inner) * n * inner + l % inner;
    A s = 0;
    for (int64_t i = 0; i < n; ++i) {
      const int64_t j = base + i * inner;
      s += kLog ? load<A>(g, j) : load<A>(g, j) * load<A>(y, j);
    }
    for (int64_t i = 0; i < n; ++i) {
      const int64_t j = base + i * inner;
      const A gv = load<A>(g, j), yv = load<A>(y, j);
      gx[j] = store<T>(kLog ? gv - ex(yv) * s : yv * (gv - s));
    }
  }
}

constexpr int kLineBlock = 256;

unsigned line_grid(int64_t lines) {
  return unsigned(std::max<int64_t>(
      1, std::min<int64_t>((lines + kLineBlock - 1) / kLineBlock, int64_t(1) << 20)));
}

template <class T, bool kLog>
void run_softmax(const Tensor& x, int64_t outer, int64_t n, int64_t inner, const Tensor& y) {
  using A = acc_t<T>;
  const T* xp = reinterpret_cast<const T*>(x->data());
  T* yp = reinterpret_cast<T*>(y->data());
  cudaStream_t s = stream_of(x);
  if (inner == 1) {
    const RowLaunch l = row_launch(outer, n);
    const int dev = x->device().index;
    if (l.warp) {
      softmax_rows_kernel<T, A, true, kLog><<<l.grid, l.block, 0, s>>>(xp, yp, outer, n);
    } else if (const size_t bytes = staged_bytes<T>(n, 1);
               bytes <= staged_limit<softmax_rows_smem_kernel<T, A, kLog>>(dev)) {
      softmax_rows_smem_kernel<T, A, kLog><<<l.grid, l.block, bytes, s>>>(xp, yp, outer, n);
    } else {
      softmax_rows_kernel<T, A, false, kLog><<<l.grid, l.block, 0, s>>>(xp, yp, outer, n);
    }
  } else {
    softmax_cols_kernel<T, A, kLog>
        <<<line_grid(outer * inner), kLineBlock, 0, s>>>(xp, yp, outer, n, inner);
  }
  CL_CUDA_KERNEL_LAUNCH_CHECK();
}

template <class T, bool kLog>
void run_softmax_backward(const Tensor& g, const Tensor& y, int64_t outer, int64_t n, int64_t inner,
                          const Tensor& gx) {
  using A = acc_t<T>;
  const T* gp = reinterpret_cast<const T*>(g->data());
  const T* yp = reinterpret_cast<const T*>(y->data());
  T* op = reinterpret_cast<T*>(gx->data());
  cudaStream_t s = stream_of(y);
  if (inner == 1) {
    const RowLaunch l = row_launch(outer, n);
    const int dev = y->device().index;
    if (l.warp) {
      softmax_backward_rows_kernel<T, A, true, kLog>
          <<<l.grid, l.block, 0, s>>>(gp, yp, op, outer, n);
    } else if (const size_t bytes = staged_bytes<T>(n, kLog ? 1 : 2);
               bytes <= staged_limit<softmax_backward_rows_smem_kernel<T, A, kLog>>(dev)) {
      softmax_backward_rows_smem_kernel<T, A, kLog>
          <<<l.grid, l.block, bytes, s>>>(gp, yp, op, outer, n);
    } else {
      softmax_backward_rows_kernel<T, A, false, kLog>
          <<<l.grid, l.block, 0, s>>>(gp, yp, op, outer, n);
    }
  } else {
    softmax_backward_cols_kernel<T, A, kLog>
        <<<line_grid(outer * inner), kLineBlock, 0, s>>>(gp, yp, op, outer, n, inner);
  }
  CL_CUDA_KERNEL_LAUNCH_CHECK();
}

constexpr int kLossBlock = 1024;

// reduction 0: a grid of threads, one per row; otherwise one block of kLossBlock threads.
template <class T, class A>
__global__ void __launch_bounds__(kLossBlock)
    nll_loss_kernel(const T* __restrict__ x, const int64_t* __restrict__ t, const T* __restrict__ w,
                    int64_t N, int64_t C, int reduction, int64_t ignore_index, T* __restrict__ out,
                    T* __restrict__ total) {
  __shared__ A shm[32];
  A ls = 0, ws = 0;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < N;
       i += int64_t(gridDim.x) * blockDim.x) {
    const int64_t c = t[i];
    A l = 0, wi = 0;
    if (c != ignore_index) {
      if (c < 0 || c >= C)
        __trap();  // torch: "Assertion `cur_target >= 0 && cur_target < n_classes` failed"
      wi = w ? load<A>(w, c) : A(1);
      l = -wi * load<A>(x, i * C + c);
    }
    if (reduction == 0) out[i] = store<T>(l);
    ls += l;
    ws += wi;
  }
  if (reduction == 0) {
    if (blockIdx.x == 0 && threadIdx.x == 0) *total = store<T>(A(0));
    return;
  }
  ls = block_reduce(ls, Sum<A>(), shm);
  ws = block_reduce(ws, Sum<A>(), shm);
  if (threadIdx.x == 0) {
    *out = store<T>(reduction == 1 ? ls / ws : ls);  // 0 / 0 (all ignored): NaN, as torch
    *total = store<T>(ws);
  }
}

template <class T, class A>
__global__ void nll_loss_backward_kernel(const T* __restrict__ g, const int64_t* __restrict__ t,
                                         const T* __restrict__ w, const T* __restrict__ total,
                                         int64_t N, int64_t C, int reduction, int64_t ignore_index,
                                         T* __restrict__ gx) {
  const int64_t n = N * C;
  for (int64_t j = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; j < n;
       j += int64_t(gridDim.x) * blockDim.x) {
    const int64_t i = j / C, c = j - i * C;
    const int64_t tc = t[i];
    A v = 0;
    if (c == tc && tc != ignore_index) {
      const A wi = w ? load<A>(w, tc) : A(1);
      const A gi = reduction == 0 ? load<A>(g, i) : load<A>(g, 0);
      v = -wi * (reduction == 1 ? gi / load<A>(total, 0) : gi);
    }
    gx[j] = store<T>(v);
  }
}

}  // namespace

void softmax(const Tensor& x, int64_t outer, int64_t n, int64_t inner, bool log, const Tensor& y) {
  CL_DISPATCH_FLOATING(x->dtype, "host_softmax", [&] {
    if (log) {
      run_softmax<scalar_t, true>(x, outer, n, inner, y);
    } else {
      run_softmax<scalar_t, false>(x, outer, n, inner, y);
    }
  });
}

void softmax_backward(const Tensor& g, const Tensor& y, int64_t outer, int64_t n, int64_t inner,
                      bool log, const Tensor& gx) {
  CL_DISPATCH_FLOATING(y->dtype, "host_softmax_backward", [&] {
    if (log) {
      run_softmax_backward<scalar_t, true>(g, y, outer, n, inner, gx);
    } else {
      run_softmax_backward<scalar_t, false>(g, y, outer, n, inner, gx);
    }
  });
}

void nll_loss(const Tensor& x, const Tensor& t, const Tensor& w, int reduction,
              int64_t ignore_index, const Tensor& out, const Tensor& total_weight) {
  const int64_t N = x->sizes[0], C = x->sizes[1];
  cudaStream_t s = stream_of(x);
  CL_DISPATCH_FLOATING(x->dtype, "nll_loss_forward_out_cuda", [&] {
    using A = acc_t<scalar_t>;
    const unsigned grid = reduction == 0 ? line_grid(N) : 1u;
    const unsigned block = reduction == 0 ? unsigned(kLineBlock) : unsigned(kLossBlock);
    nll_loss_kernel<scalar_t, A>
        <<<grid, block, 0, s>>>(cptr<scalar_t>(x), cptr<int64_t>(t), cptr<scalar_t>(w), N, C,
                                reduction, ignore_index, reinterpret_cast<scalar_t*>(out->data()),
                                reinterpret_cast<scalar_t*>(total_weight->data()));
    CL_CUDA_KERNEL_LAUNCH_CHECK();
  });
}

void nll_loss_backward(const Tensor& g, const Tensor& t, const Tensor& w, int reduction,
                       int64_t ignore_index, const Tensor& total_weight, const Tensor& gx) {
  const int64_t N = gx->sizes[0], C = gx->sizes[1];
  cudaStream_t s = stream_of(gx);
  CL_DISPATCH_FLOATING(gx->dtype, "nll_loss_backward_out_cuda", [&] {
    using A = acc_t<scalar_t>;
    nll_loss_backward_kernel<scalar_t, A><<<line_grid(N * C), kLineBlock, 0, s>>>(
        cptr<scalar_t>(g), cptr<int64_t>(t), cptr<scalar_t>(w), cptr<scalar_t>(total_weight), N, C,
        reduction, ignore_index, reinterpret_cast<scalar_t*>(gx->data()));
    CL_CUDA_KERNEL_LAUNCH_CHECK();
  });
}

}  // namespace cl::cuda
