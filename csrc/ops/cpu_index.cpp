#include <cstring>

#include "core/error.h"
#include "ops/kernels.h"

namespace cl::cpu {

namespace {
template <class T>
void gather(const char* base, const int64_t* off, T* out, int64_t n) {
  const T* b = reinterpret_cast<const T*>(base);
  for (int64_t i = 0; i < n; ++i) out[i] = b[off[i]];
}
}  // namespace

void gather_offsets(const Tensor& src, const Tensor& offsets, const Tensor& out) {
  const char* base = static_cast<const char*>(src->storage->data.get());
  const int64_t* off = reinterpret_cast<const int64_t*>(offsets->data());
  int64_t n = offsets->numel();
  switch (src->element_size()) {
    case 1:
      gather(base, off, reinterpret_cast<uint8_t*>(out->data()), n);
      break;
    case 2:
      gather(base, off, reinterpret_cast<uint16_t*>(out->data()), n);
      break;
    case 4:
      gather(base, off, reinterpret_cast<uint32_t*>(out->data()), n);
      break;
    default:
      gather(base, off, reinterpret_cast<uint64_t*>(out->data()), n);
      break;
  }
}

void scatter_offsets(const Tensor& dst, const Tensor& offsets, const Tensor& values, int mode) {
  char* base = static_cast<char*>(dst->storage->data.get());
  const int64_t* off = reinterpret_cast<const int64_t*>(offsets->data());
  int64_t n = offsets->numel();
  CL_DISPATCH_ALL_TYPES(dst->dtype, "index_put_", [&] {
    auto* b = reinterpret_cast<scalar_t*>(base);
    auto* v = reinterpret_cast<const scalar_t*>(values->data());
    using A = opmath_t<scalar_t>;
    if (mode == 0) {
      for (int64_t i = 0; i < n; ++i) b[off[i]] = v[i];
    } else if (mode == 1) {
      for (int64_t i = 0; i < n; ++i) {
        if constexpr (std::is_same_v<scalar_t, bool>) {
          b[off[i]] = b[off[i]] || v[i];
        } else {
          b[off[i]] = scalar_t(A(b[off[i]]) + A(v[i]));
        }
      }
    } else {
      for (int64_t i = 0; i < n; ++i) {
        if constexpr (std::is_same_v<scalar_t, bool>) {
          b[off[i]] = b[off[i]] && v[i];
        } else {
          b[off[i]] = scalar_t(A(b[off[i]]) * A(v[i]));
        }
      }
    }
  });
}

namespace {

// Calls f(self offset, index offset, out/src offset) for every position in order: the
// DimIndexer's offsets at the start of each innermost row, then steps along it.
template <class F>
void walk(const DimIndexer& g, F f) {
  const int last = g.nd - 1;
  const int64_t inner = g.sizes[last];
  const int64_t s0 = g.strides[0][last], s1 = g.strides[1][last], s2 = g.strides[2][last];
  int64_t off[3];
  for (int64_t row = 0; row < g.numel; row += inner) {
    g.offsets(row, off);
    for (int64_t k = 0; k < inner; ++k) f(off[0] + k * s0, off[1] + k * s1, off[2] + k * s2);
  }
}

template <class T, class I>
void gather_dim_loop(const DimIndexer& g, const char* self, const char* idx, char* out) {
  const T* s = reinterpret_cast<const T*>(self);
  const I* ix = reinterpret_cast<const I*>(idx);
  T* o = reinterpret_cast<T*>(out);
  const int64_t ds = g.dim_stride;
  walk(g, [&](int64_t a, int64_t b, int64_t c) { o[c] = s[a + int64_t(ix[b]) * ds]; });
}

template <class I>
void gather_dim_bytes(const DimIndexer& g, size_t size, const char* self, const char* idx,
                      char* out) {
  switch (size) {
    case 1:
      return gather_dim_loop<uint8_t, I>(g, self, idx, out);
    case 2:
      return gather_dim_loop<uint16_t, I>(g, self, idx, out);
    case 4:
      return gather_dim_loop<uint32_t, I>(g, self, idx, out);
    default:
      return gather_dim_loop<uint64_t, I>(g, self, idx, out);
  }
}

template <class T, class I>
void scatter_dim_loop(const DimIndexer& g, T* s, const I* ix, const T* v, int mode) {
  using A = opmath_t<T>;
  const int64_t ds = g.dim_stride;
  walk(g, [&](int64_t a, int64_t b, int64_t c) {
    T& dst = s[a + int64_t(ix[b]) * ds];
    const T x = v[c];
    if (mode == 0) {
      dst = x;
    } else if constexpr (std::is_same_v<T, bool>) {
      dst = mode == 1 || mode == 3 ? (dst || x) : (dst && x);  // sum, amax: or; prod, amin: and
    } else if (mode <= 2) {
      dst = mode == 1 ? T(A(dst) + A(x)) : T(A(dst) * A(x));
    } else {  // 3: max, 4: min; NaN wins (torch's amax / amin)
      const A a = A(dst), b = A(x);
      if (a == a && (b != b || (mode == 3 ? b > a : b < a))) dst = x;
    }
  });
}

}  // namespace

void gather_dim(const DimIndexer& g, const Tensor& self, const Tensor& index, const Tensor& out) {
  const char* base = static_cast<const char*>(self->storage->data.get());
  if (index->dtype == ScalarType::Int64) {
    gather_dim_bytes<int64_t>(g, self->element_size(), base, index->data(), out->data());
  } else {
    gather_dim_bytes<int32_t>(g, self->element_size(), base, index->data(), out->data());
  }
}

void scatter_dim(const DimIndexer& g, const Tensor& self, const Tensor& index, const Tensor& src,
                 int mode) {
  CL_DISPATCH_ALL_TYPES(self->dtype, "scatter", [&] {
    auto* s = reinterpret_cast<scalar_t*>(self->storage->data.get());
    const auto* v = reinterpret_cast<const scalar_t*>(src->data());
    if (index->dtype == ScalarType::Int64) {
      scatter_dim_loop(g, s, reinterpret_cast<const int64_t*>(index->data()), v, mode);
    } else {
      scatter_dim_loop(g, s, reinterpret_cast<const int32_t*>(index->data()), v, mode);
    }
  });
}

}  // namespace cl::cpu
