// Inclusive scans (cumsum, cumprod) of a dense [outer, n, inner] input along n, on the
// current stream, accumulated in float (16-bit floats and float32), double (float64) or
// 64-bit unsigned integers (integers and bool: wraps as torch's int64 arithmetic does).
//
// inner > 1: one thread per (outer, inner) line walks it in order; neighbouring threads
// read neighbouring elements, so every load is coalesced (scan.cpp transposes inputs with
// too few such lines to keep the memory busy into rows first).
// inner == 1 (scanning the last dim): each line is a row, and a block scans a segment of a
// row in tiles of kBlock * kItems elements: each thread scans a run of kItems, warp shuffles
// scan the runs' totals, one shared-memory step scans the warps' totals, and the running
// total is carried from tile to tile. Few long rows are cut into segments so that the GPU
// fills: a first pass finds each segment's total, the totals are scanned per row (the same
// kernel), and a second pass scans each segment starting from the segments before it.
// Bytes moved: 2 * numel * itemsize (3 * with segments).
#include <cuda_runtime.h>

#include "core/cuda_api.h"
#include "cuda/cuda_check.h"
#include "kernels/loops.cuh"
#include "ops/kernels.h"

namespace cl::cuda {
namespace {

constexpr int kItems = 8;
constexpr int kWarps = gpu::kBlock / 32;
constexpr int64_t kTile = int64_t(gpu::kBlock) * kItems;

template <class T>
using ScanAcc = std::conditional_t<std::is_integral_v<T>, unsigned long long,
                                   std::conditional_t<std::is_same_v<T, double>, double, float>>;

template <class A, bool kProd>
__device__ __forceinline__ A combine(A a, A b) {
  if constexpr (kProd) {
    return a * b;
  } else {
    return a + b;
  }
}

template <class T, class A>
__device__ __forceinline__ A load_acc(const T* p) {
  if constexpr (std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>) {
    return A(float(*p));
  } else {
    return A(*p);
  }
}

template <class T, class A>
__device__ __forceinline__ T store_val(A a) {
  if constexpr (std::is_same_v<T, bool>) {
    return a != A(0);
  } else {
    return T(a);
  }
}

template <class T, class A, bool kProd>
__global__ void __launch_bounds__(gpu::kBlock)
    col_scan_kernel(const T* __restrict__ x, T* __restrict__ y, int64_t outer, int64_t n,
                    int64_t inner) {
  const int64_t lines = outer * inner;
  for (int64_t l = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; l < lines;
       l += int64_t(gridDim.x) * blockDim.x) {
    const int64_t base = (l / inner) * n * inner + l % inner;
    A acc = kProd ? A(1) : A(0);
#pragma unroll 4
    for (int64_t i = 0; i < n; ++i) {
      acc = combine<A, kProd>(acc, load_acc<T, A>(x + base + i * inner));
      y[base + i * inner] = store_val<T, A>(acc);
    }
  }
}

// Block b scans segment b % segs of row b / segs: [seg * seg_len, min(n, (seg + 1) * seg_len)).
// y null: only the segment's total is written (to totals[b]); carries non-null: the segment
// starts from carries[b - 1] (the inclusive scan of the row's segment totals).
template <class T, class A, bool kProd>
__global__ void __launch_bounds__(gpu::kBlock)
    row_scan_kernel(const T* x, T* y, int64_t rows, int64_t n, int64_t seg_len, int64_t segs,
                    A* totals, const A* carries) {
  __shared__ A warp_tot[kWarps];
  const A id = kProd ? A(1) : A(0);
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  for (int64_t b = blockIdx.x; b < rows * segs; b += gridDim.x) {
    const int64_t row = b / segs, seg = b % segs;
    const int64_t start = seg * seg_len, end = n < start + seg_len ? n : start + seg_len;
    const T* xr = x + row * n;
    T* yr = y ? y + row * n : nullptr;
    A carry = (carries && seg > 0) ? carries[b - 1] : id;
    for (int64_t t0 = start; t0 < end; t0 += kTile) {
      const int64_t i0 = t0 + int64_t(threadIdx.x) * kItems;
      A v[kItems];
      A run = id;
#pragma unroll
      for (int j = 0; j < kItems; ++j) {
        const int64_t i = i0 + j;
        run = combine<A, kProd>(run, i < end ? load_acc<T, A>(xr + i) : id);
        v[j] = run;
      }
      A w = run;  // inclusive scan of the runs' totals within the warp
#pragma unroll
      for (int off = 1; off < 32; off <<= 1) {
        A o = __shfl_up_sync(0xffffffffu, w, off);
        if (lane >= off) w = combine<A, kProd>(o, w);
      }
      A lane_before = __shfl_up_sync(0xffffffffu, w, 1);
      if (lane == 31) warp_tot[warp] = w;
      __syncthreads();
      if (warp == 0) {
        A t = lane < kWarps ? warp_tot[lane] : id;
#pragma unroll
        for (int off = 1; off < kWarps; off <<= 1) {
          A o = __shfl_up_sync(0xffffffffu, t, off);
          if (lane >= off) t = combine<A, kProd>(o, t);
        }
        if (lane < kWarps) warp_tot[lane] = t;
      }
      __syncthreads();
      A before = carry;
      if (warp > 0) before = combine<A, kProd>(before, warp_tot[warp - 1]);
      if (lane > 0) before = combine<A, kProd>(before, lane_before);
      if (yr) {
#pragma unroll
        for (int j = 0; j < kItems; ++j) {
          const int64_t i = i0 + j;
          if (i < end) yr[i] = store_val<T, A>(combine<A, kProd>(before, v[j]));
        }
      }
      carry = combine<A, kProd>(carry, warp_tot[kWarps - 1]);
      __syncthreads();  // warp_tot is rewritten by the next tile
    }
    if (totals && threadIdx.x == 0) totals[b] = carry;
  }
}

int grid_blocks(int64_t blocks) {
  return int(std::max<int64_t>(1, std::min<int64_t>(blocks, 65535)));
}

template <class T, bool kProd>
void run_scan(const Tensor& in, int64_t outer, int64_t n, int64_t inner, const Tensor& out) {
  using A = ScanAcc<T>;
  const T* x = reinterpret_cast<const T*>(in->data());
  T* y = reinterpret_cast<T*>(out->data());
  cudaStream_t s = static_cast<cudaStream_t>(current_stream(in->device().index));
  if (inner > 1) {
    col_scan_kernel<T, A, kProd>
        <<<gpu::grid_for(outer * inner), gpu::kBlock, 0, s>>>(x, y, outer, n, inner);
    CL_CUDA_KERNEL_LAUNCH_CHECK();
    return;
  }
  const int sms = get_device_properties(in->device().index).multi_processor_count;
  const int64_t want = int64_t(std::max(sms, 1)) * 8;  // blocks that keep every SM busy
  int64_t segs = 1;
  if (outer < want && n > 4 * kTile) {
    segs = std::min<int64_t>((n + kTile - 1) / kTile, (want + outer - 1) / outer);
  }
  if (segs <= 1) {
    row_scan_kernel<T, A, kProd>
        <<<grid_blocks(outer), gpu::kBlock, 0, s>>>(x, y, outer, n, n, 1, nullptr, nullptr);
    CL_CUDA_KERNEL_LAUNCH_CHECK();
    return;
  }
  const int64_t seg_len = ((n + segs - 1) / segs + kTile - 1) / kTile * kTile;
  segs = (n + seg_len - 1) / seg_len;
  Tensor buf = empty({outer * segs * int64_t(sizeof(A))}, ScalarType::UInt8, in->device());
  A* totals = reinterpret_cast<A*>(buf->data());
  row_scan_kernel<T, A, kProd><<<grid_blocks(outer * segs), gpu::kBlock, 0, s>>>(
      x, nullptr, outer, n, seg_len, segs, totals, nullptr);
  CL_CUDA_KERNEL_LAUNCH_CHECK();
  row_scan_kernel<A, A, kProd><<<grid_blocks(outer), gpu::kBlock, 0, s>>>(
      totals, totals, outer, segs, segs, 1, nullptr, nullptr);
  CL_CUDA_KERNEL_LAUNCH_CHECK();
  row_scan_kernel<T, A, kProd><<<grid_blocks(outer * segs), gpu::kBlock, 0, s>>>(
      x, y, outer, n, seg_len, segs, nullptr, totals);
  CL_CUDA_KERNEL_LAUNCH_CHECK();
}

}  // namespace

void scan(ScanOp op, const Tensor& in, int64_t outer, int64_t n, int64_t inner, const Tensor& out) {
  CL_DISPATCH_ALL_TYPES(in->dtype, "scan", [&] {
    if (op == ScanOp::Prod) {
      run_scan<scalar_t, true>(in, outer, n, inner, out);
    } else {
      run_scan<scalar_t, false>(in, outer, n, inner, out);
    }
  });
}

}  // namespace cl::cuda
