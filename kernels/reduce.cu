// Row reductions on the GPU: `outer` dense rows of length `inner` (ops/reduce.cpp makes
// the layout). Short rows get a thread each, moderate ones a team of 4 to 32 lanes of a warp,
// long rows blocks, split across several blocks when there are too few rows to fill the GPU,
// with a second pass over the partial results. Columns: kernels/reduce_cols.cu; the reducers
// and what makes them fast: kernels/reduce.cuh.
#include <cuda_runtime.h>

#include <cstring>

#include "core/cuda_api.h"
#include "cuda/cuda_check.h"
#include "kernels/deferred.cuh"
#include "kernels/reduce.cuh"
#include "ops/kernels.h"

namespace cl::cuda {
namespace {

using namespace reducer;

// One thread per row.
template <class T, class Red>
__global__ void thread_rows(const T* x, int64_t outer, int64_t inner, void* out, int64_t* idx) {
  int64_t r = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (r >= outer) return;
  auto acc = Red::identity();
  for (int64_t i = 0; i < inner; ++i) acc = Red::combine(acc, Red::make(x[r * inner + i], i));
  Red::store(acc, out, idx, r);
}

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

// Block (row, split): the blocks of a row walk it together, block after block (block_walk in
// reduce.cuh); with one split it stores the result, otherwise it writes a partial accumulator.
template <class T, class Red>
__global__ void block_rows(const T* x, int64_t inner, int splits, void* out, int64_t* idx,
                           typename Red::acc_t* partial) {
  using acc_t = typename Red::acc_t;
  __shared__ acc_t sh[kThreads];
  int64_t r = blockIdx.x / splits;
  int split = blockIdx.x % splits;
  acc_t total = block_reduce<Red>(block_walk<T, Red>(x + r * inner, inner, split, splits), sh);
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
  __shared__ typename Red::acc_t sh[kThreads];
  acc = block_reduce<Red>(acc, sh);
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
  // One small row: block_rows' work, in the deferred batch (Note [Deferred launches]).
  if (outer == 1 && defer_reduce(OP, in, inner, out, idx)) return;
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

}  // namespace

void reduce_rows(ReduceOp op, const Tensor& in, int64_t outer, int64_t inner, const Tensor& out,
                 const Tensor& idx) {
  CL_DISPATCH_ALL_TYPES(in->dtype, "reduce", [&] {
    using T = scalar_t;
    with_reduce_op(op, [&](auto k) { launch<T, decltype(k)::value>(in, outer, inner, out, idx); });
  });
}

}  // namespace cl::cuda
