// One part of the CPU elementwise loops (Note [Split instantiation] in ops/op_table.h): the
// build compiles this file once per part, with CL_PART defined (CMakeLists.txt).
#include "ops/cpu_loops.h"
#include "ops/op_table.h"

#ifndef CL_PART
#error "compiled once per part, with CL_PART defined (CMakeLists.txt)"
#endif

namespace cl {
template struct ElementwisePart<CpuLaunch, CL_PART>;
}  // namespace cl
