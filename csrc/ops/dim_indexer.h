// DimIndexer: the element offsets behind gather and scatter along one dim (torch's
// restriding of self), shared by the CPU loop (ops/cpu_index.cpp) and the CUDA kernels
// (kernels/misc.cu) so that one definition is tested on both.
//
// The loop runs over the index's shape. For its linear position i (row-major), with
// coordinates c: the index element is at sum c[d] * strides[1][d]; the other operand (the
// output of gather, the source of scatter) at sum c[d] * strides[2][d]; and the element of
// self that the index names at base + index_value * dim_stride + sum c[d] * strides[0][d],
// where strides[0][dim] is 0.
#pragma once

#include <cstdint>

#include "core/macros.h"
#include "ops/elementwise_iter.h"

namespace cl {

struct DimIndexer {
  int nd = 0;
  int64_t numel = 0;
  int64_t sizes[kMaxDims];
  int64_t strides[3][kMaxDims];  // elements: 0 self (0 along dim), 1 index, 2 out / src
  int64_t dim_stride = 0;        // self's stride along dim
  int64_t base = 0;              // self's storage offset

  // Offsets of position i: o[0] self without the index term, o[1] index, o[2] out / src.
  CL_HOST_DEVICE void offsets(int64_t i, int64_t o[3]) const {
    o[0] = base;
    o[1] = 0;
    o[2] = 0;
    for (int d = nd - 1; d >= 0; --d) {
      const int64_t n = sizes[d];
      const int64_t c = i % n;
      i /= n;
      o[0] += c * strides[0][d];
      o[1] += c * strides[1][d];
      o[2] += c * strides[2][d];
    }
  }
};

}  // namespace cl
