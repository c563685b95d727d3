// Sorting along a dim (sort, argsort, msort, topk, kthvalue): the entry point, the loops of
// each device, and the order-preserving unsigned keys that both devices sort by.
//
// Note [Sort keys]
// Every dtype is sorted as unsigned integers whose order is torch's order of the values:
// integers with the sign bit flipped; floats by their bits, flipped so that negatives come
// first, with -0.0 mapped to +0.0 (equal, so a stable sort keeps their input order) and every
// NaN mapped to the largest key (torch sorts NaN above inf, whatever its sign bit). A
// descending sort sorts the complemented keys ascending, so equal values keep their input
// order in both directions (torch's stable=True). The sorted values are then gathered from
// the input by index, so NaN payloads and the sign of zero come out as they went in.
#pragma once

#include <cstdint>
#include <cstring>
#include <tuple>
#include <type_traits>

#include "core/half.h"
#include "core/macros.h"
#include "core/tensor.h"

namespace cl {

// Sorts `t` along `dim` (descending: largest first); k >= 0 keeps only the first k of each
// slice (topk; the first k are those of a full stable sort). Returns (values, indices), dense.
std::tuple<Tensor, Tensor> sort(const Tensor& t, int64_t dim, bool descending, int64_t k = -1);

namespace sortkey {

template <size_t N>
struct Uint;
template <>
struct Uint<1> {
  using type = uint8_t;
};
template <>
struct Uint<2> {
  using type = uint16_t;
};
template <>
struct Uint<4> {
  using type = uint32_t;
};
template <>
struct Uint<8> {
  using type = uint64_t;
};

template <class T>
using key_t = typename Uint<sizeof(T)>::type;

template <class T>
CL_HOST_DEVICE inline key_t<T> key(T v) {
  using U = key_t<T>;
  if constexpr (std::is_same_v<T, bool>) {
    return U(v ? 1 : 0);
  } else if constexpr (std::is_integral_v<T> && std::is_unsigned_v<T>) {
    return U(v);
  } else if constexpr (std::is_integral_v<T>) {
    return U(U(v) ^ (U(1) << (8 * sizeof(T) - 1)));
  } else {
    U u;
    if constexpr (std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>) {
      u = v.x;
    } else {
      static_assert(sizeof(T) == sizeof(U));
      memcpy(&u, &v, sizeof(U));
    }
    constexpr U sign = U(1) << (8 * sizeof(U) - 1);
    // The exponent mask: all exponent bits set and a nonzero mantissa is a NaN.
    constexpr U exp_mask = std::is_same_v<T, Half>       ? U(0x7c00)
                           : std::is_same_v<T, BFloat16> ? U(0x7f80)
                           : std::is_same_v<T, float>    ? U(0x7f800000u)
                                                         : U(0x7ff0000000000000ull);
    if ((u & U(~sign)) > exp_mask) return U(~U(0));  // NaN: the largest key
    if ((u & U(~sign)) == 0) return sign;            // +0.0 and -0.0
    return (u & sign) ? U(~u) : U(u | sign);
  }
}

}  // namespace sortkey

namespace cpu {
// Each of `rows` dense rows of length n of `in` (contiguous) sorted; the first k of each go
// to the dense [rows, k] `values` (in's dtype) and `indices` (int64).
void sort_rows(const Tensor& in, int64_t rows, int64_t n, int64_t k, bool descending,
               const Tensor& values, const Tensor& indices);
}  // namespace cpu
namespace cuda {
void sort_rows(const Tensor& in, int64_t rows, int64_t n, int64_t k, bool descending,
               const Tensor& values, const Tensor& indices);
}  // namespace cuda

}  // namespace cl
