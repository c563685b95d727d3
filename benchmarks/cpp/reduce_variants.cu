// A float32 sum over 256 Mi elements by several block layouts, beside CUB's DeviceReduce (what
// CuPy runs), to see what the reduction over everything (kernels/reduce.cu) leaves on the
// table. On the device machine:
//   nvcc -O3 -std=c++17 -arch=sm_90 -o /tmp/reduce_variants benchmarks/cpp/reduce_variants.cu
//   /tmp/reduce_variants
// Each figure is the median of 30 timed runs (events), in GB/s read.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cub/device/device_reduce.cuh>
#include <vector>

constexpr int64_t kN = int64_t(256) << 20;

template <int THREADS>
__device__ float block_sum(float v) {
  __shared__ float sh[THREADS / 32];
  for (int o = 16; o > 0; o >>= 1) v += __shfl_down_sync(0xffffffffu, v, o);
  if (threadIdx.x % 32 == 0) sh[threadIdx.x / 32] = v;
  __syncthreads();
  if (threadIdx.x < 32) {
    v = threadIdx.x < THREADS / 32 ? sh[threadIdx.x] : 0.0f;
    for (int o = 16; o > 0; o >>= 1) v += __shfl_down_sync(0xffffffffu, v, o);
  }
  return v;
}

// Each block sums one contiguous chunk, UNROLL float4 loads in flight per thread (the layout
// kernels/reduce.cu uses), or (INTERLEAVED) the blocks walk the array together, grid-stride.
template <int THREADS, int UNROLL, bool INTERLEAVED>
__global__ void partial_sums(const float4* x, int64_t nvec, int64_t chunk, float* partial) {
  float acc[4] = {0, 0, 0, 0};
  int64_t lo, hi, step, k;
  if (INTERLEAVED) {
    lo = 0, hi = nvec, step = int64_t(gridDim.x) * THREADS;
    k = int64_t(blockIdx.x) * THREADS + threadIdx.x;
  } else {
    lo = int64_t(blockIdx.x) * chunk, hi = lo + chunk < nvec ? lo + chunk : nvec, step = THREADS;
    k = lo + threadIdx.x;
  }
  for (; k + (UNROLL - 1) * step < hi; k += UNROLL * step) {
    float4 v[UNROLL];
#pragma unroll
    for (int u = 0; u < UNROLL; ++u) v[u] = x[k + u * step];
#pragma unroll
    for (int u = 0; u < UNROLL; ++u) {
      acc[0] += v[u].x, acc[1] += v[u].y, acc[2] += v[u].z, acc[3] += v[u].w;
    }
  }
  for (; k < hi; k += step) {
    float4 v = x[k];
    acc[0] += v.x, acc[1] += v.y, acc[2] += v.z, acc[3] += v.w;
  }
  float t = block_sum<THREADS>((acc[0] + acc[1]) + (acc[2] + acc[3]));
  if (threadIdx.x == 0) partial[blockIdx.x] = t;
}

__global__ void finish(const float* partial, int n, float* out) {
  float v = 0;
  for (int i = threadIdx.x; i < n; i += 256) v += partial[i];
  v = block_sum<256>(v);
  if (threadIdx.x == 0) *out = v;
}

template <class F>
double gbps(F f) {
  cudaEvent_t a, b;
  cudaEventCreate(&a);
  cudaEventCreate(&b);
  for (int i = 0; i < 3; ++i) f();
  std::vector<double> v;
  for (int i = 0; i < 30; ++i) {
    cudaEventRecord(a);
    f();
    cudaEventRecord(b);
    cudaEventSynchronize(b);
    float ms = 0;
    cudaEventElapsedTime(&ms, a, b);
    v.push_back(double(kN) * 4 / (ms * 1e-3) / 1e9);
  }
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

template <int THREADS, int UNROLL, bool INTERLEAVED>
void variant(const char* name, const float* x, float* partial, float* out, int blocks) {
  int64_t nvec = kN / 4, chunk = (nvec + blocks - 1) / blocks;
  double g = gbps([&] {
    partial_sums<THREADS, UNROLL, INTERLEAVED>
        <<<blocks, THREADS>>>(reinterpret_cast<const float4*>(x), nvec, chunk, partial);
    finish<<<1, 256>>>(partial, blocks, out);
  });
  float host = 0;
  cudaMemcpy(&host, out, 4, cudaMemcpyDeviceToHost);
  std::printf("%-46s %5d blocks %8.1f GB/s  (sum %.6g)\n", name, blocks, g, host);
}

int main() {
  float *x, *partial, *out;
  cudaMalloc(&x, kN * 4);
  cudaMalloc(&partial, 1 << 20);
  cudaMalloc(&out, 4);
  std::vector<float> h(kN);
  for (int64_t i = 0; i < kN; ++i) h[i] = float((i * 2654435761u) % 1000) / 1000.0f;
  cudaMemcpy(x, h.data(), kN * 4, cudaMemcpyHostToDevice);
  int sms = 0;
  cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);

  size_t tmp_bytes = 0;
  cub::DeviceReduce::Sum(nullptr, tmp_bytes, x, out, kN);
  void* tmp = nullptr;
  cudaMalloc(&tmp, tmp_bytes);
  std::printf("%-46s %14.1f GB/s\n", "cub::DeviceReduce::Sum",
              gbps([&] { cub::DeviceReduce::Sum(tmp, tmp_bytes, x, out, kN); }));

  variant<256, 4, false>("chunked, 256 threads, unroll 4 (cudalite)", x, partial, out, sms * 4);
  variant<256, 8, false>("chunked, 256 threads, unroll 8", x, partial, out, sms * 4);
  variant<256, 4, false>("chunked, 256 threads, unroll 4", x, partial, out, sms * 8);
  variant<512, 4, false>("chunked, 512 threads, unroll 4", x, partial, out, sms * 4);
  variant<256, 4, true>("interleaved, 256 threads, unroll 4", x, partial, out, sms * 4);
  variant<256, 8, true>("interleaved, 256 threads, unroll 8", x, partial, out, sms * 4);
  variant<256, 4, true>("interleaved, 256 threads, unroll 4", x, partial, out, sms * 8);
  variant<512, 4, true>("interleaved, 512 threads, unroll 4", x, partial, out, sms * 4);
  variant<1024, 4, true>("interleaved, 1024 threads, unroll 4", x, partial, out, sms * 2);
  return 0;
}
