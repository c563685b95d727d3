// Op entry points for the Python layer, and the arithmetic dunders of Tensor (in C++ so
// that `a + b` costs one call).
#include "bindings/convert.h"
#include "core/cuda_api.h"
#include "core/error.h"

namespace cl::bind {

namespace {

py::object scalar_to_py(const Scalar& s) {
  switch (s.kind()) {
    case Scalar::Kind::Bool:
      return py::bool_(s.to<bool>());
    case Scalar::Kind::Int:
      return py::int_(s.to_int());
    default:
      return py::float_(s.to_double());
  }
}

Tensor opt_tensor(py::handle h) { return h.is_none() ? Tensor() : as_tensor(h); }

// Set by cudalite.autograd: called as hook(op_name, kind, self, other) for arithmetic
// dunders when grad mode is on and a tensor operand requires grad; kind is "fwd", "rev" or
// "inplace". Everything else takes the C++ path with no Python in between.
py::object* g_autograd_hook = nullptr;

bool needs_grad(const Tensor& self, const std::optional<Operand>& o) {
  if (!g_autograd_hook || !grad_enabled()) return false;
  return self->requires_grad || (o && !o->is_scalar && o->tensor->requires_grad);
}

template <BinaryOp OP>
py::object fwd(py::handle self_h, py::handle other) {
  auto o = to_operand(other);
  if (!o) return py::reinterpret_borrow<py::object>(Py_NotImplemented);
  Tensor self = as_tensor(self_h);
  if (needs_grad(self, o)) return (*g_autograd_hook)(binary_op_name(OP), "fwd", self_h, other);
  return py::cast(binary(OP, Operand(self), *o));
}
template <BinaryOp OP>
py::object rev(py::handle self_h, py::handle other) {
  auto o = to_operand(other);
  if (!o) return py::reinterpret_borrow<py::object>(Py_NotImplemented);
  Tensor self = as_tensor(self_h);
  if (needs_grad(self, o)) return (*g_autograd_hook)(binary_op_name(OP), "rev", self_h, other);
  return py::cast(binary(OP, *o, Operand(self)));
}
template <BinaryOp OP>
py::object inplace(py::handle self_h, py::handle other) {
  auto o = to_operand(other);
  if (!o) return py::reinterpret_borrow<py::object>(Py_NotImplemented);
  Tensor self = as_tensor(self_h);
  if (needs_grad(self, o)) return (*g_autograd_hook)(binary_op_name(OP), "inplace", self_h, other);
  binary(OP, Operand(self), *o, self);
  return py::reinterpret_borrow<py::object>(self_h);
}

// Tensor.add_/sub_/mul_/div_ in one call (no Python frame) when the keyword is at its
// default and the operand is a tensor or a number: the in-place dunder's case. Anything else
// (alpha, rounding_mode, bad operands, autograd) goes to the full Python method, which
// _tensor_math registers with _set_inplace_slow.
py::dict* g_inplace_slow = nullptr;

bool is_int_one(py::handle h) {
  return PyLong_CheckExact(h.ptr()) && PyLong_AsLongLong(h.ptr()) == 1;
}

template <BinaryOp OP>
py::object inplace_method(const char* name, py::handle self, py::handle other, const char* key,
                          py::handle value, bool fast) {
  if (fast) {
    py::object r = inplace<OP>(self, other);
    if (r.ptr() != Py_NotImplemented) return r;
  }
  CL_CHECK(g_inplace_slow, "cudalite: in-place methods used before cudalite was imported");
  py::object slow = (*g_inplace_slow)[name];
  if (!key) return slow(self, other);
  py::dict kw;
  kw[key] = value;
  return slow(self, other, **kw);
}

}  // namespace

Scalar to_scalar(py::handle h) {
  PyObject* p = h.ptr();
  if (PyBool_Check(p)) return Scalar(p == Py_True);
  if (PyLong_Check(p)) {
    int overflow = 0;
    long long v = PyLong_AsLongLongAndOverflow(p, &overflow);
    if (overflow) {
      // What torch raises for a Python int outside int64 used as a Scalar.
      PyErr_SetString(PyExc_OverflowError, "int too big to convert");
      throw py::error_already_set();
    }
    return Scalar(int64_t(v));
  }
  if (PyFloat_Check(p)) return Scalar(PyFloat_AS_DOUBLE(p));
  if (is_tensor(h)) return item(as_tensor(h));
  // NumPy scalars and other numbers.
  if (PyIndex_Check(p))
    return Scalar(py::reinterpret_steal<py::object>(PyNumber_Index(p)).cast<int64_t>());
  if (PyObject_HasAttrString(p, "__float__")) {
    if (py::hasattr(h, "dtype") && py::str(h.attr("dtype")).cast<std::string>() == "bool") {
      return Scalar(h.cast<bool>());
    }
    return Scalar(h.cast<double>());
  }
  throw TypeError(detail::str("expected a number, got ",
                              std::string(py::str(py::type::of(h).attr("__name__")))));
}

std::optional<Operand> to_operand(py::handle h) {
  if (is_tensor(h)) return Operand(as_tensor(h));
  PyObject* p = h.ptr();
  if (PyBool_Check(p) || PyLong_Check(p) || PyFloat_Check(p)) return Operand(to_scalar(h));
  // NumPy scalars (not arrays: those take NumPy's own path).
  if (py::hasattr(h, "dtype") && py::hasattr(h, "item") && !py::hasattr(h, "__len__")) {
    return Operand(to_scalar(h.attr("item")()));
  }
  return std::nullopt;
}

namespace {
// torch's deprecation warning when an out= tensor with elements had to be resized.
void warn_if_resized(const Tensor& out, const Shape& before) {
  if (!out || out->sizes == before) return;
  int64_t n = 1;
  for (int64_t s : before) n *= s;
  if (n == 0) return;
  std::string msg = detail::str(
      "An output with one or more elements was resized since it had shape ", shape_str(before),
      ", which does not match the required output shape ", shape_str(out->sizes),
      ". This behavior is deprecated, and in a future cudalite release outputs will not be "
      "resized unless they have zero elements. You can explicitly reuse an out tensor t by "
      "resizing it, inplace, to zero elements with t.resize_(0).");
  if (PyErr_WarnEx(PyExc_UserWarning, msg.c_str(), 1) < 0) throw py::error_already_set();
}
}  // namespace

void bind_ops(py::module_& m) {
  py::handle cls = tensor_type();
  auto def = [&](const char* name, py::cpp_function f) { py::setattr(cls, name, f); };
  (void)def;
  PyTensor tcls = py::reinterpret_borrow<PyTensor>(cls);
#define CL_BIN(name, OP)                                            \
  tcls.def("__" name "__", &fwd<BinaryOp::OP>, py::is_operator());  \
  tcls.def("__r" name "__", &rev<BinaryOp::OP>, py::is_operator()); \
  tcls.def("__i" name "__", &inplace<BinaryOp::OP>, py::is_operator());
  CL_BIN("add", Add)
  CL_BIN("sub", Sub)
  CL_BIN("mul", Mul)
  CL_BIN("truediv", Div)
  CL_BIN("floordiv", FloorDiv)
  CL_BIN("mod", Rem)
  CL_BIN("pow", Pow)
  CL_BIN("and", BitAnd)
  CL_BIN("or", BitOr)
  CL_BIN("xor", BitXor)
#undef CL_BIN
  tcls.def(
          "add_",
          [](py::handle s, py::handle o, py::handle alpha) {
            return inplace_method<BinaryOp::Add>("add_", s, o, "alpha", alpha, is_int_one(alpha));
          },
          py::arg("other"), py::kw_only(), py::arg("alpha") = 1)
      .def(
          "sub_",
          [](py::handle s, py::handle o, py::handle alpha) {
            return inplace_method<BinaryOp::Sub>("sub_", s, o, "alpha", alpha, is_int_one(alpha));
          },
          py::arg("other"), py::kw_only(), py::arg("alpha") = 1)
      .def(
          "mul_",
          [](py::handle s, py::handle o) {
            return inplace_method<BinaryOp::Mul>("mul_", s, o, nullptr, py::none(), true);
          },
          py::arg("other"))
      .def(
          "div_",
          [](py::handle s, py::handle o, py::handle mode) {
            return inplace_method<BinaryOp::Div>("div_", s, o, "rounding_mode", mode,
                                                 mode.is_none());
          },
          py::arg("other"), py::kw_only(), py::arg("rounding_mode") = py::none());
  tcls.def("__eq__", &fwd<BinaryOp::Eq>, py::is_operator())
      .def("__ne__", &fwd<BinaryOp::Ne>, py::is_operator())
      .def("__lt__", &fwd<BinaryOp::Lt>, py::is_operator())
      .def("__le__", &fwd<BinaryOp::Le>, py::is_operator())
      .def("__gt__", &fwd<BinaryOp::Gt>, py::is_operator())
      .def("__ge__", &fwd<BinaryOp::Ge>, py::is_operator())
      .def("__neg__",
           [](py::handle h) -> py::object {
             Tensor t = as_tensor(h);
             if (needs_grad(t, std::nullopt))
               return (*g_autograd_hook)("neg", "fwd", h, py::none());
             return py::cast(unary(UnaryOp::Neg, t));
           })
      .def("__abs__", [](const Tensor& t) { return unary(UnaryOp::Abs, t); })
      .def("__invert__",
           [](const Tensor& t) {
             CL_CHECK_TYPE(!is_floating(t->dtype),
                           "~ (operator.invert) is only implemented on integer and Boolean-type "
                           "tensors");
             return unary(t->dtype == ScalarType::Bool ? UnaryOp::LogicalNot : UnaryOp::BitNot, t);
           })
      .def("__hash__", [](py::handle self) {
        return py::hash(py::int_(reinterpret_cast<uintptr_t>(self.ptr())));
      });

  py::list bnames, unames;
  for (int i = 0; i <= int(BinaryOp::LogicalXor); ++i) bnames.append(binary_op_name(BinaryOp(i)));
  for (int i = 0; i <= int(UnaryOp::IsFinite); ++i) unames.append(unary_op_name(UnaryOp(i)));
  m.attr("_binary_op_names") = bnames;
  m.attr("_unary_op_names") = unames;
  m.def("_set_autograd_hook", [](py::object f) {
    g_autograd_hook = f.is_none() ? nullptr : new py::object(std::move(f));
  });
  m.def("_set_inplace_slow", [](py::dict d) { g_inplace_slow = new py::dict(std::move(d)); });
  m.def("_set_grad_enabled", &set_grad_enabled);
  m.def("_is_grad_enabled", &grad_enabled);
  m.def(
      "_binary",
      [](int op, py::handle a, py::handle b, py::handle out) {
        auto oa = to_operand(a), ob = to_operand(b);
        if (!oa || !ob) {
          throw TypeError(detail::str(
              binary_op_name(BinaryOp(op)), "(): argument 'other' must be Tensor or Number, got ",
              std::string(py::str(py::type::of(oa ? b : a).attr("__name__")))));
        }
        Tensor o = opt_tensor(out);
        Shape before = o ? o->sizes : Shape{};
        Tensor r = binary(BinaryOp(op), *oa, *ob, o);
        warn_if_resized(o, before);
        return r;
      },
      py::arg("op"), py::arg("a"), py::arg("b"), py::arg("out") = py::none());
  m.def(
      "_unary",
      [](int op, const Tensor& a, py::handle out) {
        Tensor o = opt_tensor(out);
        Shape before = o ? o->sizes : Shape{};
        Tensor r = unary(UnaryOp(op), a, o);
        warn_if_resized(o, before);
        return r;
      },
      py::arg("op"), py::arg("a"), py::arg("out") = py::none());
  m.def("_where", [](const Tensor& c, py::handle a, py::handle b) {
    auto oa = to_operand(a), ob = to_operand(b);
    if (!oa || !ob) throw TypeError("where(): expected Tensor or Number arguments");
    return where(c, *oa, *ob);
  });
  m.def(
      "_clamp",
      [](const Tensor& a, py::handle lo, py::handle hi, py::handle out) {
        std::optional<Scalar> l, h;
        if (!lo.is_none()) l = to_scalar(lo);
        if (!hi.is_none()) h = to_scalar(hi);
        Tensor o = opt_tensor(out);
        Shape before = o ? o->sizes : Shape{};
        Tensor r = clamp(a, l, h, o);
        warn_if_resized(o, before);
        return r;
      },
      py::arg("a"), py::arg("min") = py::none(), py::arg("max") = py::none(),
      py::arg("out") = py::none());
  m.def(
      "_result_type",
      [](py::handle a, py::handle b) {
        auto oa = to_operand(a), ob = to_operand(b);
        CL_CHECK_TYPE(oa && ob, "result_type(): expected Tensor or Number arguments");
        return dtype_object(result_type({&*oa, &*ob}));
      },
      py::return_value_policy::reference);
  m.def("_reduce", [](int op, const Tensor& t, py::handle dims, bool keepdim, py::handle dtype) {
    Shape d;
    if (!dims.is_none()) d = to_shape(dims);
    return reduce(ReduceOp(op), t, d, keepdim, to_optional_dtype(dtype));
  });
  m.def("_reduce_with_indices", [](bool is_max, const Tensor& t, int64_t dim, bool keepdim) {
    auto [v, i] = reduce_with_indices(is_max, t, dim, keepdim);
    return py::make_tuple(v, i);
  });
  m.def("_copy_", [](const Tensor& dst, const Tensor& src, bool nb) { copy_(dst, src, nb); });
  m.def("_to", [](const Tensor& t, py::handle device, py::handle dtype, bool nb, bool copy) {
    Device d = device.is_none() ? t->device() : to_device(device);
    ScalarType dt = dtype.is_none() ? t->dtype : to_dtype(dtype);
    if (d.is_cuda() && d.has_index()) cuda::check_device_index(d.index);
    return to(t, d, dt, nb, copy);
  });
  m.def("_item", [](const Tensor& t) { return scalar_to_py(item(t)); });
  m.def("_fill_", [](const Tensor& t, py::handle v) { fill_(t, to_scalar(v)); });
  m.def("_gather_offsets", &gather_offsets);
  m.def("_scatter_offsets", &scatter_offsets);
  m.def("_nonzero", &nonzero);
  m.def("_cat", [](const std::vector<Tensor>& ts, int64_t dim) { return cat(ts, dim); });
  m.def("_uniform_", &uniform_);
  m.def("_normal_", &normal_);
  m.def("_random_int_", &random_int_);
  m.def("_manual_seed", &manual_seed);
  m.def("_initial_seed", [](py::handle d) { return initial_seed(to_device(d)); });
  m.def("_get_rng_state", [](py::handle d) { return get_rng_state(to_device(d)); });
  m.def("_set_rng_state",
        [](py::handle d, uint64_t s, uint64_t o) { set_rng_state(to_device(d), s, o); });
  m.def("_cuda_matmul", &cuda_matmul);
  m.def("_check_same_device", [](const std::vector<Tensor>& ts) {
    std::vector<const Tensor*> p;
    for (auto& t : ts) p.push_back(&t);
    check_same_device(p);
  });
}

}  // namespace cl::bind
