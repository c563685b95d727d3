// Row reductions on the GPU: `outer` dense rows of length `inner` (ops/reduce.cpp makes
// the layout). Short rows get a thread each, moderate ones a team of 4 to 32 lanes of a warp,
// long rows blocks, split across several blocks when there are too few rows to fill the GPU,
// with a second pass over the partial results. Column mode reduces the middle dim of a dense
// [outer, inner, cols] tensor in place.
//
// Speed comes from bytes in flight: each thread loads 16-byte vectors (kUnroll of them
// before combining any), into one accumulator per vector lane, so the combine chains are
// independent. The combine order is fixed by the launch shape, which depends only on the
// sizes and the alignment, so results are the same run to run. Bytes moved: outer * inner *
// itemsize (+ the output).
#include <cuda_runtime.h>

#include <cstring>
#include <limits>

#include "core/cuda_api.h"
#include "cuda/cuda_check.h"
#include "kernels/loops.cuh"
#include "ops/kernels.h"
#include "ops/reduce_ops.h"

namespace cl::cuda {
namespace {

constexpr int kThreads = 256;

// A reducer: acc type, identity, make (from an element and its index), combine, store.
template <class T, ReduceOp OP>
struct R {
  using A = typename red::Acc<T, true>::type;
  // Max/Min keep only the value (NaN wins); ArgMax/ArgMin also carry the first index.
  static constexpr bool kArg = OP == ReduceOp::ArgMax || OP == ReduceOp::ArgMin;
  static constexpr bool kExt = OP == ReduceOp::Max || OP == ReduceOp::Min;
  static constexpr bool kIsMax = OP == ReduceOp::Max || OP == ReduceOp::ArgMax;
  using P = opmath_t<T>;
  using acc_t = std::conditional_t<
      kArg, red::ArgPair<P, kIsMax>,
      std::conditional_t<kExt, P,
                         std::conditional_t<OP == ReduceOp::All || OP == ReduceOp::Any, int, A>>>;
  __device__ static acc_t identity() {
    if constexpr (kArg)
      return acc_t{P(0), -1};
    else if constexpr (kExt) {
      // -inf / +inf for floats (a row of -inf must give -inf), the extremes for integers.
      using L = std::numeric_limits<P>;
      if constexpr (L::has_infinity)
        return kIsMax ? -L::infinity() : L::infinity();
      else
        return kIsMax ? L::lowest() : L::max();
    } else if constexpr (OP == ReduceOp::Prod || OP == ReduceOp::All)
      return acc_t(1);
    else
      return acc_t(0);
  }
  __device__ static acc_t make(T x, int64_t i) {
    if constexpr (kArg)
      return acc_t{P(x), i};
    else if constexpr (kExt)
      return P(x);
    else if constexpr (OP == ReduceOp::All || OP == ReduceOp::Any)
      return bool(x) ? 1 : 0;
    else
      return acc_t(x);
  }
  __device__ static acc_t combine(acc_t a, acc_t b) {
    if constexpr (kArg)
      return red::arg_combine(a, b);
    else if constexpr (kExt) {
#if __CUDA_ARCH__ >= 800
      // One instruction that keeps NaN (the generic code below is four and two branches:
      // what made max 3x slower than sum where the loop had little else to hide it behind).
      if constexpr (std::is_same_v<P, float>) {
        float d;
        if constexpr (kIsMax)
          asm("max.NaN.f32 %0, %1, %2;" : "=f"(d) : "f"(a), "f"(b));
        else
          asm("min.NaN.f32 %0, %1, %2;" : "=f"(d) : "f"(a), "f"(b));
        return d;
      }
#endif
      if constexpr (std::is_floating_point_v<P>) {
        if (a != a) return a;
        if (b != b) return b;
      }
      return kIsMax ? (b > a ? b : a) : (b < a ? b : a);
    } else if constexpr (OP == ReduceOp::Sum)
      return a + b;
    else if constexpr (OP == ReduceOp::Prod)
      return a * b;
    else if constexpr (OP == ReduceOp::All)
      return a && b;
    else
      return a || b;
  }
  // Folds element x (index i) into a; a lane sees its elements in increasing index order,
  // so for the Arg ops a strictly better value (or the first NaN) is all that replaces a.
  __device__ static void step(acc_t& a, T x, int64_t i) {
    if constexpr (kArg) {
      P v = P(x);
      bool better = kIsMax ? v > a.v : v < a.v;
      if constexpr (std::is_floating_point_v<P>) better = a.v == a.v && (better || v != v);
      if (a.i < 0 || better) a = acc_t{v, i};
    } else {
      a = combine(a, make(x, i));
    }
  }
  __device__ static void store(acc_t a, void* out, int64_t* idx, int64_t r) {
    if constexpr (kExt) {
      static_cast<T*>(out)[r] = T(a);
    } else if constexpr (kArg) {
      static_cast<T*>(out)[r] = T(a.v);
      if (idx) idx[r] = a.i;
    } else if constexpr (OP == ReduceOp::All || OP == ReduceOp::Any) {
      static_cast<bool*>(out)[r] = a != 0;
    } else {
      static_cast<T*>(out)[r] = T(a);
    }
  }
};

template <class Red>
__device__ typename Red::acc_t block_reduce(typename Red::acc_t v) {
  __shared__ typename Red::acc_t sh[kThreads];
  sh[threadIdx.x] = v;
  __syncthreads();
  for (int s = blockDim.x / 2; s > 0; s >>= 1) {
    if (threadIdx.x < s) sh[threadIdx.x] = Red::combine(sh[threadIdx.x], sh[threadIdx.x + s]);
    __syncthreads();
  }
  return sh[0];
}

// One thread per row.
template <class T, class Red>
__global__ void thread_rows(const T* x, int64_t outer, int64_t inner, void* out, int64_t* idx) {
  int64_t r = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (r >= outer) return;
  auto acc = Red::identity();
  for (int64_t i = 0; i < inner; ++i) acc = Red::combine(acc, Red::make(x[r * inner + i], i));
  Red::store(acc, out, idx, r);
}

using gpu::vec_width;
template <class T, int V>
using Vec = gpu::VecT<T, V>;

constexpr int kUnroll = 4;  // vectors loaded per thread before any is combined

// What one lane of a row's team (team_rows, below) folds: the row's vectors first,
// first + stride, ... with kUnroll of them in flight, and, with `edges`, the scalar head up
// to the first vector boundary and the scalar tail, spread over the team's `width` lanes by
// `t`. The elements each lane combines, and in what order, depend only on the shape: the
// result is the same run to run.
template <class T, class Red>
__device__ typename Red::acc_t row_part(const T* row, int64_t inner, int64_t first, int64_t stride,
                                        bool edges, int t, int width) {
  constexpr int V = vec_width<T>();
  using acc_t = typename Red::acc_t;
  acc_t acc[V];
#pragma unroll
  for (int j = 0; j < V; ++j) acc[j] = Red::identity();
  int64_t head =
      int64_t((sizeof(Vec<T, V>) - reinterpret_cast<uintptr_t>(row) % sizeof(Vec<T, V>)) %
              sizeof(Vec<T, V>)) /
      int64_t(sizeof(T));
  if (head > inner) head = inner;
  if (edges) {
    for (int64_t i = t; i < head; i += width) Red::step(acc[0], row[i], i);
  }
  const int64_t a = head, nvec = (inner - a) / V;
  const Vec<T, V>* vp = reinterpret_cast<const Vec<T, V>*>(row + a);
  int64_t k = first;
  for (; k + (kUnroll - 1) * stride < nvec; k += kUnroll * stride) {
    Vec<T, V> v[kUnroll];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) v[u] = vp[k + u * stride];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
#pragma unroll
      for (int j = 0; j < V; ++j) Red::step(acc[j], v[u].v[j], a + (k + u * stride) * V + j);
    }
  }
  for (; k < nvec; k += stride) {
    Vec<T, V> v = vp[k];
#pragma unroll
    for (int j = 0; j < V; ++j) Red::step(acc[j], v.v[j], a + k * V + j);
  }
  if (edges) {
    for (int64_t i = a + nvec * V + t; i < inner; i += width) Red::step(acc[0], row[i], i);
  }
#pragma unroll
  for (int j = 1; j < V; ++j) acc[0] = Red::combine(acc[0], acc[j]);
  return acc[0];
}

// Block (row, split): the blocks of a row walk it together, block after block (interleaved,
// they read at the full bandwidth, where a contiguous chunk per block lost 4 %,
// benchmarks/cpp/reduce_variants.cu); split 0 takes the scalar edges. With one split it
// stores the result, otherwise it writes a partial accumulator. (The same walk as row_part,
// written out: through row_part the Arg ops of long rows lost 3-4 % on an H200.)
template <class T, class Red>
__global__ void block_rows(const T* x, int64_t inner, int splits, void* out, int64_t* idx,
                           typename Red::acc_t* partial) {
  constexpr int V = vec_width<T>();
  using acc_t = typename Red::acc_t;
  int64_t r = blockIdx.x / splits;
  int split = blockIdx.x % splits;
  const T* row = x + r * inner;
  acc_t acc[V];
#pragma unroll
  for (int j = 0; j < V; ++j) acc[j] = Red::identity();
  int64_t head =
      int64_t((sizeof(Vec<T, V>) - reinterpret_cast<uintptr_t>(row) % sizeof(Vec<T, V>)) %
              sizeof(Vec<T, V>)) /
      int64_t(sizeof(T));
  if (head > inner) head = inner;
  if (split == 0 && threadIdx.x < head) Red::step(acc[0], row[threadIdx.x], threadIdx.x);
  const int64_t a = head, nvec = (inner - a) / V, bs = blockDim.x, stride = int64_t(splits) * bs;
  const Vec<T, V>* vp = reinterpret_cast<const Vec<T, V>*>(row + a);
  int64_t k = int64_t(split) * bs + threadIdx.x;
  for (; k + (kUnroll - 1) * stride < nvec; k += kUnroll * stride) {
    Vec<T, V> v[kUnroll];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) v[u] = vp[k + u * stride];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
#pragma unroll
      for (int j = 0; j < V; ++j) Red::step(acc[j], v[u].v[j], a + (k + u * stride) * V + j);
    }
  }
  for (; k < nvec; k += stride) {
    Vec<T, V> v = vp[k];
#pragma unroll
    for (int j = 0; j < V; ++j) Red::step(acc[j], v.v[j], a + k * V + j);
  }
  if (split == 0) {
    for (int64_t i = a + nvec * V + threadIdx.x; i < inner; i += bs) Red::step(acc[0], row[i], i);
  }
#pragma unroll
  for (int j = 1; j < V; ++j) acc[0] = Red::combine(acc[0], acc[j]);
  acc_t total = block_reduce<Red>(acc[0]);
  if (threadIdx.x == 0) {
    if (splits == 1) {
      Red::store(total, out, idx, r);
    } else {
      partial[blockIdx.x] = total;
    }
  }
}

// An accumulator from lane `lane ^ mask`, moved as 32-bit words (any trivially copyable type).
template <class A>
__device__ A shfl_xor(A a, int mask) {
  constexpr int kWords = int((sizeof(A) + 3) / 4);
  unsigned w[kWords] = {};
  memcpy(w, &a, sizeof(A));
#pragma unroll
  for (int i = 0; i < kWords; ++i) w[i] = __shfl_xor_sync(0xffffffffu, w[i], mask);
  memcpy(&a, w, sizeof(A));
  return a;
}

// Team rows: `team` lanes (4, 8, 16 or 32: a warp or a part of one) per row, for rows too
// short to keep a block busy but too long for a thread (row_team below). The lanes read the row
// interleaved, then combine through shuffles in a fixed butterfly. Lanes past the last row still
// take part in the shuffles (with the identity), so every shuffle has the whole warp.
template <class T, class Red>
__global__ void team_rows(const T* x, int64_t outer, int64_t inner, int team, void* out,
                          int64_t* idx) {
  int64_t r = int64_t(blockIdx.x) * (blockDim.x / team) + threadIdx.x / team;
  int lane = threadIdx.x % team;
  bool active = r < outer;
  auto acc = active ? row_part<T, Red>(x + r * inner, inner, lane, team, true, lane, team)
                    : Red::identity();
  for (int m = team / 2; m > 0; m >>= 1) acc = Red::combine(acc, shfl_xor(acc, m));
  if (active && lane == 0) Red::store(acc, out, idx, r);
}

template <class Red>
__global__ void finish_rows(const typename Red::acc_t* partial, int splits, void* out,
                            int64_t* idx) {
  int64_t r = blockIdx.x;
  auto acc = Red::identity();
  for (int i = threadIdx.x; i < splits; i += blockDim.x) {
    acc = Red::combine(acc, partial[r * splits + i]);
  }
  acc = block_reduce<Red>(acc);
  if (threadIdx.x == 0) Red::store(acc, out, idx, r);
}

// Row modes, measured on an H200 over rows of 16 to 65536 float32 (bench_reduce_shapes.py;
// performance.md): a thread per row up to 16 elements; a team of lanes per row up to 8192
// elements when there are enough rows to give every multiprocessor 16 teams' worth, sized
// for about one round of kUnroll vectors per lane (a block per row there spent most of its
// time in the block reduction: rows of 64 to 2048 ran at 0.1 to 0.5 x torch); a block per
// row (or several, split) beyond.
constexpr int64_t kThreadRowMax = 16;
constexpr int64_t kTeamRowMax = 8192;
constexpr int64_t kTeamMinRows = 132 * 16;

// The lanes per row for team_rows, or 0 for a block per row.
inline int row_team(int64_t outer, int64_t inner, int vec) {
  if (inner > kTeamRowMax || outer < kTeamMinRows) return 0;
  int64_t per_round = (inner / vec + kUnroll - 1) / kUnroll;
  int team = 4;
  while (team < 32 && team < per_round) team *= 2;
  return team;
}

template <class T, ReduceOp OP>
void launch(const Tensor& in, int64_t outer, int64_t inner, const Tensor& out, const Tensor& idx) {
  using Red = R<T, OP>;
  cudaStream_t stream = static_cast<cudaStream_t>(current_stream(in->device().index));
  const T* x = reinterpret_cast<const T*>(in->data());
  void* o = out->data();
  int64_t* ix = idx ? reinterpret_cast<int64_t*>(idx->data()) : nullptr;
  if (inner <= kThreadRowMax && outer >= 1024) {
    int64_t blocks = (outer + kThreads - 1) / kThreads;
    gpu::launch<thread_rows<T, Red>>(unsigned(blocks), kThreads, stream, x, outer, inner, o, ix);
    CL_CUDA_KERNEL_LAUNCH_CHECK();
    return;
  }
  if (int team = row_team(outer, inner, vec_width<T>())) {
    int64_t rows_per_block = kThreads / team;
    int64_t blocks = (outer + rows_per_block - 1) / rows_per_block;
    gpu::launch<team_rows<T, Red>>(unsigned(blocks), kThreads, stream, x, outer, inner, team, o,
                                   ix);
    CL_CUDA_KERNEL_LAUNCH_CHECK();
    return;
  }
  // Split long rows so that about 4 blocks per multiprocessor are busy.
  int64_t want_blocks = 132 * 4;
  int64_t splits = 1;
  if (outer < want_blocks) {
    splits = (want_blocks + outer - 1) / outer;
    int64_t max_splits = (inner + 4095) / 4096;  // keep each chunk >= 4096 elements
    splits = splits < max_splits ? splits : max_splits;
    if (splits < 1) splits = 1;
  }
  Tensor partial;
  using acc_t = typename Red::acc_t;
  if (splits > 1) {
    partial =
        empty({int64_t(outer * splits * int64_t(sizeof(acc_t)))}, ScalarType::UInt8, in->device());
  }
  acc_t* pp = partial ? reinterpret_cast<acc_t*>(partial->data()) : nullptr;
  gpu::launch<block_rows<T, Red>>(unsigned(outer * splits), kThreads, stream, x, inner, int(splits),
                                  o, ix, pp);
  CL_CUDA_KERNEL_LAUNCH_CHECK();
  if (splits > 1) {
    gpu::launch<finish_rows<Red>>(unsigned(outer), kThreads, stream, pp, int(splits), o, ix);
    CL_CUDA_KERNEL_LAUNCH_CHECK();
  }
}

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

// Lane's walk down rows r, r + step, ... < hi of a column slab (kStep: the step when known at
// compile time, one lane; 0: blockDim.y lanes). A pointer walk, p advancing by whole strides:
// indexing base + (r + u * step) * cols with a run-time step cost wide slabs 10-15 % of their
// bandwidth, and the one-lane copy of the loop another few percent.
template <class T, class Red, int V, int kStep>
__device__ __forceinline__ void col_walk(const T* base, int64_t r, int64_t hi, int64_t cols,
                                         int64_t run_step, typename Red::acc_t (&acc)[V]) {
  const int64_t step = kStep ? kStep : run_step;
  const T* p = base + r * cols;
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

template <class T, class Red, int V>
__global__ void col_partial(const T* x, int64_t inner, int64_t cols, int64_t chunk, void* out,
                            int64_t* idx, typename Red::acc_t* partial, int splits) {
  using acc_t = typename Red::acc_t;
  int64_t c = (int64_t(blockIdx.x) * blockDim.x + threadIdx.x) * V;
  int64_t o = blockIdx.y;
  int split = blockIdx.z;
  const bool active = c < cols;
  const int64_t step = blockDim.y;
  int64_t lo = split * chunk, hi = lo + chunk < inner ? lo + chunk : inner;
  const T* base = x + o * inner * cols + c;
  acc_t acc[V];
#pragma unroll
  for (int j = 0; j < V; ++j) acc[j] = Red::identity();
  if (active) {
    if (step == 1)
      col_walk<T, Red, V, 1>(base, lo, hi, cols, 1, acc);
    else
      col_walk<T, Red, V, 0>(base, lo + threadIdx.y, hi, cols, step, acc);
  }
  combine_lanes<Red, V>(acc);
  if (!active || threadIdx.y != 0) return;
  int64_t slot = o * cols + c;
#pragma unroll
  for (int j = 0; j < V; ++j) {
    if (splits == 1) {
      Red::store(acc[j], out, idx, slot + j);
    } else {
      partial[int64_t(split) * gridDim.y * cols + slot + j] = acc[j];
    }
  }
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
  size_t smem = block.y > 1 ? size_t(block.x) * block.y * V * sizeof(acc_t) : 0;
  gpu::launch_smem<col_partial<T, Red, V>>(grid, block, smem, stream, x, inner, cols, chunk,
                                           out->data(), ix, pp, int(splits));
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
    switch (op) {
      case ReduceOp::Sum:
        launch_cols<T, ReduceOp::Sum>(in, outer, inner, cols, out, idx);
        break;
      case ReduceOp::Prod:
        launch_cols<T, ReduceOp::Prod>(in, outer, inner, cols, out, idx);
        break;
      case ReduceOp::Max:
        launch_cols<T, ReduceOp::Max>(in, outer, inner, cols, out, idx);
        break;
      case ReduceOp::Min:
        launch_cols<T, ReduceOp::Min>(in, outer, inner, cols, out, idx);
        break;
      case ReduceOp::ArgMax:
        launch_cols<T, ReduceOp::ArgMax>(in, outer, inner, cols, out, idx);
        break;
      case ReduceOp::ArgMin:
        launch_cols<T, ReduceOp::ArgMin>(in, outer, inner, cols, out, idx);
        break;
      case ReduceOp::All:
        launch_cols<T, ReduceOp::All>(in, outer, inner, cols, out, idx);
        break;
      case ReduceOp::Any:
        launch_cols<T, ReduceOp::Any>(in, outer, inner, cols, out, idx);
        break;
    }
  });
}

void reduce_rows(ReduceOp op, const Tensor& in, int64_t outer, int64_t inner, const Tensor& out,
                 const Tensor& idx) {
  CL_DISPATCH_ALL_TYPES(in->dtype, "reduce", [&] {
    using T = scalar_t;
    switch (op) {
      case ReduceOp::Sum:
        launch<T, ReduceOp::Sum>(in, outer, inner, out, idx);
        break;
      case ReduceOp::Prod:
        launch<T, ReduceOp::Prod>(in, outer, inner, out, idx);
        break;
      case ReduceOp::Max:
        launch<T, ReduceOp::Max>(in, outer, inner, out, idx);
        break;
      case ReduceOp::Min:
        launch<T, ReduceOp::Min>(in, outer, inner, out, idx);
        break;
      case ReduceOp::ArgMax:
        launch<T, ReduceOp::ArgMax>(in, outer, inner, out, idx);
        break;
      case ReduceOp::ArgMin:
        launch<T, ReduceOp::ArgMin>(in, outer, inner, out, idx);
        break;
      case ReduceOp::All:
        launch<T, ReduceOp::All>(in, outer, inner, out, idx);
        break;
      case ReduceOp::Any:
        launch<T, ReduceOp::Any>(in, outer, inner, out, idx);
        break;
    }
  });
}

}  // namespace cl::cuda
