// torch's block Box-Muller for CPU normal_ fills of 16 or more contiguous elements
// (normal_fill in torch's cpu/DistributionTemplates.h): the tensor is first filled with
// uniforms, then each block of 16 turns its first 8 values u1 and last 8 values u2 into
//   r = sqrt(-2 log(1 - u1)),  theta = 2 pi u2,
//   out[j] = r cos(theta) * std + mean,  out[j + 8] = r sin(theta) * std + mean.
// float32 on x86 machines with AVX2 (torch's kernel for both its AVX2 and AVX512 builds) uses
// the cephes single-precision polynomials of avx_mathfun (Pommier's SSE/AVX math functions),
// evaluated here with the same 8-lane operations in the same order, so the results are
// the same bits. torch's compiler fuses each multiply whose only use is an add
// into a fused multiply-add (the first such multiply in program order when an add has two);
// the same fusions are written out here. The other dtypes, and float32 elsewhere, use the C
// library.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

namespace cl::box_muller {

#if defined(__x86_64__) || defined(__i386__)
#define CL_TORCH_AVX2_BOX_MULLER 1
#define CL_TARGET_AVX2 __attribute__((target("avx2,fma")))

namespace avx {

CL_TARGET_AVX2 inline __m256 splat(float v) { return _mm256_set1_ps(v); }
CL_TARGET_AVX2 inline __m256 splat_bits(int32_t v) {
  return _mm256_castsi256_ps(_mm256_set1_epi32(v));
}

// Natural logarithm of 8 floats > 0 (cephes logf): x = m 2^e with m in [sqrt(1/2), sqrt(2)),
// then a degree-8 polynomial in m - 1.
CL_TARGET_AVX2 inline __m256 log(__m256 x) {
  const __m256 one = splat(1.0f);
  x = _mm256_max_ps(x, splat_bits(0x00800000));  // no denormals
  const __m256i exponent =
      _mm256_sub_epi32(_mm256_srli_epi32(_mm256_castps_si256(x), 23), _mm256_set1_epi32(0x7f));
  x = _mm256_or_ps(_mm256_and_ps(x, splat_bits(~0x7f800000)), splat(0.5f));  // in [0.5, 1)
  __m256 e = _mm256_add_ps(_mm256_cvtepi32_ps(exponent), one);
  const __m256 below = _mm256_cmp_ps(x, splat(0.707106781186547524f), _CMP_LT_OS);
  const __m256 tmp = _mm256_and_ps(x, below);
  x = _mm256_sub_ps(x, one);
  e = _mm256_sub_ps(e, _mm256_and_ps(one, below));
  x = _mm256_add_ps(x, tmp);
  const __m256 z = _mm256_mul_ps(x, x);
  static constexpr float kP[9] = {7.0376836292E-2f,  -1.1514610310E-1f, 1.1676998740E-1f,
                                  -1.2420140846E-1f, 1.4249322787E-1f,  -1.6668057665E-1f,
                                  2.0000714765E-1f,  -2.4999993993E-1f, 3.3333331174E-1f};
  __m256 y = splat(kP[0]);
  for (int k = 1; k < 9; ++k) y = _mm256_fmadd_ps(y, x, splat(kP[k]));
  y = _mm256_mul_ps(y, x);
  y = _mm256_fmadd_ps(y, z, _mm256_mul_ps(e, splat(-2.12194440e-4f)));
  y = _mm256_fnmadd_ps(z, splat(0.5f), y);
  return _mm256_fmadd_ps(e, splat(0.693359375f), _mm256_add_ps(x, y));
}

// sin and cos of 8 floats (cephes sinf/cosf): reduction by pi/4 in three parts, then one of
// two polynomials per result, chosen by the octant; the other contributes a masked zero.
CL_TARGET_AVX2 inline void sincos(__m256 x, __m256* s, __m256* c) {
  const __m256 sign_in = _mm256_and_ps(x, splat_bits(int32_t(0x80000000u)));
  x = _mm256_and_ps(x, splat_bits(0x7fffffff));
  __m256i j = _mm256_cvttps_epi32(_mm256_mul_ps(x, splat(1.27323954473516f)));
  j = _mm256_and_si256(_mm256_add_epi32(j, _mm256_set1_epi32(1)), _mm256_set1_epi32(~1));
  const __m256 y = _mm256_cvtepi32_ps(j);
  const __m256 sign_sin = _mm256_xor_ps(
      sign_in,
      _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_and_si256(j, _mm256_set1_epi32(4)), 29)));
  const __m256 sine_poly = _mm256_castsi256_ps(
      _mm256_cmpeq_epi32(_mm256_and_si256(j, _mm256_set1_epi32(2)), _mm256_setzero_si256()));
  const __m256 sign_cos = _mm256_castsi256_ps(_mm256_slli_epi32(
      _mm256_andnot_si256(_mm256_sub_epi32(j, _mm256_set1_epi32(2)), _mm256_set1_epi32(4)), 29));
  x = _mm256_fmadd_ps(y, splat(-0.78515625f), x);
  x = _mm256_fmadd_ps(y, splat(-2.4187564849853515625e-4f), x);
  x = _mm256_fmadd_ps(y, splat(-3.77489497744594108e-8f), x);
  const __m256 z = _mm256_mul_ps(x, x);
  __m256 yc = _mm256_fmadd_ps(splat(2.443315711809948E-005f), z, splat(-1.388731625493765E-003f));
  yc = _mm256_fmadd_ps(yc, z, splat(4.166664568298827E-002f));
  yc = _mm256_mul_ps(yc, z);
  yc = _mm256_fmsub_ps(yc, z, _mm256_mul_ps(z, splat(0.5f)));
  yc = _mm256_add_ps(yc, splat(1.0f));
  __m256 ys = _mm256_fmadd_ps(splat(-1.9515295891E-4f), z, splat(8.3321608736E-3f));
  ys = _mm256_fmadd_ps(ys, z, splat(-1.6666654611E-1f));
  ys = _mm256_mul_ps(ys, z);
  ys = _mm256_fmadd_ps(ys, x, x);
  const __m256 sin_from_s = _mm256_and_ps(sine_poly, ys);
  const __m256 sin_from_c = _mm256_andnot_ps(sine_poly, yc);
  *s = _mm256_xor_ps(_mm256_add_ps(sin_from_c, sin_from_s), sign_sin);
  *c = _mm256_xor_ps(_mm256_add_ps(_mm256_sub_ps(yc, sin_from_c), _mm256_sub_ps(ys, sin_from_s)),
                     sign_cos);
}

}  // namespace avx

// One block of 16 float uniforms, the AVX2 kernel's arithmetic.
CL_TARGET_AVX2 inline void fill16_avx_float(float* d, float mean, float std) {
  const __m256 u1 = _mm256_sub_ps(avx::splat(1.0f), _mm256_loadu_ps(d));
  const __m256 u2 = _mm256_loadu_ps(d + 8);
  const __m256 radius = _mm256_sqrt_ps(_mm256_mul_ps(avx::splat(-2.0f), avx::log(u1)));
  const __m256 theta = _mm256_mul_ps(avx::splat(float(2.0 * 3.14159265358979323846)), u2);
  __m256 s, c;
  avx::sincos(theta, &s, &c);
  _mm256_storeu_ps(d, _mm256_fmadd_ps(_mm256_mul_ps(radius, c), avx::splat(std), avx::splat(mean)));
  _mm256_storeu_ps(d + 8,
                   _mm256_fmadd_ps(_mm256_mul_ps(radius, s), avx::splat(std), avx::splat(mean)));
}
#endif

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
