// cpu_kernel: turns a scalar functor into a loop over an ElementwiseIter on the host.
// Inputs are loaded as `in_t`, converted to the arithmetic type (float for 16-bit floats),
// and the result is converted to `out_t` on store.
#pragma once

#include <utility>

#include "core/half.h"
#include "ops/elementwise_iter.h"

namespace cl {

namespace detail {

template <class out_t, class in_t, class F, size_t... I>
void cpu_kernel_loop(const ElementwiseIter& it, F f, std::index_sequence<I...>) {
  using T = opmath_t<in_t>;
  constexpr int N = sizeof...(I);
  in_t scalar_buf[N + 1];
  char* ptr[N + 1];
  ptr[0] = it.data[0];
  for (int k = 1; k <= N; ++k) {
    if (it.is_scalar[k]) {
      scalar_buf[k] = it.scalars[k].template to<in_t>();
      ptr[k] = reinterpret_cast<char*>(&scalar_buf[k]);
    } else {
      ptr[k] = it.data[k];
    }
  }
  if (it.numel == 0) return;

  if (it.contiguous()) {
    out_t* out = reinterpret_cast<out_t*>(ptr[0]);
    const in_t* in[N + 1] = {nullptr, reinterpret_cast<const in_t*>(ptr[1 + I])...};
    const int64_t step[N + 1] = {1, (it.is_scalar[1 + I] ? 0 : 1)...};
    bool any_scalar = ((step[1 + I] == 0) || ... || false);
    if (!any_scalar) {
      for (int64_t i = 0; i < it.numel; ++i) out[i] = convert<out_t>(f(T(in[1 + I][i])...));
    } else {
      for (int64_t i = 0; i < it.numel; ++i)
        out[i] = convert<out_t>(f(T(in[1 + I][i * step[1 + I]])...));
    }
    return;
  }

  // Strided: innermost dim in a tight loop, the others through a counter.
  int64_t counter[kMaxDims] = {};
  const int64_t inner = it.ndim > 0 ? it.shape[0] : 1;
  int64_t s[N + 1];
  for (int k = 0; k <= N; ++k) s[k] = it.ndim > 0 && !it.is_scalar[k] ? it.strides[k][0] : 0;
  int64_t outer = it.numel / inner;
  for (int64_t o = 0; o < outer; ++o) {
    char* p[N + 1];
    for (int k = 0; k <= N; ++k) {
      p[k] = ptr[k];
      if (k > 0 && it.is_scalar[k]) continue;
      for (int d = 1; d < it.ndim; ++d) p[k] += counter[d] * it.strides[k][d];
    }
    for (int64_t i = 0; i < inner; ++i) {
      *reinterpret_cast<out_t*>(p[0] + i * s[0]) =
          convert<out_t>(f(T(*reinterpret_cast<const in_t*>(p[1 + I] + i * s[1 + I]))...));
    }
    for (int d = 1; d < it.ndim; ++d) {
      if (++counter[d] < it.shape[d]) break;
      counter[d] = 0;
    }
  }
}

// Numbers marked in it.scalar_opmath reach f at the compute precision: f sees them in
// place of the (rounded) value the loop loads.
template <class out_t, class in_t, class F, size_t... I>
void cpu_kernel_impl(const ElementwiseIter& it, F f, std::index_sequence<I...> seq) {
  using T = opmath_t<in_t>;
  if constexpr (!std::is_same_v<T, in_t>) {
    if (it.scalar_opmath) {
      bool use[sizeof...(I) + 1] = {};
      T val[sizeof...(I) + 1] = {};
      for (size_t k = 1; k <= sizeof...(I); ++k) {
        use[k] = it.is_scalar[k] && (it.scalar_opmath >> k & 1u);
        if (use[k]) val[k] = it.scalars[k].template to<T>();
      }
      auto g = [&](auto... x) { return f((use[1 + I] ? val[1 + I] : x)...); };
      cpu_kernel_loop<out_t, in_t>(it, g, seq);
      return;
    }
  }
  cpu_kernel_loop<out_t, in_t>(it, f, seq);
}

}  // namespace detail

// `out_t`: the output element type; `in_t`: the input element type; `N`: the arity of f.
template <class out_t, class in_t, int N, class F>
void cpu_kernel(const ElementwiseIter& it, F f) {
  detail::cpu_kernel_impl<out_t, in_t>(it, f, std::make_index_sequence<N>{});
}

// The launcher that plugs cpu_kernel into the op table (ops/op_table.h).
struct CpuLaunch {
  template <class out_t, class in_t, int N, class F>
  void run(const ElementwiseIter& it, F f) const {
    cpu_kernel<out_t, in_t, N>(it, f);
  }
};

}  // namespace cl
