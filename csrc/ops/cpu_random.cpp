// torch's CPU random transforms (ops/cpu_random.h).
#include "ops/cpu_random.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <type_traits>
#include <vector>

#include "core/dtype.h"
#include "core/error.h"
#include "core/half.h"
#include "core/parallel.h"
#include "ops/cpu_box_muller.h"

namespace cl::cpu_random {

namespace {

constexpr double kPi = 3.14159265358979323846;

// Whether torch runs its AVX2 kernels here (x86 with AVX2 and FMA; its AVX512 build takes the
// same ones for normal_): their compiler fuses a multiply into the add that uses it, so the
// transforms below fuse the same multiply-adds.
bool fused_kernels() {
#if defined(__x86_64__) || defined(__i386__)
  static const bool avx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  return avx2;
#else
  return false;
#endif
}

template <class T>
constexpr int digits() {
  if constexpr (std::is_same_v<T, double>) return 53;
  if constexpr (std::is_same_v<T, float>) return 24;
  if constexpr (std::is_same_v<T, Half>) return 11;
  return 8;  // BFloat16
}

// torch's uniform_real_distribution<T>(0, 1) before scaling: the low digits() bits of a
// 64-bit draw (double) or a 32-bit draw (others), times 2^-digits().
inline double uniform_double(Generator& g) {
  return double(g.random64() & ((uint64_t(1) << 53) - 1)) * (1.0 / double(uint64_t(1) << 53));
}

// Rounds through T: c10's float16 and bfloat16 arithmetic rounds every result.
template <class T>
inline float round_to(float v) {
  return float(T(v));
}

template <class T>
T* data_of(const Tensor& t) {
  return reinterpret_cast<T*>(t->data());
}

// torch's normal_distribution<double>: the cached second value first, else a new pair.
inline double scale(double v, double std, double mean) {
  return fused_kernels() ? std::fma(v, std, mean) : v * std + mean;
}

inline double normal_double(Generator& g, double mean, double std) {
  if (g.next_double_normal) {
    double v = *g.next_double_normal;
    g.next_double_normal.reset();
    return scale(v, std, mean);
  }
  const double u1 = uniform_double(g);
  const double u2 = uniform_double(g);
  const double r = std::sqrt(-2.0 * std::log1p(-u2));
  const double theta = 2.0 * kPi * u1;
  g.next_double_normal = r * std::sin(theta);
  return scale(r * std::cos(theta), std, mean);
}

// Note [Drawing words a chunk at a time]
// The fills draw the generator's words into a buffer on the stack a chunk at a time
// (MT19937::fill tempers a whole run of the state in one vectorised loop) and then convert
// the chunk, instead of calling the generator once per element: the same words in the same
// order, so the same values, at a fraction of the cost. The conversions with a multiply-add
// are compiled twice: plain, and for AVX2 with the multiply-add fused, as torch's AVX2
// kernels compute it (fused_kernels()), where it is one instruction instead of a call to fma.
constexpr int64_t kWordChunk = 2048;

#define CL_ALWAYS_INLINE inline __attribute__((always_inline))

template <bool Fused>
CL_ALWAYS_INLINE float madd_as(float a, float b, float c) {
  if constexpr (Fused) {
    return std::fmaf(a, b, c);
  } else {
    return a * b + c;
  }
}
template <bool Fused>
CL_ALWAYS_INLINE double madd_as(double a, double b, double c) {
  if constexpr (Fused) {
    return std::fma(a, b, c);
  } else {
    return a * b + c;
  }
}

// torch's uniform_real_distribution<T> before scaling, from one word (float, float16,
// bfloat16: the low digits() bits, in float) or two (double: the low 53 bits of hi:lo).
template <class T>
CL_ALWAYS_INLINE float word_to_unit(uint32_t w) {
  constexpr uint32_t mask = (uint32_t(1) << digits<T>()) - 1;
  return float(w & mask) * (1.0f / float(uint32_t(1) << digits<T>()));
}
CL_ALWAYS_INLINE double words_to_unit(uint32_t hi, uint32_t lo) {
  const uint64_t x = ((uint64_t(hi) << 32) | lo) & ((uint64_t(1) << 53) - 1);
  return double(x) * (1.0 / double(uint64_t(1) << 53));
}

// uniform_(from, to) of k elements from k words (2k for double).
template <bool Fused, class T>
CL_ALWAYS_INLINE void uniform_words(T* d, const uint32_t* w, int64_t k, double width, double from) {
  if constexpr (std::is_same_v<T, double>) {
    for (int64_t j = 0; j < k; ++j)
      d[j] = madd_as<Fused>(words_to_unit(w[2 * j], w[2 * j + 1]), width, from);
  } else {
    const float wf = float(width), ff = float(from);
    for (int64_t j = 0; j < k; ++j) d[j] = T(madd_as<Fused>(word_to_unit<T>(w[j]), wf, ff));
  }
}

template <class T>
void uniform_words_plain(T* d, const uint32_t* w, int64_t k, double width, double from) {
  uniform_words<false>(d, w, k, width, from);
}
#if defined(CL_TORCH_AVX2_BOX_MULLER)
template <class T>
CL_TARGET_AVX2 void uniform_words_fused(T* d, const uint32_t* w, int64_t k, double width,
                                        double from) {
  uniform_words<true>(d, w, k, width, from);
}
#else
template <class T>
void uniform_words_fused(T* d, const uint32_t* w, int64_t k, double width, double from) {
  uniform_words<true>(d, w, k, width, from);
}
#endif

template <class T>
constexpr int64_t words_per_element() {
  return std::is_same_v<T, double> ? 2 : 1;
}

// convert(d + i, words, k) over the n elements of d, k <= a chunk's elements at a time,
// with `Words` words per element.
template <int64_t Words, class T, class Convert>
void draw_chunks_of(T* d, int64_t n, Generator& g, Convert convert) {
  constexpr int64_t per = kWordChunk / Words;
  uint32_t words[kWordChunk];
  for (int64_t i = 0; i < n; i += per) {
    const int64_t k = std::min(per, n - i);
    g.random_words(words, k * Words);
    convert(d + i, words, k);
  }
}

// The same, with the words torch's uniform of T takes per element.
template <class T, class Convert>
void draw_chunks(T* d, int64_t n, Generator& g, Convert convert) {
  draw_chunks_of<words_per_element<T>()>(d, n, g, convert);
}

// The 64-bit draw of two successive words (random64()).
CL_ALWAYS_INLINE uint64_t word_pair(const uint32_t* w) { return (uint64_t(w[0]) << 32) | w[1]; }

// uniform_(from, to) of n elements; width = to - from, from as the dtype's kernel has them.
template <class T>
void uniform_fill(T* d, int64_t n, double width, double from, Generator& g) {
  if (fused_kernels()) {
    draw_chunks(d, n, g, [&](T* o, const uint32_t* w, int64_t k) {
      uniform_words_fused<T>(o, w, k, width, from);
    });
  } else {
    draw_chunks(d, n, g, [&](T* o, const uint32_t* w, int64_t k) {
      uniform_words_plain<T>(o, w, k, width, from);
    });
  }
}

// uniform_(0, 1) as normal_fill draws it (no scaling: x * 1 + 0 is x).
template <class T>
void fill_uniforms01(T* d, int64_t n, Generator& g) {
  draw_chunks(d, n, g, [](T* o, const uint32_t* w, int64_t k) {
    if constexpr (std::is_same_v<T, double>) {
      for (int64_t j = 0; j < k; ++j) o[j] = words_to_unit(w[2 * j], w[2 * j + 1]);
    } else {
      for (int64_t j = 0; j < k; ++j) o[j] = T(word_to_unit<T>(w[j]));
    }
  });
}

// The double block with torch's fused multiply-adds, compiled for AVX2 so that they are
// instructions rather than calls to fma (the log, cos and sin stay the C library's).
#if defined(CL_TORCH_AVX2_BOX_MULLER)
CL_TARGET_AVX2 void block16_double_fused(double* d, double mean, double std) {
  box_muller::fill16_portable<double, double>(d, mean, std, true);
}
#endif

template <class T>
void block16(T* d, T mean, T std) {
  if constexpr (std::is_same_v<T, float>) {
#if defined(CL_TORCH_AVX2_BOX_MULLER)
    if (fused_kernels()) {
      box_muller::fill16_avx_float(d, mean, std);
      return;
    }
#endif
    box_muller::fill16_portable<float, float>(d, mean, std, false);
  } else if constexpr (std::is_same_v<T, double>) {
#if defined(CL_TORCH_AVX2_BOX_MULLER)
    if (fused_kernels()) {
      block16_double_fused(d, mean, std);
      return;
    }
#endif
    box_muller::fill16_portable<double, double>(d, mean, std, false);
  } else {
    box_muller::fill16_reduced<T>(d, mean, std);
  }
}

// The Box-Muller blocks of d[begin, end), both multiples of 16, spread over the host threads
// (torch.set_num_threads) when there are enough of them: each block depends on its own 16
// uniforms only, so the values are the same however the blocks are shared out.
template <class T>
void blocks16(T* d, int64_t begin, int64_t end, T mean, T std) {
  constexpr int64_t kTask = 1 << 14;  // elements of one task
  const int64_t n = end - begin;
  const int threads = host_threads();
  if (threads > 1 && n >= 2 * kTask) {
    const int tasks = int((n + kTask - 1) / kTask);
    parallel_run(tasks, [&](int t) {
      const int64_t b = begin + int64_t(t) * kTask, e = std::min(end, b + kTask);
      for (int64_t i = b; i < e; i += 16) block16(d + i, mean, std);
    });
    return;
  }
  for (int64_t i = begin; i < end; i += 16) block16(d + i, mean, std);
}

// torch's normal_fill: uniforms for every element, Box-Muller per block of 16, and when the
// size is not a multiple of 16, 16 fresh uniforms for the last 16 elements, transformed again.
// One thread draws and transforms a chunk at a time while it is in cache; several draw
// everything (the draws are serial, as torch's) and then share the blocks out.
template <class T>
void normal_fill(T* d, int64_t n, T mean, T std, Generator& g) {
  constexpr int64_t kChunk = 4096;  // a multiple of 16
  const int64_t full = n / 16 * 16;
  if (host_threads() > 1 && n >= 4 * kChunk) {
    fill_uniforms01(d, n, g);
    blocks16(d, 0, full, mean, std);
  } else {
    for (int64_t i = 0; i < n; i += kChunk) {
      const int64_t k = std::min(kChunk, n - i);
      fill_uniforms01(d + i, k, g);
      for (int64_t b = i; b + 16 <= std::min(i + k, full); b += 16) block16(d + b, mean, std);
    }
  }
  if (n % 16 != 0) {
    T* tail = d + n - 16;
    fill_uniforms01(tail, 16, g);
    block16(tail, mean, std);
  }
}

template <class T>
T from_int64(int64_t v) {
  if constexpr (std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>) {
    return T(float(v));
  } else if constexpr (std::is_same_v<T, bool>) {
    return v != 0;
  } else {
    return T(v);
  }
}

}  // namespace

void uniform(const Tensor& t, double from_, double to_, Generator& g) {
  const int64_t n = t->numel();
  switch (t->dtype) {
    case ScalarType::Float64:
      return uniform_fill(data_of<double>(t), n, to_ - from_, from_, g);
    case ScalarType::Float32: {
      const float from = float(from_), to = float(to_);
      return uniform_fill(data_of<float>(t), n, double(to - from), double(from), g);
    }
    case ScalarType::Float16: {
      const float from = float(Half(float(from_)));
      const float width = round_to<Half>(float(Half(float(to_))) - from);
      return uniform_fill(data_of<Half>(t), n, double(width), double(from), g);
    }
    case ScalarType::BFloat16: {
      const float from = float(BFloat16(float(from_)));
      const float width = round_to<BFloat16>(float(BFloat16(float(to_))) - from);
      return uniform_fill(data_of<BFloat16>(t), n, double(width), double(from), g);
    }
    default:
      CL_CHECK(false, "uniform_: unsupported dtype");
  }
}

template <class T>
static void normal_typed(const Tensor& t, double mean, double std, bool fill_path, Generator& g) {
  const int64_t n = t->numel();
  T* d = data_of<T>(t);
  if (fill_path && n >= 16) {
    if constexpr (std::is_same_v<T, double>) {
      normal_fill<double>(d, n, mean, std, g);
    } else {
      normal_fill<T>(d, n, T(float(mean)), T(float(std)), g);
    }
  } else {
    for (int64_t i = 0; i < n; ++i) {
      const double v = normal_double(g, mean, std);
      if constexpr (std::is_same_v<T, double> || std::is_same_v<T, float>) {
        d[i] = T(v);
      } else {
        d[i] = T(float(v));
      }
    }
  }
}

void normal(const Tensor& t, double mean, double std, bool fill_path, Generator& g) {
  switch (t->dtype) {
    case ScalarType::Float64:
      return normal_typed<double>(t, mean, std, fill_path, g);
    case ScalarType::Float32:
      return normal_typed<float>(t, mean, std, fill_path, g);
    case ScalarType::Float16:
      return normal_typed<Half>(t, mean, std, fill_path, g);
    case ScalarType::BFloat16:
      return normal_typed<BFloat16>(t, mean, std, fill_path, g);
    default:
      CL_CHECK(false, "normal_: unsupported dtype");
  }
}

void random_from_to(const Tensor& t, uint64_t range, int64_t base, Generator& g,
                    bool default_range) {
  const int64_t n = t->numel();
  CL_DISPATCH_ALL_TYPES(t->dtype, "random", [&] {
    scalar_t* d = data_of<scalar_t>(t);
    const bool wide = default_range
                          ? std::is_same_v<scalar_t, int64_t> || std::is_same_v<scalar_t, double>
                          : range >= (uint64_t(1) << 28);
    if (range == 0) {  // [INT64_MIN, INT64_MAX]
      draw_chunks_of<2>(d, n, g, [](scalar_t* o, const uint32_t* w, int64_t k) {
        for (int64_t j = 0; j < k; ++j) o[j] = from_int64<scalar_t>(int64_t(word_pair(w + 2 * j)));
      });
    } else if (wide) {
      draw_chunks_of<2>(d, n, g, [&](scalar_t* o, const uint32_t* w, int64_t k) {
        for (int64_t j = 0; j < k; ++j)
          o[j] = from_int64<scalar_t>(int64_t(word_pair(w + 2 * j) % range + uint64_t(base)));
      });
    } else if (range <= UINT32_MAX) {  // a 32-bit modulo: the same remainder, cheaper
      const uint32_t r32 = uint32_t(range);
      draw_chunks_of<1>(d, n, g, [&](scalar_t* o, const uint32_t* w, int64_t k) {
        for (int64_t j = 0; j < k; ++j)
          o[j] = from_int64<scalar_t>(int64_t(uint64_t(w[j] % r32) + uint64_t(base)));
      });
    } else {
      draw_chunks_of<1>(d, n, g, [&](scalar_t* o, const uint32_t* w, int64_t k) {
        for (int64_t j = 0; j < k; ++j)
          o[j] = from_int64<scalar_t>(int64_t(uint64_t(w[j]) % range + uint64_t(base)));
      });
    }
  });
}

void bernoulli_scalar(const Tensor& t, double p, Generator& g) {
  const int64_t n = t->numel();
  CL_DISPATCH_ALL_TYPES(t->dtype, "bernoulli", [&] {
    draw_chunks_of<2>(data_of<scalar_t>(t), n, g, [&](scalar_t* o, const uint32_t* w, int64_t k) {
      for (int64_t j = 0; j < k; ++j)
        o[j] = from_int64<scalar_t>(words_to_unit(w[2 * j], w[2 * j + 1]) < p ? 1 : 0);
    });
  });
}

void bernoulli_tensor(const Tensor& t, const Tensor& p, Generator& g) {
  const int64_t n = t->numel();
  CL_DISPATCH_ALL_TYPES(t->dtype, "bernoulli", [&] {
    scalar_t* d = data_of<scalar_t>(t);
    if (p->dtype == ScalarType::Float64) {
      const double* pp = data_of<double>(p);
      draw_chunks_of<2>(d, n, g, [&](scalar_t* o, const uint32_t* w, int64_t k) {
        const double* q = pp + (o - d);
        for (int64_t j = 0; j < k; ++j)
          o[j] = from_int64<scalar_t>(words_to_unit(w[2 * j], w[2 * j + 1]) < q[j] ? 1 : 0);
      });
    } else {
      const float* pp = data_of<float>(p);
      draw_chunks_of<1>(d, n, g, [&](scalar_t* o, const uint32_t* w, int64_t k) {
        const float* q = pp + (o - d);
        for (int64_t j = 0; j < k; ++j)
          o[j] = from_int64<scalar_t>(word_to_unit<float>(w[j]) < q[j] ? 1 : 0);
      });
    }
  });
}

template <class T>
static void exponential_typed(const Tensor& t, double lambda, Generator& g) {
  draw_chunks_of<2>(data_of<T>(t), t->numel(), g, [&](T* o, const uint32_t* w, int64_t k) {
    for (int64_t j = 0; j < k; ++j) {
      const double u = words_to_unit(w[2 * j], w[2 * j + 1]);
      const double v = -1.0 / lambda * std::log1p(-u);
      if constexpr (std::is_same_v<T, double> || std::is_same_v<T, float>) {
        o[j] = T(v);
      } else {
        o[j] = T(float(v));
      }
    }
  });
}

void exponential(const Tensor& t, double lambda, Generator& g) {
  switch (t->dtype) {
    case ScalarType::Float64:
      return exponential_typed<double>(t, lambda, g);
    case ScalarType::Float32:
      return exponential_typed<float>(t, lambda, g);
    case ScalarType::Float16:
      return exponential_typed<Half>(t, lambda, g);
    case ScalarType::BFloat16:
      return exponential_typed<BFloat16>(t, lambda, g);
    default:
      CL_CHECK(false, "exponential_: unsupported dtype");
  }
}

void randperm(const Tensor& t, int64_t n, Generator& g) {
  int64_t* d = data_of<int64_t>(t);
  if (n < int64_t(0xffffffffu / 20)) {
    // Swap each position with a later one (torch's algorithm for "small" n).
    for (int64_t i = 0; i < n; ++i) d[i] = i;
    for (int64_t i = 0; i < n - 1; ++i) {
      const int64_t z = int64_t(g.random() % uint64_t(n - i));
      std::swap(d[i], d[z + i]);
    }
    return;
  }
  // The inside-out Fisher-Yates with 64-bit draws.
  for (int64_t i = 0; i < n; ++i) {
    const int64_t z = int64_t(g.random64() % uint64_t(i + 1));
    d[i] = d[z];
    d[z] = i;
  }
}

template <class Acc, class T, class Uniform>
static void multinomial_rows(const T* probs, int64_t rows, int64_t cats, int64_t samples,
                             int64_t* out, Uniform next_uniform) {
  std::vector<Acc> cum(static_cast<size_t>(cats));
  for (int64_t r = 0; r < rows; ++r) {
    const T* p = probs + r * cats;
    Acc sum = 0;
    for (int64_t j = 0; j < cats; ++j) {
      const Acc v = Acc(p[j]);
      CL_CHECK(v >= 0, "invalid multinomial distribution (encountering probability entry < 0)");
      CL_CHECK(std::isfinite(v),
               "invalid multinomial distribution (encountering probability entry = infinity "
               "or NaN)");
      sum += v;
      cum[size_t(j)] = sum;
    }
    CL_CHECK(sum > 0, "invalid multinomial distribution (sum of probabilities <= 0)");
    for (int64_t j = 0; j < cats; ++j) cum[size_t(j)] /= sum;
    cum[size_t(cats - 1)] = 1;
    for (int64_t s = 0; s < samples; ++s) {
      const double u = next_uniform();
      int64_t lo = 0, hi = cats;  // the first slot whose cumulative probability is >= u
      while (hi - lo > 0) {
        const int64_t mid = lo + (hi - lo) / 2;
        if (cum[size_t(mid)] < u) {
          lo = mid + 1;
        } else {
          hi = mid;
        }
      }
      out[r * samples + s] = lo;
    }
  }
}

template <class Uniform>
static void multinomial_dispatch(const Tensor& probs, int64_t samples, int64_t* o,
                                 Uniform next_uniform) {
  const int64_t cats = probs->sizes[probs->dim() - 1];
  const int64_t rows = probs->dim() > 1 ? probs->sizes[0] : 1;
  switch (probs->dtype) {
    case ScalarType::Float64:
      multinomial_rows<double>(data_of<double>(probs), rows, cats, samples, o, next_uniform);
      break;
    case ScalarType::Float32:
      multinomial_rows<float>(data_of<float>(probs), rows, cats, samples, o, next_uniform);
      break;
    case ScalarType::Float16:
      multinomial_rows<float>(data_of<Half>(probs), rows, cats, samples, o, next_uniform);
      break;
    case ScalarType::BFloat16:
      multinomial_rows<float>(data_of<BFloat16>(probs), rows, cats, samples, o, next_uniform);
      break;
    default:
      CL_CHECK(false, "multinomial only supports floating-point dtypes for input, got: ",
               dtype_short_name(probs->dtype));
  }
}

void multinomial_with_replacement(const Tensor& probs, int64_t samples, const Tensor& out,
                                  Generator& g) {
  multinomial_dispatch(probs, samples, data_of<int64_t>(out), [&g] { return uniform_double(g); });
}

void multinomial_check(const Tensor& probs) {
  multinomial_dispatch(probs, 0, nullptr, [] { return 0.0; });
}

}  // namespace cl::cpu_random
