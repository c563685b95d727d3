// Host cost of cudalite's launch-bound ops in C++ (no Python), beside a bare driver launch,
// so that what the core adds to a launch and what the bindings add can be told apart
// (bench_gpu_math.py --launch times the same calls from Python). Built against the core
// library, on the device machine:
//   cmake -S . -B build/bench -G Ninja -DCUDALITE_CUDA=ON -DCUDALITE_BUILD_BENCH=ON
//   cmake --build build/bench --target op_overhead && build/bench/op_overhead
// Ops run while a spin kernel holds the GPU (so neither the GPU nor a full launch queue
// paces them): medians over 9 rounds of 300 calls, microseconds per call. Blocking copies
// wait for the GPU, so they are timed with it idle.
#include <cuda.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <vector>

#include "core/tensor.h"
#include "ops/ops.h"

using Clock = std::chrono::steady_clock;
using namespace cl;

__global__ void spin(long long cycles) {
  long long t0 = clock64();
  while (clock64() - t0 < cycles) {
  }
}

__global__ void tiny(float* out, const float* a, const float* b) { out[0] = a[0] + b[0]; }

// Median host time per call of `f`, called 300 times behind 20 ms of GPU work.
template <class F>
double busy_us(F f) {
  std::vector<double> v;
  for (int r = 0; r < 9; ++r) {
    spin<<<1, 1>>>(40'000'000LL);
    auto t0 = Clock::now();
    for (int i = 0; i < 300; ++i) f();
    v.push_back(std::chrono::duration<double, std::micro>(Clock::now() - t0).count() / 300);
    cudaDeviceSynchronize();
  }
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// Median time per call of `f` with the GPU idle between calls (f synchronises itself).
template <class F>
double idle_us(F f) {
  std::vector<double> v;
  for (int r = 0; r < 9; ++r) {
    auto t0 = Clock::now();
    for (int i = 0; i < 2000; ++i) f();
    v.push_back(std::chrono::duration<double, std::micro>(Clock::now() - t0).count() / 2000);
  }
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

int main() {
  const Device cuda(DeviceType::CUDA, 0);
  Tensor a = full({1}, Scalar(1.0), ScalarType::Float32, cuda);
  Tensor b = full({1}, Scalar(2.0), ScalarType::Float32, cuda);
  Tensor h = full({1}, Scalar(3.0), ScalarType::Float32, Device());
  auto* pa = reinterpret_cast<float*>(a->data());
  auto* pb = reinterpret_cast<float*>(b->data());
  CUfunction fn = nullptr;
  cudaGetFuncBySymbol(reinterpret_cast<cudaFunction_t*>(&fn), reinterpret_cast<void*>(&tiny));
  void* params[] = {&pa, &pa, &pb};
  cudaDeviceSynchronize();

  std::printf("%-48s %8s\n", "host cost, GPU busy", "us/call");
  auto row = [](const char* what, double us) { std::printf("%-48s %8.3f\n", what, us); };
  row("cuLaunchKernel, 3 pointers",
      busy_us([&] { cuLaunchKernel(fn, 1, 1, 1, 1, 1, 1, 0, nullptr, params, nullptr); }));
  row("empty({1}, cuda) and its release",
      busy_us([&] { Tensor t = empty({1}, ScalarType::Float32, cuda); }));
  row("binary(Add, a, b, out=a): a.add_(b)", busy_us([&] { binary(BinaryOp::Add, a, b, a); }));
  row("binary(Add, a, b): a + b, result released",
      busy_us([&] { Tensor t = binary(BinaryOp::Add, a, b); }));
  row("reduce(Sum, a): a.sum(), result released",
      busy_us([&] { Tensor t = reduce(ReduceOp::Sum, a, {}, false); }));

  std::printf("%-48s %8s\n", "GPU idle", "us/call");
  float* pinned = nullptr;
  cudaHostAlloc(&pinned, 64, cudaHostAllocDefault);
  row("cudaMemcpyAsync 4 B from pinned + sync", idle_us([&] {
        cudaMemcpyAsync(pa, pinned, 4, cudaMemcpyHostToDevice, nullptr);
        cudaStreamSynchronize(nullptr);
      }));
  row("to(cpu tensor, cuda): .cuda(), result released",
      idle_us([&] { Tensor t = to(h, cuda, ScalarType::Float32, false, false); }));
  row("item(a)", idle_us([&] { (void)item(a); }));
  cudaFreeHost(pinned);
  return 0;
}
