// CRC-32 by carry-less multiplication (x86-64 PCLMULQDQ) with a table fallback.
//
// The folding method is Intel's "Fast CRC Computation for Generic Polynomials Using
// PCLMULQDQ Instruction" (2009): four 128-bit lanes are folded forward 512 bits per step,
// then folded into one lane, reduced to 64 bits, and Barrett-reduced to the 32-bit CRC. The
// constants are x^k mod P(x) for the reflected zip polynomial. CPUs with AVX-512 VPCLMULQDQ
// fold four 512-bit registers (sixteen lanes, 256 bytes) per step: 3.6 times the speed on
// data in the L2 cache, which is where cudalite.load checksums each chunk it reads.
#include "core/crc32.h"

#include <array>
#include <cstring>

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define CL_CRC32_PCLMUL 1
#include <immintrin.h>
#endif

namespace cl {

namespace {

using Tables = std::array<std::array<uint32_t, 256>, 8>;

Tables make_tables() {
  Tables t{};
  for (uint32_t i = 0; i < 256; ++i) {
    uint32_t c = i;
    for (int k = 0; k < 8; ++k) c = (c & 1) ? 0xEDB88320u ^ (c >> 1) : c >> 1;
    t[0][i] = c;
  }
  for (uint32_t i = 0; i < 256; ++i) {
    for (int s = 1; s < 8; ++s) t[s][i] = (t[s - 1][i] >> 8) ^ t[0][t[s - 1][i] & 0xFF];
  }
  return t;
}

const Tables& tables() {
  static const Tables t = make_tables();
  return t;
}

// The raw (not inverted) register over n bytes.
uint32_t table_update(uint32_t c, const uint8_t* p, size_t n) {
  const Tables& t = tables();
  while (n >= 8) {
    uint32_t lo, hi;
    std::memcpy(&lo, p, 4);
    std::memcpy(&hi, p + 4, 4);
    lo ^= c;
    c = t[7][lo & 0xFF] ^ t[6][(lo >> 8) & 0xFF] ^ t[5][(lo >> 16) & 0xFF] ^ t[4][lo >> 24] ^
        t[3][hi & 0xFF] ^ t[2][(hi >> 8) & 0xFF] ^ t[1][(hi >> 16) & 0xFF] ^ t[0][hi >> 24];
    p += 8;
    n -= 8;
  }
  while (n--) c = t[0][(c ^ *p++) & 0xFF] ^ (c >> 8);
  return c;
}

#ifdef CL_CRC32_PCLMUL
// Folding constants: x^(D+32) and x^(D-32) mod P(x), bit-reflected and shifted left by one,
// for a fold forward by D bits (D = 512: four 128-bit lanes; 128: one; 2048: four 512-bit
// registers).
alignas(16) const uint64_t k1k2[] = {0x0154442bd4, 0x01c6e41596};  // D = 512
alignas(16) const uint64_t k3k4[] = {0x01751997d0, 0x00ccaa009e};  // D = 128
alignas(16) const uint64_t k5k0[] = {0x0163cd6124, 0x0000000000};  // 64 bits
alignas(16) const uint64_t poly[] = {0x01db710641, 0x01f7011641};  // Barrett: P(x), mu
const uint64_t k2048[] = {0x011542778a, 0x01322d1430};             // D = 2048

uint32_t pclmul_finish(__m128i x1, __m128i x2, __m128i x3, __m128i x4, const uint8_t* p, size_t n);

// The raw register over n bytes, n >= 64 and a multiple of 16.
__attribute__((target("pclmul,sse4.1"))) uint32_t pclmul_update(uint32_t crc, const uint8_t* p,
                                                                size_t n) {
  auto load = [](const uint8_t* q) { return _mm_loadu_si128(reinterpret_cast<const __m128i*>(q)); };

  __m128i x1 = load(p), x2 = load(p + 16), x3 = load(p + 32), x4 = load(p + 48);
  x1 = _mm_xor_si128(x1, _mm_cvtsi32_si128(int(crc)));
  __m128i x0 = _mm_load_si128(reinterpret_cast<const __m128i*>(k1k2));
  p += 64;
  n -= 64;
  while (n >= 64) {
    __m128i x5 = _mm_clmulepi64_si128(x1, x0, 0x00);
    __m128i x6 = _mm_clmulepi64_si128(x2, x0, 0x00);
    __m128i x7 = _mm_clmulepi64_si128(x3, x0, 0x00);
    __m128i x8 = _mm_clmulepi64_si128(x4, x0, 0x00);
    x1 = _mm_clmulepi64_si128(x1, x0, 0x11);
    x2 = _mm_clmulepi64_si128(x2, x0, 0x11);
    x3 = _mm_clmulepi64_si128(x3, x0, 0x11);
    x4 = _mm_clmulepi64_si128(x4, x0, 0x11);
    x1 = _mm_xor_si128(_mm_xor_si128(x1, x5), load(p));
    x2 = _mm_xor_si128(_mm_xor_si128(x2, x6), load(p + 16));
    x3 = _mm_xor_si128(_mm_xor_si128(x3, x7), load(p + 32));
    x4 = _mm_xor_si128(_mm_xor_si128(x4, x8), load(p + 48));
    p += 64;
    n -= 64;
  }
  return pclmul_finish(x1, x2, x3, x4, p, n);
}

// The same folding on 512-bit registers (AVX-512 VPCLMULQDQ): four of them fold 256 bytes per
// step, then into one, which folds 64 bytes per step; its four 128-bit lanes are what
// pclmul_update's four registers hold at that point. n >= 256 and a multiple of 16.
#define CL_VPCLMUL_TARGET __attribute__((target("avx512f,vpclmulqdq,pclmul,sse4.1")))
// x folded forward by the distance of k's constants, plus next (x.lo * k.lo ^ x.hi * k.hi ^
// next in each lane).
CL_VPCLMUL_TARGET __attribute__((always_inline)) inline __m512i fold512(__m512i x, __m512i k,
                                                                        __m512i next) {
  return _mm512_ternarylogic_epi64(_mm512_clmulepi64_epi128(x, k, 0x00),
                                   _mm512_clmulepi64_epi128(x, k, 0x11), next, 0x96);
}

CL_VPCLMUL_TARGET uint32_t vpclmul_update(uint32_t crc, const uint8_t* p, size_t n) {
  __m512i z0 = _mm512_loadu_si512(p), z1 = _mm512_loadu_si512(p + 64),
          z2 = _mm512_loadu_si512(p + 128), z3 = _mm512_loadu_si512(p + 192);
  z0 = _mm512_xor_si512(z0, _mm512_castsi128_si512(_mm_cvtsi32_si128(int(crc))));
  p += 256;
  n -= 256;
  const __m512i k4 =
      _mm512_set4_epi64(int64_t(k2048[1]), int64_t(k2048[0]), int64_t(k2048[1]), int64_t(k2048[0]));
  while (n >= 256) {
    z0 = fold512(z0, k4, _mm512_loadu_si512(p));
    z1 = fold512(z1, k4, _mm512_loadu_si512(p + 64));
    z2 = fold512(z2, k4, _mm512_loadu_si512(p + 128));
    z3 = fold512(z3, k4, _mm512_loadu_si512(p + 192));
    p += 256;
    n -= 256;
  }
  const __m512i k1 =
      _mm512_set4_epi64(int64_t(k1k2[1]), int64_t(k1k2[0]), int64_t(k1k2[1]), int64_t(k1k2[0]));
  z0 = fold512(z0, k1, z1);
  z0 = fold512(z0, k1, z2);
  z0 = fold512(z0, k1, z3);
  while (n >= 64) {
    z0 = fold512(z0, k1, _mm512_loadu_si512(p));
    p += 64;
    n -= 64;
  }
  alignas(64) __m128i lanes[4];
  _mm512_store_si512(lanes, z0);
  return pclmul_finish(lanes[0], lanes[1], lanes[2], lanes[3], p, n);
}

// Four 128-bit lanes (the last 64 bytes folded) and the n < 64 bytes left (a multiple of 16)
// to the raw 32-bit register.
__attribute__((target("pclmul,sse4.1"))) uint32_t pclmul_finish(__m128i x1, __m128i x2, __m128i x3,
                                                                __m128i x4, const uint8_t* p,
                                                                size_t n) {
  auto load = [](const uint8_t* q) { return _mm_loadu_si128(reinterpret_cast<const __m128i*>(q)); };
  __m128i x0;
  // Four lanes into one.
  x0 = _mm_load_si128(reinterpret_cast<const __m128i*>(k3k4));
  for (__m128i next : {x2, x3, x4}) {
    __m128i x5 = _mm_clmulepi64_si128(x1, x0, 0x00);
    x1 = _mm_clmulepi64_si128(x1, x0, 0x11);
    x1 = _mm_xor_si128(_mm_xor_si128(x1, next), x5);
  }
  while (n >= 16) {
    __m128i x5 = _mm_clmulepi64_si128(x1, x0, 0x00);
    x1 = _mm_clmulepi64_si128(x1, x0, 0x11);
    x1 = _mm_xor_si128(_mm_xor_si128(x1, load(p)), x5);
    p += 16;
    n -= 16;
  }
  // 128 bits to 64.
  __m128i mask = _mm_setr_epi32(~0, 0, ~0, 0);
  x2 = _mm_clmulepi64_si128(x1, x0, 0x10);
  x1 = _mm_xor_si128(_mm_srli_si128(x1, 8), x2);
  x0 = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(k5k0));
  x2 = _mm_srli_si128(x1, 4);
  x1 = _mm_and_si128(x1, mask);
  x1 = _mm_xor_si128(_mm_clmulepi64_si128(x1, x0, 0x00), x2);
  // Barrett reduction to 32 bits.
  x0 = _mm_load_si128(reinterpret_cast<const __m128i*>(poly));
  x2 = _mm_and_si128(x1, mask);
  x2 = _mm_clmulepi64_si128(x2, x0, 0x10);
  x2 = _mm_and_si128(x2, mask);
  x2 = _mm_clmulepi64_si128(x2, x0, 0x00);
  x1 = _mm_xor_si128(x1, x2);
  return uint32_t(_mm_extract_epi32(x1, 1));
}

bool has_pclmul() {
  static const bool yes = __builtin_cpu_supports("pclmul") && __builtin_cpu_supports("sse4.1");
  return yes;
}

bool has_vpclmul() {
  static const bool yes =
      has_pclmul() && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("vpclmulqdq");
  return yes;
}
#endif

}  // namespace

uint32_t crc32_table(uint32_t crc, const void* data, size_t n) {
  return ~table_update(~crc, static_cast<const uint8_t*>(data), n);
}

uint32_t crc32(uint32_t crc, const void* data, size_t n) {
  auto p = static_cast<const uint8_t*>(data);
  uint32_t c = ~crc;
#ifdef CL_CRC32_PCLMUL
  if (n >= 64 && has_pclmul()) {
    size_t bulk = n & ~size_t(15);
    c = bulk >= 256 && has_vpclmul() ? vpclmul_update(c, p, bulk) : pclmul_update(c, p, bulk);
    p += bulk;
    n -= bulk;
  }
#endif
  return ~table_update(c, p, n);
}

}  // namespace cl
