// Generators (ops/generator.h) and the random fills that draw from them.
#include <limits>

#include "core/cuda_api.h"
#include "core/error.h"
#include "ops/generator.h"
#include "ops/kernels.h"
#include "ops/ops.h"

namespace cl {

namespace {

constexpr int kMaxCudaDevices = 64;

// Checks that `gen` (null: the device's default) draws for `d`, and returns it.
Generator& generator_for(Device d, Generator* gen) {
  if (gen == nullptr) return *default_generator(d);
  CL_CHECK(gen->device().type == d.type, "Expected a '", device_type_name(d.type),
           "' device type for generator but found '", device_type_name(gen->device().type), "'");
  return *gen;
}

// Fills t (through a dense temporary when it isn't contiguous) with draw(dense, seed,
// first counter) on t's device.
template <class Draw>
void fill(const Tensor& t, Generator* gen, Draw draw) {
  Device d = resolve_device(t->device());
  Generator& g = generator_for(d, gen);
  if (t->numel() == 0) return;
  Tensor dense = t->is_contiguous() ? t : empty(t->sizes, t->dtype, t->device());
  auto [seed, base] = g.reserve(t->numel());
  if (d.is_cuda()) {
    cuda::DeviceGuard guard(d.index);
    draw(dense, seed, base);
  } else {
    draw(dense, seed, base);
  }
  if (dense != t) copy_(t, dense);
}

void fill(const Tensor& t, int kind, double a, double b, Generator* gen) {
  fill(t, gen, [&](const Tensor& dense, uint64_t seed, uint64_t base) {
    if (dense->is_cuda()) {
      cuda::random_fill(dense, kind, a, b, seed, base);
    } else {
      cpu::random_fill(dense, kind, a, b, seed, base);
    }
  });
}

}  // namespace

void Generator::manual_seed(uint64_t seed) { set_state(seed, 0); }

uint64_t Generator::initial_seed() const {
  std::lock_guard<std::mutex> lock(mu_);
  return seed_;
}

std::pair<uint64_t, uint64_t> Generator::state() const {
  std::lock_guard<std::mutex> lock(mu_);
  return {seed_, offset_};
}

void Generator::set_state(uint64_t seed, uint64_t offset) {
  std::lock_guard<std::mutex> lock(mu_);
  seed_ = seed;
  offset_ = offset;
}

std::pair<uint64_t, uint64_t> Generator::reserve(int64_t numel) {
  std::lock_guard<std::mutex> lock(mu_);
  uint64_t base = offset_;
  offset_ += uint64_t(numel + 3) / 4;
  return {seed_, base};
}

const GeneratorPtr& default_generator(Device device) {
  static std::mutex mu;
  static GeneratorPtr cpu = std::make_shared<Generator>(Device(DeviceType::CPU));
  static GeneratorPtr cuda[kMaxCudaDevices];
  if (device.is_cpu()) return cpu;
  Device d = resolve_device(device);
  CL_CHECK(d.index >= 0 && d.index < kMaxCudaDevices, "Invalid device index ", d.index);
  std::lock_guard<std::mutex> lock(mu);
  if (!cuda[d.index]) cuda[d.index] = std::make_shared<Generator>(d);
  return cuda[d.index];
}

void manual_seed(uint64_t seed) {
  // Every device's generator, including CUDA devices not used yet.
  default_generator(Device(DeviceType::CPU))->manual_seed(seed);
  for (int i = 0; i < kMaxCudaDevices; ++i)
    default_generator(Device(DeviceType::CUDA, i))->manual_seed(seed);
}

void uniform_(const Tensor& t, double lo, double hi, Generator* gen) {
  CL_CHECK_AS(NotImplementedError, is_floating(t->dtype),
              "\"check_uniform_bounds\" not implemented for '", dtype_short_name(t->dtype), "'");
  // torch's checks, in its order: both ends within the dtype's finite range (NaN is not),
  // an ordered range, and a width that the dtype can hold.
  double max = 0;
  const char* cpp_name = "";
  switch (t->dtype) {
    case ScalarType::Float16:
      max = 65504.0, cpp_name = "c10::Half";
      break;
    case ScalarType::BFloat16:
      max = 3.3895313892515355e38, cpp_name = "c10::BFloat16";
      break;
    case ScalarType::Float32:
      max = double(std::numeric_limits<float>::max()), cpp_name = "float";
      break;
    default:
      max = std::numeric_limits<double>::max(), cpp_name = "double";
      break;
  }
  CL_CHECK(lo >= -max && lo <= max, "from is out of bounds for ", cpp_name);
  CL_CHECK(hi >= -max && hi <= max, "to is out of bounds for ", cpp_name);
  CL_CHECK(lo <= hi, "uniform_ expects to return a [from, to) range, but found from=", lo,
           " > to=", hi);
  CL_CHECK(hi - lo <= max, "uniform_ expects to-from <= std::numeric_limits<",
           dtype_short_name(t->dtype), ">::max(), but found to=", hi, " and from=", lo,
           " which result in to-from to exceed the limit");
  fill(t, 0, lo, hi, gen);
}

void normal_(const Tensor& t, double mean, double std, Generator* gen) {
  CL_CHECK_AS(NotImplementedError, is_floating(t->dtype),
              t->is_cuda() ? "\"normal_kernel_cuda\" not implemented for '"
                           : "\"normal_kernel_cpu\" not implemented for '",
              dtype_short_name(t->dtype), "'");
  CL_CHECK(std >= 0.0, "normal expects std >= 0.0, but found std ", std);
  fill(t, 1, mean, std, gen);
}

void random_int_(const Tensor& t, int64_t lo, int64_t hi, Generator* gen) {
  CL_CHECK(lo <= hi,
           "random_ expects 'from' casted to dtype to be less than or equal to 'to_inc' "
           "casted to dtype, but got from=",
           lo, " > to_inc=", hi);
  uint64_t range = uint64_t(hi) - uint64_t(lo) + 1;  // exact; 0 (2^64): the whole int64 range
  fill(t, gen, [&](const Tensor& dense, uint64_t seed, uint64_t base) {
    if (dense->is_cuda()) {
      cuda::random_int_fill(dense, lo, range, seed, base);
    } else {
      cpu::random_int_fill(dense, lo, range, seed, base);
    }
  });
}

}  // namespace cl
