// Facts fixed when the extension was built, for cudalite.version.
#include "bindings/convert.h"

#ifndef CL_GIT_VERSION
#define CL_GIT_VERSION "Unknown"
#endif

namespace cl::bind {

void bind_version(py::module_& m) {
  m.attr("_git_version") = CL_GIT_VERSION;  // the commit built from, or "Unknown"
#ifdef NDEBUG
  m.attr("_debug") = false;
#else
  m.attr("_debug") = true;
#endif
}

}  // namespace cl::bind
