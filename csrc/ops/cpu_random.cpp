#include "ops/kernels.h"
#include "ops/philox.h"

namespace cl::cpu {

void random_fill(const Tensor& t, int kind, double a, double b, uint64_t seed, uint64_t base) {
  CL_DISPATCH_ALL_TYPES(t->dtype, "random", [&] {
    auto* p = reinterpret_cast<scalar_t*>(t->data());
    int bits = philox::uniform_bits(t->dtype);
    for (int64_t i = 0; i < t->numel(); ++i) {
      double v = philox::sample(kind, a, b, bits, seed, base, uint64_t(i));
      if constexpr (std::is_integral_v<scalar_t>) {
        p[i] = scalar_t(int64_t(v));
      } else {
        p[i] = scalar_t(v);
      }
    }
  });
}

void random_int_fill(const Tensor& t, int64_t lo, uint64_t range, uint64_t seed, uint64_t base) {
  CL_DISPATCH_ALL_TYPES(t->dtype, "random", [&] {
    auto* p = reinterpret_cast<scalar_t*>(t->data());
    for (int64_t i = 0; i < t->numel(); ++i) {
      philox::Out o = philox::draw(seed, base + uint64_t(i) / 4);
      p[i] = scalar_t(philox::int_from(o, unsigned(i % 4), lo, range));
    }
  });
}

}  // namespace cl::cpu
