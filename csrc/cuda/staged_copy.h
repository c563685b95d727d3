// Copies between pageable host memory and a GPU, staged through pinned buffers.
//
// Note [Staged pageable copies]
// The DMA engines only read and write page-locked memory. For a pageable buffer, the
// driver copies through a small pinned buffer of its own, one piece at a time on one CPU
// thread; torch's pageable copies reach 9.8 GB/s (H2D) and 18.6 GB/s (D2H) on an H200 whose
// link moves 55 GB/s. Here the transfer is cut into chunks of up to 2 MiB dealt round-robin
// to the host threads (core/parallel.h). Each thread owns two pinned staging buffers with
// one event each, and alternates between them: for H2D it copies chunk k into a buffer
// (after that buffer's previous DMA completed, per its event) and queues the DMA from it on
// the stream; for D2H it queues the DMA of chunk k+1 into one buffer while it copies chunk
// k out of the other. CPU copies on several cores overlap each other and the DMA, so the
// transfer runs at the speed of the link or of the memory, not of one core.
//
// Semantics are the ones torch documents for pageable memory: an H2D copy returns once the
// source has been read (the caller then synchronises the stream for a blocking copy), a
// D2H copy returns once the destination holds the data. All DMAs go to the caller's stream,
// in order with the work queued there before.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>

namespace cl::cuda {

// Below this the driver's pageable path is as fast, and no thread needs waking.
constexpr size_t kMinStagedBytes = size_t(1) << 20;

// H2D from pageable `src` on `stream`. False, with nothing done, when staging isn't
// possible now (another staged transfer on this device, or no pinned memory for buffers).
bool staged_h2d(void* dst, const void* src, size_t n, int device, cudaStream_t stream);
// D2H into pageable `dst` on `stream`; false as above.
bool staged_d2h(void* dst, const void* src, size_t n, int device, cudaStream_t stream);
// Frees the staging buffers of devices with no staged transfer running.
void release_staging_buffers();

}  // namespace cl::cuda
