#include "core/device.h"

#include <cctype>

#include "core/error.h"

namespace cl {

const char* device_type_name(DeviceType t) { return t == DeviceType::CUDA ? "cuda" : "cpu"; }

namespace {
// The device types torch knows, in the order its error message lists them.
constexpr const char* kTorchDeviceTypes =
    "cpu, cuda, ipu, xpu, mkldnn, opengl, opencl, ideep, hip, ve, fpga, maia, xla, lazy, "
    "vulkan, mps, meta, hpu, mtia, privateuseone";
}  // namespace

Device::Device(const std::string& s) {
  // torch's grammar: ([a-zA-Z_]+)(?::([1-9]\d*|0))? -- checked before the type name is looked
  // up, so " cuda" is an invalid string while "gpu:0" names an unknown type.
  CL_CHECK(!s.empty(), "Device string must not be empty");
  auto colon = s.find(':');
  std::string type_str = s.substr(0, colon);
  bool ok = !type_str.empty();
  for (char c : type_str) ok = ok && (std::isalpha(static_cast<unsigned char>(c)) || c == '_');
  std::string idx = colon == std::string::npos ? "" : s.substr(colon + 1);
  if (colon != std::string::npos) {
    ok = ok && !idx.empty() && idx.size() < 6;
    for (char c : idx) ok = ok && std::isdigit(static_cast<unsigned char>(c));
    // torch rejects leading zeros ("cuda:01") as well.
    ok = ok && !(idx.size() > 1 && idx[0] == '0');
  }
  CL_CHECK(ok, "Invalid device string: '", s, "'");
  if (type_str == "cpu") {
    type = DeviceType::CPU;
  } else if (type_str == "cuda") {
    type = DeviceType::CUDA;
  } else {
    CL_THROW("Expected one of ", kTorchDeviceTypes,
             " device type at start of device string: ", type_str);
  }
  index = -1;
  if (colon == std::string::npos) return;
  // torch keeps any index on a CPU device ("cpu:1"); tensors made there land on "cpu".
  index = int16_t(std::stoi(idx));
}

std::string Device::str() const {
  std::string out = device_type_name(type);
  if (has_index()) out += ":" + std::to_string(index);
  return out;
}

}  // namespace cl
