// Scalar functors: the whole definition of each elementwise op, shared by the CPU loops
// (ops/cpu_loops.h) and the CUDA loops (kernels/loops.cuh). T is the arithmetic type
// (float for float16/bfloat16, see core/half.h).
#pragma once

#include <cmath>
#include <cstdint>
#include <type_traits>

#include "core/half.h"
#include "core/macros.h"

namespace cl::fn {

template <class T>
constexpr bool is_fp = std::is_floating_point_v<T>;

struct Add {
  template <class T>
  CL_HOST_DEVICE T operator()(T a, T b) const {
    return T(a + b);
  }
};
struct Sub {
  template <class T>
  CL_HOST_DEVICE T operator()(T a, T b) const {
    return T(a - b);
  }
};
struct Mul {
  template <class T>
  CL_HOST_DEVICE T operator()(T a, T b) const {
    if constexpr (std::is_same_v<T, bool>)
      return a && b;
    else
      return T(a * b);
  }
};
struct Div {  // true division; only instantiated for floating T
  template <class T>
  CL_HOST_DEVICE T operator()(T a, T b) const {
    return a / b;
  }
};
// Python's floor division and modulo (torch.floor_divide, torch.remainder).
struct FloorDiv {
  template <class T>
  CL_HOST_DEVICE T operator()(T a, T b) const {
    if constexpr (is_fp<T>) {
      if (b == 0) return a / b;
      T mod = std::fmod(a, b);
      T div = (a - mod) / b;
      if (mod != 0 && ((b < 0) != (mod < 0))) div -= 1;
      if (div == 0) return std::copysign(T(0), a / b);
      T fl = std::floor(div);
      if (div - fl > T(0.5)) fl += 1;
      return fl;
    } else if constexpr (std::is_same_v<T, bool>) {
      return a;
    } else {
      if (b == 0) return 0;  // the CPU path raises before the loop runs
      if constexpr (std::is_signed_v<T>) {
        if (b == -1) return T(-a);  // avoids the INT_MIN / -1 trap
        T q = a / b, r = a % b;
        return (r != 0 && ((r < 0) != (b < 0))) ? T(q - 1) : q;
      } else {
        return a / b;
      }
    }
  }
};
struct Rem {
  template <class T>
  CL_HOST_DEVICE T operator()(T a, T b) const {
    if constexpr (is_fp<T>) {
      T r = std::fmod(a, b);
      if (r != 0 && ((r < 0) != (b < 0))) r += b;
      return r;
    } else if constexpr (std::is_same_v<T, bool>) {
      return false;
    } else {
      if (b == 0) return 0;
      if constexpr (std::is_signed_v<T>) {
        if (b == -1) return 0;
        T r = a % b;
        return (r != 0 && ((r < 0) != (b < 0))) ? T(r + b) : r;
      } else {
        return a % b;
      }
    }
  }
};
struct Pow {
  template <class T>
  CL_HOST_DEVICE T operator()(T a, T b) const {
    if constexpr (is_fp<T>) {
      return std::pow(a, b);
    } else if constexpr (std::is_same_v<T, bool>) {
      return a || !b;
    } else {
      if constexpr (std::is_signed_v<T>) {
        if (b < 0) return a == 1 ? T(1) : a == -1 ? T((b & 1) ? -1 : 1) : T(0);
      }
      T result = 1, base = a;
      auto e = b;
      while (e) {
        if (e & 1) result = T(result * base);
        base = T(base * base);
        e = T(e >> 1);
      }
      return result;
    }
  }
};
// maximum/minimum propagate NaN, like torch.
struct Maximum {
  template <class T>
  CL_HOST_DEVICE T operator()(T a, T b) const {
    if constexpr (is_fp<T>) {
      if (a != a) return a;
      if (b != b) return b;
    }
    return a > b ? a : b;
  }
};
struct Minimum {
  template <class T>
  CL_HOST_DEVICE T operator()(T a, T b) const {
    if constexpr (is_fp<T>) {
      if (a != a) return a;
      if (b != b) return b;
    }
    return a < b ? a : b;
  }
};
struct Atan2 {
  template <class T>
  CL_HOST_DEVICE T operator()(T a, T b) const {
    return std::atan2(a, b);
  }
};
struct Copysign {  // only instantiated for floating T
  template <class T>
  CL_HOST_DEVICE T operator()(T a, T b) const {
    return std::copysign(a, b);
  }
};
// C's fmod: the remainder truncated toward zero (the sign of the dividend).
struct Fmod {
  template <class T>
  CL_HOST_DEVICE T operator()(T a, T b) const {
    if constexpr (is_fp<T>) {
      return std::fmod(a, b);
    } else {
      if (b == 0) return 0;  // the CPU path raises before the loop runs
      if constexpr (std::is_signed_v<T>) {
        if (b == -1) return 0;  // avoids the INT_MIN % -1 trap
      }
      return T(a % b);
    }
  }
};
// fmax/fmin ignore NaN (the other operand wins), unlike maximum/minimum.
struct Fmax {
  template <class T>
  CL_HOST_DEVICE T operator()(T a, T b) const {
    if constexpr (is_fp<T>)
      return std::fmax(a, b);
    else
      return a > b ? a : b;
  }
};
struct Fmin {
  template <class T>
  CL_HOST_DEVICE T operator()(T a, T b) const {
    if constexpr (is_fp<T>)
      return std::fmin(a, b);
    else
      return a < b ? a : b;
  }
};
// log(exp(a) + exp(b)) without overflow; equal infinities give themselves (as torch).
struct Logaddexp {
  template <class T>
  CL_HOST_DEVICE T operator()(T a, T b) const {
    if (std::isinf(a) && a == b) return a;
    T m = a > b ? a : b;
    return m + std::log1p(std::exp(-std::fabs(a - b)));
  }
};
// a * log(b), 0 where a is 0 (unless b is NaN), as torch.
struct Xlogy {
  template <class T>
  CL_HOST_DEVICE T operator()(T a, T b) const {
    if (b != b) return b;
    if (a == 0) return T(0);
    return a * std::log(b);
  }
};
struct Hypot {
  template <class T>
  CL_HOST_DEVICE T operator()(T a, T b) const {
    return std::hypot(a, b);
  }
};

#define CL_CMP_FUNCTOR(Name, expr)                   \
  struct Name {                                      \
    template <class T>                               \
    CL_HOST_DEVICE bool operator()(T a, T b) const { \
      return expr;                                   \
    }                                                \
  };
CL_CMP_FUNCTOR(Eq, a == b)
CL_CMP_FUNCTOR(Ne, a != b)
CL_CMP_FUNCTOR(Lt, a < b)
CL_CMP_FUNCTOR(Le, a <= b)
CL_CMP_FUNCTOR(Gt, a > b)
CL_CMP_FUNCTOR(Ge, a >= b)
CL_CMP_FUNCTOR(LogicalAnd, bool(a) && bool(b))
CL_CMP_FUNCTOR(LogicalOr, bool(a) || bool(b))
CL_CMP_FUNCTOR(LogicalXor, bool(a) != bool(b))
#undef CL_CMP_FUNCTOR

struct BitAnd {
  template <class T>
  CL_HOST_DEVICE T operator()(T a, T b) const {
    return T(a & b);
  }
};
struct BitOr {
  template <class T>
  CL_HOST_DEVICE T operator()(T a, T b) const {
    return T(a | b);
  }
};
struct BitXor {
  template <class T>
  CL_HOST_DEVICE T operator()(T a, T b) const {
    return T(a ^ b);
  }
};

// ---- unary ----
struct Neg {
  template <class T>
  CL_HOST_DEVICE T operator()(T a) const {
    return T(-a);
  }
};
struct Abs {
  template <class T>
  CL_HOST_DEVICE T operator()(T a) const {
    if constexpr (is_fp<T>)
      return std::fabs(a);
    else if constexpr (std::is_unsigned_v<T> || std::is_same_v<T, bool>)
      return a;
    else
      return T(a < 0 ? -a : a);
  }
};
struct Sign {
  template <class T>
  CL_HOST_DEVICE T operator()(T a) const {
    if constexpr (std::is_same_v<T, bool>)
      return a;
    else
      return T((T(0) < a) - (a < T(0)));
  }
};
struct Relu {
  template <class T>
  CL_HOST_DEVICE T operator()(T a) const {
    return a < T(0) ? T(0) : a;
  }
};
struct Square {
  template <class T>
  CL_HOST_DEVICE T operator()(T a) const {
    if constexpr (std::is_same_v<T, bool>)
      return a;
    else
      return T(a * a);
  }
};
struct BitNot {
  template <class T>
  CL_HOST_DEVICE T operator()(T a) const {
    if constexpr (std::is_same_v<T, bool>)
      return !a;
    else
      return T(~a);
  }
};
struct LogicalNot {
  template <class T>
  CL_HOST_DEVICE bool operator()(T a) const {
    return !bool(a);
  }
};

#define CL_FLOAT_UNARY(Name, expr)           \
  struct Name {                              \
    template <class T>                       \
    CL_HOST_DEVICE T operator()(T a) const { \
      return expr;                           \
    }                                        \
  };
CL_FLOAT_UNARY(Exp, std::exp(a))
CL_FLOAT_UNARY(Log, std::log(a))
CL_FLOAT_UNARY(Log2, std::log2(a))
CL_FLOAT_UNARY(Log10, std::log10(a))
CL_FLOAT_UNARY(Log1p, std::log1p(a))
CL_FLOAT_UNARY(Expm1, std::expm1(a))
CL_FLOAT_UNARY(Sqrt, std::sqrt(a))
CL_FLOAT_UNARY(Rsqrt, T(1) / std::sqrt(a))
CL_FLOAT_UNARY(Sin, std::sin(a))
CL_FLOAT_UNARY(Cos, std::cos(a))
CL_FLOAT_UNARY(Tan, std::tan(a))
CL_FLOAT_UNARY(Tanh, std::tanh(a))
CL_FLOAT_UNARY(Sigmoid, T(1) / (T(1) + std::exp(-a)))
CL_FLOAT_UNARY(Erf, std::erf(a))
CL_FLOAT_UNARY(Erfc, std::erfc(a))
CL_FLOAT_UNARY(Sinh, std::sinh(a))
CL_FLOAT_UNARY(Cosh, std::cosh(a))
CL_FLOAT_UNARY(Asin, std::asin(a))
CL_FLOAT_UNARY(Acos, std::acos(a))
CL_FLOAT_UNARY(Atan, std::atan(a))
CL_FLOAT_UNARY(Asinh, std::asinh(a))
CL_FLOAT_UNARY(Acosh, std::acosh(a))
CL_FLOAT_UNARY(Atanh, std::atanh(a))
CL_FLOAT_UNARY(Exp2, std::exp2(a))
CL_FLOAT_UNARY(Frac, a - std::trunc(a))
CL_FLOAT_UNARY(Deg2rad, a* T(0.017453292519943295))
CL_FLOAT_UNARY(Rad2deg, a* T(57.29577951308232))
CL_FLOAT_UNARY(Reciprocal, T(1) / a)
CL_FLOAT_UNARY(Floor, std::floor(a))
CL_FLOAT_UNARY(Ceil, std::ceil(a))
CL_FLOAT_UNARY(Round, std::nearbyint(a))
CL_FLOAT_UNARY(Trunc, std::trunc(a))

// ---- special functions ----
// erfinv on the host: an approximation accurate to about 1e-7 (M. Giles, "Approximating the
// erfinv function", GPU Computing Gems, 2011; rougher in double's far tail) refined to double
// precision: Halley steps on erf for |y| <= 0.5, Newton steps on log(erfc) above, where
// 1 - |y| is exact. The GPU has erfinv.
inline double erfinv_host(double y) {
  double a = std::fabs(y);
  if (!(a <= 1.0)) return std::nan("");
  if (a == 1.0) return std::copysign(INFINITY, y);
  if (a == 0.0) return y;
  double w = -std::log((1.0 - a) * (1.0 + a)), p;
  if (w < 5.0) {
    w -= 2.5;
    p = 2.81022636e-08;
    p = 3.43273939e-07 + p * w;
    p = -3.5233877e-06 + p * w;
    p = -4.39150654e-06 + p * w;
    p = 0.00021858087 + p * w;
    p = -0.00125372503 + p * w;
    p = -0.00417768164 + p * w;
    p = 0.246640727 + p * w;
    p = 1.50140941 + p * w;
  } else {
    w = std::sqrt(w) - 3.0;
    p = -0.000200214257;
    p = 0.000100950558 + p * w;
    p = 0.00134934322 + p * w;
    p = -0.00367342844 + p * w;
    p = 0.00573950773 + p * w;
    p = -0.0076224613 + p * w;
    p = 0.00943887047 + p * w;
    p = 1.00167406 + p * w;
    p = 2.83297682 + p * w;
  }
  double x = p * a;
  if (a <= 0.5) {
    for (int i = 0; i < 2; ++i) {
      double u = (std::erf(x) - a) / (1.1283791670955126 * std::exp(-x * x));  // f / f'
      x -= u / (1.0 + x * u);  // Halley: f''/f' = -2x
    }
  } else {
    // Newton on log(erfc(x)) = log(1 - a), nearly quadratic in x: it converges from the
    // rougher starting points of the far tail too.
    const double target = std::log1p(-a);
    for (int i = 0; i < 4; ++i) {
      double e = std::erfc(x);
      x -= (std::log(e) - target) / (-1.1283791670955126 * std::exp(-x * x) / e);
    }
  }
  return std::copysign(x, y);
}
struct Erfinv {
  template <class T>
  CL_HOST_DEVICE T operator()(T a) const {
#if defined(__CUDA_ARCH__)
    if constexpr (std::is_same_v<T, float>)
      return erfinvf(a);
    else
      return erfinv(a);
#else
    return T(erfinv_host(double(a)));
#endif
  }
};
#undef CL_FLOAT_UNARY

// ---- more math: gamma functions, Bessel, sinc (T is float or double) ----
template <class T>
CL_HOST_DEVICE T eps_of() {
  return std::is_same_v<T, float> ? T(1.1920928955078125e-07) : T(2.220446049250313e-16);
}
// psi(x): shifted up to x >= 10 by psi(x) = psi(x + 1) - 1 / x, then its asymptotic series;
// reflected for x < 0. As torch: psi(0) = -inf, psi(-0) = +inf, NaN at the negative integers.
template <class T>
CL_HOST_DEVICE T digamma_of(T x) {
  const T pi = T(3.14159265358979323846);
  if (x == T(0)) return std::copysign(T(INFINITY), -x);
  T shift = T(0);
  if (x < T(0)) {
    T fl = std::floor(x);
    if (x == fl) return T(NAN);
    // psi(x) = psi(1 - x) - pi / tan(pi x), tan's argument reduced by the nearest integer
    // (exactly) so that it keeps x's precision near the poles
    shift = -pi / std::tan(pi * (x - std::nearbyint(x)));
    x = T(1) - x;
  }
  while (x < T(10)) {
    shift -= T(1) / x;
    x += T(1);
  }
  if (x == T(INFINITY)) return x;
  T z = T(1) / (x * x);
  T series =
      z * (T(1) / 12 - z * (T(1) / 120 - z * (T(1) / 252 - z * (T(1) / 240 - z * (T(1) / 132)))));
  return shift + std::log(x) - T(0.5) / x - series;
}
// Hurwitz zeta(x, q) = sum_k (k + q)^-x: terms summed directly until q + k > 9, then the
// Euler-Maclaurin tail, whose coefficients are (2j)! / B_2j.
template <class T>
CL_HOST_DEVICE T zeta_of(T x, T q) {
  if (x == T(1)) return T(INFINITY);
  if (x < T(1) || x != x || q != q) return T(NAN);
  if (q <= T(0)) {
    if (q == std::floor(q)) return T(INFINITY);
    if (x != std::floor(x)) return T(NAN);
  }
  const T eps = eps_of<T>();
  T s = std::pow(q, -x), a = q, b = T(0);
  int i = 0;
  while (i < 9 || a <= T(9)) {
    ++i;
    a += T(1);
    b = std::pow(a, -x);
    s += b;
    if (std::fabs(b / s) < eps) return s;
  }
  const double kB[12] = {12.0,
                         -720.0,
                         30240.0,
                         -1209600.0,
                         47900160.0,
                         -1.8924375803183791606e9,
                         7.47242496e10,
                         -2.950130727918164224e12,
                         1.1646782814350067249e14,
                         -4.5979787224074726105e15,
                         1.8152105401943546773e17,
                         -7.1661652561756670113e18};
  T w = a;
  s += b * w / (x - T(1)) - T(0.5) * b;
  T fac = T(1), k = T(0);
  for (int j = 0; j < 12; ++j) {
    fac *= x + k;
    b /= w;
    T t = fac * b / T(kB[j]);
    s += t;
    if (std::fabs(t / s) < eps) break;
    k += T(1);
    fac *= x + k;
    b /= w;
    k += T(1);
  }
  return s;
}
// The modified Bessel function I_nu (nu 0 or 1): its power series up to |x| = 30, beyond that
// its asymptotic series e^x / sqrt(2 pi x) sum_k (-1)^k a_k(nu) / x^k. As torch, I(inf) is NaN
// and the result is inf where e^x overflows.
template <class T>
CL_HOST_DEVICE T bessel_i_of(T x, int nu) {
  T ax = std::fabs(x), r;
  if (x != x || ax == T(INFINITY)) return T(NAN);
  const T eps = eps_of<T>();
  if (ax <= T(30)) {
    T h = ax / 2, h2 = h * h, term = nu ? h : T(1), sum = term;
    for (int k = 1; k < 200; ++k) {
      term *= h2 / (T(k) * T(k + nu));
      sum += term;
      if (term <= sum * eps) break;
    }
    r = sum;
  } else {
    T mu = T(4 * nu * nu), term = T(1), sum = T(1), ex = T(8) * ax;
    for (int k = 1; k < 60; ++k) {
      T next = -term * (mu - T((2 * k - 1) * (2 * k - 1))) / (T(k) * ex);
      if (std::fabs(next) >= std::fabs(term)) break;
      term = next;
      sum += term;
      if (std::fabs(term) <= eps * std::fabs(sum)) break;
    }
    // e^x first, as torch's: inf where it overflows, though the result would not quite
    r = std::exp(ax) * (sum / std::sqrt(T(6.283185307179586) * ax));
  }
  return (nu == 1 && x < T(0)) ? -r : r;
}
// The regularized incomplete gamma functions P(a, x) (lower) and Q(a, x) = 1 - P (upper):
// below x = a + 1 P's power series, above it Q's continued fraction (modified Lentz), each
// times x^a e^-x / Gamma(a). Edges as torch: NaN for a or x negative, P(0, x > 0) = 1.
template <class T>
CL_HOST_DEVICE T igamma_of(T a, T x, bool upper) {
  if (a < T(0) || x < T(0) || a != a || x != x) return T(NAN);
  if (a == T(0)) return x > T(0) ? T(upper ? 0 : 1) : T(NAN);
  if (x == T(0)) return T(upper ? 1 : 0);
  if (std::isinf(a)) return std::isinf(x) ? T(NAN) : T(upper ? 1 : 0);
  if (std::isinf(x)) return T(upper ? 0 : 1);
  const T eps = eps_of<T>();
  const T tiny = std::is_same_v<T, float> ? T(1e-30) : T(1e-300);
  T prefactor = std::exp(a * std::log(x) - x - std::lgamma(a));
  if (x < a + T(1)) {
    T term = T(1) / a, sum = term, ap = a;
    for (int n = 0; n < 10000; ++n) {
      ap += T(1);
      term *= x / ap;
      sum += term;
      if (std::fabs(term) < std::fabs(sum) * eps) break;
    }
    T p = prefactor * sum;
    return upper ? T(1) - p : p;
  }
  T b = x + T(1) - a, c = T(1) / tiny, d = T(1) / b, h = d;
  for (int i = 1; i < 10000; ++i) {
    T an = -T(i) * (T(i) - a);
    b += T(2);
    d = an * d + b;
    if (std::fabs(d) < tiny) d = tiny;
    c = b + an / c;
    if (std::fabs(c) < tiny) c = tiny;
    d = T(1) / d;
    T step = d * c;
    h *= step;
    if (std::fabs(step - T(1)) < eps) break;
  }
  T q = prefactor * h;
  return upper ? q : T(1) - q;
}
struct Igamma {
  template <class T>
  CL_HOST_DEVICE T operator()(T a, T x) const {
    return igamma_of(a, x, false);
  }
};
struct Igammac {
  template <class T>
  CL_HOST_DEVICE T operator()(T a, T x) const {
    return igamma_of(a, x, true);
  }
};
// 0 (pi for negative x, NaN for NaN): the argument of a real number.
struct Angle {
  template <class T>
  CL_HOST_DEVICE T operator()(T a) const {
    return a != a ? a : (a < T(0) ? T(3.14159265358979323846) : T(0));
  }
};
// Shifts as torch's: a shift by a negative count or by the width or more gives 0 (left) or
// the sign (right).
struct LeftShift {
  template <class T>
  CL_HOST_DEVICE T operator()(T a, T b) const {
    if constexpr (std::is_same_v<T, bool>) {
      return a;  // no bool kernel: elementwise.cpp raises first
    } else {
      using U = std::make_unsigned_t<T>;
      if (uint64_t(b) >= sizeof(T) * 8) return T(0);  // negative counts too
      return T(U(a) << b);
    }
  }
};
struct RightShift {
  template <class T>
  CL_HOST_DEVICE T operator()(T a, T b) const {
    if constexpr (std::is_same_v<T, bool>) {
      return a;
    } else {
      bool out_of_range = uint64_t(b) >= sizeof(T) * 8;  // negative counts too
      if (out_of_range) {
        if constexpr (std::is_signed_v<T>) return a < 0 ? T(-1) : T(0);
        return T(0);
      }
      return T(a >> b);
    }
  }
};
struct Lgamma {
  template <class T>
  CL_HOST_DEVICE T operator()(T a) const {
    return std::lgamma(a);
  }
};
struct Digamma {
  template <class T>
  CL_HOST_DEVICE T operator()(T a) const {
    return digamma_of(a);
  }
};
struct I0 {
  template <class T>
  CL_HOST_DEVICE T operator()(T a) const {
    return bessel_i_of(a, 0);
  }
};
struct I1 {
  template <class T>
  CL_HOST_DEVICE T operator()(T a) const {
    return bessel_i_of(a, 1);
  }
};
// sin(pi x) / (pi x), 1 at 0.
struct Sinc {
  template <class T>
  CL_HOST_DEVICE T operator()(T a) const {
    if (a == T(0)) return T(1);
    T p = T(3.14159265358979323846) * a;
    return std::sin(p) / p;
  }
};
struct Zeta {
  template <class T>
  CL_HOST_DEVICE T operator()(T x, T q) const {
    return zeta_of(x, q);
  }
};
// log2(2^a + 2^b) without overflow; equal infinities give themselves (as torch).
struct Logaddexp2 {
  template <class T>
  CL_HOST_DEVICE T operator()(T a, T b) const {
    if (std::isinf(a) && a == b) return a;
    T m = a > b ? a : b;
    return m + std::log1p(std::exp2(-std::fabs(a - b))) / T(0.6931471805599453);
  }
};
// The step function: b where a is 0, else 0 or 1 by a's sign (NaN gives 0, as torch).
struct Heaviside {
  template <class T>
  CL_HOST_DEVICE T operator()(T a, T b) const {
    return a == T(0) ? b : T(a > T(0));
  }
};
struct Nextafter {  // only instantiated for floating T
  template <class T>
  CL_HOST_DEVICE T operator()(T a, T b) const {
    return std::nextafter(a, b);
  }
};
// Greatest common divisor (non-negative, except gcd(INT_MIN, 0) which wraps, as torch) and
// least common multiple.
template <class T>
CL_HOST_DEVICE T gcd_of(T a, T b) {
  if constexpr (std::is_signed_v<T>) {
    a = a < 0 ? T(-a) : a;
    b = b < 0 ? T(-b) : b;
  }
  while (b != 0) {
    T t = T(a % b);
    a = b;
    b = t;
  }
  return a;
}
struct Gcd {
  template <class T>
  CL_HOST_DEVICE T operator()(T a, T b) const {
    if constexpr (std::is_same_v<T, bool>)
      return a || b;
    else
      return gcd_of(a, b);
  }
};
struct Lcm {
  template <class T>
  CL_HOST_DEVICE T operator()(T a, T b) const {
    if constexpr (std::is_same_v<T, bool>) {
      return a && b;
    } else {
      T g = gcd_of(a, b);
      if (g == 0) return T(0);
      auto r = a / g * b;  // in int (or wider): an overflow wraps after abs, as torch's
      if constexpr (std::is_signed_v<decltype(r)>) r = r < 0 ? -r : r;
      return T(r);
    }
  }
};

struct IsNan {
  template <class T>
  CL_HOST_DEVICE bool operator()(T a) const {
    return a != a;
  }
};
// Predicates of floating values, constant for integers and bools.
#define CL_FP_PREDICATE(Name, fp_expr, int_value) \
  struct Name {                                   \
    template <class T>                            \
    CL_HOST_DEVICE bool operator()(T a) const {   \
      if constexpr (is_fp<T>)                     \
        return fp_expr;                           \
      else                                        \
        return int_value;                         \
    }                                             \
  };
CL_FP_PREDICATE(IsInf, std::isinf(a), false)
CL_FP_PREDICATE(IsFinite, std::isfinite(a), true)
CL_FP_PREDICATE(IsPosInf, std::isinf(a) && a > 0, false)
CL_FP_PREDICATE(IsNegInf, std::isinf(a) && a < 0, false)
#undef CL_FP_PREDICATE

// The sign bit as copysign reads it (-0.0 and -nan included): GCC 12 fails to compile
// std::signbit vectorised at -O3 (an internal compiler error).
struct Signbit {
  template <class T>
  CL_HOST_DEVICE bool operator()(T a) const {
    if constexpr (is_fp<T>)
      return std::copysign(T(1), a) < T(0);
    else if constexpr (std::is_signed_v<T>)
      return a < 0;
    else
      return false;
  }
};

// ---- ternary: the condition arrives converted to T ----
struct Where {
  template <class T>
  CL_HOST_DEVICE T operator()(T c, T a, T b) const {
    return c != T(0) ? a : b;
  }
};

// ---- fused multiply-add (optimizers) ----
// a * b + c rounded once: torch's CPU kernels of add(alpha=), addcmul and lerp compile to it
// (the compiler contracts them), as nvcc does on CUDA. float and double only.
struct Fma {
  template <class T>
  CL_HOST_DEVICE T operator()(T a, T b, T c) const {
    if constexpr (std::is_same_v<T, float>) {
      return ::fmaf(a, b, c);
    } else {
      return ::fma(a, b, c);
    }
  }
};

}  // namespace cl::fn
