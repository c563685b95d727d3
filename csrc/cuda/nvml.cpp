// NVML, opened from the driver (libnvidia-ml.so.1) with dlopen at run time.
//
// Counting GPUs through NVML does not initialise CUDA in this process, so is_available()
// and device_count() leave fork() safe (Note [Lazy init and fork] in runtime.cpp). The
// same handle answers the monitoring queries (utilization, temperature, ...) without the
// nvidia-ml-py package torch needs for them. We never link NVML: without a driver the
// library is absent and every count is simply "unknown" (-1).
#include <cstdint>
#include <cstdlib>
#include <mutex>
#include <string>
#include <vector>

#include "core/cuda_api.h"
#include "core/error.h"
#include "cuda/dynlib.h"

namespace cl::cuda::nvml {

namespace {

// The few declarations we need from nvml.h (the toolkit does not ship it); NVML keeps these
// signatures and struct layouts stable across driver versions.
using Return = int;
using NvmlDevice = struct NvmlDeviceOpaque*;
constexpr Return kSuccess = 0;
constexpr Return kInsufficientSize = 7;
constexpr Return kDriverNotLoaded = 9;
constexpr unsigned kTemperatureGpu = 0;
constexpr unsigned kClockSm = 1;
struct Utilization {
  unsigned gpu;
  unsigned memory;
};
struct Memory {
  unsigned long long total, free, used;
};
struct ProcessInfoV1 {  // nvmlDeviceGetComputeRunningProcesses (unversioned)
  unsigned pid;
  unsigned long long used_gpu_memory;
};
struct ProcessInfo {  // _v2 and _v3
  unsigned pid;
  unsigned long long used_gpu_memory;
  unsigned gpu_instance_id;
  unsigned compute_instance_id;
};

struct Api {
  Return (*init)() = nullptr;
  const char* (*error_string)(Return) = nullptr;
  Return (*get_count)(unsigned*) = nullptr;
  Return (*get_handle_by_index)(unsigned, NvmlDevice*) = nullptr;
  Return (*get_handle_by_uuid)(const char*, NvmlDevice*) = nullptr;
  Return (*get_uuid)(NvmlDevice, char*, unsigned) = nullptr;
  Return (*get_utilization)(NvmlDevice, Utilization*) = nullptr;
  Return (*get_memory)(NvmlDevice, Memory*) = nullptr;
  Return (*get_temperature)(NvmlDevice, unsigned, unsigned*) = nullptr;
  Return (*get_power)(NvmlDevice, unsigned*) = nullptr;
  Return (*get_clock)(NvmlDevice, unsigned, unsigned*) = nullptr;
  Return (*get_processes)(NvmlDevice, unsigned*, ProcessInfo*) = nullptr;  // _v3 or _v2
  Return (*get_processes_v1)(NvmlDevice, unsigned*, ProcessInfoV1*) = nullptr;
  Return init_result = kDriverNotLoaded;
  bool ok = false;
  // Cached on first use: the devices of a machine don't change while a process runs.
  int raw_count = -1;
  std::vector<std::string> uuids;
};

template <class Fn>
void bind(void* lib, Fn& fn, const char* name) {
  dynlib::resolve(lib, fn, name);
}

Api& api() {
  static Api a;
  static std::once_flag once;
  std::call_once(once, [] {
    // the driver's library, from the loader's search path
    void* lib = dynlib::open_first(
        {"libnvidia-ml.so.1"}, [](void*) { return true; }, "", nullptr, nullptr);
    if (!lib) return;
    bind(lib, a.init, "nvmlInit_v2");
    bind(lib, a.error_string, "nvmlErrorString");
    bind(lib, a.get_count, "nvmlDeviceGetCount_v2");
    bind(lib, a.get_handle_by_index, "nvmlDeviceGetHandleByIndex_v2");
    bind(lib, a.get_handle_by_uuid, "nvmlDeviceGetHandleByUUID");
    bind(lib, a.get_uuid, "nvmlDeviceGetUUID");
    bind(lib, a.get_utilization, "nvmlDeviceGetUtilizationRates");
    bind(lib, a.get_memory, "nvmlDeviceGetMemoryInfo");
    bind(lib, a.get_temperature, "nvmlDeviceGetTemperature");
    bind(lib, a.get_power, "nvmlDeviceGetPowerUsage");
    bind(lib, a.get_clock, "nvmlDeviceGetClockInfo");
    bind(lib, a.get_processes, "nvmlDeviceGetComputeRunningProcesses_v3");
    if (!a.get_processes) bind(lib, a.get_processes, "nvmlDeviceGetComputeRunningProcesses_v2");
    if (!a.get_processes) bind(lib, a.get_processes_v1, "nvmlDeviceGetComputeRunningProcesses");
    if (!a.init || !a.get_count || !a.get_handle_by_index || !a.get_uuid) return;
    a.init_result = a.init();
    if (a.init_result != kSuccess) return;
    a.ok = true;
    unsigned n = 0;
    if (a.get_count(&n) != kSuccess) return;
    std::vector<std::string> uuids;
    for (unsigned i = 0; i < n; ++i) {
      NvmlDevice d = nullptr;
      char buf[96] = {0};
      if (a.get_handle_by_index(i, &d) != kSuccess || a.get_uuid(d, buf, sizeof(buf)) != kSuccess)
        return;
      uuids.emplace_back(buf);
    }
    a.raw_count = int(n);
    a.uuids = std::move(uuids);
  });
  return a;
}

// torch's _parse_visible_devices: ordinals parsed like strtoul ("1gpu2,2ampere" is "1,2"),
// or "GPU-"/"MIG-" UUID prefixes; a repeated entry empties the list, an invalid one ends it.
struct Visible {
  bool by_uuid = false;
  bool mig = false;
  std::vector<int64_t> ordinals;
  std::vector<std::string> prefixes;
};

int64_t leading_int(const std::string& s) {
  size_t i = 0;
  if (i < s.size() && (s[i] == '+' || s[i] == '-')) ++i;
  size_t digits = i;
  while (digits < s.size() && s[digits] >= '0' && s[digits] <= '9') ++digits;
  if (digits == i) return -1;
  // Values beyond any real ordinal only need to compare as "too large".
  std::string num = s.substr(i, std::min<size_t>(digits - i, 12));
  int64_t v = std::stoll(num);
  return s[0] == '-' ? -v : v;
}

std::string strip(const std::string& s) {
  size_t b = s.find_first_not_of(" \t\n\r\f\v");
  if (b == std::string::npos) return "";
  size_t e = s.find_last_not_of(" \t\n\r\f\v");
  return s.substr(b, e - b + 1);
}

std::vector<std::string> split(const std::string& s) {
  std::vector<std::string> out;
  size_t start = 0;
  while (true) {
    size_t comma = s.find(',', start);
    out.push_back(s.substr(start, comma == std::string::npos ? std::string::npos : comma - start));
    if (comma == std::string::npos) return out;
    start = comma + 1;
  }
}

Visible parse(const char* env) {
  Visible v;
  if (!env) {
    for (int i = 0; i < 64; ++i) v.ordinals.push_back(i);
    return v;
  }
  std::string var(env);
  for (const char* prefix : {"GPU-", "MIG-"}) {
    if (var.rfind(prefix, 0) != 0) continue;
    v.by_uuid = true;
    v.mig = prefix[0] == 'M';
    for (const std::string& e : split(var)) {
      for (const std::string& seen : v.prefixes) {
        if (seen == e) return Visible{true, v.mig, {}, {}};
      }
      if (e.rfind(prefix, 0) != 0) break;
      v.prefixes.push_back(e);
    }
    return v;
  }
  for (const std::string& e : split(var)) {
    int64_t x = leading_int(strip(e));
    for (int64_t seen : v.ordinals) {
      if (seen == x) return Visible{};
    }
    if (x < 0) break;
    v.ordinals.push_back(x);
  }
  return v;
}

// torch's _transform_uuid_to_ordinals: each prefix must match exactly one UUID.
std::vector<int64_t> uuid_ordinals(const std::vector<std::string>& prefixes,
                                   const std::vector<std::string>& uuids) {
  std::vector<int64_t> out;
  for (const std::string& p : prefixes) {
    int64_t match = -1;
    for (size_t i = 0; i < uuids.size(); ++i) {
      if (uuids[i].rfind(p, 0) != 0) continue;
      if (match != -1) {
        match = -1;  // ambiguous
        break;
      }
      match = int64_t(i);
    }
    if (match < 0) break;
    for (int64_t seen : out) {
      if (seen == match) return {};
    }
    out.push_back(match);
  }
  return out;
}

[[noreturn]] void fail(Return r) {
  const Api& a = api();
  if (r == kDriverNotLoaded) throw Error("cuda driver can't be loaded, is cuda enabled?");
  throw Error(a.error_string ? a.error_string(r) : "NVML error " + std::to_string(r));
}

void check(Return r) {
  if (r != kSuccess) fail(r);
}

template <class Fn>
Fn require(Fn fn) {
  if (!fn) throw Error("this NVML query is not supported by the installed driver");
  return fn;
}

NvmlDevice handle(int device) {
  Api& a = api();
  if (!a.ok) fail(a.init_result);
  NvmlDevice d = nullptr;
  // Once CUDA is up, the device's UUID names it exactly, whatever CUDA_DEVICE_ORDER says.
  if (is_initialized() && a.get_handle_by_uuid && device >= 0 && device < device_count()) {
    std::string uuid = "GPU-" + uuid_string(get_device_properties(device).uuid);
    if (a.get_handle_by_uuid(uuid.c_str(), &d) == kSuccess) return d;
  }
  check(a.get_handle_by_index(index_of(device), &d));
  return d;
}

}  // namespace

int visible_device_count(const char* env, int raw_count, const std::vector<std::string>& uuids) {
  Visible v = parse(env);
  if (v.by_uuid) {
    if (v.prefixes.empty()) return 0;
    if (v.mig || raw_count < 0) return -1;  // MIG instances aren't NVML devices
    return int(uuid_ordinals(v.prefixes, uuids).size());
  }
  if (v.ordinals.empty()) return 0;
  if (raw_count <= 0) return raw_count;
  for (size_t i = 0; i < v.ordinals.size(); ++i) {
    if (v.ordinals[i] >= raw_count) return int(i);
  }
  return int(v.ordinals.size());
}

int visible_device_count() noexcept {
  try {
    const Api& a = api();
    return visible_device_count(std::getenv("CUDA_VISIBLE_DEVICES"), a.raw_count, a.uuids);
  } catch (...) {
    return -1;
  }
}

bool available() noexcept { return api().ok; }

unsigned index_of(int device) {
  const Api& a = api();
  const char* env = std::getenv("CUDA_VISIBLE_DEVICES");
  Visible v = parse(env);
  std::vector<int64_t> ordinals = v.by_uuid ? uuid_ordinals(v.prefixes, a.uuids) : v.ordinals;
  if (!env && a.raw_count >= 0) ordinals.resize(std::min<size_t>(ordinals.size(), a.raw_count));
  if (device < 0 || size_t(device) >= ordinals.size()) {
    std::string list = "[";
    for (size_t i = 0; i < ordinals.size(); ++i) {
      list += (i ? ", " : "") + std::to_string(ordinals[i]);
    }
    throw Error("device " + std::to_string(device) +
                " is not visible (CUDA_VISIBLE_DEVICES=" + list + "])");
  }
  return unsigned(ordinals[device]);
}

unsigned utilization(int device) {
  Utilization u{};
  check(require(api().get_utilization)(handle(device), &u));
  return u.gpu;
}

unsigned memory_usage(int device) {
  Utilization u{};
  check(require(api().get_utilization)(handle(device), &u));
  return u.memory;
}

unsigned temperature(int device) {
  unsigned t = 0;
  check(require(api().get_temperature)(handle(device), kTemperatureGpu, &t));
  return t;
}

unsigned power_draw(int device) {
  unsigned mw = 0;
  check(require(api().get_power)(handle(device), &mw));
  return mw;
}

unsigned clock_rate(int device) {
  unsigned mhz = 0;
  check(require(api().get_clock)(handle(device), kClockSm, &mhz));
  return mhz;
}

uint64_t memory_used(int device) {
  Memory m{};
  check(require(api().get_memory)(handle(device), &m));
  return m.used;
}

std::vector<Process> compute_processes(int device) {
  const Api& a = api();
  NvmlDevice d = handle(device);
  // Processes come and go between the sizing call and the real one: retry with headroom.
  for (unsigned extra = 4;; extra *= 2) {
    unsigned count = 0;
    std::vector<Process> out;
    Return r;
    if (a.get_processes) {
      r = a.get_processes(d, &count, nullptr);
      if (r != kSuccess && r != kInsufficientSize) fail(r);
      std::vector<ProcessInfo> info(count + extra);
      count = unsigned(info.size());
      r = a.get_processes(d, &count, info.data());
      for (unsigned i = 0; r == kSuccess && i < count; ++i) {
        out.push_back({info[i].pid, info[i].used_gpu_memory});
      }
    } else {
      auto fn = require(a.get_processes_v1);
      r = fn(d, &count, nullptr);
      if (r != kSuccess && r != kInsufficientSize) fail(r);
      std::vector<ProcessInfoV1> info(count + extra);
      count = unsigned(info.size());
      r = fn(d, &count, info.data());
      for (unsigned i = 0; r == kSuccess && i < count; ++i) {
        out.push_back({info[i].pid, info[i].used_gpu_memory});
      }
    }
    if (r == kSuccess) return out;
    if (r != kInsufficientSize || extra > 4096) fail(r);
  }
}

}  // namespace cl::cuda::nvml
