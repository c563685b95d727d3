// randperm and multinomial (with replacement) drawn as torch's CUDA kernels draw them.
//
// randperm: the caller draws one random key per position (torch's random_ over the whole of
// int32 or int64); a stable radix sort of 0..n-1 by the low `bits` bits of the keys (CUB, with
// the keys' own signed type, as torch sorts them) gives the permutation, and each run of
// equal masked keys ("island") is then shuffled by the thread of its first position: Philox
// stream `first` at the offset, one 32-bit curand() per swap of a Fisher-Yates from the end.
//
// multinomial with replacement: each row divided by its sum, summed as torch's renormRowsL1
// sums it, prefix sums as torch's cumsum computes them (CUB's scan for one row, torch's
// Sklansky scan for several), all in the probabilities' dtype; then thread (row r < grid_y,
// sample s) is curand's stream r * grid_x * 128 + s, and each of its samples takes one
// curand_uniform4 and keeps its first value, rounded to the probabilities' dtype, then a
// binary search for the first prefix sum not below it (moved back over empty categories).
#include <cuda_runtime.h>
#include <curand_kernel.h>

#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_scan.cuh>
#include <functional>

#include "core/cuda_api.h"
#include "cuda/cuda_check.h"
#include "kernels/loops.cuh"
#include "ops/kernels.h"
#include "ops/philox_args.h"

namespace cl::cuda {
namespace {

cudaStream_t stream_of(const Tensor& t) {
  return static_cast<cudaStream_t>(current_stream(t->device().index));
}

__global__ void iota_kernel(int64_t* v, int64_t n) {
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += int64_t(gridDim.x) * blockDim.x)
    v[i] = i;
}

template <class K>
__global__ void islands_kernel(const K* keys, int64_t* data, K mask, int n, PhiloxArgs philox) {
  const int tid = threadIdx.x + blockDim.x * blockIdx.x;
  if (tid >= n - 1) return;
  const K k = keys[tid] & mask;
  if (k != (keys[tid + 1] & mask)) return;              // not in an island
  if (tid != 0 && k == (keys[tid - 1] & mask)) return;  // not its first position
  int size = 0;
  do {
    ++size;
  } while (tid + size < n && (keys[tid + size] & mask) == k);
  data += tid;
  curandStatePhilox4_32_10_t state;
  uint64_t seed, offset;
  philox_unpack(philox, seed, offset);
  curand_init(seed, tid, offset, &state);
  for (int i = size - 1; i > 0; --i) {
    const unsigned r = curand(&state) % unsigned(i + 1);
    if (unsigned(i) != r) {
      const int64_t t = data[i];
      data[i] = data[r];
      data[r] = t;
    }
  }
}

template <class K>
void randperm_typed(const Tensor& keys, int bits, const Tensor& out, PhiloxArgs philox) {
  const int64_t n = keys->numel();
  cudaStream_t s = stream_of(keys);
  Tensor buf = empty({n}, ScalarType::Int64, keys->device());
  Tensor kout = empty({n}, keys->dtype, keys->device());
  int64_t* range = reinterpret_cast<int64_t*>(buf->data());
  int64_t* sorted = reinterpret_cast<int64_t*>(out->data());
  const int blocks = int(std::min<int64_t>((n + 255) / 256, 65535));
  iota_kernel<<<blocks, 256, 0, s>>>(range, n);
  CL_CUDA_KERNEL_LAUNCH_CHECK();
  const K* kin = reinterpret_cast<const K*>(keys->data());
  K* ks = reinterpret_cast<K*>(kout->data());
  size_t temp_bytes = 0;
  CL_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(nullptr, temp_bytes, kin, ks, range, sorted, int(n),
                                                0, bits, s));
  Tensor temp =
      empty({int64_t(std::max<size_t>(temp_bytes, 1))}, ScalarType::UInt8, keys->device());
  CL_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(temp->data(), temp_bytes, kin, ks, range, sorted,
                                                int(n), 0, bits, s));
  const K mask = bits >= 64 ? K(~uint64_t(0)) : K((uint64_t(1) << bits) - 1);
  islands_kernel<K><<<unsigned((n + 511) / 512), 512, 0, s>>>(ks, sorted, mask, int(n), philox);
  CL_CUDA_KERNEL_LAUNCH_CHECK();
}

// Values compared as torch compares its scalar_t (16-bit floats through float, exactly).
template <class T>
using cmp_t = std::conditional_t<std::is_same_v<T, double>, double, float>;

template <class T>
__device__ int search_bucket(const T* cum, const T* dist, int size, T val) {
  const cmp_t<T> v = static_cast<cmp_t<T>>(val);
  int start = 0, end = size;
  while (end - start > 0) {
    const int mid = start + (end - start) / 2;
    if (static_cast<cmp_t<T>>(cum[mid]) < v) {
      start = mid + 1;
    } else {
      end = mid;
    }
  }
  if (start == size) start = size - 1;  // val above the last sum (rounding)
  while (start >= 1 && static_cast<cmp_t<T>>(dist[start]) == cmp_t<T>(0)) --start;
  return start;
}

// The rows normalised as torch's renormRowsL1: each thread of a block of `blockDim.x`
// (a multiple of 32) sums its columns in T, then the block sums the partial sums as
// BlockReduceSum does (a shuffle-down tree in each warp, then over the warps' sums), and the
// row is divided by the total.
template <class T>
__device__ T shfl_down(T v, int offset) {
  if constexpr (sizeof(T) == 2) {
    unsigned short bits;
    memcpy(&bits, &v, 2);
    bits = static_cast<unsigned short>(__shfl_down_sync(0xffffffffu, unsigned(bits), offset));
    T r;
    memcpy(&r, &bits, 2);
    return r;
  } else {
    return __shfl_down_sync(0xffffffffu, v, offset);
  }
}

template <class T>
__device__ T warp_sum(T v) {
#pragma unroll
  for (int offset = 16; offset > 0; offset >>= 1) v = T(v + shfl_down(v, offset));
  return v;
}

template <class T>
__global__ void renorm_rows_kernel(T* dist, int64_t rows, int64_t cols) {
  __shared__ T shared[32];
  const int tid = threadIdx.x, lane = tid % 32, warp = tid / 32;
  for (int64_t row = blockIdx.x; row < rows; row += gridDim.x) {
    T sum = T(0.0f);
    for (int64_t c = tid; c < cols; c += blockDim.x) sum = T(sum + dist[row * cols + c]);
    sum = warp_sum(sum);
    __syncthreads();
    if (lane == 0) shared[warp] = sum;
    __syncthreads();
    sum = tid < int(blockDim.x / 32) ? shared[lane] : T(0.0f);
    if (warp == 0) sum = warp_sum(sum);
    __syncthreads();
    if (tid == 0) shared[0] = sum;
    __syncthreads();
    sum = shared[0];
    if (static_cast<cmp_t<T>>(sum) > cmp_t<T>(0)) {
      for (int64_t c = tid; c < cols; c += blockDim.x)
        dist[row * cols + c] = T(dist[row * cols + c] / sum);
    }
    __syncthreads();
  }
}

// Prefix sums of many rows as torch's tensor_kernel_scan_innermost_dim: blocks of
// (2^log_x, 512 / 2^log_x) threads, each row in chunks of 2^(log_x + 1) values, the running
// total added to a chunk's first value, then a Sklansky scan of the chunk.
template <class T>
__global__ void scan_rows_kernel(T* out, const T* src, unsigned rows, unsigned cols, int log_x) {
  extern __shared__ __align__(sizeof(double)) unsigned char smem[];
  const unsigned nx = 1u << log_x;
  T* buf = reinterpret_cast<T*>(smem) + 2 * nx * threadIdx.y;
  for (unsigned block_row = blockIdx.x * blockDim.y; block_row < rows;
       block_row += blockDim.y * gridDim.x) {
    const unsigned row = block_row + threadIdx.y;
    const bool exists = row < rows;
    T total = T(0.0f);
    for (unsigned col = 0; col < cols; col += 2 * nx) {
      const unsigned c1 = col + threadIdx.x, c2 = col + nx + threadIdx.x;
      if (exists) {
        buf[threadIdx.x] = c1 < cols ? src[size_t(row) * cols + c1] : T(0.0f);
        buf[nx + threadIdx.x] = c2 < cols ? src[size_t(row) * cols + c2] : T(0.0f);
        if (threadIdx.x == 0) buf[0] = T(buf[0] + total);
      }
      __syncthreads();
      for (int m = 0; m <= log_x; ++m) {
        if (exists) {
          const unsigned step = 1u << m;
          const unsigned a = ((threadIdx.x >> m) << (m + 1)) | step;
          const unsigned ti = a + threadIdx.x % step;
          buf[ti] = T(buf[ti] + buf[a - 1]);
        }
        __syncthreads();
      }
      if (exists) {
        if (c1 < cols) out[size_t(row) * cols + c1] = buf[threadIdx.x];
        if (c2 < cols) out[size_t(row) * cols + c2] = buf[nx + threadIdx.x];
      }
      total = buf[2 * nx - 1];
      __syncthreads();
    }
  }
}

// torch's get_log_num_threads_x_inner_scan, in its unsigned arithmetic (where there are
// 2^10 times more rows than columns or more, 9 - (ly - lx) wraps around and gives 9).
int scan_log_threads_x(unsigned rows, unsigned cols) {
  uint32_t lx = 0, ly = 0;
  while ((uint64_t(1) << lx) < cols) ++lx;
  while ((uint64_t(1) << ly) < rows) ++ly;
  const uint32_t half = (uint32_t(9) + (lx - ly)) / 2;
  return int(std::min<uint32_t>(std::max<uint32_t>(4, half), 9));
}

// A 16-bit float added as torch's c10 types add: in float, rounded back.
template <class T>
struct Plus {
  __device__ T operator()(const T& a, const T& b) const { return T(a + b); }
};

template <class T>
void prefix_sums(const Tensor& dist, const Tensor& cum, int64_t rows, int64_t cats,
                 cudaStream_t s) {
  const T* in = reinterpret_cast<const T*>(dist->data());
  T* out = reinterpret_cast<T*>(cum->data());
  if (rows == 1) {  // torch scans a single row with CUB
    using Op = std::conditional_t<std::is_floating_point_v<T>, std::plus<T>, Plus<T>>;
    size_t bytes = 0;
    CL_CUDA_CHECK(cub::DeviceScan::InclusiveScan(nullptr, bytes, in, out, Op(), int(cats), s));
    Tensor temp = empty({int64_t(std::max<size_t>(bytes, 1))}, ScalarType::UInt8, dist->device());
    CL_CUDA_CHECK(cub::DeviceScan::InclusiveScan(temp->data(), bytes, in, out, Op(), int(cats), s));
    return;
  }
  const int log_x = scan_log_threads_x(unsigned(rows), unsigned(cats));
  const dim3 threads(1u << log_x, 512u >> log_x);
  const unsigned grid = unsigned(std::min<int64_t>((rows + threads.y - 1) / threads.y, 65535));
  scan_rows_kernel<T>
      <<<grid, threads, 2 * 512 * sizeof(T), s>>>(out, in, unsigned(rows), unsigned(cats), log_x);
  CL_CUDA_KERNEL_LAUNCH_CHECK();
}

template <class T>
__global__ void multinomial_kernel(int samples, int64_t* dest, int64_t rows, int cats, const T* cum,
                                   const T* dist, PhiloxArgs philox) {
  const int idx = blockIdx.y * gridDim.x * blockDim.x + blockIdx.x * blockDim.x + threadIdx.x;
  curandStatePhilox4_32_10_t state;
  uint64_t seed, offset;
  philox_unpack(philox, seed, offset);
  curand_init(seed, idx, offset, &state);
  for (int64_t r = blockIdx.y; r < rows; r += gridDim.y) {
    for (int s = blockIdx.x * blockDim.x + threadIdx.x; s < samples; s += blockDim.x * gridDim.x) {
      const float4 rand = curand_uniform4(&state);
      const T u = T(rand.x);
      dest[r * samples + s] = search_bucket<T>(cum + r * cats, dist + r * cats, cats, u);
    }
  }
}

template <class T>
void multinomial_typed(const Tensor& probs, int64_t samples, const Tensor& out, unsigned grid_x,
                       unsigned grid_y, PhiloxArgs philox) {
  const int64_t rows = probs->sizes[0], cats = probs->sizes[1];
  cudaStream_t s = stream_of(probs);
  Tensor dist = clone(probs), cum = empty({rows, cats}, probs->dtype, probs->device());
  const unsigned block = unsigned(std::min<int64_t>(1024, (cats + 31) / 32 * 32));
  renorm_rows_kernel<T><<<unsigned(std::min<int64_t>(rows, 65535)), block, 0, s>>>(
      reinterpret_cast<T*>(dist->data()), rows, cats);
  CL_CUDA_KERNEL_LAUNCH_CHECK();
  prefix_sums<T>(dist, cum, rows, cats, s);
  multinomial_kernel<T><<<dim3(grid_x, grid_y), 128, 0, s>>>(
      int(samples), reinterpret_cast<int64_t*>(out->data()), rows, int(cats),
      reinterpret_cast<const T*>(cum->data()), reinterpret_cast<const T*>(dist->data()), philox);
  CL_CUDA_KERNEL_LAUNCH_CHECK();
}

}  // namespace

void torch_randperm(const Tensor& keys, int bits, const Tensor& out, PhiloxArgs philox) {
  if (keys->dtype == ScalarType::Int32) {
    randperm_typed<int32_t>(keys, bits, out, philox);
  } else {
    randperm_typed<int64_t>(keys, bits, out, philox);
  }
}

void torch_multinomial(const Tensor& probs, int64_t samples, const Tensor& out, unsigned grid_x,
                       unsigned grid_y, PhiloxArgs philox) {
  switch (probs->dtype) {
    case ScalarType::Float32:
      return multinomial_typed<float>(probs, samples, out, grid_x, grid_y, philox);
    case ScalarType::Float64:
      return multinomial_typed<double>(probs, samples, out, grid_x, grid_y, philox);
    case ScalarType::Float16:
      return multinomial_typed<Half>(probs, samples, out, grid_x, grid_y, philox);
    case ScalarType::BFloat16:
      return multinomial_typed<BFloat16>(probs, samples, out, grid_x, grid_y, philox);
    default:
      throw NotImplementedError(std::string("\"multinomial_kernel_cuda\" not implemented for '") +
                                dtype_short_name(probs->dtype) + "'");
  }
}

}  // namespace cl::cuda
