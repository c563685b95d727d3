// Column reductions on the GPU: the middle dim of a dense [outer, inner, cols] tensor, in
// place (ops/reduce.cpp makes the layout). Shared pieces: kernels/reduce.cuh.
#include <cuda_runtime.h>

#include "core/cuda_api.h"
#include "cuda/cuda_check.h"
#include "kernels/reduce.cuh"
#include "ops/kernels.h"

namespace cl::cuda {
namespace {

using namespace reducer;

// Column mode: block (x, o, split) covers blockDim.x vectors of V columns of slab o, with
// blockDim.y lanes down the rows: lane y walks rows lo + y, lo + y + lanes, ... Wide slabs get
// one lane (a warp reads 32 neighbouring vectors of one row); narrow ones as many lanes as fill
// the block (16 floats a row: 4 threads across, 64 lanes, a warp reads 8 whole rows), so a
// block is never mostly idle. kUnroll rows in flight per thread either way; the lanes' results
// meet in shared memory in a fixed tree. Long columns are split across grid.z with a second
// pass over the partials, as for rows.
extern __shared__ __align__(16) unsigned char lanes_smem[];

// Combines the accumulators of the blockDim.y lanes into lane 0's (tree over lanes, fixed order;
// dynamic shared memory of blockDim.x * blockDim.y * V accumulators when there are several).
template <class Red, int V>
__device__ void combine_lanes(typename Red::acc_t (&acc)[V]) {
  using acc_t = typename Red::acc_t;
  const int lanes = blockDim.y, n = blockDim.x * blockDim.y;
  if (lanes == 1) return;
  acc_t* sh = reinterpret_cast<acc_t*>(lanes_smem);
  const int t = threadIdx.y * blockDim.x + threadIdx.x;
#pragma unroll
  for (int j = 0; j < V; ++j) sh[j * n + t] = acc[j];
  __syncthreads();
  int h = 1;
  while (2 * h < lanes) h *= 2;
  for (; h > 0; h >>= 1) {
    if (int(threadIdx.y) < h && int(threadIdx.y) + h < lanes) {
#pragma unroll
      for (int j = 0; j < V; ++j) {
        acc[j] = Red::combine(acc[j], sh[j * n + t + h * blockDim.x]);
        sh[j * n + t] = acc[j];
      }
    }
    __syncthreads();
  }
}

// Stores a thread's V results at `slot` (with one split) or its partials for split `split`
// (n outputs in all).
template <class Red, int V>
__device__ __forceinline__ void col_store(const typename Red::acc_t (&acc)[V], int64_t slot,
                                          int64_t n, void* out, int64_t* idx,
                                          typename Red::acc_t* partial, int split, int splits) {
#pragma unroll
  for (int j = 0; j < V; ++j) {
    if (splits == 1) {
      Red::store(acc[j], out, idx, slot + j);
    } else {
      partial[int64_t(split) * n + slot + j] = acc[j];
    }
  }
}

// One lane (wide slabs): thread (o, c) walks rows [split * chunk, ...) of columns c .. c+V-1,
// so a warp reads 32 neighbouring vectors of one row. Kept apart from col_lanes: in one kernel
// the lanes' code took sum to 40 registers (6 blocks an SM instead of 8) and wide slabs lost
// 4-5 % of their bandwidth.
template <class T, class Red, int V>
__global__ void col_partial(const T* x, int64_t inner, int64_t cols, int64_t chunk, void* out,
                            int64_t* idx, typename Red::acc_t* partial, int splits) {
  using acc_t = typename Red::acc_t;
  int64_t c = (int64_t(blockIdx.x) * blockDim.x + threadIdx.x) * V;
  int64_t o = blockIdx.y;
  int split = blockIdx.z;
  if (c >= cols) return;
  int64_t lo = split * chunk, hi = lo + chunk < inner ? lo + chunk : inner;
  const T* base = x + o * inner * cols + c;
  acc_t acc[V];
#pragma unroll
  for (int j = 0; j < V; ++j) acc[j] = Red::identity();
  int64_t r = lo;
  const T* p = base + r * cols;
  for (; r + kUnroll <= hi; r += kUnroll, p += kUnroll * cols) {
    Vec<T, V> v[kUnroll];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) v[u] = *reinterpret_cast<const Vec<T, V>*>(p + u * cols);
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
#pragma unroll
      for (int j = 0; j < V; ++j) Red::step(acc[j], v[u].v[j], r + u);
    }
  }
  for (; r < hi; ++r, p += cols) {
    Vec<T, V> v = *reinterpret_cast<const Vec<T, V>*>(p);
#pragma unroll
    for (int j = 0; j < V; ++j) Red::step(acc[j], v.v[j], r);
  }
  col_store<Red, V>(acc, o * cols + c, gridDim.y * cols, out, idx, partial, split, splits);
}

// Lanes (narrow slabs): lane y of the block walks rows lo + y, lo + y + lanes, ... of the
// blockDim.x vectors of slab o (all of its columns). A pointer walk, p advancing by whole
// strides: indexing base + (r + u * lanes) * cols cost 10-15 % more.
template <class T, class Red, int V>
__global__ void col_lanes(const T* x, int64_t inner, int64_t cols, int64_t chunk, void* out,
                          int64_t* idx, typename Red::acc_t* partial, int splits) {
  using acc_t = typename Red::acc_t;
  int64_t c = (int64_t(blockIdx.x) * blockDim.x + threadIdx.x) * V;
  int64_t o = blockIdx.y;
  int split = blockIdx.z;
  const bool active = c < cols;
  const int64_t step = blockDim.y;
  int64_t lo = split * chunk, hi = lo + chunk < inner ? lo + chunk : inner;
  acc_t acc[V];
#pragma unroll
  for (int j = 0; j < V; ++j) acc[j] = Red::identity();
  if (active) {
    int64_t r = lo + threadIdx.y;
    const T* p = x + o * inner * cols + c + r * cols;
    const int64_t stride = step * cols;
    for (; r + (kUnroll - 1) * step < hi; r += kUnroll * step, p += kUnroll * stride) {
      Vec<T, V> v[kUnroll];
#pragma unroll
      for (int u = 0; u < kUnroll; ++u) v[u] = *reinterpret_cast<const Vec<T, V>*>(p + u * stride);
#pragma unroll
      for (int u = 0; u < kUnroll; ++u) {
#pragma unroll
        for (int j = 0; j < V; ++j) Red::step(acc[j], v[u].v[j], r + u * step);
      }
    }
    for (; r < hi; r += step, p += stride) {
      Vec<T, V> v = *reinterpret_cast<const Vec<T, V>*>(p);
#pragma unroll
      for (int j = 0; j < V; ++j) Red::step(acc[j], v.v[j], r);
    }
  }
  combine_lanes<Red, V>(acc);
  if (!active || threadIdx.y != 0) return;
  col_store<Red, V>(acc, o * cols + c, gridDim.y * cols, out, idx, partial, split, splits);
}

// The second pass: slot s combines partial[0..splits) * n + s, with lanes over the splits
// when there are few slots (a narrow column's 1000 partials are not one thread's walk).
template <class Red>
__global__ void col_finish(const typename Red::acc_t* partial, int64_t n, int splits, void* out,
                           int64_t* idx) {
  int64_t slot = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  const bool active = slot < n;
  const int step = blockDim.y;
  // Loads in batches ahead of the combines: with the Arg ops' branchy combine, one load after
  // another made this pass the slowest part of a column reduction.
  using acc_t = typename Red::acc_t;
  constexpr int kBatch = 8;
  acc_t acc[1] = {Red::identity()};
  if (active) {
    int s = threadIdx.y;
    for (; s + (kBatch - 1) * step < splits; s += kBatch * step) {
      acc_t v[kBatch];
#pragma unroll
      for (int u = 0; u < kBatch; ++u) v[u] = partial[int64_t(s + u * step) * n + slot];
#pragma unroll
      for (int u = 0; u < kBatch; ++u) acc[0] = Red::combine(acc[0], v[u]);
    }
    for (; s < splits; s += step) acc[0] = Red::combine(acc[0], partial[int64_t(s) * n + slot]);
  }
  combine_lanes<Red, 1>(acc);
  if (active && threadIdx.y == 0) Red::store(acc[0], out, idx, slot);
}

// Threads across (x) and lanes down (y) for `width` units of work across and `depth` down.
inline dim3 lanes_block(int64_t width, int64_t depth) {
  if (width >= kThreads) return dim3(kThreads, 1);
  int64_t lanes = kThreads / width;
  if (lanes > depth) lanes = depth > 0 ? depth : 1;
  return dim3(unsigned(width), unsigned(lanes));
}

template <class T, class Red, int V>
void launch_cols_v(const T* x, int64_t outer, int64_t inner, int64_t cols, const Tensor& out,
                   const Tensor& idx, cudaStream_t stream, Device dev) {
  using acc_t = typename Red::acc_t;
  dim3 block = lanes_block(cols / V, inner);
  int64_t xblocks = (cols / V + block.x - 1) / block.x;
  int64_t want = 132 * 8;
  int64_t splits = (want + xblocks * outer - 1) / (xblocks * outer);
  // At least 64 rows a block and 16 (four unrolled steps) a lane.
  int64_t rows_per_split = 16 * int64_t(block.y) > 64 ? 16 * int64_t(block.y) : 64;
  splits = splits < (inner + rows_per_split - 1) / rows_per_split
               ? splits
               : (inner + rows_per_split - 1) / rows_per_split;
  if (splits < 1) splits = 1;
  if (splits > 65535) splits = 65535;
  int64_t chunk = (inner + splits - 1) / splits;
  Tensor partial;
  if (splits > 1) {
    partial =
        empty({int64_t(splits * outer * cols * int64_t(sizeof(acc_t)))}, ScalarType::UInt8, dev);
  }
  acc_t* pp = partial ? reinterpret_cast<acc_t*>(partial->data()) : nullptr;
  int64_t* ix = idx ? reinterpret_cast<int64_t*>(idx->data()) : nullptr;
  dim3 grid(static_cast<unsigned>(xblocks), static_cast<unsigned>(outer),
            static_cast<unsigned>(splits));
  if (block.y == 1) {
    gpu::launch<col_partial<T, Red, V>>(grid, block, stream, x, inner, cols, chunk, out->data(), ix,
                                        pp, int(splits));
  } else {
    size_t smem = size_t(block.x) * block.y * V * sizeof(acc_t);
    gpu::launch_smem<col_lanes<T, Red, V>>(grid, block, smem, stream, x, inner, cols, chunk,
                                           out->data(), ix, pp, int(splits));
  }
  CL_CUDA_KERNEL_LAUNCH_CHECK();
  if (splits > 1) {
    int64_t n = outer * cols;
    dim3 fblock = lanes_block(n, splits);
    size_t fsmem = fblock.y > 1 ? size_t(fblock.x) * fblock.y * sizeof(acc_t) : 0;
    gpu::launch_smem<col_finish<Red>>(unsigned((n + fblock.x - 1) / fblock.x), fblock, fsmem,
                                      stream, pp, n, int(splits), out->data(), ix);
    CL_CUDA_KERNEL_LAUNCH_CHECK();
  }
}

template <class T, ReduceOp OP>
void launch_cols(const Tensor& in, int64_t outer, int64_t inner, int64_t cols, const Tensor& out,
                 const Tensor& idx) {
  using Red = R<T, OP>;
  constexpr int V = vec_width<T>();
  cudaStream_t stream = static_cast<cudaStream_t>(current_stream(in->device().index));
  const T* x = reinterpret_cast<const T*>(in->data());
  if (cols % V == 0 && reinterpret_cast<uintptr_t>(x) % sizeof(Vec<T, V>) == 0) {
    launch_cols_v<T, Red, V>(x, outer, inner, cols, out, idx, stream, in->device());
  } else {
    launch_cols_v<T, Red, 1>(x, outer, inner, cols, out, idx, stream, in->device());
  }
}

}  // namespace

void reduce_cols(ReduceOp op, const Tensor& in, int64_t outer, int64_t inner, int64_t cols,
                 const Tensor& out, const Tensor& idx) {
  CL_DISPATCH_ALL_TYPES(in->dtype, "reduce", [&] {
    using T = scalar_t;
    with_reduce_op(
        op, [&](auto k) { launch_cols<T, decltype(k)::value>(in, outer, inner, cols, out, idx); });
  });
}

}  // namespace cl::cuda
