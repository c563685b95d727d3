// Device: a small value type naming where memory lives ("cpu", "cuda:1").
#pragma once

#include <cstdint>
#include <functional>
#include <string>

namespace cl {

enum class DeviceType : int8_t { CPU = 0, CUDA = 1 };

struct Device {
  DeviceType type = DeviceType::CPU;
  int16_t index = -1;  // -1: unspecified (the current device, for CUDA)

  Device() = default;
  Device(DeviceType t, int idx = -1) : type(t), index(int16_t(idx)) {}
  // Parses torch's device strings: "cpu", "cuda", "cuda:1", "cpu:0". Throws cl::Error with
  // torch's wording on anything else.
  explicit Device(const std::string& s);

  bool is_cuda() const { return type == DeviceType::CUDA; }
  bool is_cpu() const { return type == DeviceType::CPU; }
  bool has_index() const { return index >= 0; }
  std::string str() const;  // "cuda:0", "cpu"
  bool operator==(const Device& o) const { return type == o.type && index == o.index; }
  bool operator!=(const Device& o) const { return !(*this == o); }
};

const char* device_type_name(DeviceType t);

}  // namespace cl

template <>
struct std::hash<cl::Device> {
  size_t operator()(const cl::Device& d) const {
    return std::hash<int>()(int(d.type) << 16 | (d.index & 0xffff));
  }
};
