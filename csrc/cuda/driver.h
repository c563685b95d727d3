// The CUDA driver API without linking libcuda: functions are looked up through the static
// runtime's driver entry points (cudaGetDriverEntryPointByVersion), so the module imports on
// machines without an NVIDIA driver.
#pragma once

namespace cl::cuda {

// The driver function `name` (its CUDA 12.0 version), or nullptr where the driver lacks it.
// Call once and keep the result: each lookup costs a runtime call.
void* driver_entry_point(const char* name);

template <class Fn>
Fn driver_function(const char* name) {
  return reinterpret_cast<Fn>(driver_entry_point(name));
}

}  // namespace cl::cuda
