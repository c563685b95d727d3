// The fused nn kernels (ops/nn_ops.h): layer_norm, batch_norm, softmax/log_softmax, nll_loss and
// gelu, forward and backward. Optional tensors are None; undefined results come back as None. The
// GIL is released around large CPU work (Note [Releasing the GIL]).
#include "bindings/convert.h"
#include "bindings/gil.h"
#include "ops/nn_ops.h"

namespace cl::bind {

namespace {

Tensor opt(py::handle h) { return h.is_none() ? Tensor() : as_tensor(h); }

py::tuple wrap3(const std::tuple<Tensor, Tensor, Tensor>& r) {
  return py::make_tuple(wrap_tensor(std::get<0>(r)), wrap_tensor(std::get<1>(r)),
                        wrap_tensor(std::get<2>(r)));
}

}  // namespace

void bind_nn(py::module_& m) {
  m.def("_native_layer_norm",
        [](const Tensor& x, int64_t k, py::handle w, py::handle b, double eps) {
          Tensor wt = opt(w), bt = opt(b);
          return wrap3(maybe_without_gil(worth_releasing(x),
                                         [&] { return native_layer_norm(x, k, wt, bt, eps); }));
        });
  m.def("_native_layer_norm_backward",
        [](const Tensor& g, const Tensor& x, int64_t k, const Tensor& mean, const Tensor& rstd,
           py::handle w, bool gi, bool gw, bool gb) {
          Tensor wt = opt(w);
          return wrap3(maybe_without_gil(worth_releasing(x), [&] {
            return native_layer_norm_backward(g, x, k, mean, rstd, wt, {gi, gw, gb});
          }));
        });
  m.def("_native_batch_norm", [](const Tensor& x, py::handle w, py::handle b, py::handle rm,
                                 py::handle rv, bool training, double momentum, double eps) {
    Tensor wt = opt(w), bt = opt(b), rmt = opt(rm), rvt = opt(rv);
    return wrap3(maybe_without_gil(worth_releasing(x), [&] {
      return native_batch_norm(x, wt, bt, rmt, rvt, training, momentum, eps);
    }));
  });
  m.def("_native_batch_norm_backward",
        [](const Tensor& g, const Tensor& x, py::handle w, const Tensor& mean, const Tensor& invstd,
           bool training, bool gi, bool gw, bool gb) {
          Tensor wt = opt(w);
          return wrap3(maybe_without_gil(worth_releasing(x), [&] {
            return native_batch_norm_backward(g, x, wt, mean, invstd, training, {gi, gw, gb});
          }));
        });
  m.def("_softmax", [](const Tensor& x, int64_t dim, bool log) {
    return maybe_without_gil(worth_releasing(x), [&] { return softmax(x, dim, log); });
  });
  m.def("_softmax_backward", [](const Tensor& g, const Tensor& y, int64_t dim, bool log) {
    return maybe_without_gil(worth_releasing(y), [&] { return softmax_backward(g, y, dim, log); });
  });
  m.def("_nll_loss",
        [](const Tensor& x, const Tensor& t, py::handle w, int reduction, int64_t ignore_index) {
          Tensor wt = opt(w);
          auto r = maybe_without_gil(worth_releasing(x),
                                     [&] { return nll_loss(x, t, wt, reduction, ignore_index); });
          return py::make_tuple(wrap_tensor(r.first), wrap_tensor(r.second));
        });
  m.def("_nll_loss_backward", [](const Tensor& g, const Tensor& x, const Tensor& t, py::handle w,
                                 int reduction, int64_t ignore_index, const Tensor& total) {
    Tensor wt = opt(w);
    return maybe_without_gil(worth_releasing(x), [&] {
      return nll_loss_backward(g, x, t, wt, reduction, ignore_index, total);
    });
  });
  m.def("_gelu", [](const Tensor& x, bool tanh) {
    return maybe_without_gil(worth_releasing(x), [&] { return gelu(x, tanh); });
  });
  m.def("_gelu_backward", [](const Tensor& g, const Tensor& x, bool tanh) {
    return maybe_without_gil(worth_releasing(x), [&] { return gelu_backward(g, x, tanh); });
  });
}

}  // namespace cl::bind
