// im2col and col2im on the host, the data movement of a convolution on the CPU
// (python/cudalite/nn/_im2col.py; the products go to BLAS), spread over the host threads.
//
// im2col: for a padded input xp (N, C, *sp) of any strides, kernel k, stride s and dilation
// d, the columns (g, N * L, C/g * K) of each group: row (n, l) holds the window at output
// position l, channel-major, kernel positions in row-major order. Every element is read
// once and written once (a copy: any dtype, by element size).
// col2im: the adjoint, for float32 and float64: src (*lead, *out, *k) of any strides is added
// into a new zero tensor (*lead, *padded), each window where im2col read it. Each lead index
// owns its own plane of the result, so the planes are spread over the threads without
// atomics; within a plane windows are added in order (deterministic).
#include "ops/im2col.h"

#include <cstring>
#include <vector>

#include "core/error.h"
#include "core/parallel.h"
#include "core/tensor.h"
#include "ops/ops.h"

namespace cl {

namespace {

// Offsets (in elements) of the kernel positions of a window, row-major over k.
std::vector<int64_t> kernel_offsets(const Shape& k, const Shape& d, const int64_t* sp_strides) {
  std::vector<int64_t> offs{0};
  for (size_t i = 0; i < k.size(); ++i) {
    std::vector<int64_t> next;
    for (int64_t base : offs) {
      for (int64_t j = 0; j < k[i]; ++j) next.push_back(base + j * d[i] * sp_strides[i]);
    }
    offs.swap(next);
  }
  return offs;
}

// Offsets of the window origins of the output positions, row-major over out.
std::vector<int64_t> origin_offsets(const Shape& out, const Shape& s, const int64_t* sp_strides) {
  std::vector<int64_t> offs{0};
  for (size_t i = 0; i < out.size(); ++i) {
    std::vector<int64_t> next;
    for (int64_t base : offs) {
      for (int64_t j = 0; j < out[i]; ++j) next.push_back(base + j * s[i] * sp_strides[i]);
    }
    offs.swap(next);
  }
  return offs;
}

template <class E>
void gather_rows(const E* x, E* cols, int64_t n, int64_t groups, int64_t cg, int64_t sn, int64_t sc,
                 const std::vector<int64_t>& origins, const std::vector<int64_t>& koffs) {
  int64_t nl = int64_t(origins.size()), kk = int64_t(koffs.size());
  int64_t row_len = cg * kk;
  int64_t rows = groups * n * nl;
  int chunks = int(std::min<int64_t>(rows, int64_t(host_threads()) * 4));
  parallel_run(chunks, [&](int c) {
    int64_t lo = rows * c / chunks, hi = rows * (c + 1) / chunks;
    for (int64_t r = lo; r < hi; ++r) {
      int64_t g = r / (n * nl), rem = r % (n * nl);
      int64_t b = rem / nl, l = rem % nl;
      const E* base = x + b * sn + g * cg * sc + origins[size_t(l)];
      E* dst = cols + r * row_len;
      for (int64_t ch = 0; ch < cg; ++ch) {
        const E* src = base + ch * sc;
        for (int64_t j = 0; j < kk; ++j) *dst++ = src[koffs[size_t(j)]];
      }
    }
  });
}

template <class T>
void scatter_planes(const Tensor& src, const Tensor& res, int64_t nlead, const Shape& out,
                    const Shape& s, const Shape& d) {
  size_t nd = out.size();
  Shape lead(src->sizes.begin(), src->sizes.begin() + nlead);
  Shape k(src->sizes.begin() + nlead + int64_t(nd), src->sizes.end());
  int64_t planes = shape_numel(lead);
  int64_t plane_size = shape_numel(Shape(res->sizes.begin() + nlead, res->sizes.end()));
  // the result's spatial strides (contiguous)
  std::vector<int64_t> rs(nd, 1);
  for (size_t i = nd - 1; i-- > 0;) rs[i] = rs[i + 1] * res->sizes[nlead + int64_t(i) + 1];
  std::vector<int64_t> r_origins = origin_offsets(out, s, rs.data());
  std::vector<int64_t> r_koffs = kernel_offsets(k, d, rs.data());
  // the source's offsets for (out position, kernel position), from its own strides
  const int64_t* ss = src->strides.data();
  Shape one(nd, 1);
  std::vector<int64_t> s_origins = origin_offsets(out, one, ss + nlead);
  std::vector<int64_t> s_koffs = kernel_offsets(k, one, ss + nlead + nd);
  const T* sp = reinterpret_cast<const T*>(src->data());
  T* rp = reinterpret_cast<T*>(res->data());
  int chunks = int(std::min<int64_t>(planes, int64_t(host_threads()) * 4));
  parallel_run(chunks, [&](int c) {
    int64_t lo = planes * c / chunks, hi = planes * (c + 1) / chunks;
    for (int64_t p = lo; p < hi; ++p) {
      int64_t soff = 0, rem = p;  // unravel p over the lead dims with src's strides
      for (int64_t i = nlead; i-- > 0;) {
        soff += (rem % lead[i]) * ss[i];
        rem /= lead[i];
      }
      const T* sbase = sp + soff;
      T* rbase = rp + p * plane_size;
      for (size_t l = 0; l < r_origins.size(); ++l) {
        const T* sw = sbase + s_origins[l];
        T* rw = rbase + r_origins[l];
        for (size_t j = 0; j < r_koffs.size(); ++j) rw[r_koffs[j]] += sw[s_koffs[j]];
      }
    }
  });
}

void check_window(const Shape& k, const Shape& s, const Shape& d, const Shape& out, size_t nd) {
  CL_CHECK(k.size() == nd && s.size() == nd && d.size() == nd && out.size() == nd,
           "im2col: expected one kernel size, stride, dilation and output size per spatial dim");
}

}  // namespace

Tensor cpu_im2col(const Tensor& xp, int64_t groups, const Shape& k, const Shape& s, const Shape& d,
                  const Shape& out) {
  CL_CHECK(!xp->is_cuda(), "im2col: expected a CPU tensor");
  CL_CHECK(xp->dim() >= 3, "im2col: expected an (N, C, *spatial) input");
  size_t nd = size_t(xp->dim() - 2);
  check_window(k, s, d, out, nd);
  int64_t n = xp->sizes[0], c = xp->sizes[1];
  CL_CHECK(groups > 0 && c % groups == 0, "im2col: channels not divisible by groups");
  for (size_t i = 0; i < nd; ++i) {
    CL_CHECK(out[i] >= 0 && (out[i] == 0 ||
                             (out[i] - 1) * s[i] + (k[i] - 1) * d[i] < xp->sizes[2 + int64_t(i)]),
             "im2col: windows outside the input");
  }
  int64_t cg = c / groups, kk = shape_numel(k), nl = shape_numel(out);
  Tensor cols = empty(Shape{groups, n * nl, cg * kk}, xp->dtype, xp->device());
  if (cols->numel() == 0) return cols;
  const int64_t* sp = xp->strides.data() + 2;
  std::vector<int64_t> origins = origin_offsets(out, s, sp);
  std::vector<int64_t> koffs = kernel_offsets(k, d, sp);
  int64_t sn = xp->strides[0], sc = xp->strides[1];
  switch (xp->element_size()) {
    case 1:
      gather_rows(reinterpret_cast<const uint8_t*>(xp->data()),
                  reinterpret_cast<uint8_t*>(cols->data()), n, groups, cg, sn, sc, origins, koffs);
      break;
    case 2:
      gather_rows(reinterpret_cast<const uint16_t*>(xp->data()),
                  reinterpret_cast<uint16_t*>(cols->data()), n, groups, cg, sn, sc, origins, koffs);
      break;
    case 4:
      gather_rows(reinterpret_cast<const uint32_t*>(xp->data()),
                  reinterpret_cast<uint32_t*>(cols->data()), n, groups, cg, sn, sc, origins, koffs);
      break;
    default:
      gather_rows(reinterpret_cast<const uint64_t*>(xp->data()),
                  reinterpret_cast<uint64_t*>(cols->data()), n, groups, cg, sn, sc, origins, koffs);
  }
  return cols;
}

Tensor cpu_col2im(const Tensor& src, int64_t nlead, const Shape& padded, const Shape& s,
                  const Shape& d) {
  CL_CHECK(!src->is_cuda(), "col2im: expected a CPU tensor");
  size_t nd = padded.size();
  CL_CHECK(nlead >= 0 && src->dim() == nlead + 2 * int64_t(nd),
           "col2im: expected a (*lead, *out, *kernel) source");
  CL_CHECK(src->dtype == ScalarType::Float32 || src->dtype == ScalarType::Float64,
           "col2im: expected float32 or float64");
  Shape out(src->sizes.begin() + nlead, src->sizes.begin() + nlead + int64_t(nd));
  Shape k(src->sizes.begin() + nlead + int64_t(nd), src->sizes.end());
  check_window(k, s, d, out, nd);
  for (size_t i = 0; i < nd; ++i) {
    CL_CHECK(out[i] == 0 || k[i] == 0 || (out[i] - 1) * s[i] + (k[i] - 1) * d[i] < padded[i],
             "col2im: windows outside the result");
  }
  Shape shape(src->sizes.begin(), src->sizes.begin() + nlead);
  for (int64_t p : padded) shape.push_back(p);
  Tensor res = empty(shape, src->dtype, src->device());
  std::memset(res->data(), 0, size_t(res->numel()) * res->element_size());
  if (src->numel() == 0) return res;
  if (src->dtype == ScalarType::Float32) {
    scatter_planes<float>(src, res, nlead, out, s, d);
  } else {
    scatter_planes<double>(src, res, nlead, out, s, d);
  }
  return res;
}

}  // namespace cl
