// Elementwise ops: torch's type promotion, device rules and output handling, then one call
// into the CPU or CUDA loops.
#include <algorithm>
#include <cmath>

#include "core/cuda_api.h"
#include "core/error.h"
#include "core/mem_overlap.h"
#include "core/resize.h"
#include "ops/kernels.h"
#include "ops/ops.h"

namespace cl {

namespace {
using namespace op_flags;
constexpr OpInfo kBinaryOps[] = {
#define CL_BINARY_OP(Enum, name, result, loop, flags, aliases, numpy) \
  {name, OpResult::result, OpLoop::loop, uint32_t(flags), aliases, numpy},
#include "ops/ops.def"
#undef CL_BINARY_OP
};
constexpr OpInfo kUnaryOps[] = {
#define CL_UNARY_OP(Enum, name, result, loop, flags, aliases, numpy) \
  {name, OpResult::result, OpLoop::loop, uint32_t(flags), aliases, numpy},
#include "ops/ops.def"
#undef CL_UNARY_OP
};
}  // namespace

const OpInfo& op_info(BinaryOp op) { return kBinaryOps[int(op)]; }
const OpInfo& op_info(UnaryOp op) { return kUnaryOps[int(op)]; }

bool loop_takes(OpLoop loop, ScalarType t) {
  switch (loop) {
    case OpLoop::All:
      return true;
    case OpLoop::Floating:
      return is_floating(t);
    case OpLoop::Integral:
      return !is_floating(t);
    case OpLoop::NotBool:
      return t != ScalarType::Bool;
  }
  return false;
}

ScalarType result_type(Span<const Operand*> ops) {
  // torch's ResultTypeState: tensors with dims, 0-dim tensors, then numbers.
  std::optional<ScalarType> dim_r, zero_r, wrapped_r;
  auto upd = [](std::optional<ScalarType>& r, ScalarType t) { r = r ? promote_types(*r, t) : t; };
  for (const Operand* o : ops) {
    if (o->is_scalar) {
      upd(wrapped_r, o->scalar.natural_dtype());
    } else if (o->tensor->dim() == 0) {
      upd(zero_r, o->tensor->dtype);
    } else {
      upd(dim_r, o->tensor->dtype);
    }
  }
  auto combine = [](std::optional<ScalarType> higher,
                    std::optional<ScalarType> lower) -> std::optional<ScalarType> {
    if (!higher) return lower;
    if (!lower) return higher;
    if (is_floating(*higher)) return higher;
    if (*higher == ScalarType::Bool || is_floating(*lower)) return promote_types(*higher, *lower);
    return higher;
  };
  auto r = combine(dim_r, combine(zero_r, wrapped_r));
  CL_CHECK(r.has_value(), "result_type needs at least one operand");
  return *r;
}

void check_same_device(Span<const Tensor*> ts) {
  const Tensor* first = nullptr;
  for (const Tensor* t : ts) {
    if (!*t) continue;
    if (!first) {
      first = t;
      continue;
    }
    Device a = (*first)->device(), b = (*t)->device();
    if (a == b) continue;
    // A 0-dim CPU tensor is a number to a CUDA op.
    if (b.is_cpu() && (*t)->dim() == 0) continue;
    if (a.is_cpu() && (*first)->dim() == 0) {
      first = t;
      continue;
    }
    CL_THROW("Expected all tensors to be on the same device, but found at least two devices, ",
             a.str(), " and ", b.str(), "!");
  }
}

namespace {

// The device an op runs on: that of its first CUDA tensor or dimensioned tensor.
Device op_device(Span<const Tensor*> ts) {
  Device dev(DeviceType::CPU);
  bool have = false;
  for (const Tensor* t : ts) {
    if (!*t) continue;
    if (!have || ((*t)->is_cuda() && dev.is_cpu())) {
      dev = (*t)->device();
      have = true;
    }
  }
  return dev;
}

// Converted inputs live here for the duration of an op (no heap allocation per op).
struct Keep {
  Tensor t[3];
  int n = 0;
  const Tensor* add(Tensor x) {
    t[n] = std::move(x);
    return &t[n++];
  }
};

// `o` must outlive the loop: an input of the right dtype is read in place.
IterInput as_input(const Operand& o, ScalarType ct, Device dev, Keep& keep) {
  IterInput in;
  if (o.is_scalar) {
    in.scalar = o.scalar;
    return in;
  }
  const Tensor& t = o.tensor;
  if (t->device() != dev) {  // a 0-dim CPU tensor used as a number
    in.scalar = item(t);
    return in;
  }
  in.tensor = t->dtype != ct ? keep.add(to(t, dev, ct, false, true)) : &t;
  return in;
}

Shape operand_shape(const Operand& o) { return o.is_scalar ? Shape{} : o.tensor->sizes; }

// torch's checks of an out= tensor; a wrong shape is an error only for in-place ops (others
// resize `out` afterwards: resize_out).
void check_out(const Tensor& out, const Shape& shape, ScalarType result, Device dev, bool inplace) {
  CL_CHECK(can_cast(result, out->dtype), "result type ", dtype_short_name(result),
           " can't be cast to the desired output type ", dtype_short_name(out->dtype));
  if (out->device() != dev) {
    CL_THROW("Expected all tensors to be on the same device, but found at least two devices, ",
             dev.str(), " and ", out->device().str(), "!");
  }
  if (inplace && out->sizes != shape) {
    CL_THROW("output with shape ", shape_str(out->sizes), " doesn't match the broadcast shape ",
             shape_str(shape));
  }
}

// torch resizes an out= tensor to the result's shape in place (resize_: it keeps its storage
// when that is large enough); the bindings warn, as torch does, when it had elements.
void resize_out(const Tensor& out, const Shape& shape) {
  if (out->sizes != shape) resize_(out, shape);
}

// Runs `launch(iter)` writing into `out` (allocated when null, laid out like `like`), through
// a temporary when the output dtype differs from the dtype the loop produces. An existing
// `out` may not overlap itself or, partly, one of the tensor `inputs` (null: a number).
template <class Launch>
Tensor run_into(const Tensor& out_in, const Shape& shape, ScalarType produced, Device dev,
                bool inplace, const Tensor* like, Span<const Tensor*> inputs, Launch launch) {
  if (!out_in) {
    Tensor out = empty_like_layout(shape, produced, dev, like);
    launch(out);
    return out;
  }
  check_out(out_in, shape, produced, dev, inplace);
  // As torch's TensorIterator, the overlap checks see `out` before it is resized.
  assert_no_internal_overlap(out_in);
  for (const Tensor* in : inputs) {
    if (in) assert_no_partial_overlap(out_in, *in);
  }
  resize_out(out_in, shape);
  if (out_in->dtype == produced) {
    launch(out_in);
  } else {
    Tensor tmp = empty(shape, produced, dev);
    launch(tmp);
    copy_(out_in, tmp);
  }
  return out_in;
}

std::string not_implemented(const char* name, Device dev, ScalarType t) {
  // torch's kernels of the shifts are named for the operators
  if (std::string(name) == "bitwise_left_shift") name = "lshift";
  if (std::string(name) == "bitwise_right_shift") name = "rshift";
  return detail::str("\"", name, dev.is_cuda() ? "_cuda" : "_cpu", "\" not implemented for '",
                     dtype_short_name(t), "'");
}

}  // namespace

// Note [Numbers at compute precision]
// In an op on 16-bit floats, torch reads a Python number either rounded to the tensor's dtype
// or at float precision, kernel by kernel and device by device, and the two give different
// results (`half_x * 1e5` is finite in float, inf when 1e5 is rounded to half first;
// `bf16_x + 0.3` adds 0.30078125 when rounded). scripts/probe_scalar_precision.py measured
// torch 2.11: on the CPU, mul (the number on either side) and div and floor_divide (the number
// second) read it at float precision; on CUDA, add and sub too; every other op rounds it
// first. On CUDA a floating division by a number is a multiplication by its reciprocal
// (computed in double), for every floating dtype; `number / x` is reciprocal(x) * number
// everywhere (torch's __rtruediv__, in the bindings). torch's CUDA floor_divide by a number
// also works with the reciprocal, which cudalite does not copy (a last-bit difference for
// quotients beyond 2^24).
namespace {
unsigned scalar_opmath_bits(BinaryOp op, bool cuda, const Operand& a, const Operand& b) {
  bool either = op == BinaryOp::Mul || (cuda && (op == BinaryOp::Add || op == BinaryOp::Sub));
  bool second = either || op == BinaryOp::Div || op == BinaryOp::FloorDiv;
  return (a.is_scalar && either ? 1u << 1 : 0u) | (b.is_scalar && second ? 1u << 2 : 0u);
}
}  // namespace

Tensor binary(BinaryOp op, const Operand& a, const Operand& b, const Tensor& out) {
  const Tensor* ts[3] = {&a.tensor, &b.tensor, &out};
  check_same_device({&out, &a.tensor, &b.tensor});
  Device dev = op_device({ts[0], ts[1], ts[2]});
  ScalarType rt = result_type({&a, &b});
  ScalarType ct = rt;        // dtype the loop computes in
  ScalarType produced = rt;  // dtype the loop writes
  const OpInfo& info = op_info(op);
  if (info.result == OpResult::Float) {
    if (!is_floating(rt)) ct = produced = get_default_dtype();
  } else if (info.result == OpResult::Bool) {
    produced = ScalarType::Bool;
  }
  if (info.loop == OpLoop::Integral) {
    // torch's CUDA kernels run in a floating out='s dtype, which has no bitwise kernel.
    CL_CHECK_AS(NotImplementedError, !(out && dev.is_cuda() && is_floating(out->dtype)),
                not_implemented(info.name, dev, out ? out->dtype : rt));
  }
  if (op == BinaryOp::Gcd || op == BinaryOp::Lcm || op == BinaryOp::LeftShift ||
      op == BinaryOp::RightShift) {  // integers only: bools too have no kernel
    CL_CHECK_AS(NotImplementedError, rt != ScalarType::Bool, not_implemented(info.name, dev, rt));
  }
  if (op == BinaryOp::Heaviside) {
    bool same = a.is_scalar || b.is_scalar || a.tensor->dtype == b.tensor->dtype;
    same = same && (!out || a.is_scalar || out->dtype == a.tensor->dtype);
    CL_CHECK(same, "heaviside is not yet implemented for tensors with different dtypes.");
  }
  if (op == BinaryOp::Sub) {
    // torch's sub_check: a Python True counts as a bool operand too.
    auto is_bool = [](const Operand& o) {
      return o.is_scalar ? o.scalar.is_bool() : o.tensor->dtype == ScalarType::Bool;
    };
    CL_CHECK(!(is_bool(a) && is_bool(b)),
             "Subtraction, the `-` operator, with two bool tensors is not supported. Use the `^` "
             "or `logical_xor()` operator instead.");
    CL_CHECK(!is_bool(a) && !is_bool(b),
             "Subtraction, the `-` operator, with a bool tensor is not supported. If you are "
             "trying to invert a mask, use the `~` or `logical_not()` operator instead.");
  } else if (op == BinaryOp::Pow && !is_floating(rt) && b.is_scalar && b.scalar.to_int() < 0) {
    CL_THROW("Integers to negative integer powers are not allowed.");
  } else if (op == BinaryOp::Pow && rt == ScalarType::Bool && !b.is_scalar) {
    // torch's pow(tensor, tensor) has no bool kernel (a Python exponent takes another path).
    throw NotImplementedError("\"pow\" not implemented for 'Bool'");
  } else if ((op == BinaryOp::FloorDiv || op == BinaryOp::Rem) && rt == ScalarType::Bool) {
    throw NotImplementedError(
        not_implemented(op == BinaryOp::FloorDiv ? "div_floor" : "remainder", dev, rt));
  }
  CL_CHECK_AS(NotImplementedError, loop_takes(info.loop, ct), not_implemented(info.name, dev, ct));
  if (op == BinaryOp::Div && b.is_scalar && !a.is_scalar && dev.is_cuda() && is_floating(ct)) {
    // The reciprocal of the number as given (a double), rounded once where the loop reads it.
    return binary(BinaryOp::Mul, a, Operand(Scalar(1.0 / b.scalar.to_double())), out);
  }
  // Exponents torch gives their own kernels, which cudalite follows: x ** 2 is x * x (one
  // multiply instead of a pow call, slow for float and a round trip through powf for 16-bit
  // types); x ** 0.5 and x ** -0.5 are sqrt and rsqrt, which is where they differ from pow
  // (sqrt(-0.0) is -0.0 and sqrt(-inf) nan; pow gives 0.0 and inf). torch's CPU float16
  // kernel keeps pow for those two.
  if (op == BinaryOp::Pow && !a.is_scalar && b.is_scalar && a.tensor->dtype == rt) {
    double e = b.scalar.to_double();
    if (e == 2.0 && rt != ScalarType::Bool) return unary(UnaryOp::Square, a.tensor, out);
    if (is_floating(rt) && !(rt == ScalarType::Float16 && dev.is_cpu())) {
      if (e == 0.5) return unary(UnaryOp::Sqrt, a.tensor, out);
      if (e == -0.5) return unary(UnaryOp::Rsqrt, a.tensor, out);
    }
  }
  // Same-shape and tensor-with-number operands (the common cases) need no broadcasting.
  Shape shape = !a.is_scalar && (b.is_scalar || a.tensor->sizes == b.tensor->sizes)
                    ? a.tensor->sizes
                    : broadcast_shapes(operand_shape(a), operand_shape(b));
  bool inplace = out && !a.is_scalar && out.get() == a.tensor.get();
  Keep keep;
  IterInput ia = as_input(a, ct, dev, keep);
  IterInput ib = as_input(b, ct, dev, keep);
  if ((op == BinaryOp::FloorDiv || op == BinaryOp::Rem || op == BinaryOp::Fmod) &&
      !is_floating(ct) && ct != ScalarType::Bool && dev.is_cpu() && shape_numel(shape) > 0) {
    // Integer division by zero: torch raises on the CPU (the CUDA result is unspecified);
    // an empty result divides nothing.
    bool zero = ib.tensor
                    ? item(reduce(ReduceOp::Any,
                                  binary(BinaryOp::Eq, Operand(*ib.tensor), Scalar(0)), {}, false))
                              .to_int() != 0
                    : ib.scalar.to_int() == 0;
    CL_CHECK(!zero, "ZeroDivisionError");
  }
  // The output takes the layout of the first operand of the full shape (torch orders the
  // output's dims by the first operand's strides, skipping broadcast dims).
  const Tensor* like = nullptr;
  if (!a.is_scalar && a.tensor->sizes == shape) {
    like = &a.tensor;
  } else if (!b.is_scalar && b.tensor->sizes == shape) {
    like = &b.tensor;
  }
  const Tensor* ins[2] = {a.is_scalar ? nullptr : &a.tensor, b.is_scalar ? nullptr : &b.tensor};
  return run_into(out, shape, produced, dev, inplace, like, {ins[0], ins[1]}, [&](const Tensor& o) {
    ElementwiseIter it = make_elementwise_iter(o, {ia, ib});
    it.in_dtype = ct;
    it.scalar_opmath = scalar_opmath_bits(op, dev.is_cuda(), a, b);
    if (dev.is_cuda()) {
      cuda::binary(it, op);
    } else {
      cpu::binary(it, op);
    }
  });
}

Tensor unary(UnaryOp op, const Tensor& a, const Tensor& out) {
  check_same_device({&a, &out});
  Device dev = a->device();
  ScalarType ct = a->dtype, produced = a->dtype;
  const OpInfo& info = op_info(op);
  bool int_identity = info.flags & op_flags::IntIdentity;
  bool identity = (int_identity && !is_floating(ct) && ct != ScalarType::Bool) ||
                  (op == UnaryOp::Abs && ct == ScalarType::Bool && dev.is_cuda());
  if (identity) {
    // Rounding an integer is the identity, and so is abs of a bool (torch has it on CUDA only).
    if (out) {
      check_out(out, a->sizes, a->dtype, dev, out.get() == a.get());
      resize_out(out, a->sizes);
      if (out.get() != a.get()) copy_(out, a);
      return out;
    }
    return clone(a);
  }
  if (ct == ScalarType::Bool) {
    // torch has no bool kernels for these; square is pow(x, 2), which promotes to int64.
    CL_CHECK(op != UnaryOp::Relu, "Boolean inputs not supported for relu");
    if (op == UnaryOp::Abs) throw NotImplementedError(not_implemented("abs", dev, ct));  // CPU
    if (int_identity) {
      std::string name = std::string(info.name) + (dev.is_cuda() ? "" : "_vml");
      throw NotImplementedError(not_implemented(name.c_str(), dev, ct));
    }
    if (op == UnaryOp::Square) ct = produced = ScalarType::Int64;
  }
  if (info.result == OpResult::Float && !is_floating(ct)) ct = produced = get_default_dtype();
  if (info.result == OpResult::Bool) produced = ScalarType::Bool;
  if (op == UnaryOp::Neg && ct == ScalarType::Bool) {
    CL_THROW(
        "Negation, the `-` operator, on a bool tensor is not supported. If you are trying "
        "to invert a mask, use the `~` or `logical_not()` operator instead.");
  }
  CL_CHECK_AS(NotImplementedError, loop_takes(info.loop, ct), not_implemented(info.name, dev, ct));
  Keep keep;
  Operand oa(a);
  IterInput in = as_input(oa, ct, dev, keep);
  bool inplace = out && out.get() == a.get();
  return run_into(out, a->sizes, produced, dev, inplace, &a, {&a}, [&](const Tensor& o) {
    ElementwiseIter it = make_elementwise_iter(o, {in});
    it.in_dtype = ct;
    if (dev.is_cuda()) {
      cuda::unary(it, op);
    } else {
      cpu::unary(it, op);
    }
  });
}

Tensor where(const Tensor& cond, const Operand& a, const Operand& b) {
  CL_CHECK(cond->dtype == ScalarType::Bool,
           "where expected condition to be a boolean tensor, but got a tensor with dtype ",
           dtype_short_name(cond->dtype));
  check_same_device({&cond, &a.tensor, &b.tensor});
  Device dev = op_device({&cond, &a.tensor, &b.tensor});
  ScalarType ct = result_type({&a, &b});
  // torch turns number operands into tensors of the result dtype, which must hold them.
  if (a.is_scalar) check_scalar_fits(a.scalar, ct, ScalarUse::kOperand);
  if (b.is_scalar) check_scalar_fits(b.scalar, ct, ScalarUse::kOperand);
  Shape shape = broadcast_shapes(cond->sizes, broadcast_shapes(operand_shape(a), operand_shape(b)));
  Keep keep;
  Operand oc(cond);
  IterInput ic = as_input(oc, ct, dev, keep);
  IterInput ia = as_input(a, ct, dev, keep);
  IterInput ib = as_input(b, ct, dev, keep);
  // Laid out like the first full-shape operand, the condition first (torch's operand order).
  const Tensor* like = cond->sizes == shape                       ? &cond
                       : !a.is_scalar && a.tensor->sizes == shape ? &a.tensor
                       : !b.is_scalar && b.tensor->sizes == shape ? &b.tensor
                                                                  : nullptr;
  Tensor out = empty_like_layout(shape, ct, dev, like);
  ElementwiseIter it = make_elementwise_iter(out, {ic, ia, ib});
  it.in_dtype = ct;
  if (dev.is_cuda()) {
    cuda::where(it);
  } else {
    cpu::where(it);
  }
  return out;
}

Tensor fma(const Operand& a, const Operand& b, const Operand& c, const Tensor& out) {
  check_same_device({&out, &a.tensor, &b.tensor, &c.tensor});
  Device dev = op_device({&a.tensor, &b.tensor, &c.tensor, &out});
  ScalarType ct = result_type({&a, &b, &c});
  CL_CHECK_AS(NotImplementedError, ct == ScalarType::Float32 || ct == ScalarType::Float64,
              not_implemented("fma", dev, ct));
  Shape shape =
      broadcast_shapes(operand_shape(a), broadcast_shapes(operand_shape(b), operand_shape(c)));
  bool inplace = out && ((!a.is_scalar && out.get() == a.tensor.get()) ||
                         (!b.is_scalar && out.get() == b.tensor.get()) ||
                         (!c.is_scalar && out.get() == c.tensor.get()));
  Keep keep;
  IterInput ia = as_input(a, ct, dev, keep);
  IterInput ib = as_input(b, ct, dev, keep);
  IterInput ic = as_input(c, ct, dev, keep);
  const Tensor* like = !a.is_scalar && a.tensor->sizes == shape   ? &a.tensor
                       : !b.is_scalar && b.tensor->sizes == shape ? &b.tensor
                       : !c.is_scalar && c.tensor->sizes == shape ? &c.tensor
                                                                  : nullptr;
  const Tensor* ins[3] = {a.is_scalar ? nullptr : &a.tensor, b.is_scalar ? nullptr : &b.tensor,
                          c.is_scalar ? nullptr : &c.tensor};
  return run_into(out, shape, ct, dev, inplace, like, {ins[0], ins[1], ins[2]},
                  [&](const Tensor& o) {
                    ElementwiseIter it = make_elementwise_iter(o, {ia, ib, ic});
                    it.in_dtype = ct;
                    if (dev.is_cuda()) {
                      cuda::fma(it);
                    } else {
                      cpu::fma(it);
                    }
                  });
}

Tensor clamp(const Tensor& a, std::optional<Scalar> lo, std::optional<Scalar> hi,
             const Tensor& out) {
  CL_CHECK(lo || hi, "cudalite.clamp: At least one of 'min' or 'max' must not be None");
  // The bounds must fit the result's dtype, as fills do.
  Operand oa(a), olo(lo.value_or(Scalar(0))), ohi(hi.value_or(Scalar(0)));
  ScalarType rt = lo && hi ? result_type({&oa, &olo, &ohi}) : result_type({&oa, lo ? &olo : &ohi});
  if (lo) check_scalar_fits(*lo, rt, ScalarUse::kFill);
  if (hi) check_scalar_fits(*hi, rt, ScalarUse::kFill);
  // With one bound, torch's clamp_min/clamp_max ignore a nan bound (std::max(x, nan) is x).
  auto is_nan = [](const std::optional<Scalar>& s) {
    return s && s->is_floating() && std::isnan(s->to_double());
  };
  if (!(lo && hi) && is_nan(lo ? lo : hi)) {
    Tensor r = out ? out : empty_like_layout(a->sizes, rt, a->device(), &a);
    if (r.get() != a.get()) copy_(r, a);
    return r;
  }
  Tensor r = a;
  if (lo) r = binary(BinaryOp::Maximum, Operand(r), Operand(*lo), hi ? nullptr : out);
  if (hi) r = binary(BinaryOp::Minimum, Operand(r), Operand(*hi), out);
  return r;
}

}  // namespace cl
