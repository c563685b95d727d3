// Box-Muller in float arithmetic, for the GPU's float, float16 and bfloat16 normals.
//
// It agrees with the double-precision path of philox::sample4 (what the CPU computes) to
// within float rounding, for every pair of Philox words, yet costs about as few instructions
// as a plain float Box-Muller:
//  - log(u1), u1 = 1 - w0 / 2^32 in (0, 1]. Near 1 (u1 >= 2/3) it is log1p(t) with
//    t = -w0 / 2^32, which float holds exactly (or within 2^-24 of t): a rounded u1 would
//    lose the small logarithms, and with them the small radii. Below 2/3 the float u1 is
//    good enough (|log u1| > 0.4); it is reduced to a mantissa in [2/3, 4/3) and an exponent,
//    and both cases share one polynomial for log1p on [-1/3, 1/3].
//  - sqrt(-2 log u1) from the hardware reciprocal square root and one Newton step.
//  - sin and cos of 2 pi w1 / 2^32: the quadrant and the remainder (|x| <= pi / 4) come from
//    the integer exactly, then minimax polynomials.
// The polynomial coefficients were fitted for this file (weighted least squares with Lawson
// iterations, float64, then rounded to float); each is within 3e-8 relative of the function.
// tests/cpp/test_core.cpp checks the result against the double path.
#pragma once

#include <cmath>
#include <cstdint>

#include "core/half.h"
#include "core/macros.h"

namespace cl::philox {

namespace detail {

// 1 / sqrt(y) for a normal y > 0: the hardware's approximation (relative error < 2^-22.9).
CL_HOST_DEVICE inline float rsqrt_approx(float y) {
#if defined(__CUDA_ARCH__)
  float r;
  asm("rsqrt.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(y));
  return r;
#else
  return 1.0f / std::sqrt(y);
#endif
}

}  // namespace detail

// log(1 - w0 / 2^32), relative error a few float ulps.
CL_HOST_DEVICE inline float log_one_minus(uint32_t w0) {
  const bool near1 = w0 <= 0x55555555u;                    // u1 >= 2/3
  const float x = float(near1 ? w0 : 0u - w0) * 0x1p-32f;  // t = -x, or u1 = x
  // x = 2^k * mant with mant in [2/3, 4/3) (only for u1 < 2/3; x >= 2^-32 is normal).
  const int32_t k = near1 ? 0 : int32_t(cl::detail::f32_bits(x) - 0x3f2aaaabu) >> 23;
  const float mant = cl::detail::bits_f32(cl::detail::f32_bits(x) - (uint32_t(k) << 23));
  const float f = near1 ? -x : mant - 1.0f;
  // log1p(f) = f + f^2 P(f) on [-1/3, 1/3]
  float p = 0.13856412f;
  p = fmaf(p, f, -0.15399185f);
  p = fmaf(p, f, 0.14032760f);
  p = fmaf(p, f, -0.16413574f);
  p = fmaf(p, f, 0.20008717f);
  p = fmaf(p, f, -0.25007984f);
  p = fmaf(p, f, 0.33333245f);
  p = fmaf(p, f, -0.49999931f);
  const float l1p = fmaf(f * f, p, f);
  const float e = float(k);
  return fmaf(e, 0.693145752f, fmaf(e, 1.42860677e-06f, l1p));  // ln 2 in two parts
}

// Two standard normals from two Philox words: z0 = r cos(theta), z1 = r sin(theta).
CL_HOST_DEVICE inline void normal_pair_float(uint32_t w0, uint32_t w1, float* z0, float* z1) {
  const float y = -2.0f * log_one_minus(w0);  // >= 0; 0 only for w0 == 0
  const float rs = detail::rsqrt_approx(fmaxf(y, 1e-30f));
  const float r0 = y * rs;
  const float r = fmaf(0.5f * rs, fmaf(-r0, r0, y), r0);
  const uint32_t q = (w1 + (1u << 29)) >> 30;  // quadrant of the angle
  const float x = float(int32_t(w1 - (q << 30))) * (1.5707963267948966f * 0x1p-30f);
  const float z = x * x;
  float sp = -0.00019516573f;
  sp = fmaf(sp, z, 0.0083321715f);
  sp = fmaf(sp, z, -0.16666655f);
  const float sn = fmaf(x * z, sp, x);
  float cp = 2.4437077e-05f;
  cp = fmaf(cp, z, -0.0013887354f);
  cp = fmaf(cp, z, 0.041666646f);
  const float cs = fmaf(z * z, cp, fmaf(-0.5f, z, 1.0f));
  const bool swap = q & 1u;
  const float s0 = swap ? cs : sn, c0 = swap ? sn : cs;
  *z0 = ((q + 1u) & 2u) ? -c0 * r : c0 * r;
  *z1 = (q & 2u) ? -s0 * r : s0 * r;
}

}  // namespace cl::philox
