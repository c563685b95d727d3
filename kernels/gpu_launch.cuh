// The launcher that plugs the CUDA loop into the shared op table.
#pragma once

#include "kernels/loops.cuh"
#include "ops/kernels.h"
#include "ops/op_table.h"

namespace cl::gpu {

struct GpuLaunch {
  template <class out_t, class in_t, int N, class F>
  void run(const ElementwiseIter& it, F f) const {
    gpu_kernel<out_t, in_t, N>(it, f);
  }
};

}  // namespace cl::gpu
