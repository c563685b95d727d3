// native_layer_norm and its backward (torch's names): the input is made contiguous and seen
// as M rows of N elements; the device's loop normalises each row (its mean and rstd in the
// accumulation type, saved for the backward) and applies the affine transform. The CPU loops
// below accumulate in double, one row at a time; the CUDA ones are in kernels/layer_norm.cu.
#include <cmath>
#include <vector>

#include "core/cuda_api.h"
#include "ops/nn_ops.h"
#include "ops/ops.h"

namespace cl {

namespace {

// weight/bias as the kernels read them: contiguous, of x's dtype, except that a float32
// parameter of a float16/bfloat16 x stays float32 (torch's mixed-type CUDA kernels).
Tensor param(const Tensor& p, ScalarType dt) {
  if (!p) return p;
  Tensor q = p;
  const bool mixed_ok = p->dtype == ScalarType::Float32 && nn_acc_dtype(dt) == ScalarType::Float32;
  if (p->dtype != dt && !mixed_ok) q = to(q, q->device(), dt, false, false);
  return contiguous(q);
}

void check_devices(const Tensor& a, const Tensor& b, const Tensor& c) {
  check_same_device({&a, &b, &c});
}

// (rows, elements per row) of x normalised over its last k dims.
std::pair<int64_t, int64_t> rows_of(const Tensor& x, int64_t k) {
  const int64_t nd = x->dim();
  CL_CHECK(k >= 1 && k <= nd, "native_layer_norm: ", k, " normalized dims for a ", nd,
           "-dim input");
  int64_t M = 1, n = 1;
  for (int64_t d = 0; d < nd; ++d) (d < nd - k ? M : n) *= x->sizes[d];
  return {M, n};
}

}  // namespace

std::tuple<Tensor, Tensor, Tensor> native_layer_norm(const Tensor& x_in, int64_t k,
                                                     const Tensor& weight, const Tensor& bias,
                                                     double eps) {
  check_devices(x_in, weight, bias);
  Tensor x = contiguous(x_in);
  const ScalarType dt = x->dtype, acc = nn_acc_dtype(dt);
  const auto [M, n] = rows_of(x, k);
  Tensor w = param(weight, dt), b = param(bias, dt);
  Tensor y = empty(x->sizes, dt, x->device());
  Tensor mean = empty({M}, acc, x->device()), rstd = empty({M}, acc, x->device());
  if (M == 0) return {y, mean, rstd};
  if (n == 0) {  // torch: mean 0, rstd NaN (0 / 0)
    fill_(mean, Scalar(0.0));
    fill_(rstd, Scalar(std::nan("")));
    return {y, mean, rstd};
  }
  if (x->is_cuda()) {
    cuda::DeviceGuard g(x->device().index);
    cuda::layer_norm(x, w, b, M, n, eps, y, mean, rstd);
  } else {
    cpu::layer_norm(x, w, b, M, n, eps, y, mean, rstd);
  }
  return {y, mean, rstd};
}

std::tuple<Tensor, Tensor, Tensor> native_layer_norm_backward(
    const Tensor& grad, const Tensor& x_in, int64_t k, const Tensor& mean, const Tensor& rstd,
    const Tensor& weight, std::array<bool, 3> mask) {
  check_devices(x_in, grad, weight);
  Tensor x = contiguous(x_in);
  const ScalarType dt = x->dtype;
  const auto [M, n] = rows_of(x, k);
  CL_CHECK(grad->numel() == x->numel(), "native_layer_norm_backward: grad of ", grad->numel(),
           " elements for an input of ", x->numel());
  Tensor g = contiguous(grad->dtype == dt ? grad : to(grad, grad->device(), dt, false, false));
  Tensor w = param(weight, dt);
  const ScalarType pdt = w ? w->dtype : dt;
  Tensor dx = mask[0] ? empty(x->sizes, dt, x->device()) : Tensor();
  Tensor dw = mask[1] && w ? empty({n}, pdt, x->device()) : Tensor();
  Tensor db = mask[2] ? empty({n}, pdt, x->device()) : Tensor();
  if (M == 0 || n == 0) {
    if (dw) fill_(dw, Scalar(0.0));
    if (db) fill_(db, Scalar(0.0));
    return {dx, dw, db};
  }
  Tensor mn = contiguous(mean), rs = contiguous(rstd);
  if (x->is_cuda()) {
    cuda::DeviceGuard guard(x->device().index);
    cuda::layer_norm_backward(g, x, mn, rs, w, M, n, dx, dw, db);
  } else {
    cpu::layer_norm_backward(g, x, mn, rs, w, M, n, dx, dw, db);
  }
  if (dw && weight->dtype != pdt) dw = to(dw, dw->device(), weight->dtype, false, false);
  return {dx, dw, db};
}

namespace cpu {

namespace {

template <class T, class S>
void ln_rows(const T* x, const T* w, const T* b, int64_t M, int64_t N, double eps, T* y, S* mean,
             S* rstd) {
  for (int64_t r = 0; r < M; ++r) {
    const T* xr = x + r * N;
    T* yr = y + r * N;
    double s = 0;
    for (int64_t i = 0; i < N; ++i) s += double(xr[i]);
    const double mu = s / double(N);
    double q = 0;
    for (int64_t i = 0; i < N; ++i) {
      const double d = double(xr[i]) - mu;
      q += d * d;
    }
    const double rs = 1.0 / std::sqrt(q / double(N) + eps);
    for (int64_t i = 0; i < N; ++i) {
      double v = (double(xr[i]) - mu) * rs;
      if (w) v *= double(w[i]);
      if (b) v += double(b[i]);
      yr[i] = T(v);
    }
    mean[r] = S(mu);
    rstd[r] = S(rs);
  }
}

template <class T, class S>
void ln_backward_rows(const T* g, const T* x, const S* mean, const S* rstd, const T* w, int64_t M,
                      int64_t N, T* dx, T* dw, T* db) {
  std::vector<double> sw(dw ? size_t(N) : 0, 0.0), sb(db ? size_t(N) : 0, 0.0);
  for (int64_t r = 0; r < M; ++r) {
    const T* gr = g + r * N;
    const T* xr = x + r * N;
    const double mu = double(mean[r]), rs = double(rstd[r]);
    if (dx) {
      double a = 0, c = 0;
      for (int64_t i = 0; i < N; ++i) {
        const double gw = double(gr[i]) * (w ? double(w[i]) : 1.0);
        a += gw;
        c += gw * (double(xr[i]) - mu) * rs;
      }
      a /= double(N);
      c /= double(N);
      T* dr = dx + r * N;
      for (int64_t i = 0; i < N; ++i) {
        const double gw = double(gr[i]) * (w ? double(w[i]) : 1.0);
        dr[i] = T(rs * (gw - a - (double(xr[i]) - mu) * rs * c));
      }
    }
    for (int64_t i = 0; dw && i < N; ++i)
      sw[size_t(i)] += double(gr[i]) * (double(xr[i]) - mu) * rs;
    for (int64_t i = 0; db && i < N; ++i) sb[size_t(i)] += double(gr[i]);
  }
  for (int64_t i = 0; dw && i < N; ++i) dw[i] = T(sw[size_t(i)]);
  for (int64_t i = 0; db && i < N; ++i) db[i] = T(sb[size_t(i)]);
}

template <class T>
const T* ptr(const Tensor& t) {
  return t ? reinterpret_cast<const T*>(t->data()) : nullptr;
}
template <class T>
T* mptr(const Tensor& t) {
  return t ? reinterpret_cast<T*>(t->data()) : nullptr;
}

}  // namespace

// On the CPU weight and bias have x's dtype (torch's "mixed dtype (CPU)" check).
void layer_norm(const Tensor& x, const Tensor& w, const Tensor& b, int64_t M, int64_t N, double eps,
                const Tensor& y, const Tensor& mean, const Tensor& rstd) {
  CL_CHECK((!w || w->dtype == x->dtype) && (!b || b->dtype == x->dtype),
           "mixed dtype (CPU): expect parameter to have scalar type of ",
           dtype_short_name(x->dtype));
  CL_DISPATCH_FLOATING(x->dtype, "layer_norm", [&] {
    using S = std::conditional_t<std::is_same_v<scalar_t, double>, double, float>;
    ln_rows<scalar_t, S>(ptr<scalar_t>(x), ptr<scalar_t>(w), ptr<scalar_t>(b), M, N, eps,
                         mptr<scalar_t>(y), mptr<S>(mean), mptr<S>(rstd));
  });
}

void layer_norm_backward(const Tensor& g, const Tensor& x, const Tensor& mean, const Tensor& rstd,
                         const Tensor& w, int64_t M, int64_t N, const Tensor& dx, const Tensor& dw,
                         const Tensor& db) {
  CL_CHECK(!w || w->dtype == x->dtype,
           "mixed dtype (CPU): expect parameter to have scalar type of ",
           dtype_short_name(x->dtype));
  CL_DISPATCH_FLOATING(x->dtype, "layer_norm_backward", [&] {
    using S = std::conditional_t<std::is_same_v<scalar_t, double>, double, float>;
    ln_backward_rows<scalar_t, S>(ptr<scalar_t>(g), ptr<scalar_t>(x), ptr<S>(mean), ptr<S>(rstd),
                                  ptr<scalar_t>(w), M, N, mptr<scalar_t>(dx), mptr<scalar_t>(dw),
                                  mptr<scalar_t>(db));
  });
}

}  // namespace cpu

}  // namespace cl
