// Multi-tensor apply: one kernel launch over many tensors. The tensors are cut into chunks of
// kChunk elements; each block of the grid works on one chunk of one tensor, and the launch's
// metadata (ops/multi_tensor_plan.h: the tensors' addresses and sizes, which tensor and chunk
// each block takes) rides in the kernel arguments, so nothing is copied to the device first.
// Bytes moved: per element, the bytes of the operands read plus those written back.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <vector>

#include "core/half.h"
#include "cuda/cuda_check.h"
#include "ops/foreach.h"
#include "ops/multi_tensor_plan.h"

// The metadata (ops/multi_tensor_plan.h) exceeds the 4 KiB of kernel arguments of CUDA before
// 12.1; from 12.1 on, Volta and newer take up to 32764 bytes.
#if defined(__CUDACC_VER_MAJOR__) && \
    (__CUDACC_VER_MAJOR__ < 12 || (__CUDACC_VER_MAJOR__ == 12 && __CUDACC_VER_MINOR__ < 1))
#error "multi-tensor kernels need CUDA 12.1 or later (kernel arguments over 4 KiB)"
#endif

namespace cl::gpu::mta {

using namespace cl::mta;  // kChunk, kMaxBlocks, max_tensors, Meta, plan_launches (host side)

constexpr int kBlock = 512;
constexpr int kILP = 4;

// Calls launch(meta, blocks) as often as the D lists need. scalars/steps: one per tensor, or
// null. Empty tensors are skipped.
template <int D, class Launch>
void plan(const std::vector<TensorList>& lists, const std::vector<double>* scalars,
          const TensorList* steps, Launch&& launch) {
  plan_launches<D>(
      lists[0].size(), [&](size_t i) { return lists[0][i]->numel(); },
      [&](int d, size_t i) -> void* { return lists[d][i]->data(); },
      [&](size_t i) { return scalars ? (*scalars)[i] : 0.0; },
      [&](size_t i) {
        return steps ? reinterpret_cast<const float*>((*steps)[i]->data()) : nullptr;
      },
      launch);
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
