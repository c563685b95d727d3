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

// ---- torch's column layout (unfold_rows / fold_rows) ----

namespace cl {

namespace {

// A convolution's geometry with the spatial dims made three (leading dims of size 1).
struct Geom3 {
  int64_t in[3], k[3], s[3], d[3], p[3], out[3];
  int64_t K() const { return k[0] * k[1] * k[2]; }
  int64_t L() const { return out[0] * out[1] * out[2]; }
  int64_t plane() const { return in[0] * in[1] * in[2]; }
};

Geom3 geom3(const Shape& in, const Shape& k, const Shape& s, const Shape& d, const Shape& pad,
            const Shape& out) {
  const size_t nd = in.size();
  CL_CHECK(nd >= 1 && nd <= 3 && k.size() == nd && s.size() == nd && d.size() == nd &&
               pad.size() == nd && out.size() == nd,
           "unfold_rows: expected 1 to 3 spatial dims and one kernel size, stride, dilation, "
           "padding and output size for each");
  Geom3 g;
  for (size_t i = 0; i < 3; ++i) {
    const bool real = i >= 3 - nd;
    const size_t j = real ? i - (3 - nd) : 0;
    g.in[i] = real ? in[j] : 1;
    g.k[i] = real ? k[j] : 1;
    g.s[i] = real ? s[j] : 1;
    g.d[i] = real ? d[j] : 1;
    g.p[i] = real ? pad[j] : 0;
    g.out[i] = real ? out[j] : 1;
    CL_CHECK(g.k[i] >= 1 && g.s[i] >= 1 && g.d[i] >= 1 && g.p[i] >= 0 && g.out[i] >= 0,
             "unfold_rows: invalid window");
  }
  return g;
}

// The output positions [lo, hi) along one dim whose input index o * s - p + j * d lies in
// [0, in).
void valid_range(int64_t out, int64_t in, int64_t s, int64_t p, int64_t off, int64_t& lo,
                 int64_t& hi) {
  // o * s + (off - p) >= 0  and  o * s + (off - p) < in, with off = j * d
  const int64_t b = off - p;
  lo = b >= 0 ? 0 : (-b + s - 1) / s;
  hi = in - b <= 0 ? 0 : (in - b + s - 1) / s;
  if (hi > out) hi = out;
  if (lo > hi) lo = hi;
}

// Calls f(row_offset_in_L, input_offset, count, stride) for every run of valid output
// positions of kernel position (kd, kh, kw) along the last dim, and z(row_offset, count) for
// the positions that read padding.
template <class Copy, class Zero>
void walk_row(const Geom3& g, const int64_t* xs, int64_t kd, int64_t kh, int64_t kw, Copy&& f,
              Zero&& z) {
  int64_t wlo, whi;
  valid_range(g.out[2], g.in[2], g.s[2], g.p[2], kw * g.d[2], wlo, whi);
  for (int64_t od = 0; od < g.out[0]; ++od) {
    const int64_t id = od * g.s[0] - g.p[0] + kd * g.d[0];
    const bool dok = id >= 0 && id < g.in[0];
    for (int64_t oh = 0; oh < g.out[1]; ++oh) {
      const int64_t ih = oh * g.s[1] - g.p[1] + kh * g.d[1];
      const int64_t row = (od * g.out[1] + oh) * g.out[2];
      if (!dok || ih < 0 || ih >= g.in[1] || whi <= wlo) {
        z(row, g.out[2]);
        continue;
      }
      if (wlo > 0) z(row, wlo);
      const int64_t iw = wlo * g.s[2] - g.p[2] + kw * g.d[2];
      f(row + wlo, id * xs[0] + ih * xs[1] + iw * xs[2], whi - wlo, g.s[2] * xs[2]);
      if (whi < g.out[2]) z(row + whi, g.out[2] - whi);
    }
  }
}

template <class E>
void unfold_planes(const Tensor& x, E* cols, const Geom3& g, bool batch_inner) {
  const int64_t N = x->sizes[0], C = x->sizes[1], K = g.K(), L = g.L();
  const int64_t nd = x->dim() - 2;
  int64_t xs[3] = {0, 0, 0};
  for (int64_t i = 0; i < nd; ++i) xs[3 - nd + i] = x->strides[2 + i];
  const E* xp = reinterpret_cast<const E*>(x->data());
  const int64_t sn = x->strides[0], sc = x->strides[1], planes = N * C;
  const int chunks =
      int(std::min<int64_t>(planes, planes * K * L >= (1 << 15) ? host_threads() * 4 : 1));
  parallel_run(chunks, [&](int ch) {
    for (int64_t pl = planes * ch / chunks; pl < planes * (ch + 1) / chunks; ++pl) {
      const int64_t n = pl / C, c = pl % C;
      const E* src = xp + n * sn + c * sc;
      for (int64_t kd = 0, j = 0; kd < g.k[0]; ++kd) {
        for (int64_t kh = 0; kh < g.k[1]; ++kh) {
          for (int64_t kw = 0; kw < g.k[2]; ++kw, ++j) {
            const int64_t r = c * K + j;
            E* dst = cols + (batch_inner ? (r * N + n) * L : (n * C * K + r) * L);
            walk_row(
                g, xs, kd, kh, kw,
                [&](int64_t o, int64_t off, int64_t cnt, int64_t step) {
                  const E* sp = src + off;
                  E* dp = dst + o;
                  if (step == 1) {
                    std::memcpy(dp, sp, size_t(cnt) * sizeof(E));
                  } else {
                    for (int64_t t = 0; t < cnt; ++t) dp[t] = sp[t * step];
                  }
                },
                [&](int64_t o, int64_t cnt) { std::memset(dst + o, 0, size_t(cnt) * sizeof(E)); });
          }
        }
      }
    }
  });
}

template <class T>
void fold_planes(const T* cols, T* res, int64_t N, int64_t C, const Geom3& g, bool batch_inner) {
  const int64_t K = g.K(), L = g.L(), plane = g.plane(), planes = N * C;
  const int64_t xs[3] = {g.in[1] * g.in[2], g.in[2], 1};
  const int chunks =
      int(std::min<int64_t>(planes, planes * K * L >= (1 << 15) ? host_threads() * 4 : 1));
  parallel_run(chunks, [&](int ch) {
    for (int64_t pl = planes * ch / chunks; pl < planes * (ch + 1) / chunks; ++pl) {
      const int64_t n = pl / C, c = pl % C;
      T* dst = res + pl * plane;
      for (int64_t kd = 0, j = 0; kd < g.k[0]; ++kd) {
        for (int64_t kh = 0; kh < g.k[1]; ++kh) {
          for (int64_t kw = 0; kw < g.k[2]; ++kw, ++j) {
            const int64_t r = c * K + j;
            const T* src = cols + (batch_inner ? (r * N + n) * L : (n * C * K + r) * L);
            walk_row(
                g, xs, kd, kh, kw,
                [&](int64_t o, int64_t off, int64_t cnt, int64_t step) {
                  const T* sp = src + o;
                  T* dp = dst + off;
                  for (int64_t t = 0; t < cnt; ++t) dp[t * step] += sp[t];
                },
                [](int64_t, int64_t) {});
          }
        }
      }
    }
  });
}

}  // namespace

Tensor cpu_unfold_rows(const Tensor& x, const Shape& k, const Shape& s, const Shape& d,
                       const Shape& pad, const Shape& out, bool batch_inner) {
  CL_CHECK(!x->is_cuda(), "unfold_rows: expected a CPU tensor");
  CL_CHECK(x->dim() >= 3 && x->dim() <= 5, "unfold_rows: expected an (N, C, *spatial) input");
  const Geom3 g = geom3(Shape(x->sizes.begin() + 2, x->sizes.end()), k, s, d, pad, out);
  const int64_t N = x->sizes[0], C = x->sizes[1];
  Shape shape = batch_inner ? Shape{C * g.K(), N, g.L()} : Shape{N, C * g.K(), g.L()};
  Tensor cols = empty(shape, x->dtype, x->device());
  if (cols->numel() == 0) return cols;
  switch (x->element_size()) {
    case 1:
      unfold_planes(x, reinterpret_cast<uint8_t*>(cols->data()), g, batch_inner);
      break;
    case 2:
      unfold_planes(x, reinterpret_cast<uint16_t*>(cols->data()), g, batch_inner);
      break;
    case 4:
      unfold_planes(x, reinterpret_cast<uint32_t*>(cols->data()), g, batch_inner);
      break;
    default:
      unfold_planes(x, reinterpret_cast<uint64_t*>(cols->data()), g, batch_inner);
  }
  return cols;
}

Tensor cpu_fold_rows(const Tensor& cols_in, const Shape& size, int64_t n, const Shape& k,
                     const Shape& s, const Shape& d, const Shape& pad, const Shape& out,
                     bool batch_inner) {
  CL_CHECK(!cols_in->is_cuda(), "fold_rows: expected a CPU tensor");
  CL_CHECK(cols_in->dtype == ScalarType::Float32 || cols_in->dtype == ScalarType::Float64,
           "fold_rows: expected float32 or float64");
  const Geom3 g = geom3(size, k, s, d, pad, out);
  CL_CHECK(cols_in->dim() == 3 && n >= 0, "fold_rows: expected 3-dim columns");
  const int64_t rows = batch_inner ? cols_in->sizes[0] : cols_in->sizes[1];
  const int64_t nn = batch_inner ? cols_in->sizes[1] : cols_in->sizes[0];
  CL_CHECK(nn == n && g.K() > 0 && rows % g.K() == 0 && cols_in->sizes[2] == g.L(),
           "fold_rows: columns of shape ", shape_str(cols_in->sizes), " don't match the window");
  const int64_t C = rows / g.K();
  Shape shape{n, C};
  for (int64_t v : size) shape.push_back(v);
  Tensor res = empty(shape, cols_in->dtype, cols_in->device());
  std::memset(res->data(), 0, size_t(res->numel()) * res->element_size());
  if (res->numel() == 0 || cols_in->numel() == 0) return res;
  Tensor cols = contiguous(cols_in);
  if (cols->dtype == ScalarType::Float32) {
    fold_planes(reinterpret_cast<const float*>(cols->data()), reinterpret_cast<float*>(res->data()),
                n, C, g, batch_inner);
  } else {
    fold_planes(reinterpret_cast<const double*>(cols->data()),
                reinterpret_cast<double*>(res->data()), n, C, g, batch_inner);
  }
  return res;
}

}  // namespace cl
