// The CPU loop of the optimizers' fused multiply-add (`_C._fma`: a * b + c rounded once, float
// and double), in its own translation unit: it needs op_table.h's dispatch_fma, and a file
// that also calls the elementwise parts would instantiate the whole table again.
#include "ops/cpu_loops.h"
#include "ops/kernels.h"
#include "ops/op_table.h"

namespace cl::cpu {

void fma(const ElementwiseIter& it) { dispatch_fma(it, CpuLaunch{}); }

}  // namespace cl::cpu
