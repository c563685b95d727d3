// gpu_kernel: turns a scalar functor (ops/functors.h) into a CUDA launch over an
// ElementwiseIter, on the current stream of the iterator's device.
//
// Dense operands take the vectorised path: each thread moves 16 bytes of every input
// (aligned vector loads), and the grid covers the range in one pass. Two- and three-dim
// loops whose operands are all dense along the output's dense dim, in rows of at least 1024
// (sliced, x[:, 1:] + 1), take the rows path: four coalesced loads
// in flight per thread, no index division. Other two- and three-dim loops whose output is
// dense along one dim (transposed inputs, short rows) take the tiled path: 32 x 128 tiles
// (narrower for wide types), no index division, and inputs whose fast dim is the other one
// (x.t()) staged through shared memory so that every read and write is
// coalesced. Anything else takes the strided path, which decomposes the linear index per
// dimension. Numbers ride in the kernel arguments. Bytes moved: sum over operands of
// numel * itemsize.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <utility>

#include "core/cuda_api.h"
#include "core/half.h"
#include "cuda/cuda_check.h"
#include "kernels/launch.cuh"
#include "ops/elementwise_iter.h"

namespace cl::gpu {

constexpr int kBlock = 256;

template <class T, int V>
struct alignas(sizeof(T) * V) VecT {
  T v[V];
};

template <class in_t>
constexpr int vec_width() {
  constexpr int w = int(16 / sizeof(in_t));
  return w > 8 ? 8 : (w < 1 ? 1 : w);
}

template <class out_t, class in_t, int N>
struct DenseArgs {
  out_t* out;
  const in_t* in[N];
  opmath_t<in_t> sval[N];  // numbers, already rounded to in_t unless it.scalar_opmath says
  unsigned scalar_mask;
};

template <int N>
struct StridedArgs {
  char* data[N + 1];
  int64_t strides[N + 1][kMaxDims];
  int64_t shape[kMaxDims];
  int ndim;
};

template <class F, class A, size_t... I>
__device__ __forceinline__ auto apply_at(const F& f, const A& args, int j,
                                         std::index_sequence<I...>) {
  return f(args[I][j]...);
}

// One vector per thread and a grid that covers the whole range (no grid-stride loop): the
// blocks in flight then work on neighbouring memory, which the DRAM pages favour.
template <class out_t, class in_t, int N, int V, class F>
__global__ void dense_kernel(int64_t n, DenseArgs<out_t, in_t, N> a, F f) {
  using op_t = opmath_t<in_t>;
  const int64_t i = (int64_t(blockIdx.x) * blockDim.x + threadIdx.x) * V;
  if (i >= n) return;
  op_t args[N > 0 ? N : 1][V];
  if (i + V <= n) {
#pragma unroll
    for (int k = 0; k < N; ++k) {
      if (a.scalar_mask & (1u << k)) {
#pragma unroll
        for (int j = 0; j < V; ++j) args[k][j] = op_t(a.sval[k]);
      } else {
        VecT<in_t, V> v = *reinterpret_cast<const VecT<in_t, V>*>(a.in[k] + i);
#pragma unroll
        for (int j = 0; j < V; ++j) args[k][j] = op_t(v.v[j]);
      }
    }
    VecT<out_t, V> o;
#pragma unroll
    for (int j = 0; j < V; ++j) {
      o.v[j] = convert<out_t>(apply_at(f, args, j, std::make_index_sequence<N>{}));
    }
    *reinterpret_cast<VecT<out_t, V>*>(a.out + i) = o;
  } else {
    for (int j = 0; j < V && i + j < n; ++j) {
#pragma unroll
      for (int k = 0; k < N; ++k) {
        args[k][j] = (a.scalar_mask & (1u << k)) ? op_t(a.sval[k]) : op_t(a.in[k][i + j]);
      }
      a.out[i + j] = convert<out_t>(apply_at(f, args, j, std::make_index_sequence<N>{}));
    }
  }
}

// index_t is uint32_t when every element index and byte offset fits (the common case:
// 32-bit division is several times cheaper than 64-bit), int64_t otherwise.
template <class out_t, class in_t, int N, class index_t, class F>
__global__ void strided_kernel(int64_t n, StridedArgs<N> a, DenseArgs<out_t, in_t, N> s, F f) {
  using op_t = opmath_t<in_t>;
  const int64_t step = int64_t(gridDim.x) * blockDim.x;
  for (int64_t idx = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; idx < n; idx += step) {
    int64_t off[N + 1] = {};
    index_t rem = index_t(idx);
    for (int d = 0; d < a.ndim; ++d) {
      index_t size = index_t(a.shape[d]);
      index_t q = rem / size;
      index_t r = rem - q * size;
      rem = q;
#pragma unroll
      for (int k = 0; k <= N; ++k) off[k] += int64_t(r) * a.strides[k][d];
    }
    op_t args[N > 0 ? N : 1][1];
#pragma unroll
    for (int k = 0; k < N; ++k) {
      args[k][0] = (s.scalar_mask & (1u << k))
                       ? op_t(s.sval[k])
                       : op_t(*reinterpret_cast<const in_t*>(a.data[k + 1] + off[k + 1]));
    }
    *reinterpret_cast<out_t*>(a.data[0] + off[0]) =
        convert<out_t>(apply_at(f, args, 0, std::make_index_sequence<N>{}));
  }
}

// Rows: every operand dense along dim 0 (and not broadcast along dim 1). Block
// (x, y, z) covers kRowUnroll * kBlock elements of row (y, z) from x * kRowUnroll * kBlock;
// thread t takes t, t + kBlock, ...: each load of a warp reads 32 neighbours, a thread has
// kRowUnroll loads in flight, and blocks in flight walk neighbouring memory. No index
// division. Sliced rows (x[:, 1:]) are misaligned for vector loads, so loads are scalar.
constexpr int kRowUnroll = 4;

template <int N>
struct RowArgs {
  char* data[N + 1];
  int64_t s0[N + 1], s1[N + 1], s2[N + 1];  // byte strides
  int64_t n0, n1, n2;
};

template <class out_t, class in_t, int N, class F>
__global__ void rows_kernel(RowArgs<N> a, DenseArgs<out_t, in_t, N> s, F f) {
  using op_t = opmath_t<in_t>;
  constexpr int U = kRowUnroll;
  const int64_t i0 = int64_t(blockIdx.x) * kBlock * U + threadIdx.x;
  for (int64_t z = blockIdx.z; z < a.n2; z += gridDim.z) {
    for (int64_t y = blockIdx.y; y < a.n1; y += gridDim.y) {
      op_t args[N > 0 ? N : 1][U];
#pragma unroll
      for (int k = 0; k < N; ++k) {
        const char* q = a.data[k + 1] + y * a.s1[k + 1] + z * a.s2[k + 1];
#pragma unroll
        for (int u = 0; u < U; ++u) {
          const int64_t i = i0 + u * kBlock;
          args[k][u] = (s.scalar_mask & (1u << k)) ? op_t(s.sval[k])
                       : i < a.n0 ? op_t(*reinterpret_cast<const in_t*>(q + i * a.s0[k + 1]))
                                  : op_t();
        }
      }
      char* o = a.data[0] + y * a.s1[0] + z * a.s2[0];
#pragma unroll
      for (int u = 0; u < U; ++u) {
        const int64_t i = i0 + u * kBlock;
        if (i < a.n0) {
          *reinterpret_cast<out_t*>(o + i * a.s0[0]) =
              convert<out_t>(apply_at(f, args, u, std::make_index_sequence<N>{}));
        }
      }
    }
  }
}

// The rows path's arguments, or false when the loop doesn't suit it: two or three dims, rows
// of at least one block's worth along the output's dense dim (made dim 0), and every tensor
// input dense along that dim and not broadcast along dim 1 (transposed and broadcast inputs
// take the tiled path).
template <int N>
bool make_row_args(const ElementwiseIter& it, RowArgs<N>& r) {
  if (it.ndim < 2 || it.ndim > 3) return false;
  const int64_t osz = int64_t(itemsize(it.out_dtype)), isz = int64_t(itemsize(it.in_dtype));
  const int d0 = it.strides[0][0] == osz ? 0 : 1, d1 = 1 - d0;
  if (it.strides[0][d0] != osz || it.shape[d0] < int64_t(kBlock) * kRowUnroll) return false;
  for (int k = 0; k <= N; ++k) {
    r.data[k] = it.data[k];
    r.s0[k] = it.strides[k][d0];
    r.s1[k] = it.strides[k][d1];
    r.s2[k] = it.ndim == 3 ? it.strides[k][2] : 0;
    // Broadcast inputs stay on the tiled path (measured faster for a broadcast row).
    if (k > 0 && !it.is_scalar[k] && (r.s0[k] != isz || r.s1[k] == 0)) return false;
  }
  r.n0 = it.shape[d0];
  r.n1 = it.shape[d1];
  r.n2 = it.ndim == 3 ? it.shape[2] : 1;
  return true;
}

constexpr int kTile = 32, kTileRows = 8;  // block: kTile x kTileRows threads

template <int N>
struct TileArgs {
  char* data[N + 1];
  int64_t s0[N + 1], s1[N + 1], s2[N + 1];  // byte strides of dims 0 (dense for the output), 1, 2
  int64_t n0, n1, n2;
  unsigned tmask;  // inputs staged through shared memory (bit k: input k)
};

// Tile sizes: T0 along dim 0 (the output's dense dim), T1 along dim 1; smaller where the
// staging tiles would pass 40 KiB of shared memory.
template <class in_t, int N, int T0, int T1>
constexpr bool tile_fits() {
  return N * sizeof(in_t) * T0 * (T1 + 1) <= 40960;
}

// Block (x, y, z) computes the tile [x*T0, +T0) x [y*T1, +T1) of slice z: thread (tx, ty)
// owns elements (tx + 32p, ty + 8j), so a warp writes 32 neighbours along dim 0, and it loads
// all of its inputs before storing anything. A staged input is first read with the roles
// swapped (a warp reads 32 neighbours along dim 1, its own fast dim) into a padded shared
// tile.
template <class out_t, class in_t, int N, int T0, int T1, int MINB, class F>
__global__ void __launch_bounds__(kTile* kTileRows, MINB)
    tiled_kernel(TileArgs<N> a, DenseArgs<out_t, in_t, N> s, F f) {
  using op_t = opmath_t<in_t>;
  constexpr int P = T0 / kTile, J = T1 / kTileRows, R = T0 / kTileRows, C = T1 / kTile;
  constexpr int NK = N > 0 ? N : 1;
  __shared__ in_t tile[NK][T0][T1 + 1];
  const int tx = threadIdx.x, ty = threadIdx.y;
  for (int64_t z = blockIdx.z; z < a.n2; z += gridDim.z) {
    for (int64_t by = blockIdx.y; by * T1 < a.n1; by += gridDim.y) {
      const int64_t b0 = int64_t(blockIdx.x) * T0, b1 = by * T1;
      if (a.tmask) {
#pragma unroll
        for (int k = 0; k < N; ++k) {
          if (!(a.tmask & (1u << k))) continue;
          const char* q =
              a.data[k + 1] + (b0 + ty) * a.s0[k + 1] + (b1 + tx) * a.s1[k + 1] + z * a.s2[k + 1];
          in_t v[R][C];
#pragma unroll
          for (int r = 0; r < R; ++r) {
#pragma unroll
            for (int c = 0; c < C; ++c) {
              bool ok = b0 + ty + r * kTileRows < a.n0 && b1 + tx + c * kTile < a.n1;
              v[r][c] = ok ? *reinterpret_cast<const in_t*>(q + r * kTileRows * a.s0[k + 1] +
                                                            c * kTile * a.s1[k + 1])
                           : in_t();
            }
          }
#pragma unroll
          for (int r = 0; r < R; ++r) {
#pragma unroll
            for (int c = 0; c < C; ++c) tile[k][ty + r * kTileRows][tx + c * kTile] = v[r][c];
          }
        }
        __syncthreads();
      }
      op_t args[NK][P * J];
#pragma unroll
      for (int k = 0; k < N; ++k) {
#pragma unroll
        for (int p = 0; p < P; ++p) {
          const int64_t i0 = b0 + tx + p * kTile;
          if (s.scalar_mask & (1u << k)) {
#pragma unroll
            for (int j = 0; j < J; ++j) args[k][p * J + j] = op_t(s.sval[k]);
          } else if (a.tmask & (1u << k)) {
#pragma unroll
            for (int j = 0; j < J; ++j) {
              args[k][p * J + j] = op_t(tile[k][tx + p * kTile][ty + j * kTileRows]);
            }
          } else {
            const char* q =
                a.data[k + 1] + i0 * a.s0[k + 1] + (b1 + ty) * a.s1[k + 1] + z * a.s2[k + 1];
#pragma unroll
            for (int j = 0; j < J; ++j) {
              bool ok = i0 < a.n0 && b1 + ty + j * kTileRows < a.n1;
              args[k][p * J + j] =
                  ok ? op_t(*reinterpret_cast<const in_t*>(q + j * kTileRows * a.s1[k + 1]))
                     : op_t();
            }
          }
        }
      }
#pragma unroll
      for (int p = 0; p < P; ++p) {
        const int64_t i0 = b0 + tx + p * kTile;
        char* o = a.data[0] + i0 * a.s0[0] + (b1 + ty) * a.s1[0] + z * a.s2[0];
#pragma unroll
        for (int j = 0; j < J; ++j) {
          if (i0 < a.n0 && b1 + ty + j * kTileRows < a.n1) {
            *reinterpret_cast<out_t*>(o + j * kTileRows * a.s1[0]) =
                convert<out_t>(apply_at(f, args, p * J + j, std::make_index_sequence<N>{}));
          }
        }
      }
      if (a.tmask) __syncthreads();
    }
  }
}

// The tiled path's arguments, or false when the loop doesn't suit it: two or three dims, at
// least a tile along the first two, and an output dense along one of them (made dim 0).
template <int N>
bool make_tile_args(const ElementwiseIter& it, TileArgs<N>& t) {
  if (it.ndim < 2 || it.ndim > 3) return false;
  int d0 = 0, d1 = 1;
  const int64_t osz = int64_t(itemsize(it.out_dtype)), isz = int64_t(itemsize(it.in_dtype));
  if (it.strides[0][0] != osz) {
    if (it.strides[0][1] != osz) return false;
    d0 = 1;
    d1 = 0;
  }
  t.n0 = it.shape[d0];
  t.n1 = it.shape[d1];
  t.n2 = it.ndim == 3 ? it.shape[2] : 1;
  if (t.n0 < kTile || t.n1 < kTile) return false;
  t.tmask = 0;
  for (int k = 0; k <= N; ++k) {
    t.data[k] = it.data[k];
    t.s0[k] = it.strides[k][d0];
    t.s1[k] = it.strides[k][d1];
    t.s2[k] = it.ndim == 3 ? it.strides[k][2] : 0;
    bool tensor_input = k > 0 && !it.is_scalar[k];
    if (tensor_input && std::abs(t.s1[k]) == isz && std::abs(t.s0[k]) > isz) {
      t.tmask |= 1u << (k - 1);
    }
  }
  return true;
}

inline int grid_for(int64_t work_items) {
  int64_t blocks = (work_items + kBlock - 1) / kBlock;
  const int64_t cap = 132 * 64;  // enough to fill any current GPU; the loops stride beyond
  return int(blocks < 1 ? 1 : (blocks > cap ? cap : blocks));
}

// The tiled path's tile along dim 1 and its minimum blocks per SM: 4 * kTile and 4, halved
// (and 1) until the staging tiles fit.
template <class in_t, int N, int T1 = 4 * kTile>
constexpr int tile_rows() {
  if constexpr (tile_fits<in_t, N, kTile, T1>()) {
    return T1;
  } else {
    return tile_rows<in_t, N, T1 / 2>();
  }
}
template <class in_t, int N>
constexpr int tile_min_blocks() {
  return tile_rows<in_t, N>() == 4 * kTile ? 4 : 1;
}

// Note [Loop plans]: which path a loop takes, and the kernel's arguments, depend on the
// operand types, not on the functor. plan_loop works them out once per (out_t, in_t, N) in a
// translation unit, out of line, and gpu_kernel, instantiated for every row of the op table
// (hundreds per part), only launches the kernel the plan names: host code that the compiler
// would otherwise generate and optimise again for every functor. The kernels and their
// arguments are the same either way.
enum class LoopPath { Vector, Scalar, Rows, Tiled, Strided32, Strided64 };

template <class out_t, class in_t, int N>
struct LoopPlan {
  LoopPath path;
  cudaStream_t stream;
  dim3 grid;
  DenseArgs<out_t, in_t, N> d;
  RowArgs<N> r;
  TileArgs<N> t;
  StridedArgs<N> s;
};

// Fills `p` for a loop of it.numel > 0 elements.
template <class out_t, class in_t, int N>
__attribute__((noinline)) void plan_loop(const ElementwiseIter& it, LoopPlan<out_t, in_t, N>& p) {
  p.stream = static_cast<cudaStream_t>(cuda::current_stream(it.device.index));
  DenseArgs<out_t, in_t, N>& d = p.d;
  d = DenseArgs<out_t, in_t, N>{};
  d.out = reinterpret_cast<out_t*>(it.data[0]);
  for (int k = 0; k < N; ++k) {
    d.in[k] = reinterpret_cast<const in_t*>(it.data[k + 1]);
    if (it.is_scalar[k + 1]) {
      const Scalar& v = it.scalars[k + 1];
      d.sval[k] = (it.scalar_opmath >> (k + 1) & 1u) ? v.template to<opmath_t<in_t>>()
                                                     : opmath_t<in_t>(v.template to<in_t>());
      d.scalar_mask |= 1u << k;
    }
  }
  if (it.contiguous()) {
    constexpr int V = vec_width<in_t>();
    bool aligned = reinterpret_cast<uintptr_t>(d.out) % (sizeof(out_t) * V) == 0;
    for (int k = 0; k < N; ++k) {
      if (!(d.scalar_mask & (1u << k))) {
        aligned = aligned && reinterpret_cast<uintptr_t>(d.in[k]) % (sizeof(in_t) * V) == 0;
      }
    }
    const int64_t per_block = int64_t(kBlock) * (aligned ? V : 1);
    const int64_t blocks = (it.numel + per_block - 1) / per_block;
    CL_CHECK(blocks <= INT32_MAX, "elementwise op: tensor too large for one launch");
    p.path = aligned ? LoopPath::Vector : LoopPath::Scalar;
    p.grid = dim3(unsigned(blocks));
  } else if (p.r = RowArgs<N>{}; make_row_args(it, p.r)) {
    constexpr int64_t per_block = int64_t(kBlock) * kRowUnroll;
    p.path = LoopPath::Rows;
    p.grid = dim3(unsigned((p.r.n0 + per_block - 1) / per_block),
                  unsigned(std::min<int64_t>(p.r.n1, 65535)),
                  unsigned(std::min<int64_t>(p.r.n2, 65535)));
  } else if (p.t = TileArgs<N>{}; make_tile_args(it, p.t)) {
    constexpr int T0 = kTile, T1 = tile_rows<in_t, N>();
    p.path = LoopPath::Tiled;
    p.grid = dim3(unsigned((p.t.n0 + T0 - 1) / T0),
                  unsigned(std::min<int64_t>((p.t.n1 + T1 - 1) / T1, 65535)),
                  unsigned(std::min<int64_t>(p.t.n2, 65535)));
  } else {
    StridedArgs<N>& s = p.s;
    s = StridedArgs<N>{};
    s.ndim = it.ndim;
    for (int dd = 0; dd < it.ndim; ++dd) s.shape[dd] = it.shape[dd];
    for (int k = 0; k <= N; ++k) {
      s.data[k] = it.data[k];
      for (int dd = 0; dd < it.ndim; ++dd) s.strides[k][dd] = it.strides[k][dd];
    }
    p.path = it.numel <= int64_t(UINT32_MAX) ? LoopPath::Strided32 : LoopPath::Strided64;
    p.grid = dim3(unsigned(grid_for(it.numel)));
  }
}

template <class out_t, class in_t, int N, class F>
void gpu_kernel(const ElementwiseIter& it, F f) {
  if (it.numel == 0) return;
  LoopPlan<out_t, in_t, N> p;
  plan_loop(it, p);
  constexpr int V = vec_width<in_t>();
  constexpr int T1 = tile_rows<in_t, N>(), MINB = tile_min_blocks<in_t, N>();
  switch (p.path) {
    case LoopPath::Vector:
      launch<dense_kernel<out_t, in_t, N, V, F>>(p.grid, kBlock, p.stream, it.numel, p.d, f);
      break;
    case LoopPath::Scalar:
      launch<dense_kernel<out_t, in_t, N, 1, F>>(p.grid, kBlock, p.stream, it.numel, p.d, f);
      break;
    case LoopPath::Rows:
      launch<rows_kernel<out_t, in_t, N, F>>(p.grid, kBlock, p.stream, p.r, p.d, f);
      break;
    case LoopPath::Tiled:
      launch<tiled_kernel<out_t, in_t, N, kTile, T1, MINB, F>>(p.grid, dim3(kTile, kTileRows),
                                                               p.stream, p.t, p.d, f);
      break;
    case LoopPath::Strided32:
      launch<strided_kernel<out_t, in_t, N, uint32_t, F>>(p.grid, kBlock, p.stream, it.numel, p.s,
                                                          p.d, f);
      break;
    case LoopPath::Strided64:
      launch<strided_kernel<out_t, in_t, N, int64_t, F>>(p.grid, kBlock, p.stream, it.numel, p.s,
                                                         p.d, f);
      break;
  }
  CL_CUDA_KERNEL_LAUNCH_CHECK();
}

}  // namespace cl::gpu
