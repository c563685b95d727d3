// randperm and multinomial (with replacement) drawn as torch's CUDA kernels draw them.
//
// randperm: the caller draws one random key per position (torch's random_ over the whole of
// int32 or int64); a stable radix sort of 0..n-1 by the low `bits` bits of the keys (CUB, with
// the keys' own signed type, as torch sorts them) gives the permutation, and each run of
// equal masked keys ("island") is then shuffled by the thread of its first position: Philox
// stream `first` at the offset, one 32-bit curand() per swap of a Fisher-Yates from the end.
//
// multinomial with replacement: rows normalised and prefix-summed by the caller; thread
// (row r < grid_y, sample s) is curand's stream r * grid_x * 128 + s, and each of its samples
// takes one curand_uniform4 and keeps its first value, rounded to the probabilities' dtype,
// then a binary search for the first prefix sum not below it (moved back over empty
// categories).
#include <cuda_runtime.h>
#include <curand_kernel.h>

#include <cub/device/device_radix_sort.cuh>

#include "core/cuda_api.h"
#include "cuda/cuda_check.h"
#include "kernels/loops.cuh"
#include "ops/kernels.h"

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
__global__ void islands_kernel(const K* keys, int64_t* data, K mask, int n, uint64_t seed,
                               uint64_t offset) {
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
void randperm_typed(const Tensor& keys, int bits, const Tensor& out, uint64_t seed,
                    uint64_t offset) {
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
  islands_kernel<K>
      <<<unsigned((n + 511) / 512), 512, 0, s>>>(ks, sorted, mask, int(n), seed, offset);
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

template <class T>
__global__ void multinomial_kernel(int samples, int64_t* dest, int64_t rows, int cats, const T* cum,
                                   const T* dist, uint64_t seed, uint64_t offset) {
  const int idx = blockIdx.y * gridDim.x * blockDim.x + blockIdx.x * blockDim.x + threadIdx.x;
  curandStatePhilox4_32_10_t state;
  curand_init(seed, idx, offset, &state);
  for (int64_t r = blockIdx.y; r < rows; r += gridDim.y) {
    for (int s = blockIdx.x * blockDim.x + threadIdx.x; s < samples; s += blockDim.x * gridDim.x) {
      const float4 rand = curand_uniform4(&state);
      const T u = T(rand.x);
      dest[r * samples + s] = search_bucket<T>(cum + r * cats, dist + r * cats, cats, u);
    }
  }
}

}  // namespace

void torch_randperm(const Tensor& keys, int bits, const Tensor& out, uint64_t seed,
                    uint64_t offset) {
  if (keys->dtype == ScalarType::Int32) {
    randperm_typed<int32_t>(keys, bits, out, seed, offset);
  } else {
    randperm_typed<int64_t>(keys, bits, out, seed, offset);
  }
}

void torch_multinomial(const Tensor& cum, const Tensor& dist, int64_t samples, const Tensor& out,
                       unsigned grid_x, unsigned grid_y, uint64_t seed, uint64_t offset) {
  const int64_t rows = dist->sizes[0];
  const int cats = int(dist->sizes[1]);
  int64_t* dest = reinterpret_cast<int64_t*>(out->data());
  cudaStream_t s = stream_of(dist);
  const dim3 grid(grid_x, grid_y);
  switch (dist->dtype) {
    case ScalarType::Float32:
      multinomial_kernel<float><<<grid, 128, 0, s>>>(
          int(samples), dest, rows, cats, reinterpret_cast<const float*>(cum->data()),
          reinterpret_cast<const float*>(dist->data()), seed, offset);
      break;
    case ScalarType::Float64:
      multinomial_kernel<double><<<grid, 128, 0, s>>>(
          int(samples), dest, rows, cats, reinterpret_cast<const double*>(cum->data()),
          reinterpret_cast<const double*>(dist->data()), seed, offset);
      break;
    case ScalarType::Float16:
      multinomial_kernel<Half><<<grid, 128, 0, s>>>(
          int(samples), dest, rows, cats, reinterpret_cast<const Half*>(cum->data()),
          reinterpret_cast<const Half*>(dist->data()), seed, offset);
      break;
    case ScalarType::BFloat16:
      multinomial_kernel<BFloat16><<<grid, 128, 0, s>>>(
          int(samples), dest, rows, cats, reinterpret_cast<const BFloat16*>(cum->data()),
          reinterpret_cast<const BFloat16*>(dist->data()), seed, offset);
      break;
    default:
      throw NotImplementedError(std::string("\"multinomial_kernel_cuda\" not implemented for '") +
                                dtype_short_name(dist->dtype) + "'");
  }
  CL_CUDA_KERNEL_LAUNCH_CHECK();
}

}  // namespace cl::cuda
