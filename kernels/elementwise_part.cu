// One part of the CUDA elementwise loops (Note [Split instantiation] in ops/op_table.h): the
// shared op table with the CUDA loop template (kernels/loops.cuh). The build compiles this
// file once per part, with CL_PART defined (CMakeLists.txt).
#include "kernels/gpu_launch.cuh"

#ifndef CL_PART
#error "compiled once per part, with CL_PART defined (CMakeLists.txt)"
#endif

namespace cl {
template struct ElementwisePart<gpu::GpuLaunch, CL_PART>;
}  // namespace cl
