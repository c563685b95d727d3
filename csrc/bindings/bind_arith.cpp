// Tensor's arithmetic entry points: the binary dunders (a + b, 2 * a, a += b, a < b, ...),
// unary minus, and the in-place methods add_/sub_/mul_/div_.
//
// Note [Arithmetic entry points]
// A one-element `a + b` on the GPU is launch-bound: the launch itself costs about 3 us, and
// what cudalite does around it decides how far below torch's time it lands. So these are
// plain CPython methods (METH_FASTCALL descriptors set on the pybind11 class) rather than
// pybind11 functions, whose dispatcher (overload loop, argument casters) costs as much as the
// op's own checks. Operands are read with as_tensor and results wrapped with wrap_tensor
// (bindings/convert.h). C++ exceptions reach Python through pybind11's registered
// translators, exactly as from any other binding (bindings/fast_method.h).
#include <optional>
#include <string>
#include <utility>

#include "bindings/fast_method.h"
#include "bindings/gil.h"

namespace cl::bind {

namespace {

// Set by cudalite.autograd: called as hook(op_name, kind, self, other) for arithmetic
// dunders when grad mode is on and a tensor operand requires grad; kind is "fwd", "rev" or
// "inplace". Everything else takes the C++ path with no Python in between.
py::object* g_autograd_hook = nullptr;

bool needs_grad(const Tensor& self, const std::optional<Operand>& o) {
  if (!g_autograd_hook || !grad_enabled()) return false;
  return self->requires_grad || (o && !o->is_scalar && o->tensor->requires_grad);
}

// self OP other ("fwd"), other OP self ("rev", the reflected dunder) or self OP= other
// ("inplace"); NotImplemented for an operand that is neither a tensor nor a number.
enum class Form { Fwd, Rev, Inplace };

template <BinaryOp OP, Form F>
py::object arith(py::handle self_h, py::handle other) {
  auto o = to_operand(other);
  if (!o) return py::reinterpret_borrow<py::object>(Py_NotImplemented);
  if (OP == BinaryOp::Pow && F != Form::Inplace && autocast_active()) {
    // pow is in autocast's float32 list: its entry casts (Note [Autocast at the entry]).
    py::object pow = py::module_::import("cudalite").attr("pow");
    return F == Form::Fwd ? pow(self_h, other) : pow(other, self_h);
  }
  Tensor self = as_tensor(self_h);
  if (needs_grad(self, o)) {
    static constexpr const char* kForm[] = {"fwd", "rev", "inplace"};
    return (*g_autograd_hook)(binary_op_name(OP), kForm[int(F)], self_h, other);
  }
  // Note [Releasing the GIL] (bindings/gil.h): the operands are converted and held here.
  const bool release = worth_releasing(self) || (!o->is_scalar && worth_releasing(o->tensor)) ||
                       large_broadcast({&self, o->is_scalar ? nullptr : &o->tensor});
  if constexpr (F == Form::Fwd) {
    return wrap_tensor(maybe_without_gil(release, [&] { return binary(OP, Operand(self), *o); }));
  } else if constexpr (F == Form::Rev) {
    return wrap_tensor(maybe_without_gil(release, [&] {
      if (OP == BinaryOp::Div && o->is_scalar) {  // torch's __rtruediv__: reciprocal() * number
        return binary(BinaryOp::Mul, Operand(unary(UnaryOp::Reciprocal, self)), *o);
      }
      return binary(OP, *o, Operand(self));
    }));
  } else {
    maybe_without_gil(release, [&] { binary(OP, Operand(self), *o, self); });
    self->bump_version();
    return py::reinterpret_borrow<py::object>(self_h);
  }
}

template <py::object (*F)(py::handle, py::handle)>
PyObject* one_arg(PyObject* self, PyObject* const* args, Py_ssize_t nargs) {
  if (nargs != 1) {
    PyErr_Format(PyExc_TypeError, "expected 1 argument, got %zd", nargs);
    return nullptr;
  }
  return guarded([&] { return F(self, args[0]); });
}

PyObject* neg(PyObject* self, PyObject*) {
  return guarded([&] {
    Tensor t = as_tensor(self);
    if (needs_grad(t, std::nullopt))
      return (*g_autograd_hook)("neg", "fwd", py::handle(self), py::none());
    return wrap_tensor(
        maybe_without_gil(worth_releasing(t), [&] { return unary(UnaryOp::Neg, t); }));
  });
}

// a.add_(b) etc.: one tensor or number and no keywords is the in-place dunder's case; the
// rest (alpha=, rounding_mode=, bad arguments, autograd) is the full Python method's
// (cudalite/_tensor_math.py registers it with _set_slow_methods).
template <BinaryOp OP>
PyObject* inplace_method(PyObject* self, PyObject* const* args, Py_ssize_t nargs,
                         PyObject* kwnames) {
  static const std::string name = std::string(binary_op_name(OP)) + "_";
  return guarded([&]() -> py::object {
    if (nargs == 1 && !kwnames) {
      py::object r = arith<OP, Form::Inplace>(self, args[0]);
      if (r.ptr() != Py_NotImplemented) return r;
    }
    return call_slow(name.c_str(), self, args, nargs, kwnames);
  });
}

#define CL_DUNDERS(name, OP)                                                                    \
  {"__" name "__", as_cfunction(&one_arg<&arith<BinaryOp::OP, Form::Fwd>>), METH_FASTCALL,      \
   nullptr},                                                                                    \
      {"__r" name "__", as_cfunction(&one_arg<&arith<BinaryOp::OP, Form::Rev>>), METH_FASTCALL, \
       nullptr},                                                                                \
      {"__i" name "__", as_cfunction(&one_arg<&arith<BinaryOp::OP, Form::Inplace>>),            \
       METH_FASTCALL, nullptr},
#define CL_COMPARE(name, OP) \
  {"__" name "__", as_cfunction(&one_arg<&arith<BinaryOp::OP, Form::Fwd>>), METH_FASTCALL, nullptr},
#define CL_INPLACE(name, OP, doc) \
  {name, as_cfunction(&inplace_method<BinaryOp::OP>), METH_FASTCALL | METH_KEYWORDS, doc},

// clang-format off
PyMethodDef g_methods[] = {
    CL_DUNDERS("add", Add) CL_DUNDERS("sub", Sub) CL_DUNDERS("mul", Mul)
    CL_DUNDERS("truediv", Div) CL_DUNDERS("floordiv", FloorDiv) CL_DUNDERS("mod", Rem)
    CL_DUNDERS("pow", Pow) CL_DUNDERS("and", BitAnd) CL_DUNDERS("or", BitOr)
    CL_DUNDERS("xor", BitXor)
    CL_COMPARE("eq", Eq) CL_COMPARE("ne", Ne) CL_COMPARE("lt", Lt) CL_COMPARE("le", Le)
    CL_COMPARE("gt", Gt) CL_COMPARE("ge", Ge)
    CL_INPLACE("add_", Add, "add_(other, *, alpha=1) -> Tensor: in-place add")
    CL_INPLACE("sub_", Sub, "sub_(other, *, alpha=1) -> Tensor: in-place subtract")
    CL_INPLACE("mul_", Mul, "mul_(other) -> Tensor: in-place multiply")
    CL_INPLACE("div_", Div, "div_(other, *, rounding_mode=None) -> Tensor: in-place divide")
    {"__neg__", neg, METH_NOARGS, nullptr},
    {nullptr, nullptr, 0, nullptr}};
// clang-format on

#undef CL_DUNDERS
#undef CL_COMPARE
#undef CL_INPLACE

}  // namespace

void bind_arith(py::module_& m) {
  add_tensor_methods(g_methods);
  m.def("_set_autograd_hook", [](py::object f) {
    g_autograd_hook = f.is_none() ? nullptr : new py::object(std::move(f));
  });
}

}  // namespace cl::bind
