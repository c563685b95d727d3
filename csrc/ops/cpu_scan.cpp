// Scans on the host: each line of a dense [outer, n, inner] input is accumulated in order,
// in torch's CPU accumulator type (double for float32 and float64, float for the 16-bit
// floats; integers and bool in 64-bit unsigned arithmetic, which wraps as torch's int64
// does without signed overflow), and every prefix is rounded to the dtype.
#include <algorithm>
#include <vector>

#include "core/error.h"
#include "ops/kernels.h"

namespace cl::cpu {

namespace {

template <class T>
using ScanAcc = std::conditional_t<
    std::is_integral_v<T>, uint64_t,
    std::conditional_t<std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>, float, double>>;

template <class T, bool kProd>
void scan_lines(const T* x, T* y, int64_t outer, int64_t n, int64_t inner) {
  using A = ScanAcc<T>;
  if (inner == 1) {  // rows: one running value in a register
    for (int64_t o = 0; o < outer; ++o) {
      const T* xo = x + o * n;
      T* yo = y + o * n;
      A acc = kProd ? A(1) : A(0);
      for (int64_t i = 0; i < n; ++i) {
        if constexpr (kProd) {
          acc *= A(xo[i]);
        } else {
          acc += A(xo[i]);
        }
        yo[i] = T(acc);
      }
    }
    return;
  }
  std::vector<A> acc(static_cast<size_t>(inner));
  for (int64_t o = 0; o < outer; ++o) {
    const T* xo = x + o * n * inner;
    T* yo = y + o * n * inner;
    std::fill(acc.begin(), acc.end(), kProd ? A(1) : A(0));
    for (int64_t i = 0; i < n; ++i) {
      for (int64_t k = 0; k < inner; ++k) {
        if constexpr (kProd) {
          acc[k] *= A(xo[i * inner + k]);
        } else {
          acc[k] += A(xo[i * inner + k]);
        }
        yo[i * inner + k] = T(acc[k]);
      }
    }
  }
}

}  // namespace

void scan(ScanOp op, const Tensor& in, int64_t outer, int64_t n, int64_t inner, const Tensor& out) {
  CL_DISPATCH_ALL_TYPES(in->dtype, "scan", [&] {
    const auto* x = reinterpret_cast<const scalar_t*>(in->data());
    auto* y = reinterpret_cast<scalar_t*>(out->data());
    if (op == ScanOp::Prod) {
      scan_lines<scalar_t, true>(x, y, outer, n, inner);
    } else {
      scan_lines<scalar_t, false>(x, y, outer, n, inner);
    }
  });
}

}  // namespace cl::cpu
