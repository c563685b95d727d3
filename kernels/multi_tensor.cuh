// Multi-tensor apply: one kernel launch over many tensors. The tensors are cut into chunks of
// kChunk elements; each block of the grid works on one chunk of one tensor, and the launch's
// metadata (the tensors' addresses and sizes, which tensor and chunk each block takes) rides in
// the kernel arguments, so nothing is copied to the device first. A launch holds at most
// max_tensors<D>() tensors and kMaxBlocks blocks (the arguments stay under the 4 KiB that
// every architecture takes); a list that needs more is split over several launches, a tensor
// possibly straddling two. The scheme is the one of torch's MultiTensorApply.cuh (and
// apex's); sizes are chosen for this metadata layout. Bytes moved: per element, the bytes of
// the operands read plus those written back.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <vector>

#include "core/half.h"
#include "cuda/cuda_check.h"
#include "ops/foreach.h"

namespace cl::gpu::mta {

constexpr int kChunk = 65536;
constexpr int kBlock = 512;
constexpr int kILP = 4;
constexpr int kMaxBlocks = 320;

template <int D>
constexpr int max_tensors() {
  return D == 1 ? 72 : D == 2 ? 56 : D == 3 ? 44 : D == 4 ? 36 : 30;
}

template <int D>
struct Meta {
  void* addr[D][max_tensors<D>()];
  int64_t numel[max_tensors<D>()];
  double scalar[max_tensors<D>()];
  const float* step[max_tensors<D>()];
  int block_to_chunk[kMaxBlocks];
  unsigned char block_to_tensor[kMaxBlocks];
};
static_assert(sizeof(Meta<1>) <= 4000 && sizeof(Meta<2>) <= 4000 && sizeof(Meta<3>) <= 4000 &&
                  sizeof(Meta<4>) <= 4000 && sizeof(Meta<5>) <= 4000,
              "multi-tensor metadata must fit the kernel argument space");

// Calls launch(meta, blocks) as often as the D lists need. scalars/steps: one per tensor, or
// null. Empty tensors are skipped.
template <int D, class Launch>
void plan(const std::vector<TensorList>& lists, const std::vector<double>* scalars,
          const TensorList* steps, Launch&& launch) {
  Meta<D> m;
  int nt = 0, nb = 0;
  const size_t n = lists[0].size();
  for (size_t i = 0; i < n; ++i) {
    const int64_t numel = lists[0][i]->numel();
    if (numel == 0) continue;
    for (int d = 0; d < D; ++d) m.addr[d][nt] = lists[d][i]->data();
    m.numel[nt] = numel;
    m.scalar[nt] = scalars ? (*scalars)[i] : 0.0;
    m.step[nt] = steps ? reinterpret_cast<const float*>((*steps)[i]->data()) : nullptr;
    const int64_t chunks = (numel + kChunk - 1) / kChunk;
    for (int64_t c = 0; c < chunks; ++c) {
      m.block_to_tensor[nb] = static_cast<unsigned char>(nt);
      m.block_to_chunk[nb] = int(c);
      ++nb;
      const bool tensors_full = nt + 1 == max_tensors<D>() && c == chunks - 1;
      const bool blocks_full = nb == kMaxBlocks;
      if (!(tensors_full || blocks_full)) continue;
      launch(m, nb);
      nb = 0;
      if (c == chunks - 1) {
        nt = -1;  // the tensor is done: the next launch starts empty
      } else {
        // the tensor goes on in the next launch, as its tensor 0
        for (int d = 0; d < D; ++d) m.addr[d][0] = m.addr[d][nt];
        m.numel[0] = m.numel[nt];
        m.scalar[0] = m.scalar[nt];
        m.step[0] = m.step[nt];
        nt = 0;
      }
    }
    ++nt;
  }
  if (nb > 0) launch(m, nb);  // what is left (the list may end with empty tensors)
}

// The generic kernel: Op (ops/foreach_math.h) over each element of the block's chunk. Aligned
// chunks load kILP elements per operand with one vector access; others go element by element.
template <class T, int D, class Op>
__global__ void __launch_bounds__(kBlock) apply_kernel(Meta<D> m, Op op) {
  using O = opmath_t<T>;
  const int t = m.block_to_tensor[blockIdx.x];
  const int64_t start = int64_t(m.block_to_chunk[blockIdx.x]) * kChunk;
  const int64_t rest = m.numel[t] - start;
  const int len = int(rest < kChunk ? rest : kChunk);
  const auto ctx = op.prepare(m.scalar[t], m.step[t]);
  if (ctx.skip) return;
  T* p[D];
  bool aligned = len % kILP == 0;
#pragma unroll
  for (int d = 0; d < D; ++d) {
    p[d] = static_cast<T*>(m.addr[d][t]) + start;
    aligned = aligned && reinterpret_cast<uintptr_t>(p[d]) % (kILP * sizeof(T)) == 0;
  }
  struct alignas(kILP * sizeof(T)) Vec {
    T v[kILP];
  };
  if (aligned) {
    for (int i = threadIdx.x * kILP; i < len; i += blockDim.x * kILP) {
      Vec r[D];
#pragma unroll
      for (int d = 0; d < D; ++d) r[d] = *reinterpret_cast<const Vec*>(p[d] + i);
#pragma unroll
      for (int k = 0; k < kILP; ++k) {
        O v[D];
#pragma unroll
        for (int d = 0; d < D; ++d) v[d] = O(r[d].v[k]);
        op.element(v, ctx);
#pragma unroll
        for (int d = 0; d < D; ++d) r[d].v[k] = T(v[d]);
      }
#pragma unroll
      for (int d = 0; d < D; ++d)
        if (op.writes(d)) *reinterpret_cast<Vec*>(p[d] + i) = r[d];
    }
  } else {
    for (int base = 0; base < len; base += blockDim.x * kILP) {
#pragma unroll
      for (int k = 0; k < kILP; ++k) {
        const int i = base + threadIdx.x + k * blockDim.x;
        if (i >= len) continue;
        O v[D];
#pragma unroll
        for (int d = 0; d < D; ++d) v[d] = O(p[d][i]);
        op.element(v, ctx);
#pragma unroll
        for (int d = 0; d < D; ++d)
          if (op.writes(d)) p[d][i] = T(v[d]);
      }
    }
  }
}

}  // namespace cl::gpu::mta
