// Creation ops: fill_, full, arange, linspace, eye.
#include <cmath>

#include "core/cuda_api.h"
#include "core/error.h"
#include "core/half.h"
#include "core/size_math.h"
#include "ops/kernels.h"
#include "ops/ops.h"

namespace cl {

namespace {
// The C++ type names torch's Scalar accessors report in overflow errors.
const char* cpp_type_name(ScalarType t) {
  switch (t) {
    case ScalarType::UInt8:
      return "uint8_t";
    case ScalarType::Int8:
      return "int8_t";
    case ScalarType::Int16:
      return "int16_t";
    case ScalarType::Int32:
      return "int";
    case ScalarType::Int64:
      return "int64_t";
    case ScalarType::Float32:
      return "float";
    case ScalarType::Float16:
      return "c10::Half";
    case ScalarType::BFloat16:
      return "c10::BFloat16";
    default:
      return dtype_name(t);
  }
}

bool int_range(ScalarType t, double& lo, double& hi) {
  switch (t) {
    case ScalarType::UInt8:
      lo = 0, hi = 255;
      return true;
    case ScalarType::Int8:
      lo = -128, hi = 127;
      return true;
    case ScalarType::Int16:
      lo = -32768, hi = 32767;
      return true;
    case ScalarType::Int32:
      lo = -2147483648.0, hi = 2147483647.0;
      return true;
    case ScalarType::Int64:
      lo = -9223372036854775808.0, hi = 9223372036854775807.0;
      return true;
    default:
      return false;
  }
}

bool overflows(Scalar v, ScalarType t, ScalarUse use) {
  if (v.is_bool() || t == ScalarType::Bool) return false;
  double lo, hi;
  if (!int_range(t, lo, hi)) {
    // Floating targets: a finite double beyond the type's range, except in the constructor
    // (which casts); 16-bit types are checked in fills only (elsewhere they saturate to inf).
    double max = t == ScalarType::Float32    ? 3.4028234663852886e38
                 : t == ScalarType::Float16  ? 65504.0
                 : t == ScalarType::BFloat16 ? 3.3895313892515355e38
                                             : 0.0;
    bool checked = t == ScalarType::Float32 ? use != ScalarUse::kConstructor
                                            : use == ScalarUse::kFill && max > 0;
    if (!checked || !v.is_floating()) return false;
    double d = v.to_double();
    return std::isfinite(d) && std::fabs(d) > max;
  }
  if (v.is_floating()) {
    double d = v.to_double();
    return std::isnan(d) || std::isinf(d) || d < lo || d > hi;
  }
  int64_t i = v.to_int();
  if (t == ScalarType::Int64) return false;
  // Negative integers may wrap into unsigned types down to -max (torch's uint8 `a - b`).
  if (t == ScalarType::UInt8) return i > 255 || i < -255;
  return double(i) < lo || double(i) > hi;
}
}  // namespace

void check_scalar_fits(Scalar value, ScalarType dtype, ScalarUse use) {
  CL_CHECK(!overflows(value, dtype, use), "value cannot be converted to type ",
           use == ScalarUse::kConstructor ? dtype_name(dtype) : cpp_type_name(dtype),
           " without overflow");
}

void fill_(const Tensor& t, Scalar value, ScalarUse use) {
  check_scalar_fits(value, t->dtype, use);
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
  CL_CHECK(std::isfinite(start) && std::isfinite(end), "unsupported range: ", start, " -> ", end);
  CL_CHECK((step > 0 && end >= start) || (step < 0 && end <= start),
           "upper bound and lower bound inconsistent with step sign");
  // A count of 2**63 or more (or none: inf - inf) fits no tensor, and converting it to an
  // int64_t would be undefined.
  const double count = std::ceil((end - start) / step);
  CL_CHECK(count >= 0 && count < 9223372036854775808.0, "invalid size, possible overflow?");
  Tensor t = empty({int64_t(count)}, dtype, device);
  affine(t, start, step);
  return t;
}

namespace {

// Note [linspace's rounding]: torch computes linspace in the result's type (double for the
// integer types, from ends truncated to that type), from the start for the first half and
// from the end for the second. Its CPU kernel rounds once per element in float and double (a
// fused multiply-add, as its vectorised loop compiles), and at every operation in the 16-bit
// types (c10::Half's operators); the values here are the same to the last bit (checked
// against torch 2.11 on the CPU). Its CUDA kernel evaluates the same expressions, which nvcc
// contracts into the same fused multiply-adds.
template <class T>
void linspace_fused(T* p, T start, T end, int64_t steps) {
  const T step = (end - start) / T(steps - 1);
  const int64_t half = steps / 2;
  for (int64_t i = 0; i < steps; ++i) {
    p[i] = i < half ? std::fma(step, T(i), start) : std::fma(-step, T(steps - i - 1), end);
  }
}

template <class H>
void linspace_16(H* p, double start_d, double end_d, int64_t steps) {
  const H start(static_cast<float>(start_d)), end(static_cast<float>(end_d));
  const H step(float(H(float(end) - float(start))) / float(H(float(steps - 1))));
  const int64_t half = steps / 2;
  for (int64_t i = 0; i < steps; ++i) {
    if (i < half) {
      p[i] = H(float(start) + float(H(float(step) * float(H(float(i))))));
    } else {
      p[i] = H(float(end) - float(H(float(step) * float(H(float(steps - i - 1))))));
    }
  }
}

}  // namespace

Tensor linspace(double start, double end, int64_t steps, ScalarType dtype, Device device) {
  CL_CHECK(steps >= 0, "number of steps must be non-negative");
  const Device cpu(DeviceType::CPU);
  if (steps > 1 && (dtype == ScalarType::Float32 || dtype == ScalarType::Float64 ||
                    dtype == ScalarType::Float16 || dtype == ScalarType::BFloat16)) {
    Tensor t = empty({steps}, dtype, cpu);  // Note [linspace's rounding]
    switch (dtype) {
      case ScalarType::Float32:
        linspace_fused(reinterpret_cast<float*>(t->data()), float(start), float(end), steps);
        break;
      case ScalarType::Float64:
        linspace_fused(reinterpret_cast<double*>(t->data()), start, end, steps);
        break;
      case ScalarType::Float16:
        linspace_16(reinterpret_cast<Half*>(t->data()), start, end, steps);
        break;
      default:
        linspace_16(reinterpret_cast<BFloat16*>(t->data()), start, end, steps);
    }
    return device.is_cpu() ? t : to(t, device, dtype, false, false);
  }
  if (is_integral(dtype, false)) {
    // The ends in the result's type first (truncated, as Scalar::to does), then the values
    // between them in double, truncated.
    start = std::trunc(start);
    end = std::trunc(end);
  }
  Tensor t = empty({steps}, ScalarType::Float64, cpu);
  double* p = reinterpret_cast<double*>(t->data());
  if (steps == 1) p[0] = start;
  if (steps > 1) linspace_fused(p, start, end, steps);  // in double, then converted
  return to(t, device, dtype, false, false);
}

Tensor eye(int64_t n, int64_t m, ScalarType dtype, Device device) {
  CL_CHECK(n >= 0, "n must be greater or equal to 0, got ", n);
  CL_CHECK(m >= 0, "m must be greater or equal to 0, got ", m);
  checked_numel({n, m});  // torch's order: the element count, then the bytes
  Tensor t = full({n, m}, Scalar(int64_t(0)), dtype, device);
  int64_t k = std::min(n, m);
  if (k > 0) fill_(as_strided(t, {k}, {m + 1}, 0), Scalar(int64_t(1)));
  return t;
}

}  // namespace cl
