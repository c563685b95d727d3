// Host cost of one kernel launch by each route cudalite could take, on the device machine:
//   nvcc -O2 -std=c++17 -o /tmp/launch_overhead benchmarks/cpp/launch_overhead.cu -lcuda
//   /tmp/launch_overhead
// Each figure is the median over 15 runs of 20,000 back-to-back calls (host time per call,
// synchronised at the end), beside the GPU's time per kernel, so that a queue-bound loop
// shows as such.
#include <cuda.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <vector>

struct Args {  // the size of the dense elementwise kernel's arguments (two inputs)
  float* out;
  const float* in[2];
  float sval[2];
  unsigned mask;
};

struct Bytes {  // a small host-to-device copy carried in the kernel's parameters
  unsigned char b[16];
};
__global__ void store_bytes(unsigned char* dst, Bytes v, int n) {
  if (threadIdx.x < n) dst[threadIdx.x] = v.b[threadIdx.x];
}

__global__ void spin(long long cycles) {  // holds the GPU busy
  long long t0 = clock64();
  while (clock64() - t0 < cycles) {
  }
}

__global__ void tiny(long long n, Args a) {
  if (threadIdx.x < n) a.out[threadIdx.x] = a.in[0][threadIdx.x] + a.in[1][threadIdx.x];
}

template <class F>
double per_call_us(F f, int n = 20000) {
  std::vector<double> v;
  for (int r = 0; r < 15; ++r) {
    cudaDeviceSynchronize();
    auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < n; ++i) f();
    cudaDeviceSynchronize();
    v.push_back(
        std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count() /
        n);
  }
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// One printed row: what was timed and its median cost per call.
template <class F>
void row(const char* what, F f, int n = 20000) {
  std::printf("%-52s %8.3f\n", what, per_call_us(f, n));
}

// `f` followed by the synchronisation a blocking copy ends with.
template <class F>
auto synced(cudaStream_t s, F f) {
  return [=] {
    f();
    cudaStreamSynchronize(s);
  };
}

int main() {
  float* d = nullptr;
  cudaMalloc(&d, 1024);
  Args a{d, {d + 1, d + 2}, {0, 0}, 0};
  long long n = 1;
  cudaStream_t s0 = nullptr, s1 = nullptr;
  cudaStreamCreateWithFlags(&s1, cudaStreamNonBlocking);
  tiny<<<1, 32>>>(n, a);
  cudaDeviceSynchronize();

  CUfunction fn = nullptr;
  cudaGetFuncBySymbol(reinterpret_cast<cudaFunction_t*>(&fn), reinterpret_cast<void*>(&tiny));
  void* params[] = {&n, &a};
  int dev = 0;

  std::printf("%-52s %8s\n", "route", "us/call");
  row("<<<>>> on the legacy default stream", [&] { tiny<<<1, 32, 0, s0>>>(n, a); });
  row("<<<>>> on a non-blocking stream", [&] { tiny<<<1, 32, 0, s1>>>(n, a); });
  row("cudaLaunchKernel, legacy stream",
      [&] { cudaLaunchKernel(reinterpret_cast<void*>(&tiny), dim3(1), dim3(32), params, 0, s0); });
  row("cuLaunchKernel (driver), legacy stream",
      [&] { cuLaunchKernel(fn, 1, 1, 1, 32, 1, 1, 0, nullptr, params, nullptr); });
  // The arguments as one packed buffer (`extra`) instead of one pointer per argument.
  struct Packed {
    long long n;
    Args a;
  } packed{n, a};
  size_t packed_size = sizeof(packed);
  void* extra[] = {CU_LAUNCH_PARAM_BUFFER_POINTER, &packed, CU_LAUNCH_PARAM_BUFFER_SIZE,
                   &packed_size, CU_LAUNCH_PARAM_END};
  row("cuLaunchKernel, arguments as one buffer (extra)",
      [&] { cuLaunchKernel(fn, 1, 1, 1, 32, 1, 1, 0, nullptr, nullptr, extra); });
  row("cuLaunchKernel (driver), non-blocking stream", [&] {
    cuLaunchKernel(fn, 1, 1, 1, 32, 1, 1, 0, reinterpret_cast<CUstream>(s1), params, nullptr);
  });
  row("<<<>>> + cudaGetDevice + cudaGetLastError", [&] {
    cudaGetDevice(&dev);
    tiny<<<1, 32, 0, s0>>>(n, a);
    cudaGetLastError();
  });
  row(
      "cudaGetDevice alone", [&] { cudaGetDevice(&dev); }, 200000);
  row(
      "cudaGetLastError alone", [&] { cudaGetLastError(); }, 200000);

  // Blocking 4-byte host-to-device copies (what cpu_tensor.cuda() needs), each ending with
  // the stream synchronisation that torch's blocking copy does.
  float* pinned = nullptr;
  cudaHostAlloc(&pinned, 64, cudaHostAllocDefault);
  float pageable[16] = {1.0f};
  Bytes bytes{};
  auto* dbytes = reinterpret_cast<unsigned char*>(d);
  auto h2d = [&](const void* src) { cudaMemcpyAsync(d, src, 4, cudaMemcpyHostToDevice, s0); };
  auto store = [&] { store_bytes<<<1, 32, 0, s0>>>(dbytes, bytes, 4); };
  std::printf("blocking 4-byte host-to-device copy:\n");
  row("  cudaMemcpyAsync from pinned + cudaStreamSynchronize", synced(s0, [&] { h2d(pinned); }),
      5000);
  row(
      "  cuMemcpyHtoDAsync from pinned + cuStreamSynchronize",
      [&] {
        cuMemcpyHtoDAsync(reinterpret_cast<CUdeviceptr>(d), pinned, 4, nullptr);
        cuStreamSynchronize(nullptr);
      },
      5000);
  row("  cudaMemcpyAsync from pageable + cudaStreamSynchronize", synced(s0, [&] { h2d(pageable); }),
      5000);
  row(
      "  cudaMemcpyAsync from pageable, no synchronisation", [&] { h2d(pageable); }, 5000);
  row("  bytes as kernel parameters + cudaStreamSynchronize", synced(s0, store), 5000);
  row("  bytes as kernel parameters, no synchronisation", store, 5000);
  row("  cuMemsetD32Async + cudaStreamSynchronize",
      synced(s0,
             [&] { cuMemsetD32Async(reinterpret_cast<CUdeviceptr>(d), 0x3f800000u, 1, nullptr); }),
      5000);
  auto polled = [&](auto f) {  // `f`, then polling the stream until it is idle
    return [=] {
      f();
      while (cudaStreamQuery(s0) == cudaErrorNotReady) {
      }
    };
  };
  row("  cudaMemcpyAsync from pinned + polling cudaStreamQuery", polled([&] { h2d(pinned); }),
      5000);
  row("  cuMemsetD32Async + polling cudaStreamQuery",
      polled([&] { cuMemsetD32Async(reinterpret_cast<CUdeviceptr>(d), 0x3f800000u, 1, nullptr); }),
      5000);
  row("  cuMemsetD16Async + cudaStreamSynchronize",
      synced(s0, [&] { cuMemsetD16Async(reinterpret_cast<CUdeviceptr>(d), 0x3c00u, 1, nullptr); }),
      5000);
  row("4-byte device-to-host: cudaMemcpyAsync to pinned + sync",
      synced(s0, [&] { cudaMemcpyAsync(pinned, d, 4, cudaMemcpyDeviceToHost, s0); }), 5000);

  // The host's cost alone and the GPU's alone: 300 launches queued behind a 20 ms spin
  // kernel, timed on the host while they queue, then with events as the GPU runs them.
  {
    cudaEvent_t q0, q1;
    cudaEventCreate(&q0);
    cudaEventCreate(&q1);
    std::vector<double> host, gpu;
    for (int r = 0; r < 7; ++r) {
      spin<<<1, 1, 0, s0>>>(40'000'000LL);
      cudaEventRecord(q0, s0);
      auto t0 = std::chrono::steady_clock::now();
      for (int i = 0; i < 300; ++i)
        cuLaunchKernel(fn, 1, 1, 1, 32, 1, 1, 0, nullptr, params, nullptr);
      host.push_back(
          std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count() /
          300);
      cudaEventRecord(q1, s0);
      cudaEventSynchronize(q1);
      float qms = 0;
      cudaEventElapsedTime(&qms, q0, q1);
      gpu.push_back(qms * 1000 / 300);
    }
    std::sort(host.begin(), host.end());
    std::sort(gpu.begin(), gpu.end());
    std::printf("%-52s %8.3f\n", "cuLaunchKernel host cost, GPU busy (queue not full)", host[3]);
    std::printf("%-52s %8.3f\n", "GPU time per queued kernel (events)", gpu[3]);
  }

  // The host cost by stream, GPU busy: rounds of 300 launches behind a spin kernel on that
  // stream, the streams taken in turn within each round so that drifts of the host's speed
  // fall on all of them alike.
  {
    cudaStream_t blocking = nullptr;
    cudaStreamCreate(&blocking);
    struct Route {
      const char* name;
      CUstream s;
    } routes[] = {
        {"  nullptr (the legacy default stream)", nullptr},
        {"  CU_STREAM_LEGACY", CU_STREAM_LEGACY},
        {"  CU_STREAM_PER_THREAD", CU_STREAM_PER_THREAD},
        {"  a created blocking stream", reinterpret_cast<CUstream>(blocking)},
        {"  a created non-blocking stream", reinterpret_cast<CUstream>(s1)},
    };
    constexpr int kRoutes = sizeof(routes) / sizeof(routes[0]);
    std::vector<double> t[kRoutes];
    for (int r = 0; r < 9; ++r) {
      for (int k = 0; k < kRoutes; ++k) {
        spin<<<1, 1, 0, reinterpret_cast<cudaStream_t>(routes[k].s)>>>(40'000'000LL);
        auto t0 = std::chrono::steady_clock::now();
        for (int i = 0; i < 300; ++i)
          cuLaunchKernel(fn, 1, 1, 1, 32, 1, 1, 0, routes[k].s, params, nullptr);
        t[k].push_back(
            std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0)
                .count() /
            300);
        cudaDeviceSynchronize();
      }
    }
    std::printf("cuLaunchKernel host cost, GPU busy, by stream:\n");
    for (int k = 0; k < kRoutes; ++k) {
      std::sort(t[k].begin(), t[k].end());
      std::printf("%-52s %8.3f\n", routes[k].name, t[k][4]);
    }
  }

  // GPU time per kernel, back to back (events): the floor a launch-bound loop can reach.
  cudaEvent_t e0, e1;
  cudaEventCreate(&e0);
  cudaEventCreate(&e1);
  cudaEventRecord(e0, s0);
  for (int i = 0; i < 20000; ++i) tiny<<<1, 32, 0, s0>>>(n, a);
  cudaEventRecord(e1, s0);
  cudaEventSynchronize(e1);
  float ms = 0;
  cudaEventElapsedTime(&ms, e0, e1);
  std::printf("%-52s %8.3f\n", "GPU time per kernel, back to back (events)", ms * 1000 / 20000);
  return 0;
}
