// Philox4x32-10 (Salmon et al., SC'11): a counter-based generator. Element i of a draw uses
// counter (base + i / 4) and lane i % 4, so results depend only on (seed, offset, i), never
// on how the work is split across threads or devices.
#pragma once

#include <cmath>
#include <cstdint>

#include "core/dtype.h"
#include "core/macros.h"

namespace cl::philox {

struct Out {
  uint32_t w[4];
};

CL_HOST_DEVICE inline uint32_t mulhilo(uint32_t a, uint32_t b, uint32_t* hi) {
#if defined(__CUDA_ARCH__)
  *hi = __umulhi(a, b);  // two 32-bit multiplies, not an emulated 64-bit one
  return a * b;
#else
  uint64_t p = uint64_t(a) * uint64_t(b);
  *hi = uint32_t(p >> 32);
  return uint32_t(p);
#endif
}

CL_HOST_DEVICE inline Out draw(uint64_t seed, uint64_t counter) {
  uint32_t c0 = uint32_t(counter), c1 = uint32_t(counter >> 32), c2 = 0, c3 = 0;
  uint32_t k0 = uint32_t(seed), k1 = uint32_t(seed >> 32);
  for (int r = 0; r < 10; ++r) {
    uint32_t hi0, hi1;
    uint32_t lo0 = mulhilo(0xD2511F53u, c0, &hi0);
    uint32_t lo1 = mulhilo(0xCD9E8D57u, c2, &hi1);
    uint32_t n0 = hi1 ^ c1 ^ k0, n2 = hi0 ^ c3 ^ k1;
    c0 = n0;
    c1 = lo1;
    c2 = n2;
    c3 = lo0;
    k0 += 0x9E3779B9u;
    k1 += 0xBB67AE85u;
  }
  return {{c0, c1, c2, c3}};
}

// Uniform in [0, 1) on a grid of 2^-bits. Like torch, as many bits as the output's mantissa
// holds (32 for double), so rounding to the output dtype can never produce 1.
CL_HOST_DEVICE inline double uniform01(uint32_t w, int bits) {
  return double(w >> (32 - bits)) * (1.0 / double(uint64_t(1) << bits));
}

// The bits uniform01 draws for a dtype (integers and doubles take 32).
inline int uniform_bits(ScalarType t) {
  switch (t) {
    case ScalarType::Float32:
      return 24;
    case ScalarType::Float16:
      return 11;
    case ScalarType::BFloat16:
      return 8;
    default:
      return 32;
  }
}

// The four values of counter `base + c` (elements 4c .. 4c+3): one Philox draw, and for
// normals one logarithm and one sine/cosine pair per two values. Same results as sample().
CL_HOST_DEVICE inline void sample4(int kind, double a, double b, int bits, uint64_t seed,
                                   uint64_t counter, double out[4]) {
  Out o = draw(seed, counter);
  if (kind == 0) {
    for (int l = 0; l < 4; ++l) out[l] = a + (b - a) * uniform01(o.w[l], bits);
  } else if (kind == 1) {
    for (int p = 0; p < 4; p += 2) {
      double u1 = 1.0 - uniform01(o.w[p], 32);
      double u2 = uniform01(o.w[p + 1], 32);
      double r = sqrt(-2.0 * log(u1));
      double s, c;
#if defined(__CUDA_ARCH__)
      sincospi(2.0 * u2, &s, &c);
#else
      double t = 6.283185307179586 * u2;
      s = sin(t);
      c = cos(t);
#endif
      out[p] = a + b * r * c;
      out[p + 1] = a + b * r * s;
    }
  }
}

// Value for element i. kind: 0 uniform [a, b), 1 normal(a, b) (integers: int_from).
CL_HOST_DEVICE inline double sample(int kind, double a, double b, int bits, uint64_t seed,
                                    uint64_t base, uint64_t i) {
  Out o = draw(seed, base + i / 4);
  unsigned lane = unsigned(i % 4);
  if (kind == 0) return a + (b - a) * uniform01(o.w[lane], bits);
  if (kind == 1) {
    // Box-Muller on the lane pair: even lanes take the cosine, odd the sine.
    double u1 = 1.0 - uniform01(o.w[lane & ~1u], 32);  // (0, 1]
    double u2 = uniform01(o.w[lane | 1u], 32);
    double r = sqrt(-2.0 * log(u1));
    double t = 6.283185307179586 * u2;
    return a + b * r * ((lane & 1u) ? sin(t) : cos(t));
  }
  return 0.0;
}

// Integer element from lane `lane` of a draw: the 64 bits of lanes (lane, lane ^ 1), reduced
// to [lo, lo + range) in integer arithmetic, so every int64 range is exact (range 0: all 64
// bits, the whole int64 range from lo = INT64_MIN).
CL_HOST_DEVICE inline int64_t int_from(const Out& o, unsigned lane, int64_t lo, uint64_t range) {
  uint64_t v = (uint64_t(o.w[lane]) << 32) | o.w[lane ^ 1u];
  return int64_t(uint64_t(lo) + (range ? v % range : v));
}

}  // namespace cl::philox
