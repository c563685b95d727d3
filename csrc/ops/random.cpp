// Generators: one (seed, offset) pair for the CPU and one per CUDA device.
#include <mutex>
#include <unordered_map>

#include "core/cuda_api.h"
#include "core/error.h"
#include "ops/kernels.h"
#include "ops/ops.h"

namespace cl {

namespace {

constexpr uint64_t kDefaultSeed = 67280421310721ull;  // torch's default

struct GenState {
  uint64_t seed = kDefaultSeed;
  uint64_t offset = 0;  // in Philox counters (4 values each)
};

std::mutex g_mu;
std::unordered_map<Device, GenState>& states() {
  static std::unordered_map<Device, GenState> m;
  return m;
}

// Reserves counters for `numel` values and returns (seed, first counter).
std::pair<uint64_t, uint64_t> reserve(Device d, int64_t numel) {
  std::lock_guard<std::mutex> lock(g_mu);
  GenState& s = states()[d];
  uint64_t base = s.offset;
  s.offset += uint64_t(numel + 3) / 4;
  return {s.seed, base};
}

void fill(const Tensor& t, int kind, double a, double b) {
  if (t->numel() == 0) return;
  Tensor dense = t->is_contiguous() ? t : empty(t->sizes, t->dtype, t->device());
  Device d = resolve_device(t->device());
  auto [seed, base] = reserve(d, t->numel());
  if (d.is_cuda()) {
    cuda::DeviceGuard g(d.index);
    cuda::random_fill(dense, kind, a, b, seed, base);
  } else {
    cpu::random_fill(dense, kind, a, b, seed, base);
  }
  if (dense != t) copy_(t, dense);
}

}  // namespace

void uniform_(const Tensor& t, double lo, double hi) {
  CL_CHECK_AS(NotImplementedError, is_floating(t->dtype),
              "\"check_uniform_bounds\" not implemented for '", dtype_short_name(t->dtype), "'");
  CL_CHECK(lo <= hi, "uniform_ expects to return a [from, to) range, but found from=", lo,
           " > to=", hi);
  fill(t, 0, lo, hi);
}

void normal_(const Tensor& t, double mean, double std) {
  CL_CHECK_AS(NotImplementedError, is_floating(t->dtype),
              t->is_cuda() ? "\"normal_kernel_cuda\" not implemented for '"
                           : "\"normal_kernel_cpu\" not implemented for '",
              dtype_short_name(t->dtype), "'");
  CL_CHECK(std >= 0.0, "normal expects std >= 0.0, but found std ", std);
  fill(t, 1, mean, std);
}

void random_int_(const Tensor& t, int64_t lo, int64_t hi) {
  CL_CHECK(lo < hi, "random_ expects 'from' to be less than 'to', but got from=", lo,
           " >= to=", hi);
  fill(t, 2, double(lo), double(hi));
}

void manual_seed(uint64_t seed) {
  std::lock_guard<std::mutex> lock(g_mu);
  // Seeds every generator, including CUDA devices not yet used.
  for (auto& [dev, st] : states()) st = GenState{seed, 0};
  states()[Device(DeviceType::CPU)] = GenState{seed, 0};
  for (int i = 0; i < 64; ++i) states()[Device(DeviceType::CUDA, i)] = GenState{seed, 0};
}

uint64_t initial_seed(Device d) {
  std::lock_guard<std::mutex> lock(g_mu);
  return states()[resolve_device(d)].seed;
}

std::vector<uint64_t> get_rng_state(Device d) {
  std::lock_guard<std::mutex> lock(g_mu);
  GenState& s = states()[resolve_device(d)];
  return {s.seed, s.offset};
}

void set_rng_state(Device d, uint64_t seed, uint64_t offset) {
  std::lock_guard<std::mutex> lock(g_mu);
  states()[resolve_device(d)] = GenState{seed, offset};
}

}  // namespace cl
