// The host side of multi-tensor apply (kernels/multi_tensor.cuh): how a list of tensors is cut
// into launches. Each tensor is cut into chunks of kChunk elements, one block per chunk; a
// launch's metadata (Meta: the tensors' addresses, sizes, per-tensor number and step pointer,
// and which tensor and chunk each block takes) rides in the kernel arguments. A launch holds at
// most max_tensors<D>() tensors and kMaxBlocks blocks; a list that needs more is split over
// several launches, a tensor possibly straddling two. The scheme is the one of torch's
// MultiTensorApply.cuh (and apex's), with larger launches: torch keeps its arguments under the
// 4 KiB that every architecture takes (36 tensors and 320 blocks at depth 4), where CUDA 12.1
// and later take 32 KiB on Volta and newer (the architectures cudalite builds for). A GPT's
// optimizer step (39 tensors at nanoGPT's size, 149 at GPT-2's) is then one launch, not a
// full launch and a short one: a launch of a few dozen blocks cannot draw the memory's
// bandwidth (a block keeps a few dozen KiB in flight), so the short launch's few chunks cost
// far more than their share. Host-only, so that the CPU build tests it (_C._multi_tensor_plan).
#pragma once

#include <cstddef>
#include <cstdint>

namespace cl::mta {

constexpr int kChunk = 65536;
constexpr int kMaxBlocks = 1024;

template <int D>
constexpr int max_tensors() {
  return D == 1 ? 160 : D == 2 ? 150 : D == 3 ? 140 : D == 4 ? 120 : 100;
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
// CUDA 12.1's kernel argument space is 32764 bytes; the ops' own arguments take a few hundred.
constexpr size_t kMaxMeta = 16384;
static_assert(sizeof(Meta<1>) <= kMaxMeta && sizeof(Meta<2>) <= kMaxMeta &&
                  sizeof(Meta<3>) <= kMaxMeta && sizeof(Meta<4>) <= kMaxMeta &&
                  sizeof(Meta<5>) <= kMaxMeta && max_tensors<1>() <= 255,
              "multi-tensor metadata must fit the kernel argument space (and block_to_tensor)");

// Calls launch(meta, blocks) as often as n tensors need: numel(i), addr(d, i), scalar(i) and
// step(i) describe tensor i. Empty tensors are skipped.
template <int D, class Numel, class Addr, class Scalar, class Step, class Launch>
void plan_launches(size_t n, Numel numel_of, Addr addr_of, Scalar scalar_of, Step step_of,
                   Launch&& launch) {
  Meta<D> m;
  int nt = 0, nb = 0;
  for (size_t i = 0; i < n; ++i) {
    const int64_t numel = numel_of(i);
    if (numel == 0) continue;
    for (int d = 0; d < D; ++d) m.addr[d][nt] = addr_of(d, i);
    m.numel[nt] = numel;
    m.scalar[nt] = scalar_of(i);
    m.step[nt] = step_of(i);
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

}  // namespace cl::mta
