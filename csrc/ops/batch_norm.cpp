// native_batch_norm and its backward (torch's names): the input is made contiguous and seen
// as (N, C, S), S the product of the spatial sizes (a channels_last input keeps its layout,
// seen as (N * S, C, 1), and its output and gradient have that layout too); the device's loop
// computes each channel's statistics (training) or takes the running ones (evaluation), normalises
// and applies the affine transform in one call, and the backward takes each channel's sums of g and
// g * (x - mean) in one pass and writes grad_input in a second. The per-channel vectors
// (parameters, running statistics, saved statistics, parameter gradients) are handed to the
// loops in the accumulation dtype; running statistics of another dtype are updated through a
// copy in it. The CPU loops below accumulate in double, a channel at a time, the channels
// spread over the host threads (rows of channels, for inputs without spatial dims or
// channels_last, in bands of rows); the CUDA ones are in kernels/batch_norm.cu.
#include <cmath>
#include <vector>

#include "core/cuda_api.h"
#include "core/parallel.h"
#include "ops/nn_ops.h"
#include "ops/ops.h"

namespace cl {

namespace {

bool reduced(ScalarType t) { return t == ScalarType::Float16 || t == ScalarType::BFloat16; }

// torch's CPU rule (mixed_data_type.h): the parameters may differ from x only all together,
// as float32 beside a float16/bfloat16 x; else each must have x's dtype.
void check_cpu_dtypes(const Tensor& x, std::initializer_list<const Tensor*> params) {
  const Tensor* first = nullptr;
  for (const Tensor* p : params) {
    if (*p) {
      first = p;
      break;
    }
  }
  if (!first || (*first)->dtype == x->dtype) {
    for (const Tensor* p : params) {
      CL_CHECK(!*p || (*p)->dtype == x->dtype, "expected scalar type ", dtype_short_name(x->dtype),
               " but found ", dtype_short_name((*p)->dtype));
    }
    return;
  }
  for (const Tensor* p : params) {
    CL_CHECK(!*p || (*p)->dtype == ScalarType::Float32,
             "mixed dtype (CPU): expect parameter to have scalar type of Float");
  }
  CL_CHECK(reduced(x->dtype), "mixed dtype (CPU): all inputs must share same datatype.");
}

// A per-channel vector as the loops read it: contiguous, of dtype `acc`.
Tensor channel_vec(const Tensor& p, ScalarType acc) {
  if (!p) return p;
  return contiguous(p->dtype == acc ? p : to(p, p->device(), acc, false, false));
}

void check_numel(const char* name, const Tensor& t, int64_t c) {
  CL_CHECK(!t || t->numel() == c, name, " should contain ", c, " elements not ", t->numel());
}

void check_floating(const Tensor& x) {
  const ScalarType t = x->dtype;
  if (t != ScalarType::Float16 && t != ScalarType::BFloat16 && t != ScalarType::Float32 &&
      t != ScalarType::Float64) {
    throw NotImplementedError(std::string("\"batch_norm\" not implemented for '") +
                              dtype_short_name(t) + "'");
  }
}

struct Ncs {
  int64_t n, c, s;
};

Ncs ncs_of(const Tensor& x) {
  CL_CHECK(x->dim() >= 2, "batch_norm: expected an input with at least 2 dimensions, got ",
           x->dim());
  int64_t s = 1;
  for (int64_t d = 2; d < x->dim(); ++d) s *= x->sizes[d];
  return {x->sizes[0], x->sizes[1], s};
}

// Whether x (N, C, *sp) is dense with the channels innermost (channels_last) and not
// contiguous: then its memory is the (N * S, C, 1) layout, normalised in place of a copy.
bool channels_last_dense(const Tensor& x) {
  if (x->dim() < 3 || x->is_contiguous()) return false;
  int64_t expect = 1;
  auto next = [&](int64_t d) {
    if (x->sizes[d] != 1 && x->strides[d] != expect) return false;
    expect *= x->sizes[d];
    return true;
  };
  if (!next(1)) return false;
  for (int64_t d = x->dim() - 1; d >= 2; --d) {
    if (!next(d)) return false;
  }
  return next(0);
}

}  // namespace

std::tuple<Tensor, Tensor, Tensor> native_batch_norm(const Tensor& x_in, const Tensor& weight,
                                                     const Tensor& bias, const Tensor& running_mean,
                                                     const Tensor& running_var, bool training,
                                                     double momentum, double eps) {
  check_same_device({&x_in, &weight, &bias, &running_mean, &running_var});
  check_floating(x_in);
  const Ncs d = ncs_of(x_in);
  for (auto [name, t] :
       {std::pair{"weight", &weight}, std::pair{"bias", &bias},
        std::pair{"running_mean", &running_mean}, std::pair{"running_var", &running_var}}) {
    check_numel(name, *t, d.c);
  }
  CL_CHECK(training || (running_mean && running_var),
           "running_mean and running_var must be defined in evaluation mode");
  if (!x_in->is_cuda()) check_cpu_dtypes(x_in, {&weight, &bias, &running_mean, &running_var});
  // A channels_last input keeps its layout (and gives it to the output), seen as (N * S, C, 1).
  const bool cl = channels_last_dense(x_in);
  Tensor x = cl ? x_in : contiguous(x_in);
  const Ncs k = cl ? Ncs{d.n * d.s, d.c, 1} : d;
  const ScalarType dt = x->dtype, acc = nn_acc_dtype(dt);
  Tensor w = channel_vec(weight, acc), b = channel_vec(bias, acc);
  // Running statistics are updated in place: through a copy when they are not contiguous
  // vectors of the accumulation dtype.
  auto direct = [&](const Tensor& r) { return !r || (r->dtype == acc && r->is_contiguous()); };
  const bool copy_back = training && !(direct(running_mean) && direct(running_var));
  Tensor rm = channel_vec(running_mean, acc), rv = channel_vec(running_var, acc);
  if (copy_back) {
    if (rm && rm.get() == running_mean.get()) rm = to(rm, rm->device(), acc, false, true);
    if (rv && rv.get() == running_var.get()) rv = to(rv, rv->device(), acc, false, true);
  }
  Tensor y = cl ? empty_preserve(x, dt, x->device()) : empty(x->sizes, dt, x->device());
  Tensor mean = empty({d.c}, acc, x->device()), invstd = empty({d.c}, acc, x->device());
  CL_CHECK(
      !training || x->numel() > 0,
      "input tensor must have at least one element, but got input_sizes = ", shape_str(x->sizes));
  if (d.c == 0) return {y, mean, invstd};
  if (x->is_cuda()) {
    cuda::DeviceGuard g(x->device().index);
    cuda::batch_norm(x, w, b, rm, rv, k.n, k.c, k.s, training, momentum, eps, y, mean, invstd);
  } else {
    cpu::batch_norm(x, w, b, rm, rv, k.n, k.c, k.s, training, momentum, eps, y, mean, invstd);
  }
  if (copy_back) {
    if (running_mean) copy_(running_mean, rm);
    if (running_var) copy_(running_var, rv);
  }
  return {y, mean, invstd};
}

std::tuple<Tensor, Tensor, Tensor> native_batch_norm_backward(
    const Tensor& grad, const Tensor& x_in, const Tensor& weight, const Tensor& save_mean,
    const Tensor& save_invstd, bool training, std::array<bool, 3> mask) {
  check_same_device({&x_in, &grad, &weight, &save_mean, &save_invstd});
  check_floating(x_in);
  const Ncs d = ncs_of(x_in);
  CL_CHECK(grad->sizes == x_in->sizes, "native_batch_norm_backward: grad of shape ",
           shape_str(grad->sizes), " for an input of shape ", shape_str(x_in->sizes));
  check_numel("weight", weight, d.c);
  check_numel("save_mean", save_mean, d.c);
  check_numel("save_invstd", save_invstd, d.c);
  const bool cl = channels_last_dense(x_in);
  Tensor x = cl ? x_in : contiguous(x_in);
  const Ncs k = cl ? Ncs{d.n * d.s, d.c, 1} : d;
  const ScalarType dt = x->dtype, acc = nn_acc_dtype(dt);
  Tensor g = grad->dtype == dt ? grad : to(grad, grad->device(), dt, false, false);
  if (!cl) {
    g = contiguous(g);
  } else if (g->strides != x->strides) {  // the gradient in the input's layout
    Tensor gl = empty_preserve(x, dt, x->device());
    copy_(gl, g);
    g = gl;
  }
  Tensor w = channel_vec(weight, acc);
  Tensor mean = channel_vec(save_mean, acc), invstd = channel_vec(save_invstd, acc);
  const ScalarType pdt = weight ? weight->dtype : dt;
  Tensor dx = !mask[0] ? Tensor()
              : cl     ? empty_preserve(x, dt, x->device())
                       : empty(x->sizes, dt, x->device());
  Tensor dw = mask[1] ? empty({d.c}, acc, x->device()) : Tensor();
  Tensor db = mask[2] ? empty({d.c}, acc, x->device()) : Tensor();
  if (d.c > 0 && (dx || dw || db)) {
    if (x->is_cuda()) {
      cuda::DeviceGuard guard(x->device().index);
      cuda::batch_norm_backward(g, x, w, mean, invstd, k.n, k.c, k.s, training, dx, dw, db);
    } else {
      cpu::batch_norm_backward(g, x, w, mean, invstd, k.n, k.c, k.s, training, dx, dw, db);
    }
  }
  if (dw && pdt != acc) dw = to(dw, dw->device(), pdt, false, false);
  if (db && pdt != acc) db = to(db, db->device(), pdt, false, false);
  return {dx, dw, db};
}

namespace cpu {

namespace {

template <class T>
const T* ptr(const Tensor& t) {
  return t ? reinterpret_cast<const T*>(t->data()) : nullptr;
}
template <class T>
T* mptr(const Tensor& t) {
  return t ? reinterpret_cast<T*>(t->data()) : nullptr;
}

// Runs fn(c) for every channel, channels spread over the host threads when the work is
// large enough to pay for them.
template <class F>
void for_channels(int64_t C, int64_t per_channel, F&& fn) {
  const int64_t threads = C * per_channel >= (1 << 15) ? host_threads() : 1;
  const int chunks = int(std::min<int64_t>(C, threads));
  if (chunks <= 1) {
    for (int64_t c = 0; c < C; ++c) fn(c);
    return;
  }
  parallel_run(chunks, [&](int k) {
    for (int64_t c = C * k / chunks; c < C * (k + 1) / chunks; ++c) fn(c);
  });
}

// Sum over the channel's N segments of S elements of f(x) (four partial sums, for
// instruction-level parallelism).
template <class T, class F>
double channel_sum(const T* base, int64_t N, int64_t stride, int64_t S, F&& f) {
  double acc[4] = {0, 0, 0, 0};
  for (int64_t n = 0; n < N; ++n) {
    const T* p = base + n * stride;
    int64_t i = 0;
    for (; i + 4 <= S; i += 4) {
      acc[0] += f(p, i);
      acc[1] += f(p, i + 1);
      acc[2] += f(p, i + 2);
      acc[3] += f(p, i + 3);
    }
    for (; i < S; ++i) acc[0] += f(p, i);
  }
  return (acc[0] + acc[1]) + (acc[2] + acc[3]);
}

// ---- S == 1: rows of C values ((N, C) inputs, channels_last) ----
// A channel's values are C apart there, so instead of a channel per thread each thread
// takes a band of rows and sums every channel of it into its own doubles; the bands' sums
// are then added in order.

// Runs f(r0, r1) over bands of the R rows, spread over the host threads; returns the bands.
template <class F>
int64_t for_bands(int64_t R, int64_t C, F&& f) {
  const int64_t bands =
      R * C >= (1 << 15) ? std::max<int64_t>(1, std::min<int64_t>(host_threads(), R / 16)) : 1;
  if (bands == 1) {
    f(0, 0, R);
    return 1;
  }
  parallel_run(int(bands), [&](int k) { f(k, R * k / bands, R * (k + 1) / bands); });
  return bands;
}

// out[j * C + c] = sum over rows of f(row, c, j) for j < width, in double.
template <class F>
std::vector<double> row_sums(int64_t R, int64_t C, int width, F&& f) {
  const int64_t maxb = std::max<int64_t>(1, host_threads());
  std::vector<double> part(size_t(maxb * width * C), 0.0);
  const int64_t bands = for_bands(R, C, [&](int64_t k, int64_t r0, int64_t r1) {
    double* acc = part.data() + k * width * C;
    for (int64_t r = r0; r < r1; ++r) f(r, acc);
  });
  std::vector<double> out(size_t(width * C), 0.0);
  for (int64_t k = 0; k < bands; ++k) {
    for (int64_t i = 0; i < width * C; ++i) out[size_t(i)] += part[size_t(k * width * C + i)];
  }
  return out;
}

template <class T, class A>
void bn_forward_rows(const T* x, const A* w, const A* b, A* rm, A* rv, int64_t R, int64_t C,
                     bool training, double momentum, double eps, T* y, A* mean, A* invstd) {
  std::vector<double> mu(static_cast<size_t>(C)), is(static_cast<size_t>(C));
  if (training) {
    std::vector<double> s = row_sums(R, C, 1, [&](int64_t r, double* acc) {
      const T* xr = x + r * C;
      for (int64_t c = 0; c < C; ++c) acc[c] += double(xr[c]);
    });
    for (int64_t c = 0; c < C; ++c) mu[size_t(c)] = s[size_t(c)] / double(R);
    std::vector<double> q = row_sums(R, C, 1, [&](int64_t r, double* acc) {
      const T* xr = x + r * C;
      for (int64_t c = 0; c < C; ++c) {
        const double v = double(xr[c]) - mu[size_t(c)];
        acc[c] += v * v;
      }
    });
    for (int64_t c = 0; c < C; ++c) {
      const double m = mu[size_t(c)], v = q[size_t(c)];
      is[size_t(c)] = 1.0 / std::sqrt(v / double(R) + eps);
      if (rm) rm[c] = A(momentum * m + (1 - momentum) * double(rm[c]));
      if (rv) rv[c] = A(momentum * (v / double(R - 1)) + (1 - momentum) * double(rv[c]));
    }
  } else {
    for (int64_t c = 0; c < C; ++c) {
      mu[size_t(c)] = double(rm[c]);
      is[size_t(c)] = 1.0 / std::sqrt(double(rv[c]) + eps);
    }
  }
  std::vector<A> alpha(static_cast<size_t>(C)), beta(static_cast<size_t>(C));
  for (int64_t c = 0; c < C; ++c) {
    mean[c] = A(mu[size_t(c)]);
    invstd[c] = A(is[size_t(c)]);
    alpha[size_t(c)] = A(is[size_t(c)] * (w ? double(w[c]) : 1.0));
    beta[size_t(c)] = A((b ? double(b[c]) : 0.0) - mu[size_t(c)] * double(alpha[size_t(c)]));
  }
  for_bands(R, C, [&](int64_t, int64_t r0, int64_t r1) {
    for (int64_t r = r0; r < r1; ++r) {
      const T* xr = x + r * C;
      T* yr = y + r * C;
      for (int64_t c = 0; c < C; ++c) yr[c] = T(A(xr[c]) * alpha[size_t(c)] + beta[size_t(c)]);
    }
  });
}

template <class T, class A>
void bn_backward_rows(const T* g, const T* x, const A* w, const A* mean, const A* invstd, int64_t R,
                      int64_t C, bool training, T* dx, A* dw, A* db) {
  const bool need = dw || db || (dx && training);
  std::vector<double> s;
  if (need) {
    s = row_sums(R, C, 2, [&](int64_t r, double* acc) {
      const T *gr = g + r * C, *xr = x + r * C;
      for (int64_t c = 0; c < C; ++c) {
        const double gv = double(gr[c]);
        acc[c] += gv;
        acc[C + c] += gv * (double(xr[c]) - double(mean[c]));
      }
    });
  }
  std::vector<A> gm(static_cast<size_t>(C)), proj(static_cast<size_t>(C)),
      scale(static_cast<size_t>(C));
  for (int64_t c = 0; c < C; ++c) {
    const double is = double(invstd[c]);
    const double sum = need ? s[size_t(c)] : 0.0, dot = need ? s[size_t(C + c)] : 0.0;
    if (dw) dw[c] = A(dot * is);
    if (db) db[c] = A(sum);
    gm[size_t(c)] = A(sum / double(R));
    proj[size_t(c)] = A(dot * is * is / double(R));
    scale[size_t(c)] = A(is * (w ? double(w[c]) : 1.0));
  }
  if (!dx) return;
  for_bands(R, C, [&](int64_t, int64_t r0, int64_t r1) {
    for (int64_t r = r0; r < r1; ++r) {
      const T *gr = g + r * C, *xr = x + r * C;
      T* dr = dx + r * C;
      for (int64_t c = 0; c < C; ++c) {
        const size_t u = size_t(c);
        dr[c] = training ? T((A(gr[c]) - gm[u] - (A(xr[c]) - mean[c]) * proj[u]) * scale[u])
                         : T(A(gr[c]) * scale[u]);
      }
    }
  });
}

template <class T, class A>
void bn_forward(const Tensor& x_t, const Tensor& w_t, const Tensor& b_t, const Tensor& rm_t,
                const Tensor& rv_t, int64_t N, int64_t C, int64_t S, bool training, double momentum,
                double eps, const Tensor& y_t, const Tensor& mean_t, const Tensor& invstd_t) {
  const T* x = ptr<T>(x_t);
  T* y = mptr<T>(y_t);
  const A *w = ptr<A>(w_t), *b = ptr<A>(b_t);
  A *rm = mptr<A>(rm_t), *rv = mptr<A>(rv_t), *mean = mptr<A>(mean_t), *invstd = mptr<A>(invstd_t);
  if (S == 1 && C > 1) {
    return bn_forward_rows(x, w, b, rm, rv, N, C, training, momentum, eps, y, mean, invstd);
  }
  const int64_t M = N * S, stride = C * S;
  for_channels(C, M, [&](int64_t c) {
    const T* xc = x + c * S;
    double mu, is;
    if (training) {
      mu = channel_sum(xc, N, stride, S, [](const T* p, int64_t i) { return double(p[i]); }) /
           double(M);
      const double q = channel_sum(xc, N, stride, S, [mu](const T* p, int64_t i) {
        const double v = double(p[i]) - mu;
        return v * v;
      });
      is = 1.0 / std::sqrt(q / double(M) + eps);
      mean[c] = A(mu);
      invstd[c] = A(is);
      if (rm) rm[c] = A(momentum * mu + (1 - momentum) * double(rm[c]));
      if (rv) rv[c] = A(momentum * (q / double(M - 1)) + (1 - momentum) * double(rv[c]));
    } else {
      mu = double(rm[c]);
      is = 1.0 / std::sqrt(double(rv[c]) + eps);
      mean[c] = A(mu);
      invstd[c] = A(is);
    }
    // y = x * alpha + beta, torch's CPU form
    const A alpha = A(is * (w ? double(w[c]) : 1.0));
    const A beta = A((b ? double(b[c]) : 0.0) - mu * double(alpha));
    for (int64_t n = 0; n < N; ++n) {
      const T* xs = xc + n * stride;
      T* ys = y + c * S + n * stride;
      for (int64_t i = 0; i < S; ++i) ys[i] = T(A(xs[i]) * alpha + beta);
    }
  });
}

template <class T, class A>
void bn_backward(const Tensor& g_t, const Tensor& x_t, const Tensor& w_t, const Tensor& mean_t,
                 const Tensor& invstd_t, int64_t N, int64_t C, int64_t S, bool training,
                 const Tensor& dx_t, const Tensor& dw_t, const Tensor& db_t) {
  const T *g = ptr<T>(g_t), *x = ptr<T>(x_t);
  const A *w = ptr<A>(w_t), *mean = ptr<A>(mean_t), *invstd = ptr<A>(invstd_t);
  T* dx = mptr<T>(dx_t);
  A *dw = mptr<A>(dw_t), *db = mptr<A>(db_t);
  if (S == 1 && C > 1) return bn_backward_rows(g, x, w, mean, invstd, N, C, training, dx, dw, db);
  const int64_t M = N * S, stride = C * S;
  const bool need_dot = dw || (dx && training);
  const bool need_sum = db || (dx && training);
  for_channels(C, M, [&](int64_t c) {
    const T *gc = g + c * S, *xc = x + c * S;
    const double mu = double(mean[c]), is = double(invstd[c]);
    double sum = 0, dot = 0;
    if (need_sum) {
      sum = channel_sum(gc, N, stride, S, [](const T* p, int64_t i) { return double(p[i]); });
    }
    if (need_dot) {
      const int64_t off = xc - gc;  // x's element beside g's
      dot = channel_sum(gc, N, stride, S, [mu, off](const T* p, int64_t i) {
        return double(p[i]) * (double(p[i + off]) - mu);
      });
    }
    if (dw) dw[c] = A(dot * is);
    if (db) db[c] = A(sum);
    if (!dx) return;
    const double wc = w ? double(w[c]) : 1.0;
    if (training) {
      // (g - mean(g) - (x - mean) * dot * invstd^2 / M) * invstd * w, torch's form
      const A gmean = A(sum / double(M)), proj = A(dot * is * is / double(M));
      const A m = A(mu), scale = A(is * wc);
      for (int64_t n = 0; n < N; ++n) {
        const T *gs = gc + n * stride, *xs = xc + n * stride;
        T* ds = dx + c * S + n * stride;
        for (int64_t i = 0; i < S; ++i) {
          ds[i] = T((A(gs[i]) - gmean - (A(xs[i]) - m) * proj) * scale);
        }
      }
    } else {
      const A scale = A(is * wc);
      for (int64_t n = 0; n < N; ++n) {
        const T* gs = gc + n * stride;
        T* ds = dx + c * S + n * stride;
        for (int64_t i = 0; i < S; ++i) ds[i] = T(A(gs[i]) * scale);
      }
    }
  });
}

}  // namespace

void batch_norm(const Tensor& x, const Tensor& w, const Tensor& b, const Tensor& rm,
                const Tensor& rv, int64_t N, int64_t C, int64_t S, bool training, double momentum,
                double eps, const Tensor& y, const Tensor& mean, const Tensor& invstd) {
  CL_DISPATCH_FLOATING(x->dtype, "batch_norm", [&] {
    using A = std::conditional_t<std::is_same_v<scalar_t, double>, double, float>;
    bn_forward<scalar_t, A>(x, w, b, rm, rv, N, C, S, training, momentum, eps, y, mean, invstd);
  });
}

void batch_norm_backward(const Tensor& g, const Tensor& x, const Tensor& w, const Tensor& mean,
                         const Tensor& invstd, int64_t N, int64_t C, int64_t S, bool training,
                         const Tensor& dx, const Tensor& dw, const Tensor& db) {
  CL_DISPATCH_FLOATING(x->dtype, "batch_norm_backward", [&] {
    using A = std::conditional_t<std::is_same_v<scalar_t, double>, double, float>;
    bn_backward<scalar_t, A>(g, x, w, mean, invstd, N, C, S, training, dx, dw, db);
  });
}

}  // namespace cpu

}  // namespace cl
