#include "bindings/convert.h"
#include "core/error.h"

namespace cl::bind {

DType* dtype_object(ScalarType t) {
  static DType objs[kNumScalarTypes] = {
      {ScalarType::Bool},    {ScalarType::UInt8},  {ScalarType::Int8},    {ScalarType::Int16},
      {ScalarType::Int32},   {ScalarType::Int64},  {ScalarType::Float16}, {ScalarType::BFloat16},
      {ScalarType::Float32}, {ScalarType::Float64}};
  return &objs[int(t)];
}

namespace {
// The ten dtype objects, for a pointer comparison instead of a pybind11 type lookup.
PyObject* g_dtype_objs[kNumScalarTypes] = {};
}  // namespace

PyObject* dtype_pyobject(ScalarType t) { return g_dtype_objs[int(t)]; }

bool is_dtype_object(PyObject* h) {
  for (PyObject* o : g_dtype_objs) {
    if (h == o) return true;
  }
  return false;
}

ScalarType to_dtype(py::handle h) {
  for (int i = 0; i < kNumScalarTypes; ++i) {
    if (h.ptr() == g_dtype_objs[i]) return ScalarType(i);
  }
  if (py::isinstance<DType>(h)) return h.cast<DType*>()->type;
  // Python types as dtypes, as torch accepts them: float, int, bool.
  if (h.ptr() == reinterpret_cast<PyObject*>(&PyFloat_Type)) return ScalarType::Float64;
  if (h.ptr() == reinterpret_cast<PyObject*>(&PyLong_Type)) return ScalarType::Int64;
  if (h.ptr() == reinterpret_cast<PyObject*>(&PyBool_Type)) return ScalarType::Bool;
  throw TypeError(
      detail::str("expected a cudalite.dtype, got ", std::string(py::str(py::type::of(h)))));
}

std::optional<ScalarType> to_optional_dtype(py::handle h) {
  if (h.is_none()) return std::nullopt;
  return to_dtype(h);
}

void bind_dtype(py::module_& m) {
  py::class_<DType>(m, "dtype")
      .def_property_readonly("itemsize", [](const DType& d) { return itemsize(d.type); })
      .def_property_readonly("is_floating_point",
                             [](const DType& d) { return is_floating(d.type); })
      .def_property_readonly("is_signed", [](const DType& d) { return is_signed(d.type); })
      .def_property_readonly("is_complex", [](const DType&) { return false; })
      .def_property_readonly("_name", [](const DType& d) { return dtype_name(d.type); })
      .def_property_readonly("_short_name", [](const DType& d) { return dtype_short_name(d.type); })
      .def_property_readonly("_index", [](const DType& d) { return int(d.type); })
      .def("__repr__", [](const DType& d) { return std::string("cudalite.") + dtype_name(d.type); })
      .def("__reduce__",
           [](const DType& d) {
             return py::make_tuple(py::module_::import("cudalite").attr("_dtype_from_name"),
                                   py::make_tuple(dtype_name(d.type)));
           })
      .def(
          "to_real", [](DType& d) { return &d; }, py::return_value_policy::reference);
  for (int i = 0; i < kNumScalarTypes; ++i) {
    auto t = ScalarType(i);
    py::object obj = py::cast(dtype_object(t), py::return_value_policy::reference);
    g_dtype_objs[i] = obj.ptr();  // kept alive by the module attribute
    m.attr(dtype_name(t)) = obj;
  }
  m.def(
      "get_default_dtype", [] { return dtype_object(get_default_dtype()); },
      py::return_value_policy::reference);
  m.def("set_default_dtype", [](py::handle d) {
    // torch accepts only dtype objects here (not the Python types float / int).
    if (!py::isinstance<DType>(d)) {
      throw TypeError(
          "invalid dtype object: only floating-point types are supported as the default type");
    }
    set_default_dtype(d.cast<DType*>()->type);
  });
  m.def(
      "promote_types",
      [](py::handle a, py::handle b) {
        auto arg = [](py::handle h, int pos) {
          try {
            return to_dtype(h);
          } catch (const TypeError&) {
            throw TypeError(detail::str("promote_types(): argument 'type", pos, "' (position ", pos,
                                        ") must be cudalite.dtype, not ",
                                        std::string(py::str(py::type::of(h).attr("__name__")))));
          }
        };
        return dtype_object(promote_types(arg(a, 1), arg(b, 2)));
      },
      py::return_value_policy::reference);
  m.def("can_cast", [](py::handle a, py::handle b) { return can_cast(to_dtype(a), to_dtype(b)); });
}

}  // namespace cl::bind
