// The CUDA runtime for cudalite.cuda.
#include "bindings/convert.h"
#include "core/cuda_api.h"

namespace cl::bind {

void bind_cuda(py::module_& m) {
  auto c = m.def_submodule("_cuda", "CUDA runtime bindings");
  c.def("is_compiled", &cuda::is_compiled);
  c.def("compiled_archs", &cuda::compiled_archs);
  c.def("compiled_version", &cuda::compiled_version);
  c.def("device_count", &cuda::device_count);
  c.def("lazy_init", &cuda::lazy_init, py::call_guard<py::gil_scoped_release>());
  c.def("is_initialized", &cuda::is_initialized);
  c.def("current_device", &cuda::current_device);
  c.def("set_device", &cuda::set_device);
  c.def("check_device_index", &cuda::check_device_index);
  c.def("synchronize", &cuda::synchronize, py::call_guard<py::gil_scoped_release>());
}

}  // namespace cl::bind
