// Sorting rows on the GPU (Note [Sort keys] in ops/sort.h) with CUB's radix sorts: a pass
// writes each element's unsigned key and its index in the row, CUB sorts the (key, index)
// pairs (DeviceRadixSort for one row, DeviceSegmentedSort for many; both stable), and a
// gather writes the first k of each row: values read from the input by index, indices widened
// to int64. Indices are 32-bit while a row fits, which halves the bytes each radix pass moves.
// Bytes moved for n keys of b bytes and 4-byte indices: n * (2b + 4) for the keys, about
// 2 * n * (b + 4) per radix pass (b passes of 8 bits), and k * (2b + 12) for the gather.
#include <cuda_runtime.h>

#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_segmented_sort.cuh>

#include "core/cuda_api.h"
#include "cuda/cuda_check.h"
#include "ops/sort.h"

namespace cl::cuda {
namespace {

cudaStream_t stream_of(const Tensor& t) {
  return static_cast<cudaStream_t>(current_stream(t->device().index));
}

int blocks_for(int64_t n) { return int(std::min<int64_t>((n + 255) / 256, 65535)); }

template <class T, class U, class I>
__global__ void keys_kernel(const T* x, int64_t total, int64_t n, bool descending, U* keys,
                            I* idx) {
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < total;
       i += int64_t(gridDim.x) * blockDim.x) {
    U k = sortkey::key(x[i]);
    keys[i] = descending ? U(~k) : k;
    idx[i] = I(i % n);
  }
}

__global__ void offsets_kernel(int64_t* off, int64_t rows, int64_t n) {
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i <= rows;
       i += int64_t(gridDim.x) * blockDim.x) {
    off[i] = i * n;
  }
}

template <class T, class I>
__global__ void gather_kernel(const T* x, const I* idx, int64_t total, int64_t n, int64_t k,
                              T* values, int64_t* indices) {
  for (int64_t j = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; j < total;
       j += int64_t(gridDim.x) * blockDim.x) {
    int64_t r = j / k, c = j - r * k;
    int64_t s = int64_t(idx[r * n + c]);
    values[j] = x[r * n + s];
    indices[j] = s;
  }
}

Tensor scratch(const Tensor& like, size_t bytes) {
  return empty({int64_t(std::max<size_t>(bytes, 1))}, ScalarType::UInt8, like->device());
}

template <class T, class I>
void sort_typed(const Tensor& in, int64_t rows, int64_t n, int64_t k, bool descending,
                const Tensor& values, const Tensor& indices) {
  using U = sortkey::key_t<T>;
  cudaStream_t s = stream_of(in);
  const int64_t total = rows * n;
  Tensor kbuf = scratch(in, 2 * total * sizeof(U));
  Tensor ibuf = scratch(in, 2 * total * sizeof(I));
  U* k0 = reinterpret_cast<U*>(kbuf->data());
  I* i0 = reinterpret_cast<I*>(ibuf->data());
  U* k1 = k0 + total;
  I* i1 = i0 + total;
  const T* x = reinterpret_cast<const T*>(in->data());
  keys_kernel<<<blocks_for(total), 256, 0, s>>>(x, total, n, descending, k0, i0);
  CL_CUDA_KERNEL_LAUNCH_CHECK();
  const I* sorted = nullptr;
  size_t temp_bytes = 0;
  if (rows == 1) {
    cub::DoubleBuffer<U> keys(k0, k1);
    cub::DoubleBuffer<I> vals(i0, i1);
    CL_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(nullptr, temp_bytes, keys, vals, total, 0,
                                                  int(8 * sizeof(U)), s));
    Tensor temp = scratch(in, temp_bytes);
    CL_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(temp->data(), temp_bytes, keys, vals, total, 0,
                                                  int(8 * sizeof(U)), s));
    sorted = vals.Current();
  } else {
    Tensor obuf = empty({rows + 1}, ScalarType::Int64, in->device());
    int64_t* off = reinterpret_cast<int64_t*>(obuf->data());
    offsets_kernel<<<blocks_for(rows + 1), 256, 0, s>>>(off, rows, n);
    CL_CUDA_KERNEL_LAUNCH_CHECK();
    CL_CUDA_CHECK(cub::DeviceSegmentedSort::StableSortPairs(nullptr, temp_bytes, k0, k1, i0, i1,
                                                            total, rows, off, off + 1, s));
    Tensor temp = scratch(in, temp_bytes);
    CL_CUDA_CHECK(cub::DeviceSegmentedSort::StableSortPairs(temp->data(), temp_bytes, k0, k1, i0,
                                                            i1, total, rows, off, off + 1, s));
    sorted = i1;
  }
  gather_kernel<<<blocks_for(rows * k), 256, 0, s>>>(x, sorted, rows * k, n, k,
                                                     reinterpret_cast<T*>(values->data()),
                                                     reinterpret_cast<int64_t*>(indices->data()));
  CL_CUDA_KERNEL_LAUNCH_CHECK();
}

}  // namespace

void sort_rows(const Tensor& in, int64_t rows, int64_t n, int64_t k, bool descending,
               const Tensor& values, const Tensor& indices) {
  CL_DISPATCH_ALL_TYPES(in->dtype, "sort", [&] {
    if (n <= INT32_MAX) {
      sort_typed<scalar_t, int32_t>(in, rows, n, k, descending, values, indices);
    } else {
      sort_typed<scalar_t, int64_t>(in, rows, n, k, descending, values, indices);
    }
  });
}

}  // namespace cl::cuda
