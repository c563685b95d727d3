// The host thread pool's size: torch.set_num_threads / get_num_threads.
#include "bindings/convert.h"
#include "core/parallel.h"

namespace cl::bind {

void bind_parallel(py::module_& m) {
  m.def("_set_num_threads", &set_host_threads, py::arg("n"));
  m.def("_get_num_threads", &host_threads);
}

}  // namespace cl::bind
