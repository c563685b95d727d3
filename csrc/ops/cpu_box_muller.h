// torch's block Box-Muller for CPU normal_ fills of 16 or more contiguous elements
// (normal_fill in torch's cpu/DistributionTemplates.h): the tensor is first filled with
// uniforms, then each block of 16 turns its first 8 values u1 and last 8 values u2 into
//   r = sqrt(-2 log(1 - u1)),  theta = 2 pi u2,
//   out[j] = r cos(theta) * std + mean,  out[j + 8] = r sin(theta) * std + mean.
// float32 on x86 machines with AVX2 (torch's kernel for both its AVX2 and AVX512 builds) uses
// the cephes single-precision polynomials of avx_mathfun (Pommier's SSE/AVX math functions),
// evaluated here one lane at a time with the same operations in the same order, so the
// results are the same bits. torch's compiler fuses each multiply whose only use is an add
// into a fused multiply-add (the first such multiply in program order when an add has two);
// the same fusions are written out here with fmaf. The other dtypes, and float32 elsewhere,
// use the C library.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>

namespace cl::box_muller {

inline float bits_f(uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}
inline uint32_t f_bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}

// Natural logarithm (cephes logf): x = m 2^e with m in [sqrt(1/2), sqrt(2)), then a
// degree-8 polynomial in m - 1. x must be > 0 here (1 - u1 is in (0, 1]).
#if defined(__x86_64__) || defined(__i386__)
#define CL_TARGET_FMA __attribute__((target("avx2,fma")))
#else
#define CL_TARGET_FMA
#endif

CL_TARGET_FMA inline float cephes_log(float x) {
  x = x > bits_f(0x00800000u) ? x : bits_f(0x00800000u);  // no denormals (as max_ps)
  int32_t e_bits = int32_t(f_bits(x) >> 23) - 0x7f;
  x = bits_f((f_bits(x) & ~0x7f800000u) | f_bits(0.5f));  // mantissa in [0.5, 1)
  float e = float(e_bits) + 1.0f;
  const bool below = x < 0.707106781186547524f;
  const float tmp = below ? x : 0.0f;
  x = x - 1.0f;
  e = e - (below ? 1.0f : 0.0f);
  x = x + tmp;
  const float z = x * x;
  static constexpr float kP[9] = {7.0376836292E-2f,  -1.1514610310E-1f, 1.1676998740E-1f,
                                  -1.2420140846E-1f, 1.4249322787E-1f,  -1.6668057665E-1f,
                                  2.0000714765E-1f,  -2.4999993993E-1f, 3.3333331174E-1f};
  float y = kP[0];
#pragma GCC unroll 9
  for (int k = 1; k < 9; ++k) y = std::fmaf(y, x, kP[k]);
  y = y * x;
  y = std::fmaf(y, z, e * -2.12194440e-4f);
  y = std::fmaf(-z, 0.5f, y);
  return std::fmaf(e, 0.693359375f, x + y);
}

// sin and cos (cephes sinf/cosf): reduction by pi/4 in three parts, then one of two
// polynomials per result, chosen by the octant.
CL_TARGET_FMA inline void cephes_sincos(float x, float* s, float* c) {
  const uint32_t sign_in = f_bits(x) & 0x80000000u;
  x = std::fabs(x);
  int32_t j = int32_t(x * 1.27323954473516f);  // truncation, as cvttps
  j = (j + 1) & ~1;
  const float y = float(j);
  const uint32_t sign_sin = sign_in ^ (uint32_t(j & 4) << 29);
  const bool poly_cos_for_sin = (j & 2) == 0;  // the sine takes the sine polynomial
  const uint32_t sign_cos = uint32_t(~(j - 2) & 4) << 29;
  x = std::fmaf(y, -0.78515625f, x);
  x = std::fmaf(y, -2.4187564849853515625e-4f, x);
  x = std::fmaf(y, -3.77489497744594108e-8f, x);
  const float z = x * x;
  float yc = 2.443315711809948E-005f;
  yc = std::fmaf(yc, z, -1.388731625493765E-003f);
  yc = std::fmaf(yc, z, 4.166664568298827E-002f);
  yc = yc * z;
  yc = std::fmaf(yc, z, -(z * 0.5f));
  yc = yc + 1.0f;
  float ys = -1.9515295891E-4f;
  ys = std::fmaf(ys, z, 8.3321608736E-3f);
  ys = std::fmaf(ys, z, -1.6666654611E-1f);
  ys = ys * z;
  ys = std::fmaf(ys, x, x);
  // Each result is one polynomial plus zero (the masked other), as the vector code adds.
  const float sin_v = poly_cos_for_sin ? (0.0f + ys) : (yc + 0.0f);
  const float cos_v = poly_cos_for_sin ? (yc + 0.0f) : (0.0f + ys);
  *s = bits_f(f_bits(sin_v) ^ sign_sin);
  *c = bits_f(f_bits(cos_v) ^ sign_cos);
}

// One block of 16 float uniforms, the AVX2 kernel's arithmetic.
CL_TARGET_FMA inline void fill16_avx_float(float* d, float mean, float std) {
  const float two_pi = float(2.0 * 3.14159265358979323846);
  for (int j = 0; j < 8; ++j) {
    const float u1 = 1.0f - d[j];
    const float u2 = d[j + 8];
    const float radius = std::sqrt(-2.0f * cephes_log(u1));
    const float theta = two_pi * u2;
    float s, c;
    cephes_sincos(theta, &s, &c);
    d[j] = std::fmaf(radius * c, std, mean);
    d[j + 8] = std::fmaf(radius * s, std, mean);
  }
}

// One block of 16 for the portable kernel: scalar_t arithmetic with the C library's
// log/cos/sin, in float or double; `fused`: the last multiply-add fused (torch's AVX2 build).
template <class T, class Acc>
inline void fill16_portable(T* d, T mean, T std, bool fused) {
  for (int j = 0; j < 8; ++j) {
    const T u1 = T(Acc(1) - Acc(d[j]));
    const T u2 = d[j + 8];
    const T radius = T(std::sqrt(Acc(-2) * std::log(Acc(u1))));
    const T theta = T(2.0 * 3.14159265358979323846 * double(u2));
    if (fused) {
      d[j] = T(std::fma(Acc(radius) * std::cos(Acc(theta)), Acc(std), Acc(mean)));
      d[j + 8] = T(std::fma(Acc(radius) * std::sin(Acc(theta)), Acc(std), Acc(mean)));
    } else {
      d[j] = T(Acc(radius) * std::cos(Acc(theta)) * Acc(std) + Acc(mean));
      d[j + 8] = T(Acc(radius) * std::sin(Acc(theta)) * Acc(std) + Acc(mean));
    }
  }
}

}  // namespace cl::box_muller

namespace cl::box_muller {

// The portable kernel for float16 and bfloat16: their math functions return the 16-bit type
// and every arithmetic step rounds to it, as c10's Half/BFloat16 operators do.
template <class T>
inline void fill16_reduced(T* d, T mean, T std) {
  auto r = [](float v) { return float(T(v)); };
  for (int j = 0; j < 8; ++j) {
    const float u1 = r(1.0f - float(d[j]));
    const float u2 = float(d[j + 8]);
    const float radius = r(std::sqrt(r(-2.0f * r(std::log(u1)))));
    const float theta = r(float(2.0 * 3.14159265358979323846 * double(u2)));
    const float c = r(std::cos(theta)), s = r(std::sin(theta));
    d[j] = T(r(r(radius * c) * float(std)) + float(mean));
    d[j + 8] = T(r(r(radius * s) * float(std)) + float(mean));
  }
}

}  // namespace cl::box_muller
