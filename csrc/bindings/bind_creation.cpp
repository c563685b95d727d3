// Creation from Python data (nested sequences and numbers) and the factory functions.
#include "bindings/convert.h"
#include "core/cuda_api.h"
#include "core/error.h"

namespace cl::bind {

namespace {

bool is_sequence(py::handle h) {
  PyObject* p = h.ptr();
  if (PyList_Check(p) || PyTuple_Check(p)) return true;
  if (PyUnicode_Check(p) || PyBytes_Check(p) || is_tensor(h)) return false;
  return PySequence_Check(p) && py::hasattr(h, "__len__");
}

struct Infer {
  Shape shape;
  std::optional<ScalarType> dtype;
};

void promote_leaf(py::handle h, std::optional<ScalarType>& dt) {
  ScalarType t;
  PyObject* p = h.ptr();
  if (PyBool_Check(p)) {
    t = ScalarType::Bool;
  } else if (PyLong_Check(p)) {
    t = ScalarType::Int64;
  } else if (PyFloat_Check(p)) {
    t = get_default_dtype();
  } else if (is_tensor(h)) {
    t = as_tensor(h)->dtype;
  } else if (py::hasattr(h, "dtype") && py::hasattr(h, "item")) {  // NumPy scalar
    promote_leaf(h.attr("item")(), dt);
    return;
  } else {
    throw TypeError(detail::str("new(): invalid data type '",
                                std::string(py::str(py::type::of(h).attr("__name__"))), "'"));
  }
  dt = dt ? promote_types(*dt, t) : t;
}

// Shape from the first element at each level, dtype from every leaf.
void scan(py::handle h, size_t depth, Infer& inf) {
  if (!is_sequence(h)) {
    promote_leaf(h, inf.dtype);
    return;
  }
  py::sequence seq = py::reinterpret_borrow<py::sequence>(h);
  int64_t n = int64_t(py::len(seq));
  if (depth == inf.shape.size()) inf.shape.push_back(n);
  for (int64_t i = 0; i < n; ++i) scan(seq[i], depth + 1, inf);
}

template <class T>
void fill_leaves(py::handle h, const Shape& shape, size_t depth, ScalarType dt, T*& out) {
  if (depth == shape.size()) {
    if (is_sequence(h)) {
      throw ValueError(detail::str("expected sequence of length ", 0, " at dim ", depth, " (got ",
                                   py::len(h), ")"));
    }
    if (is_tensor(h) && as_tensor(h)->numel() != 1) {
      throw ValueError("only one element tensors can be converted to Python scalars");
    }
    Scalar v = to_scalar(h);
    check_scalar_fits(v, dt, true);
    *out++ = v.template to<T>();
    return;
  }
  if (!is_sequence(h)) {
    throw ValueError(detail::str("expected sequence of length ", shape[depth], " at dim ", depth,
                                 " (got a scalar)"));
  }
  py::sequence seq = py::reinterpret_borrow<py::sequence>(h);
  int64_t n = int64_t(py::len(seq));
  if (n != shape[depth]) {
    throw ValueError(detail::str("expected sequence of length ", shape[depth], " at dim ", depth,
                                 " (got ", n, ")"));
  }
  for (int64_t i = 0; i < n; ++i) fill_leaves(seq[i], shape, depth + 1, dt, out);
}

Tensor from_data(py::handle data, py::handle dtype_h, py::handle device_h) {
  Infer inf;
  scan(data, 0, inf);
  ScalarType dt = dtype_h.is_none() ? (inf.dtype ? *inf.dtype : get_default_dtype())
                                    : to_dtype(dtype_h);
  Tensor t = empty(inf.shape, dt, Device(DeviceType::CPU));
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

}  // namespace

void bind_creation(py::module_& m) {
  m.def("_tensor_from_data", &from_data, py::arg("data"), py::arg("dtype") = py::none(),
        py::arg("device") = py::none());
  m.def("_infer_dtype", [](py::handle data) -> py::object {
    Infer inf;
    scan(data, 0, inf);
    if (!inf.dtype) return py::none();
    return py::cast(dtype_object(*inf.dtype), py::return_value_policy::reference);
  });
  m.def("_empty", [](py::handle shape, py::handle dtype, py::handle device, bool pin) {
    ScalarType dt = dtype.is_none() ? get_default_dtype() : to_dtype(dtype);
    return empty(to_shape(shape), dt, device_or_cpu(device), pin);
  }, py::arg("shape"), py::arg("dtype") = py::none(), py::arg("device") = py::none(),
        py::arg("pin_memory") = false);
  m.def("_full", [](py::handle shape, py::handle value, py::handle dtype, py::handle device) {
    Scalar v = to_scalar(value);
    ScalarType dt = dtype.is_none() ? v.natural_dtype() : to_dtype(dtype);
    return full(to_shape(shape), v, dt, device_or_cpu(device));
  });
  m.def("_arange", [](double start, double end, double step, py::handle dtype, py::handle device) {
    return arange(start, end, step, to_dtype(dtype), device_or_cpu(device));
  });
  m.def("_linspace", [](double start, double end, int64_t steps, py::handle dtype, py::handle device) {
    return linspace(start, end, steps, to_dtype(dtype), device_or_cpu(device));
  });
  m.def("_eye", [](int64_t n, int64_t mm, py::handle dtype, py::handle device) {
    return eye(n, mm, to_dtype(dtype), device_or_cpu(device));
  });
}

}  // namespace cl::bind
