// _softmax / _log_softmax and their backward, and nll_loss forward and backward (the two
// halves of cross_entropy with class indices). Softmax sees a contiguous input as
// [outer, n, inner] lines along `dim`; nll_loss takes [N, C] rows. The CPU loops below
// accumulate in double; the CUDA ones are in kernels/softmax.cu.
#include <cmath>
#include <limits>
#include <vector>

#include "core/cuda_api.h"
#include "ops/nn_ops.h"
#include "ops/ops.h"

namespace cl {

namespace {

struct Lines {
  int64_t outer = 1, n = 1, inner = 1;
};

Lines lines_of(const Tensor& t, int64_t dim) {
  Lines l;
  const int64_t nd = t->dim();
  if (nd == 0) return l;
  for (int64_t d = 0; d < dim; ++d) l.outer *= t->sizes[d];
  l.n = t->sizes[dim];
  for (int64_t d = dim + 1; d < nd; ++d) l.inner *= t->sizes[d];
  return l;
}

}  // namespace

Tensor softmax(const Tensor& x_in, int64_t dim, bool log) {
  dim = wrap_dim(dim, x_in->dim());
  Tensor x = contiguous(x_in);
  Tensor y = empty(x->sizes, x->dtype, x->device());
  if (y->numel() == 0) return y;
  const Lines l = lines_of(x, dim);
  if (x->is_cuda()) {
    cuda::DeviceGuard g(x->device().index);
    cuda::softmax(x, l.outer, l.n, l.inner, log, y);
  } else {
    cpu::softmax(x, l.outer, l.n, l.inner, log, y);
  }
  return y;
}

Tensor softmax_backward(const Tensor& grad, const Tensor& y_in, int64_t dim, bool log) {
  check_same_device({&grad, &y_in});
  dim = wrap_dim(dim, y_in->dim());
  CL_CHECK(grad->sizes == y_in->sizes, "softmax_backward: grad and output shapes differ");
  Tensor y = contiguous(y_in);
  Tensor g =
      contiguous(grad->dtype == y->dtype ? grad : to(grad, grad->device(), y->dtype, false, false));
  Tensor gx = empty(y->sizes, y->dtype, y->device());
  if (gx->numel() == 0) return gx;
  const Lines l = lines_of(y, dim);
  if (y->is_cuda()) {
    cuda::DeviceGuard guard(y->device().index);
    cuda::softmax_backward(g, y, l.outer, l.n, l.inner, log, gx);
  } else {
    cpu::softmax_backward(g, y, l.outer, l.n, l.inner, log, gx);
  }
  return gx;
}

std::pair<Tensor, Tensor> nll_loss(const Tensor& x_in, const Tensor& target, const Tensor& weight,
                                   int reduction, int64_t ignore_index) {
  check_same_device({&x_in, &target, &weight});
  CL_CHECK(x_in->dim() == 2 && target->dim() == 1 && target->sizes[0] == x_in->sizes[0],
           "nll_loss: expected [N, C] input rows and [N] targets");
  CL_CHECK(target->dtype == ScalarType::Int64, "expected scalar type Long but found ",
           dtype_short_name(target->dtype));
  Tensor x = contiguous(x_in), t = contiguous(target);
  const ScalarType dt = x->dtype;
  Tensor w = weight
                 ? contiguous(weight->dtype == dt ? weight
                                                  : to(weight, weight->device(), dt, false, false))
                 : weight;
  CL_CHECK(!w || w->numel() == x->sizes[1], "weight tensor should be defined either for all ",
           x->sizes[1],
           " classes or no classes but got weight tensor of shape: ", shape_str(weight->sizes));
  Tensor out = reduction == 0 ? empty({x->sizes[0]}, dt, x->device()) : empty({}, dt, x->device());
  Tensor total = empty({}, dt, x->device());
  if (x->is_cuda()) {
    cuda::DeviceGuard g(x->device().index);
    cuda::nll_loss(x, t, w, reduction, ignore_index, out, total);
  } else {
    cpu::nll_loss(x, t, w, reduction, ignore_index, out, total);
  }
  return {out, total};
}

Tensor nll_loss_backward(const Tensor& grad, const Tensor& x, const Tensor& target,
                         const Tensor& weight, int reduction, int64_t ignore_index,
                         const Tensor& total_weight) {
  check_same_device({&x, &target, &weight, &grad});
  const ScalarType dt = x->dtype;
  Tensor t = contiguous(target);
  Tensor w = weight
                 ? contiguous(weight->dtype == dt ? weight
                                                  : to(weight, weight->device(), dt, false, false))
                 : weight;
  Tensor g = contiguous(grad->dtype == dt ? grad : to(grad, grad->device(), dt, false, false));
  Tensor tw = total_weight->dtype == dt
                  ? total_weight
                  : to(total_weight, total_weight->device(), dt, false, false);
  Tensor gx = empty(x->sizes, dt, x->device());
  if (gx->numel() == 0) return gx;
  CL_CHECK(reduction != 0 || g->numel() == x->sizes[0], "nll_loss_backward: grad of ", g->numel(),
           " elements for ", x->sizes[0], " rows");
  if (x->is_cuda()) {
    cuda::DeviceGuard guard(x->device().index);
    cuda::nll_loss_backward(g, t, w, reduction, ignore_index, tw, gx);
  } else {
    cpu::nll_loss_backward(g, t, w, reduction, ignore_index, tw, gx);
  }
  return gx;
}

namespace cpu {

namespace {

template <class T>
void softmax_lines(const T* x, T* y, int64_t outer, int64_t n, int64_t inner, bool log) {
  std::vector<double> mx(static_cast<size_t>(inner)), sum(static_cast<size_t>(inner));
  for (int64_t o = 0; o < outer; ++o) {
    const T* xo = x + o * n * inner;
    T* yo = y + o * n * inner;
    std::fill(mx.begin(), mx.end(), -std::numeric_limits<double>::infinity());
    std::fill(sum.begin(), sum.end(), 0.0);
    for (int64_t i = 0; i < n; ++i)
      for (int64_t k = 0; k < inner; ++k) {
        const double v = double(xo[i * inner + k]);
        // NaN propagates into the maximum (then into every output), as torch's.
        if (v > mx[size_t(k)] || std::isnan(v)) mx[size_t(k)] = v;
      }
    for (int64_t i = 0; i < n; ++i)
      for (int64_t k = 0; k < inner; ++k)
        sum[size_t(k)] += std::exp(double(xo[i * inner + k]) - mx[size_t(k)]);
    for (int64_t i = 0; i < n; ++i)
      for (int64_t k = 0; k < inner; ++k) {
        const double s = double(xo[i * inner + k]) - mx[size_t(k)];
        yo[i * inner + k] = log ? T(s - std::log(sum[size_t(k)])) : T(std::exp(s) / sum[size_t(k)]);
      }
  }
}

template <class T>
void softmax_backward_lines(const T* g, const T* y, T* gx, int64_t outer, int64_t n, int64_t inner,
                            bool log) {
  std::vector<double> sum(static_cast<size_t>(inner));
  for (int64_t o = 0; o < outer; ++o) {
    const int64_t base = o * n * inner;
    std::fill(sum.begin(), sum.end(), 0.0);
    for (int64_t i = 0; i < n; ++i)
      for (int64_t k = 0; k < inner; ++k) {
        const int64_t j = base + i * inner + k;
        sum[size_t(k)] += log ? double(g[j]) : double(g[j]) * double(y[j]);
      }
    for (int64_t i = 0; i < n; ++i)
      for (int64_t k = 0; k < inner; ++k) {
        const int64_t j = base + i * inner + k;
        const double s = sum[size_t(k)];
        gx[j] = log ? T(double(g[j]) - std::exp(double(y[j])) * s)
                    : T(double(y[j]) * (double(g[j]) - s));
      }
  }
}

}  // namespace

void softmax(const Tensor& x, int64_t outer, int64_t n, int64_t inner, bool log, const Tensor& y) {
  CL_DISPATCH_FLOATING(x->dtype, "softmax", [&] {
    softmax_lines(reinterpret_cast<const scalar_t*>(x->data()),
                  reinterpret_cast<scalar_t*>(y->data()), outer, n, inner, log);
  });
}

void softmax_backward(const Tensor& g, const Tensor& y, int64_t outer, int64_t n, int64_t inner,
                      bool log, const Tensor& gx) {
  CL_DISPATCH_FLOATING(y->dtype, "softmax_backward", [&] {
    softmax_backward_lines(reinterpret_cast<const scalar_t*>(g->data()),
                           reinterpret_cast<const scalar_t*>(y->data()),
                           reinterpret_cast<scalar_t*>(gx->data()), outer, n, inner, log);
  });
}

void nll_loss(const Tensor& x, const Tensor& t, const Tensor& w, int reduction,
              int64_t ignore_index, const Tensor& out, const Tensor& total_weight) {
  const int64_t N = x->sizes[0], C = x->sizes[1];
  const int64_t* tp = reinterpret_cast<const int64_t*>(t->data());
  for (int64_t i = 0; i < N; ++i) {
    const int64_t c = tp[i];
    CL_CHECK_INDEX(c == ignore_index || (c >= 0 && c < C), "Target ", c, " is out of bounds.");
  }
  CL_DISPATCH_FLOATING(x->dtype, "nll_loss", [&] {
    const auto* xp = reinterpret_cast<const scalar_t*>(x->data());
    const auto* wp = w ? reinterpret_cast<const scalar_t*>(w->data()) : nullptr;
    auto* op = reinterpret_cast<scalar_t*>(out->data());
    double sum = 0, tw = 0;
    for (int64_t i = 0; i < N; ++i) {
      const int64_t c = tp[i];
      double l = 0, wi = 0;
      if (c != ignore_index) {
        wi = wp ? double(wp[c]) : 1.0;
        l = -wi * double(xp[i * C + c]);
      }
      if (reduction == 0) op[i] = scalar_t(l);
      sum += l;
      tw += wi;
    }
    if (reduction == 1) *op = scalar_t(sum / tw);  // 0 / 0: NaN, as torch
    if (reduction == 2) *op = scalar_t(sum);
    *reinterpret_cast<scalar_t*>(total_weight->data()) = scalar_t(tw);
  });
}

void nll_loss_backward(const Tensor& g, const Tensor& t, const Tensor& w, int reduction,
                       int64_t ignore_index, const Tensor& total_weight, const Tensor& gx) {
  const int64_t N = gx->sizes[0], C = gx->sizes[1];
  const int64_t* tp = reinterpret_cast<const int64_t*>(t->data());
  CL_DISPATCH_FLOATING(gx->dtype, "nll_loss_backward", [&] {
    const auto* gp = reinterpret_cast<const scalar_t*>(g->data());
    const auto* wp = w ? reinterpret_cast<const scalar_t*>(w->data()) : nullptr;
    auto* out = reinterpret_cast<scalar_t*>(gx->data());
    const double tw = double(*reinterpret_cast<const scalar_t*>(total_weight->data()));
    std::fill(out, out + N * C, scalar_t(0));
    for (int64_t i = 0; i < N; ++i) {
      const int64_t c = tp[i];
      if (c == ignore_index || c < 0 || c >= C) continue;
      const double wi = wp ? double(wp[c]) : 1.0;
      const double gi = reduction == 0 ? double(gp[i]) : double(gp[0]);
      out[i * C + c] = scalar_t(-wi * (reduction == 1 ? gi / tw : gi));
    }
  });
}

}  // namespace cpu

}  // namespace cl
