#include "core/device.h"

#include <cctype>

#include "core/error.h"

namespace cl {

namespace {
// The names of the device types, indexed by DeviceType.
constexpr const char* kTypeNames[] = {"cpu", "cuda", "mkldnn",       "opengl", "opencl", "ideep",
                                      "hip", "fpga", "maia",         "xla",    "vulkan", "metal",
                                      "xpu", "mps",  "meta",         "hpu",    "ve",     "lazy",
                                      "ipu", "mtia", "privateuseone"};
constexpr int kNumTypes = int(sizeof(kTypeNames) / sizeof(kTypeNames[0]));
static_assert(kNumTypes == int(DeviceType::PrivateUse1) + 1, "a name for every DeviceType");

// The device types torch's parser accepts, in the order its error message lists them.
constexpr DeviceType kParsed[] = {
    DeviceType::CPU,    DeviceType::CUDA,   DeviceType::IPU,    DeviceType::XPU,
    DeviceType::MKLDNN, DeviceType::OPENGL, DeviceType::OPENCL, DeviceType::IDEEP,
    DeviceType::HIP,    DeviceType::VE,     DeviceType::FPGA,   DeviceType::MAIA,
    DeviceType::XLA,    DeviceType::Lazy,   DeviceType::Vulkan, DeviceType::MPS,
    DeviceType::Meta,   DeviceType::HPU,    DeviceType::MTIA,   DeviceType::PrivateUse1};
constexpr const char* kTorchDeviceTypes =
    "cpu, cuda, ipu, xpu, mkldnn, opengl, opencl, ideep, hip, ve, fpga, maia, xla, lazy, "
    "vulkan, mps, meta, hpu, mtia, privateuseone";
}  // namespace

const char* device_type_name(DeviceType t) {
  int i = int(t);
  return i >= 0 && i < kNumTypes ? kTypeNames[i] : "unknown";
}

void check_tensor_device(Device d) {
  if (d.is_cpu() || d.is_cuda()) return;
  // Other device types are names only: torch's errors on a build without them.
  if (d.type == DeviceType::XPU || d.type == DeviceType::MTIA) {
    throw AssertionError(detail::str("cudalite not compiled with ",
                                     d.type == DeviceType::XPU ? "XPU" : "MTIA", " enabled"));
  }
  CL_THROW("cudalite is not linked with support for ", device_type_name(d.type), " devices");
}

void check_device_index(int64_t index) {
  CL_CHECK(index >= 0, "Device index must not be negative");
  CL_CHECK(index <= kMaxDeviceIndex, "Device index must not exceed ", kMaxDeviceIndex, ", got ",
           index);
}

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
    ok = ok && !idx.empty();
    for (char c : idx) ok = ok && std::isdigit(static_cast<unsigned char>(c));
    // torch rejects leading zeros ("cuda:01") as well.
    ok = ok && !(idx.size() > 1 && idx[0] == '0');
  }
  CL_CHECK(ok, "Invalid device string: '", s, "'");
  bool known = false;
  for (DeviceType t : kParsed) {
    if (type_str == kTypeNames[int(t)]) {
      type = t;
      known = true;
      break;
    }
  }
  CL_CHECK(known, "Expected one of ", kTorchDeviceTypes,
           " device type at start of device string: ", type_str);
  index = -1;
  if (colon == std::string::npos) return;
  // torch keeps any index on a CPU device ("cpu:1"); tensors made there land on "cpu". An
  // index beyond kMaxDeviceIndex is refused (never truncated) with torch's message for an
  // index it cannot parse.
  CL_CHECK(idx.size() <= 5 && std::stoi(idx) <= kMaxDeviceIndex, "Could not parse device index '",
           idx, "' in device string '", s, "'");
  index = int16_t(std::stoi(idx));
}

std::string Device::str() const {
  std::string out = device_type_name(type);
  if (has_index()) out += ":" + std::to_string(index);
  return out;
}

}  // namespace cl
