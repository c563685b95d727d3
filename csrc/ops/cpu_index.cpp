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

}  // namespace cl::cpu
