// Row reductions on the host: each of `outer` dense rows of length `inner` becomes one value.
#include "core/error.h"
#include "ops/kernels.h"
#include "ops/reduce_ops.h"

namespace cl::cpu {

void reduce_rows(ReduceOp op, const Tensor& in, int64_t outer, int64_t inner, const Tensor& out,
                 const Tensor& idx) {
  CL_DISPATCH_ALL_TYPES(in->dtype, "reduce", [&] {
    using T = scalar_t;
    using A = typename red::Acc<T, false>::type;
    const T* x = reinterpret_cast<const T*>(in->data());
    for (int64_t r = 0; r < outer; ++r) {
      const T* row = x + r * inner;
      switch (op) {
        case ReduceOp::Sum:
        case ReduceOp::Prod: {
          A acc = op == ReduceOp::Sum ? A(0) : A(1);
          if (op == ReduceOp::Sum) {
            for (int64_t i = 0; i < inner; ++i) acc += A(row[i]);
          } else {
            for (int64_t i = 0; i < inner; ++i) acc *= A(row[i]);
          }
          reinterpret_cast<T*>(out->data())[r] = T(acc);
          break;
        }
        case ReduceOp::All:
        case ReduceOp::Any: {
          bool all = true, any = false;
          for (int64_t i = 0; i < inner; ++i) {
            bool v = bool(row[i]);
            all = all && v;
            any = any || v;
          }
          reinterpret_cast<bool*>(out->data())[r] = op == ReduceOp::All ? all : any;
          break;
        }
        case ReduceOp::Max:
        case ReduceOp::Min:
        case ReduceOp::ArgMax:
        case ReduceOp::ArgMin: {
          bool is_max = op == ReduceOp::Max || op == ReduceOp::ArgMax;
          using P = opmath_t<T>;
          P best = P(row[0]);
          int64_t bi = 0;
          for (int64_t i = 1; i < inner; ++i) {
            P v = P(row[i]);
            if (best != best) break;  // NaN already found: it wins
            if (v != v || (is_max ? v > best : v < best)) {
              best = v;
              bi = i;
            }
          }
          reinterpret_cast<T*>(out->data())[r] = T(best);
          if (idx) reinterpret_cast<int64_t*>(idx->data())[r] = bi;
          break;
        }
      }
    }
  });
}

}  // namespace cl::cpu
