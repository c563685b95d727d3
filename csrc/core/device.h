// Device: a small value type naming where memory lives ("cpu", "cuda:1").
#pragma once

#include <cstdint>
#include <functional>
#include <string>

namespace cl {

// Every device type torch's parser accepts, numbered as c10::DeviceType numbers them. Tensors
// live on CPU and CUDA only; the others are values a program can name, compare and print
// (device-agnostic code builds `device("mps")` before checking availability), and
// resolve_device refuses them with torch's "not linked with support" error.
enum class DeviceType : int8_t {
  CPU = 0,
  CUDA = 1,
  MKLDNN = 2,
  OPENGL = 3,
  OPENCL = 4,
  IDEEP = 5,
  HIP = 6,
  FPGA = 7,
  MAIA = 8,
  XLA = 9,
  Vulkan = 10,
  Metal = 11,
  XPU = 12,
  MPS = 13,
  Meta = 14,
  HPU = 15,
  VE = 16,
  Lazy = 17,
  IPU = 18,
  MTIA = 19,
  PrivateUse1 = 20,
};

// The largest device index a Device holds.
constexpr int kMaxDeviceIndex = 32767;

struct Device {
  DeviceType type = DeviceType::CPU;
  int16_t index = -1;  // -1: unspecified (the current device, for CUDA)

  Device() = default;
  // `idx` is -1 or in [0, kMaxDeviceIndex]; callers taking an index from the user check it
  // with check_device_index first.
  Device(DeviceType t, int idx = -1) : type(t), index(int16_t(idx)) {}
  // Parses torch's device strings: "cpu", "cuda", "cuda:1", "mps", "meta:0", ... Throws
  // cl::Error with torch's wording on anything else.
  explicit Device(const std::string& s);

  bool is_cuda() const { return type == DeviceType::CUDA; }
  bool is_cpu() const { return type == DeviceType::CPU; }
  bool has_index() const { return index >= 0; }
  std::string str() const;  // "cuda:0", "cpu"
  bool operator==(const Device& o) const { return type == o.type && index == o.index; }
  bool operator!=(const Device& o) const { return !(*this == o); }
};

const char* device_type_name(DeviceType t);

// Throws torch's errors unless tensors can live on `d` (CPU and CUDA): every device argument
// of an op passes through it.
void check_tensor_device(Device d);

// Throws torch's errors for an index a user passed: negative, or beyond kMaxDeviceIndex.
void check_device_index(int64_t index);

}  // namespace cl

template <>
struct std::hash<cl::Device> {
  size_t operator()(const cl::Device& d) const {
    return std::hash<int>()(int(d.type) << 16 | (d.index & 0xffff));
  }
};
