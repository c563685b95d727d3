// Random number generators. A generator is a Philox key (the seed) and a counter (the
// offset) for one device type: every random fill reserves the counters it consumes, so the
// same (seed, offset) gives the same numbers on CPU and GPU whatever the launch shape.
// Each device has a default generator (what cudalite.manual_seed seeds); Generator objects
// of the Python API own independent ones.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <utility>

#include "core/device.h"

namespace cl {

class Generator {
 public:
  static constexpr uint64_t kDefaultSeed = 67280421310721ull;  // torch's default

  explicit Generator(Device device) : device_(device) {}

  Device device() const { return device_; }
  void manual_seed(uint64_t seed);
  uint64_t initial_seed() const;
  std::pair<uint64_t, uint64_t> state() const;  // {seed, offset}
  void set_state(uint64_t seed, uint64_t offset);
  // Reserves the counters for `numel` values (4 per counter): {seed, first counter}.
  std::pair<uint64_t, uint64_t> reserve(int64_t numel);

 private:
  Device device_;
  mutable std::mutex mu_;
  uint64_t seed_ = kDefaultSeed;
  uint64_t offset_ = 0;  // in Philox counters
};

using GeneratorPtr = std::shared_ptr<Generator>;

// The default generator of a device (CPU, or a CUDA device by index; created on first use).
const GeneratorPtr& default_generator(Device device);

// Seeds the CPU's and every CUDA device's default generator (torch.manual_seed).
void manual_seed(uint64_t seed);

}  // namespace cl
