// Op entry points for the Python layer, and Tensor's remaining operator dunders (the
// arithmetic ones are in bind_arith.cpp).
#include "bindings/convert.h"
#include "bindings/gil.h"
#include "core/cuda_api.h"
#include "core/error.h"
#include "core/mem_overlap.h"
#include "ops/attention.h"
#include "ops/generator.h"
#include "ops/im2col.h"
#include "ops/sort.h"

namespace cl::bind {

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

namespace {

Tensor opt_tensor(py::handle h) { return h.is_none() ? Tensor() : as_tensor(h); }

// Whether an op over these operands is large enough to run without the GIL (bindings/gil.h).
bool worth_releasing(const Operand& o) {
  return !o.is_scalar && cl::bind::worth_releasing(o.tensor);
}
// The operand's tensor for large_broadcast; null for a number.
const Tensor* tensor_of(const Operand& o) { return o.is_scalar ? nullptr : &o.tensor; }

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
  if (PyIndex_Check(p)) {
    py::object i = py::reinterpret_steal<py::object>(PyNumber_Index(p));
    if (i) return Scalar(i.cast<int64_t>());
    PyErr_Clear();  // an __index__ that raises: not a number (torch's TypeError below)
  }
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

// A random fill of t that counts as an in-place write of t unless asked not to.
// The generator's counters are reserved under its own lock (ops/random.cpp), so fills from
// several threads without the GIL draw disjoint numbers.
template <class T>
auto counted_fill(void (*fill)(const Tensor&, T, T, Generator*)) {
  return [fill](const Tensor& t, T a, T b, Generator* gen, bool bump_version) {
    maybe_without_gil(worth_releasing(t), [&] { fill(t, a, b, gen); });
    if (bump_version) t->bump_version();
  };
}
template <class T>
auto counted_fill1(void (*fill)(const Tensor&, T, Generator*)) {
  return [fill](const Tensor& t, T a, Generator* gen, bool bump_version) {
    maybe_without_gil(worth_releasing(t), [&] { fill(t, a, gen); });
    if (bump_version) t->bump_version();
  };
}
}  // namespace

void bind_ops(py::module_& m) {
  PyTensor tcls = py::reinterpret_borrow<PyTensor>(tensor_type());
  tcls.def("__abs__", [](const Tensor& t) { return unary(UnaryOp::Abs, t); })
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

  // The op registry's rows (ops/ops.def) for the Python layer (cudalite/_op_registry.py).
  py::list bnames, unames, rows;
  auto row = [&](const OpInfo& o, int arity, int index) {
    static const char* kResult[] = {"same", "bool", "float"};
    static const char* kLoop[] = {"all", "floating", "integral", "not_bool"};
    using namespace op_flags;
    rows.append(py::make_tuple(o.name, arity, index, kResult[int(o.result)], kLoop[int(o.loop)],
                               bool(o.flags & Inplace), bool(o.flags & Grad),
                               bool(o.flags & TensorOnly), bool(o.flags & Custom),
                               bool(o.flags & IntIdentity), o.aliases, o.numpy));
  };
  for (int i = 0; i < kNumBinaryOps; ++i) {
    bnames.append(binary_op_name(BinaryOp(i)));
    row(op_info(BinaryOp(i)), 2, i);
  }
  for (int i = 0; i < kNumUnaryOps; ++i) {
    unames.append(unary_op_name(UnaryOp(i)));
    row(op_info(UnaryOp(i)), 1, i);
  }
  m.attr("_binary_op_names") = bnames;
  m.attr("_unary_op_names") = unames;
  m.attr("_op_info") = py::tuple(rows);
  m.def("_set_grad_enabled", &set_grad_enabled);
  m.def("_is_grad_enabled", &grad_enabled);
  m.def(
      "_binary",
      [](int op, py::handle a, py::handle b, py::handle out, bool bump_version) {
        auto oa = to_operand(a), ob = to_operand(b);
        if (!oa || !ob) {
          throw TypeError(detail::str(
              binary_op_name(BinaryOp(op)), "(): argument 'other' must be Tensor or Number, got ",
              std::string(py::str(py::type::of(oa ? b : a).attr("__name__")))));
        }
        Tensor o = opt_tensor(out);
        Shape before = o ? o->sizes : Shape{};
        Tensor r =
            maybe_without_gil(worth_releasing(*oa) || worth_releasing(*ob) || worth_releasing(o) ||
                                  large_broadcast({tensor_of(*oa), tensor_of(*ob)}),
                              [&] { return binary(BinaryOp(op), *oa, *ob, o); });
        if (o && bump_version) o->bump_version();
        warn_if_resized(o, before);
        return r;
      },
      py::arg("op"), py::arg("a"), py::arg("b"), py::arg("out") = py::none(),
      py::arg("bump_version") = true);
  m.def(
      "_unary",
      [](int op, const Tensor& a, py::handle out, bool bump_version) {
        Tensor o = opt_tensor(out);
        Shape before = o ? o->sizes : Shape{};
        Tensor r = maybe_without_gil(worth_releasing(a) || worth_releasing(o),
                                     [&] { return unary(UnaryOp(op), a, o); });
        if (o && bump_version) o->bump_version();
        warn_if_resized(o, before);
        return r;
      },
      py::arg("op"), py::arg("a"), py::arg("out") = py::none(), py::arg("bump_version") = true);
  m.def("_where", [](const Tensor& c, py::handle a, py::handle b) {
    auto oa = to_operand(a), ob = to_operand(b);
    if (!oa || !ob)
      throw TypeError("expected Tensor or Number arguments to where()");  // worded by _checked
    return maybe_without_gil(worth_releasing(c) || worth_releasing(*oa) || worth_releasing(*ob) ||
                                 large_broadcast({&c, tensor_of(*oa), tensor_of(*ob)}),
                             [&] { return where(c, *oa, *ob); });
  });
  m.def(
      "_fma",
      [](py::handle a, py::handle b, py::handle c, py::handle out) {
        auto oa = to_operand(a), ob = to_operand(b), oc = to_operand(c);
        if (!oa || !ob || !oc) throw TypeError("_fma(): arguments must be Tensors or Numbers");
        Tensor o = opt_tensor(out);
        Tensor r =
            maybe_without_gil(worth_releasing(*oa) || worth_releasing(*ob) ||
                                  worth_releasing(*oc) || worth_releasing(o) ||
                                  large_broadcast({tensor_of(*oa), tensor_of(*ob), tensor_of(*oc)}),
                              [&] { return fma(*oa, *ob, *oc, o); });
        if (o) o->bump_version();
        return r;
      },
      "a * b + c rounded once (float and double); out may be one of the inputs", py::arg("a"),
      py::arg("b"), py::arg("c"), py::arg("out") = py::none());
  m.def(
      "_clamp",
      [](const Tensor& a, py::handle lo, py::handle hi, py::handle out) {
        std::optional<Scalar> l, h;
        if (!lo.is_none()) l = to_scalar(lo);
        if (!hi.is_none()) h = to_scalar(hi);
        Tensor o = opt_tensor(out);
        Shape before = o ? o->sizes : Shape{};
        Tensor r = maybe_without_gil(worth_releasing(a) || worth_releasing(o),
                                     [&] { return clamp(a, l, h, o); });
        if (o) o->bump_version();
        warn_if_resized(o, before);
        return r;
      },
      py::arg("a"), py::arg("min") = py::none(), py::arg("max") = py::none(),
      py::arg("out") = py::none());
  m.def(
      "_result_type",
      [](py::handle a, py::handle b) {
        auto oa = to_operand(a), ob = to_operand(b);
        CL_CHECK_TYPE(oa && ob, "expected Tensor or Number arguments to result_type()");
        return dtype_object(result_type({&*oa, &*ob}));
      },
      py::return_value_policy::reference);
  // keepdim must be a bool and dim an int (not a bool), as torch's parser wants them; the
  // TypeErrors are worded by the signature check (Note [Argument errors], _checked.py).
  // The reductions' and scans' rows (ops/reductions.def): name -> the op's number.
  py::dict reduce_ops, scan_ops;
#define CL_REDUCE_OP(Enum, name, ...) reduce_ops[name] = int(ReduceOp::Enum);
#define CL_SCAN_OP(Enum, name) scan_ops[name] = int(ScanOp::Enum);
#include "ops/reductions.def"
#undef CL_REDUCE_OP
#undef CL_SCAN_OP
  m.attr("_reduce_ops") = reduce_ops;
  m.attr("_scan_ops") = scan_ops;
  m.def("_reduce",
        [](int op, const Tensor& t, py::handle dims, py::handle keepdim, py::handle dtype) {
          Shape d;
          if (!dims.is_none()) d = to_shape(dims);
          const bool kd = strict_bool(keepdim, "keepdim");
          const std::optional<ScalarType> dt = to_optional_dtype(dtype);
          return maybe_without_gil(worth_releasing(t),
                                   [&] { return reduce(ReduceOp(op), t, d, kd, dt); });
        });
  m.def("_reduce_with_indices",
        [](bool is_max, const Tensor& t, py::handle dim, py::handle keepdim) {
          const int64_t d = to_int(dim, "dim");
          const bool kd = strict_bool(keepdim, "keepdim");
          auto [v, i] = maybe_without_gil(worth_releasing(t),
                                          [&] { return reduce_with_indices(is_max, t, d, kd); });
          return py::make_tuple(v, i);
        });
  // ---- sorting (sort, argsort, msort, topk, kthvalue) ----
  // k < 0: the whole sort; else the first k of each slice.
  m.def("_sort", [](const Tensor& t, int64_t dim, bool descending, int64_t k) {
    auto [v, i] =
        maybe_without_gil(worth_releasing(t), [&] { return sort(t, dim, descending, k); });
    return py::make_tuple(v, i);
  });
  m.def(
      "_copy_",
      [](const Tensor& dst, const Tensor& src, bool nb, bool bump_version) {
        maybe_without_gil(copy_worth_releasing(dst, src), [&] { copy_(dst, src, nb); });
        if (bump_version) dst->bump_version();
      },
      py::arg("dst"), py::arg("src"), py::arg("non_blocking") = false,
      py::arg("bump_version") = true);
  m.def("_to", [](const Tensor& t, py::handle device, py::handle dtype, bool nb, bool copy) {
    Device d = device.is_none() ? t->device() : to_device(device);
    ScalarType dt = dtype.is_none() ? t->dtype : to_dtype(dtype);
    if (d.is_cuda() && d.has_index()) cuda::check_device_index(d.index);
    const bool release = d.is_cuda() != t->is_cuda() || worth_releasing(t);
    return maybe_without_gil(release, [&] { return to(t, d, dt, nb, copy); });
  });
  // On CUDA, item() waits for the stream.
  m.def("_item", [](const Tensor& t) {
    return scalar_to_py(maybe_without_gil(t->is_cuda(), [&] { return item(t); }));
  });
  // operand=True: an index assignment's number (ops.h, ScalarUse).
  m.def(
      "_fill_",
      [](const Tensor& t, py::handle v, bool operand, bool bump_version) {
        const Scalar value = to_scalar(v);
        maybe_without_gil(worth_releasing(t), [&] {
          fill_(t, value, operand ? ScalarUse::kOperand : ScalarUse::kFill);
        });
        if (bump_version) t->bump_version();
      },
      py::arg("t"), py::arg("value"), py::arg("operand") = false, py::arg("bump_version") = true);
  m.def(
      "_check_fill_value",
      [](py::handle v, py::handle dtype, bool operand) {
        check_scalar_fits(to_scalar(v), to_dtype(dtype),
                          operand ? ScalarUse::kOperand : ScalarUse::kFill);
      },
      py::arg("value"), py::arg("dtype"), py::arg("operand") = false);
  m.def("_assert_no_overlap",
        [](const Tensor& out, const Tensor& in) { assert_no_overlap(out, in); });
  m.def("_gather_offsets", [](const Tensor& src, const Tensor& offsets) {
    return maybe_without_gil(worth_releasing(offsets),
                             [&] { return gather_offsets(src, offsets); });
  });
  m.def("_scatter_offsets",
        [](const Tensor& dst, const Tensor& offsets, const Tensor& values, int mode) {
          maybe_without_gil(worth_releasing(offsets) || worth_releasing(values),
                            [&] { scatter_offsets(dst, offsets, values, mode); });
          dst->bump_version();
        });
  // ---- gather/scatter along a dim ----
  m.def("_gather_dim", [](const Tensor& self, int64_t dim, const Tensor& index) {
    return maybe_without_gil(worth_releasing(index), [&] { return gather_dim(self, dim, index); });
  });
  m.def("_scatter_dim", [](const Tensor& self, int64_t dim, const Tensor& index, const Tensor& src,
                           int mode) {
    maybe_without_gil(worth_releasing(index), [&] { scatter_dim(self, dim, index, src, mode); });
    self->bump_version();
  });
  // ---- scans ----
  m.def("_scan", [](int op, const Tensor& t, int64_t dim, py::handle dtype) {
    const ScalarType dt = to_dtype(dtype);
    return maybe_without_gil(worth_releasing(t), [&] { return scan(ScanOp(op), t, dim, dt); });
  });
  m.def("_nonzero", [](const Tensor& t) {
    return maybe_without_gil(worth_releasing(t), [&] { return nonzero(t); });
  });
  // ts is this call's own vector of tensors (held by value).
  m.def("_cat", [](const std::vector<Tensor>& ts, int64_t dim) {
    int64_t total = 0;
    for (const Tensor& t : ts)
      if (t && !t->is_cuda()) total += t->numel();
    return maybe_without_gil(total >= kReleaseGilNumel, [&] { return cat(ts, dim); });
  });
  // Random fills: gen=None draws from the tensor's device's default generator.
  // bump_version=False: t is a tensor being made (rand, randn ...), still at version 0.
  m.def("_uniform_", counted_fill(&uniform_), py::arg("t"), py::arg("lo"), py::arg("hi"),
        py::arg("gen") = nullptr, py::arg("bump_version") = true);
  m.def("_normal_", counted_fill(&normal_), py::arg("t"), py::arg("mean"), py::arg("std"),
        py::arg("gen") = nullptr, py::arg("bump_version") = true);
  m.def("_random_int_", counted_fill(&random_int_), py::arg("t"), py::arg("lo"), py::arg("hi"),
        py::arg("gen") = nullptr, py::arg("bump_version") = true);
  m.def(
      "_random_default_",
      [](const Tensor& t, int64_t hi, Generator* gen) {
        maybe_without_gil(worth_releasing(t), [&] { random_default_(t, hi, gen); });
        t->bump_version();
      },
      py::arg("t"), py::arg("hi"), py::arg("gen") = nullptr);
  m.def("_bernoulli_scalar_", counted_fill1(&bernoulli_scalar_), py::arg("t"), py::arg("p"),
        py::arg("gen") = nullptr, py::arg("bump_version") = true);
  m.def(
      "_bernoulli_tensor_",
      [](const Tensor& t, const Tensor& p, Generator* gen, bool bump_version) {
        maybe_without_gil(worth_releasing(t), [&] { bernoulli_tensor_(t, p, gen); });
        if (bump_version) t->bump_version();
      },
      py::arg("t"), py::arg("p"), py::arg("gen") = nullptr, py::arg("bump_version") = true);
  m.def("_exponential_", counted_fill1(&exponential_), py::arg("t"), py::arg("lambd"),
        py::arg("gen") = nullptr, py::arg("bump_version") = true);
  m.def(
      "_randperm_",
      [](const Tensor& out, int64_t n, Generator* gen) {
        maybe_without_gil(n >= kReleaseGilNumel, [&] { randperm_(out, n, gen); });
      },
      py::arg("out"), py::arg("n"), py::arg("gen") = nullptr);
  m.def(
      "_multinomial",
      [](const Tensor& probs, int64_t samples, bool replacement, Generator* gen) {
        return maybe_without_gil(worth_releasing(probs),
                                 [&] { return multinomial(probs, samples, replacement, gen); });
      },
      py::arg("probs"), py::arg("samples"), py::arg("replacement"), py::arg("gen") = nullptr);
  m.def(
      "_fused_dropout",
      [](const Tensor& x, double p, Generator* gen) {
        return maybe_without_gil(worth_releasing(x), [&] { return fused_dropout(x, p, gen); });
      },
      py::arg("x"), py::arg("p"), py::arg("gen") = nullptr);
  m.def("_manual_seed", &manual_seed);
  // The state behind cudalite.Generator (random.py): a device's default or a new one.
  py::class_<Generator, GeneratorPtr>(m, "_Generator")
      .def(py::init([](py::handle d) { return std::make_shared<Generator>(to_device(d)); }))
      .def_static("default", [](py::handle d) { return default_generator(to_device(d)); })
      .def("manual_seed", &Generator::manual_seed)
      .def("initial_seed", &Generator::initial_seed)
      .def("state", &Generator::state)
      .def("set_state", &Generator::set_state)
      .def("cpu_state", [](const Generator& g) { return py::bytes(g.cpu_state()); })
      .def("set_cpu_state",
           [](Generator& g, const py::bytes& b) { g.set_cpu_state(std::string(b)); });
  m.def("_cuda_matmul", &cuda_matmul);
  // ---- fused attention (ops/attention.h, nn/_functional_attention.py) ----
  m.def("_flash_attention_supported", &flash_attention_supported, py::arg("device"),
        py::arg("head_dim"));
  m.def("_flash_attention_forward", &flash_attention_forward, py::arg("query"), py::arg("key"),
        py::arg("value"), py::arg("is_causal"), py::arg("scale"));
  m.def("_flash_attention_backward", &flash_attention_backward, py::arg("grad_out"),
        py::arg("query"), py::arg("key"), py::arg("value"), py::arg("out"), py::arg("lse"),
        py::arg("is_causal"), py::arg("scale"));
  // ---- im2col / col2im on the host (nn/_im2col.py): large copies, without the GIL ----
  m.def("_im2col", &cpu_im2col, py::call_guard<py::gil_scoped_release>());
  m.def("_col2im", &cpu_col2im, py::call_guard<py::gil_scoped_release>());
  m.def("_unfold_rows", &cpu_unfold_rows, py::call_guard<py::gil_scoped_release>());
  m.def("_fold_rows", &cpu_fold_rows, py::call_guard<py::gil_scoped_release>());
  m.def("_check_same_device", [](const std::vector<Tensor>& ts) {
    std::vector<const Tensor*> p;
    for (auto& t : ts) p.push_back(&t);
    check_same_device(p);
  });
}

}  // namespace cl::bind
