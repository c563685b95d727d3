// Creation from Python data (nested sequences and numbers) and the factory functions.
#include <algorithm>

#include "bindings/convert.h"
#include "bindings/fast_method.h"
#include "bindings/gil.h"
#include "core/cuda_api.h"
#include "core/error.h"

namespace cl::bind {

namespace {

bool is_sequence(py::handle h) {
  PyObject* p = h.ptr();
  if (PyList_Check(p) || PyTuple_Check(p)) return true;
  if (PyUnicode_Check(p) || PyBytes_Check(p) || PyFloat_Check(p) || PyLong_Check(p) ||
      is_tensor(h)) {
    return false;
  }
  return PySequence_Check(p) && py::hasattr(h, "__len__");
}

struct Infer {
  Shape shape;
  std::optional<ScalarType> dtype;
};

std::string type_name(py::handle h) { return Py_TYPE(h.ptr())->tp_name; }

// Without importing NumPy: when it is not loaded, nothing can be a NumPy scalar.
bool is_numpy_scalar(py::handle h) {
  static PyObject* generic = nullptr;
  if (!generic) {
    PyObject* np = PyDict_GetItemString(PyImport_GetModuleDict(), "numpy");  // borrowed
    if (!np) return false;
    generic = PyObject_GetAttrString(np, "generic");  // kept for the process's lifetime
    if (!generic) throw py::error_already_set();
  }
  return PyObject_IsInstance(h.ptr(), generic) == 1;
}

// torch's infer_scalar_type for one leaf: NumPy scalars keep their dtype (np.float64 is a
// Python float subclass, so it is checked first).
// `first`: the leaf is on the path of first elements, which decides the shape.
void promote_leaf(py::handle h, size_t depth, bool first, std::optional<ScalarType>& dt) {
  ScalarType t;
  PyObject* p = h.ptr();
  if (PyBool_Check(p)) {
    t = ScalarType::Bool;
  } else if (PyLong_CheckExact(p)) {
    t = ScalarType::Int64;
  } else if (PyFloat_CheckExact(p)) {
    t = get_default_dtype();
  } else if (is_tensor(h)) {
    t = as_tensor(h)->dtype;
  } else if (is_numpy_scalar(h)) {
    t = from_numpy_dtype_object(h.attr("dtype"));
  } else if (PyLong_Check(p)) {
    t = ScalarType::Int64;
  } else if (PyFloat_Check(p)) {
    t = get_default_dtype();
  } else if ((depth == 0 || !first) &&
             (PyUnicode_Check(p) || PyBytes_Check(p) || PyComplex_Check(p))) {
    throw TypeError(detail::str("new(): invalid data type '", type_name(h), "'"));
  } else if (PyUnicode_Check(p) || PyBytes_Check(p)) {
    // A nested string where the shape is read: torch reads it as a sequence of
    // one-character strings, forever.
    throw ValueError(detail::str("too many dimensions '", type_name(h), "'"));
  } else {
    throw Error(detail::str("Could not infer dtype of ", type_name(h)));
  }
  dt = dt ? promote_types(*dt, t) : t;
}

// torch's MAX_DIMS for data: deeper nesting is "too many dimensions".
constexpr size_t kMaxDataDims = 128;

// A sequence that holds itself where an element is read: torch's TypeError (its elements
// would be read forever).
void check_not_self(PyObject* item, PyObject* seq) {
  if (item == seq) throw TypeError("new(): self-referential lists are incompatible");
}

// torch's compute_sizes (the shape follows the first element at each level, at most 128
// deep) and infer_scalar_type (every leaf counts; an empty sequence counts as the default
// dtype). The recursion is bounded: the first elements make the shape and stop at 128 levels
// (a list that holds itself first, or data nested 100,000 deep, is "too many dimensions"), an
// element that is its own sequence is torch's self-reference error, and the other elements
// are read no deeper than the shape allows (deeper ones fail when stored, as torch's do).
void scan(py::handle h, size_t depth, bool first, Infer& inf) {
  if (!is_sequence(h)) {
    promote_leaf(h, depth, first, inf.dtype);
    return;
  }
  if (!first && depth > std::max(inf.shape.size(), kMaxDataDims)) return;
  // Lists and tuples are walked through their item arrays (no temporary objects).
  py::object seq = py::reinterpret_steal<py::object>(PySequence_Fast(h.ptr(), "not a sequence"));
  if (!seq) throw py::error_already_set();
  int64_t n = int64_t(PySequence_Fast_GET_SIZE(seq.ptr()));
  PyObject** items = PySequence_Fast_ITEMS(seq.ptr());
  if (first) {
    inf.shape.push_back(n);
    if (inf.shape.size() > kMaxDataDims) {
      throw ValueError(detail::str("too many dimensions '", type_name(h), "'"));
    }
  }
  if (n == 0) {
    ScalarType d = get_default_dtype();
    inf.dtype = inf.dtype ? promote_types(*inf.dtype, d) : d;
  }
  for (int64_t i = 0; i < n; ++i) {
    if (i > 0 || !first) check_not_self(items[i], h.ptr());
    scan(items[i], depth + 1, first && i == 0, inf);
  }
}

// One leaf as torch's store_scalar reads it.
Scalar leaf_value(py::handle h, ScalarType dt) {
  PyObject* p = h.ptr();
  if (is_sequence(h)) {
    // A sequence where the shape says a number: the errors of PyLong/PyFloat unpacking.
    if (is_floating(dt)) {
      throw TypeError(detail::str("must be real number, not ", type_name(h)));
    }
    throw TypeError(detail::str("'", type_name(h), "' object cannot be interpreted as an integer"));
  }
  if (is_tensor(h) && as_tensor(h)->numel() != 1) {
    if (!is_floating(dt)) {
      throw TypeError("only integer tensors of a single element can be converted to an index");
    }
    throw ValueError("only one element tensors can be converted to Python scalars");
  }
  if (PyLong_Check(p) && !PyBool_Check(p)) {
    int overflow = 0;
    long long v = PyLong_AsLongLongAndOverflow(p, &overflow);
    if (overflow) {
      // Float dtypes read Python ints as doubles, so 2**63 still fits them.
      if (is_floating(dt)) return Scalar(PyLong_AsDouble(p));
      throw ValueError("Overflow when unpacking long long");
    }
    return Scalar(int64_t(v));
  }
  return to_scalar(h);
}

template <class T>
void fill_leaves(py::handle h, const Shape& shape, size_t depth, ScalarType dt, T*& out) {
  if (depth == shape.size()) {
    Scalar v = leaf_value(h, dt);
    check_scalar_fits(v, dt, ScalarUse::kConstructor);
    *out++ = v.template to<T>();
    return;
  }
  if (!is_sequence(h)) throw TypeError("not a sequence");
  // Lists and tuples are walked through their item arrays (no temporary objects).
  py::object seq = py::reinterpret_steal<py::object>(PySequence_Fast(h.ptr(), "not a sequence"));
  if (!seq) throw py::error_already_set();
  int64_t n = int64_t(PySequence_Fast_GET_SIZE(seq.ptr()));
  PyObject** items = PySequence_Fast_ITEMS(seq.ptr());
  if (n != shape[depth]) {
    throw ValueError(detail::str("expected sequence of length ", shape[depth], " at dim ", depth,
                                 " (got ", n, ")"));
  }
  for (int64_t i = 0; i < n; ++i) {
    check_not_self(items[i], h.ptr());
    fill_leaves(items[i], shape, depth + 1, dt, out);
  }
}

Tensor from_data(py::handle data, py::handle dtype_h, py::handle device_h) {
  Infer inf;
  scan(data, 0, true, inf);
  ScalarType dt =
      dtype_h.is_none() ? (inf.dtype ? *inf.dtype : get_default_dtype()) : to_dtype(dtype_h);
  Tensor t = empty(inf.shape, dt, Device(DeviceType::CPU));
  // torch stores nothing (and checks nothing) when a dimension is 0: [[], [1]] is (2, 0).
  if (t->numel())
    CL_DISPATCH_ALL_TYPES(dt, "tensor", [&] {
      scalar_t* p = reinterpret_cast<scalar_t*>(t->data());
      fill_leaves(data, inf.shape, 0, dt, p);
    });
  if (!device_h.is_none()) {
    Device d = to_device(device_h);
    if (d.is_cuda()) {
      if (d.has_index()) cuda::check_device_index(d.index);
      return to(t, d, dt, false, false);
    }
  }
  return t;
}

Device device_or_cpu(py::handle h) {
  if (h.is_none()) return Device(DeviceType::CPU);
  Device d = to_device(h);
  if (d.is_cuda() && d.has_index()) cuda::check_device_index(d.index);
  return d;
}

// Note [empty in one call]
// cudalite.empty (and zeros, ones) are CPython functions (METH_FASTCALL): an `empty(n,
// dtype=..., device="cuda")` and its free cost about as much as the allocation, the tensor
// object and the binding, so a Python wrapper in front (a frame, *size and **kwargs packing)
// and pybind11's dispatcher would be most of it. They handle sizes given as ints (or one tuple
// or list of ints) with the keywords dtype, device, and requires_grad, pin_memory and (empty's)
// out at their defaults; every other call, and every call that would raise, goes with the same
// arguments to the general Python function (_creation._empty, ...), which owns torch's
// argument errors.
enum Factory { kEmpty, kZeros, kOnes, kNumFactories };
const char* const kFactoryNames[kNumFactories] = {"empty", "zeros", "ones"};
py::object* g_factory_slow[kNumFactories] = {};

// The sizes of an empty() call's positional arguments, or false.
bool fast_sizes(PyObject* const* args, Py_ssize_t nargs, Shape& shape) {
  PyObject* const* items = args;
  Py_ssize_t n = nargs;
  if (nargs == 1 && PyTuple_Check(args[0])) {
    items = &PyTuple_GET_ITEM(args[0], 0);
    n = PyTuple_GET_SIZE(args[0]);
  } else if (nargs == 1 && PyList_Check(args[0])) {
    items = PySequence_Fast_ITEMS(args[0]);
    n = PyList_GET_SIZE(args[0]);
  } else if (nargs == 0) {
    return false;  // torch's "received an invalid combination of arguments"
  }
  shape.resize(size_t(n));
  for (Py_ssize_t i = 0; i < n; ++i) {
    if (!PyLong_CheckExact(items[i])) return false;
    int overflow = 0;
    long long v = PyLong_AsLongLongAndOverflow(items[i], &overflow);
    if (overflow || v < 0) return false;
    shape[size_t(i)] = v;
  }
  return true;
}

// A device argument of empty(), or false for anything the general path should see.
bool fast_device(PyObject* d, Device& out) {
  if (d == Py_None) {
    out = Device(DeviceType::CPU);
    return true;
  }
  if (!PyUnicode_Check(d) && !py::isinstance<Device>(d)) return false;
  try {
    out = to_device(d);
  } catch (const std::exception&) {
    return false;  // the general path raises the error
  }
  return !(out.is_cuda() && out.has_index());  // the general path checks the index
}

// Which of empty()'s keywords `name` is: 0 dtype, 1 device, 2 requires_grad, 3 pin_memory,
// 4 out, -1 another. Keyword names are interned, so identity nearly always decides.
int empty_keyword(PyObject* name) {
  static PyObject* const names[] = {
      PyUnicode_InternFromString("dtype"), PyUnicode_InternFromString("device"),
      PyUnicode_InternFromString("requires_grad"), PyUnicode_InternFromString("pin_memory"),
      PyUnicode_InternFromString("out")};
  for (int i = 0; i < 5; ++i) {
    if (name == names[i]) return i;
  }
  for (int i = 0; i < 5; ++i) {
    if (PyUnicode_Compare(name, names[i]) == 0) return i;
  }
  return -1;
}

template <Factory F>
PyObject* factory_entry(PyObject*, PyObject* const* args, size_t nargsf, PyObject* kwnames) {
  return guarded([&]() -> py::object {
    const Py_ssize_t nargs = PyVectorcall_NARGS(nargsf);
    Shape shape;
    bool fast = fast_sizes(args, nargs, shape);
    PyObject* dtype = Py_None;
    PyObject* device = Py_None;
    const Py_ssize_t nkw = kwnames ? PyTuple_GET_SIZE(kwnames) : 0;
    for (Py_ssize_t i = 0; fast && i < nkw; ++i) {
      PyObject* v = args[nargs + i];
      switch (empty_keyword(PyTuple_GET_ITEM(kwnames, i))) {
        case 0:
          dtype = v;
          break;
        case 1:
          device = v;
          break;
        case 2:
        case 3:
          fast = v == Py_False;
          break;
        case 4:
          fast = F == kEmpty && v == Py_None;
          break;
        default:
          fast = false;
      }
    }
    Device dev;
    fast = fast && (dtype == Py_None || is_dtype_object(dtype)) && fast_device(device, dev);
    if (fast) {
      ScalarType dt = dtype == Py_None ? get_default_dtype() : to_dtype(dtype);
      if (F == kEmpty) return wrap_tensor(empty(shape, dt, dev, false));
      return wrap_tensor(maybe_without_gil(dev.is_cpu() && large_numel(shape), [&] {
        return full(shape, Scalar(int64_t(F == kOnes)), dt, dev);
      }));
    }
    py::object* slow = g_factory_slow[F];
    CL_CHECK(slow, "cudalite.", kFactoryNames[F], " used before cudalite was imported");
    PyObject* r = PyObject_Vectorcall(slow->ptr(), args, nargsf, kwnames);
    if (!r) throw py::error_already_set();
    return py::reinterpret_steal<py::object>(r);
  });
}

PyMethodDef g_factory_defs[] = {
    {"empty", as_cfunction(&factory_entry<kEmpty>), METH_FASTCALL | METH_KEYWORDS,
     "empty(*size, dtype=None, device=None, requires_grad=False, pin_memory=False, out=None)\n"
     "--\n\n"
     "An uninitialised tensor of the given size."},
    {"zeros", as_cfunction(&factory_entry<kZeros>), METH_FASTCALL | METH_KEYWORDS,
     "zeros(*size, dtype=None, device=None, requires_grad=False, pin_memory=False)\n"
     "--\n\n"
     "A tensor of zeros."},
    {"ones", as_cfunction(&factory_entry<kOnes>), METH_FASTCALL | METH_KEYWORDS,
     "ones(*size, dtype=None, device=None, requires_grad=False, pin_memory=False)\n"
     "--\n\n"
     "A tensor of ones."},
};

}  // namespace

void bind_creation(py::module_& m) {
  for (PyMethodDef& d : g_factory_defs) {
    m.add_object(d.ml_name, py::reinterpret_steal<py::object>(
                                PyCFunction_NewEx(&d, nullptr, py::str("cudalite").ptr())));
  }
  // The sizes of a factory's *size as a list of non-negative ints, or None for anything the
  // general parser (_creation._size) must look at.
  m.def("_int_sizes", [](py::tuple args) -> py::object {
    Shape shape;
    if (!fast_sizes(&PyTuple_GET_ITEM(args.ptr(), 0), PyTuple_GET_SIZE(args.ptr()), shape)) {
      return py::none();
    }
    py::list out(shape.size());
    for (size_t i = 0; i < shape.size(); ++i) {
      PyList_SET_ITEM(out.ptr(), Py_ssize_t(i), PyLong_FromLongLong(shape[i]));
    }
    return std::move(out);
  });
  m.def("_set_factory_slow", [](const std::string& name, py::object f) {
    for (int i = 0; i < kNumFactories; ++i) {
      if (name != kFactoryNames[i]) continue;
      if (!g_factory_slow[i]) g_factory_slow[i] = new py::object();
      *g_factory_slow[i] = std::move(f);
      return;
    }
    throw ValueError("no C entry point for " + name);
  });
  m.def("_tensor_from_data", &from_data, py::arg("data"), py::arg("dtype") = py::none(),
        py::arg("device") = py::none());
  m.def("_infer_dtype", [](py::handle data) -> py::object {
    Infer inf;
    scan(data, 0, true, inf);
    if (!inf.dtype) return py::none();
    return py::cast(dtype_object(*inf.dtype), py::return_value_policy::reference);
  });
  m.def(
      "_empty",
      [](py::handle shape, py::handle dtype, py::handle device, bool pin) {
        ScalarType dt = dtype.is_none() ? get_default_dtype() : to_dtype(dtype);
        return empty(to_shape(shape), dt, device_or_cpu(device), pin);
      },
      py::arg("shape"), py::arg("dtype") = py::none(), py::arg("device") = py::none(),
      py::arg("pin_memory") = false);
  // empty_like & co.: torch's preserve_format (a permuted input gives a permuted result).
  m.def("_empty_like", [](const Tensor& like, py::handle dtype, py::handle device) {
    ScalarType dt = dtype.is_none() ? like->dtype : to_dtype(dtype);
    Device dev = device.is_none() ? like->device() : to_device(device);
    return empty_preserve(like, dt, dev);
  });
  m.def("_full", [](py::handle shape, py::handle value, py::handle dtype, py::handle device) {
    Scalar v = to_scalar(value);
    ScalarType dt = dtype.is_none() ? v.natural_dtype() : to_dtype(dtype);
    Shape sizes = to_shape(shape);
    Device dev = device_or_cpu(device);
    return maybe_without_gil(dev.is_cpu() && large_numel(sizes),
                             [&] { return full(sizes, v, dt, dev); });
  });
  m.def("_arange", [](double start, double end, double step, py::handle dtype, py::handle device) {
    ScalarType dt = to_dtype(dtype);
    Device dev = device_or_cpu(device);
    const double n = step != 0 ? (end - start) / step : 0;  // NaN and inf: checked by arange
    return maybe_without_gil(dev.is_cpu() && n >= double(kReleaseGilNumel) && n < 1e300,
                             [&] { return arange(start, end, step, dt, dev); });
  });
  m.def("_linspace",
        [](double start, double end, int64_t steps, py::handle dtype, py::handle device) {
          ScalarType dt = to_dtype(dtype);
          Device dev = device_or_cpu(device);
          return maybe_without_gil(dev.is_cpu() && steps >= kReleaseGilNumel,
                                   [&] { return linspace(start, end, steps, dt, dev); });
        });
  m.def("_eye", [](int64_t n, int64_t mm, py::handle dtype, py::handle device) {
    ScalarType dt = to_dtype(dtype);
    Device dev = device_or_cpu(device);
    return maybe_without_gil(dev.is_cpu() && large_numel({n, mm < 0 ? n : mm}),
                             [&] { return eye(n, mm, dt, dev); });
  });
}

}  // namespace cl::bind
