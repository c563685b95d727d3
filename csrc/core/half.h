// float16 and bfloat16 storage types with float conversions, usable on host and device.
// Arithmetic happens in float: ops convert on load and round on store.
#pragma once

#include <cstdint>
#include <cstring>
#include <type_traits>

#include "core/macros.h"

#if defined(__CUDACC__)
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#endif

namespace cl {

namespace detail {
CL_HOST_DEVICE inline uint32_t f32_bits(float f) {
#if defined(__CUDA_ARCH__)
  return __float_as_uint(f);
#else
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
#endif
}
CL_HOST_DEVICE inline float bits_f32(uint32_t u) {
#if defined(__CUDA_ARCH__)
  return __uint_as_float(u);
#else
  float f;
  std::memcpy(&f, &u, 4);
  return f;
#endif
}

// IEEE binary16 <-> binary32, round to nearest even (host path; the device uses intrinsics).
CL_HOST_DEVICE inline float half_to_float(uint16_t h) {
  uint32_t sign = uint32_t(h & 0x8000) << 16;
  uint32_t exp = (h >> 10) & 0x1f;
  uint32_t man = h & 0x3ff;
  if (exp == 0) {
    if (man == 0) return bits_f32(sign);
    // subnormal: normalise
    int e = -1;
    do {
      man <<= 1;
      ++e;
    } while (!(man & 0x400));
    man &= 0x3ff;
    return bits_f32(sign | (uint32_t(127 - 15 - e) << 23) | (man << 13));
  }
  if (exp == 31) return bits_f32(sign | 0x7f800000u | (man << 13));
  return bits_f32(sign | ((exp + 112) << 23) | (man << 13));
}

CL_HOST_DEVICE inline uint16_t float_to_half(float f) {
  uint32_t x = f32_bits(f);
  uint32_t sign = (x >> 16) & 0x8000;
  uint32_t ax = x & 0x7fffffffu;
  if (ax >= 0x7f800000u) return uint16_t(sign | 0x7c00 | (ax > 0x7f800000u ? 0x200 : 0));
  if (ax >= 0x477ff000u) return uint16_t(sign | 0x7c00);  // overflow to inf
  if (ax < 0x38800000u) {                                 // subnormal or zero in half
    if (ax < 0x33000000u) return uint16_t(sign);
    uint32_t e = ax >> 23;
    uint32_t man = (ax & 0x7fffff) | 0x800000;
    uint32_t shift = 126 - e;  // 14 + (113 - e)
    uint32_t half_man = man >> shift;
    uint32_t rem = man & ((1u << shift) - 1);
    uint32_t halfway = 1u << (shift - 1);
    if (rem > halfway || (rem == halfway && (half_man & 1))) ++half_man;
    return uint16_t(sign | half_man);
  }
  uint32_t r = ax + 0xc8000fffu + ((ax >> 13) & 1);  // rebias and round to nearest even
  return uint16_t(sign | (r >> 13));
}

CL_HOST_DEVICE inline float bf16_to_float(uint16_t b) { return bits_f32(uint32_t(b) << 16); }
CL_HOST_DEVICE inline uint16_t float_to_bf16(float f) {
  uint32_t x = f32_bits(f);
  if ((x & 0x7fffffffu) > 0x7f800000u) return uint16_t((x >> 16) | 0x40);  // quiet NaN
  x += 0x7fffu + ((x >> 16) & 1);
  return uint16_t(x >> 16);
}
}  // namespace detail

struct alignas(2) Half {
  uint16_t x;
  Half() = default;
  CL_HOST_DEVICE Half(float f) {
#if defined(__CUDA_ARCH__)
    __half h = __float2half_rn(f);
    x = *reinterpret_cast<uint16_t*>(&h);
#else
    x = detail::float_to_half(f);
#endif
  }
  CL_HOST_DEVICE operator float() const {
#if defined(__CUDA_ARCH__)
    return __half2float(*reinterpret_cast<const __half*>(&x));
#else
    return detail::half_to_float(x);
#endif
  }
};

struct alignas(2) BFloat16 {
  uint16_t x;
  BFloat16() = default;
  CL_HOST_DEVICE BFloat16(float f) {
#if defined(__CUDA_ARCH__)
    __nv_bfloat16 h = __float2bfloat16_rn(f);  // one instruction from sm_80
    x = *reinterpret_cast<uint16_t*>(&h);
#else
    x = detail::float_to_bf16(f);
#endif
  }
  CL_HOST_DEVICE operator float() const { return detail::bf16_to_float(x); }
};

// Element conversion as torch does it (c10's static_cast_with_inter_type): a floating value
// goes to an integer type through int64, so negative floats wrap identically on CPU and GPU
// (a direct float -> uint8 cast is undefined behaviour and differs between them).
template <class To, class From>
CL_HOST_DEVICE inline To convert(From v) {
  if constexpr (std::is_integral_v<To> && !std::is_same_v<To, bool> && !std::is_integral_v<From>) {
    return To(static_cast<int64_t>(static_cast<double>(v)));
  } else {
    return To(v);
  }
}

// The type arithmetic is done in: float for the 16-bit floats, the type itself otherwise.
template <class T>
struct OpMath {
  using type = T;
};
template <>
struct OpMath<Half> {
  using type = float;
};
template <>
struct OpMath<BFloat16> {
  using type = float;
};
template <class T>
using opmath_t = typename OpMath<T>::type;

}  // namespace cl
