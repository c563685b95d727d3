// Creation ops: fill_, full, arange, linspace, eye.
#include <cmath>

#include "core/cuda_api.h"
#include "core/error.h"
#include "ops/kernels.h"
#include "ops/ops.h"

namespace cl {

void fill_(const Tensor& t, Scalar value) {
  if (t->numel() == 0) return;
  IterInput in;
  in.scalar = value;
  ElementwiseIter it = make_elementwise_iter(t, {in});
  it.in_dtype = t->dtype;
  if (t->is_cuda()) {
    cuda::DeviceGuard g(t->device().index);
    cuda::cast(it);
  } else {
    cpu::cast(it);
  }
}

Tensor full(const Shape& sizes, Scalar value, ScalarType dtype, Device device) {
  Tensor t = empty(sizes, dtype, device);
  fill_(t, value);
  return t;
}

static void affine(const Tensor& t, double start, double step) {
  if (t->numel() == 0) return;
  if (t->is_cuda()) {
    cuda::DeviceGuard g(t->device().index);
    cuda::affine_fill(t, start, step);
  } else {
    cpu::affine_fill(t, start, step);
  }
}

Tensor arange(double start, double end, double step, ScalarType dtype, Device device) {
  CL_CHECK(step != 0, "step must be nonzero");
  CL_CHECK(std::isfinite(start) && std::isfinite(end),
           "unsupported range: ", start, " -> ", end);
  CL_CHECK((step > 0 && end >= start) || (step < 0 && end <= start),
           "upper bound and lower bound inconsistent with step sign");
  int64_t n = int64_t(std::ceil((end - start) / step));
  Tensor t = empty({n}, dtype, device);
  affine(t, start, step);
  return t;
}

Tensor linspace(double start, double end, int64_t steps, ScalarType dtype, Device device) {
  CL_CHECK(steps >= 0, "number of steps must be non-negative");
  Tensor t = empty({steps}, ScalarType::Float64, Device(DeviceType::CPU));
  double* p = reinterpret_cast<double*>(t->data());
  if (steps == 1) p[0] = start;
  if (steps > 1) {
    // torch's formula: from the start for the first half, from the end for the second.
    double step = (end - start) / double(steps - 1);
    int64_t half = steps / 2;
    for (int64_t i = 0; i < steps; ++i) {
      p[i] = i < half ? start + step * double(i) : end - step * double(steps - i - 1);
    }
  }
  return to(t, device, dtype, false, false);
}

Tensor eye(int64_t n, int64_t m, ScalarType dtype, Device device) {
  CL_CHECK(n >= 0, "n must be greater or equal to 0, got ", n);
  CL_CHECK(m >= 0, "m must be greater or equal to 0, got ", m);
  Tensor t = full({n, m}, Scalar(int64_t(0)), dtype, device);
  int64_t k = std::min(n, m);
  if (k > 0) fill_(as_strided(t, {k}, {m + 1}, 0), Scalar(int64_t(1)));
  return t;
}

}  // namespace cl
