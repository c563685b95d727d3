// Random number generators, one kind per device type, as torch's:
//  - CPU: torch's CPUGeneratorImpl. A 32-bit Mersenne Twister (ops/mt19937.h) and the second
//    value of the last Box-Muller pair, cached per precision (float and double), which the
//    next normal draw returns first. Its state is torch's 5056-byte get_rng_state layout.
//  - CUDA: torch's CUDAGeneratorImpl. A Philox4x32-10 key (the seed) and an offset that every
//    kernel advances by what its threads consume (ops/cuda_random_layout.h); the state is the
//    seed and the offset, 16 bytes.
// Each device has a default generator (what cudalite.manual_seed seeds); Generator objects
// of the Python API own independent ones. Draws hold mutex() for their whole fill.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>

#include "core/device.h"
#include "ops/mt19937.h"
#include "ops/philox_args.h"

namespace cl {

class Generator {
 public:
  static constexpr uint64_t kDefaultSeed = 67280421310721ull;  // torch's default
  static constexpr size_t kCpuStateBytes = 5056;               // sizeof torch's CPU state

  explicit Generator(Device device) : device_(device), engine_(kDefaultSeed) {}

  Device device() const { return device_; }
  void manual_seed(uint64_t seed);
  uint64_t initial_seed() const;

  // CUDA generators: {seed, offset}; set_state(seed, offset).
  std::pair<uint64_t, uint64_t> state() const;
  void set_state(uint64_t seed, uint64_t offset);
  // Reserves `increment` Philox offsets (a multiple of 4, torch's rounding): {seed, offset}.
  std::pair<uint64_t, uint64_t> philox_reserve(uint64_t increment);
  // What a CUDA random kernel gets for `increment` offsets: philox_reserve's values, or
  // while a CUDA graph captures this generator, pointers to the replay's seed and offset
  // and the offset within the graph (Note [Random numbers in CUDA graphs]).
  PhiloxArgs philox_args(uint64_t increment);
  // A CUDA graph capture begins (the replays write seed and base offset at these device
  // addresses) and ends (returns the offsets one replay consumes).
  void graph_capture_begin(const uint64_t* seed_ptr, const uint64_t* offset_ptr);
  uint64_t graph_capture_end();
  bool graph_capturing() const;

  // CPU generators: the state as torch's bytes; set_cpu_state checks them as torch does.
  std::string cpu_state() const;
  void set_cpu_state(const std::string& bytes);

  // CPU draws; the caller holds mutex().
  std::mutex& mutex() const { return mu_; }
  uint32_t random() { return engine_(); }
  uint64_t random64() {
    uint64_t hi = engine_();
    return (hi << 32) | engine_();
  }
  // n successive random() words (random64() is two of them, the high one first).
  void random_words(uint32_t* out, int64_t n) { engine_.fill(out, n); }
  std::optional<float> next_float_normal;
  std::optional<double> next_double_normal;

 private:
  Device device_;
  mutable std::mutex mu_;
  uint64_t seed_ = kDefaultSeed;
  uint64_t offset_ = 0;                   // CUDA: Philox offset
  const uint64_t* graph_seed_ = nullptr;  // CUDA graph capture underway when set
  const uint64_t* graph_offset_ = nullptr;
  uint64_t graph_increment_ = 0;
  MT19937 engine_;  // CPU
};

using GeneratorPtr = std::shared_ptr<Generator>;

// The default generator of a device (CPU, or a CUDA device by index; created on first use).
const GeneratorPtr& default_generator(Device device);

// Seeds the CPU's and every CUDA device's default generator (torch.manual_seed).
void manual_seed(uint64_t seed);

}  // namespace cl
