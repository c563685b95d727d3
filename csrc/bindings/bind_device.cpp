#include "bindings/convert.h"
#include "core/error.h"

namespace cl::bind {

namespace {
// A Python int as a device index: torch's errors for negative, too large or overflowing ones.
int int_index(py::handle h) {
  int overflow = 0;
  long long i = PyLong_AsLongLongAndOverflow(h.ptr(), &overflow);
  if (overflow) throw ValueError("Overflow when unpacking long long");
  check_device_index(i);
  return int(i);
}

// torch warns that "mkldnn" is no longer a device type.
Device warn_deprecated(Device d) {
  if (d.type == DeviceType::MKLDNN &&
      PyErr_WarnEx(PyExc_UserWarning,
                   "'mkldnn' is no longer used as device type. So torch.device('mkldnn') will be "
                   "deprecated and removed in the future. Please use other valid device types "
                   "instead.",
                   1) < 0)
    throw py::error_already_set();
  return d;
}

Device make_device(py::handle first, py::handle index) {
  Device d;
  if (py::isinstance<Device>(first)) {
    d = first.cast<Device>();
  } else if (py::isinstance<py::str>(first)) {
    d = warn_deprecated(Device(first.cast<std::string>()));
  } else if (PyLong_Check(first.ptr()) && !PyBool_Check(first.ptr())) {
    return Device(DeviceType::CUDA, int_index(first));
  } else {
    std::string got = py::str(py::type::of(first).attr("__name__"));
    throw TypeError(detail::str(
        "device() received an invalid combination of arguments - got (", got,
        "), but expected one of:\n * (cudalite.device device)\n      didn't match because some "
        "of the arguments have invalid types: (!",
        got, "!)\n * (str type, int index = -1)\n"));
  }
  if (!index.is_none()) {
    CL_CHECK(
        !d.has_index(),
        "type (string) must not include an index because index was passed explicitly: ", d.str());
    if (!PyLong_Check(index.ptr())) {
      throw TypeError(detail::str("device(): argument 'index' (position 2) must be int, not ",
                                  std::string(py::str(py::type::of(index).attr("__name__")))));
    }
    d.index = int16_t(int_index(index));
  }
  return d;
}
}  // namespace

namespace {
PyTypeObject* g_device_type = nullptr;
}  // namespace

namespace {
// A device argument as a Device, of any type torch's parser accepts.
Device parse_device(py::handle h) {
  if (g_device_type && Py_TYPE(h.ptr()) == g_device_type) return h.cast<Device>();
  if (PyUnicode_Check(h.ptr())) {
    // The spellings nearly every call uses, without parsing.
    static PyObject* const cuda = PyUnicode_InternFromString("cuda");
    static PyObject* const cpu = PyUnicode_InternFromString("cpu");
    if (h.ptr() == cuda) return Device(DeviceType::CUDA);
    if (h.ptr() == cpu) return Device(DeviceType::CPU);
    Py_ssize_t n = 0;
    const char* s = PyUnicode_AsUTF8AndSize(h.ptr(), &n);
    if (s) return warn_deprecated(Device(std::string(s, size_t(n))));
  }
  if (py::isinstance<Device>(h)) return h.cast<Device>();
  return make_device(h, py::none());
}
}  // namespace

Device to_device(py::handle h) {
  Device d = parse_device(h);
  check_tensor_device(d);
  return d;
}

std::optional<Device> to_optional_device(py::handle h) {
  if (h.is_none()) return std::nullopt;
  return to_device(h);
}

void bind_device(py::module_& m) {
  py::class_<Device> cls(m, "device");
  g_device_type = reinterpret_cast<PyTypeObject*>(cls.ptr());
  cls.def(py::init([](py::handle type, py::handle index) { return make_device(type, index); }),
          py::arg("type"), py::arg("index") = py::none())
      .def_property_readonly("type", [](const Device& d) { return device_type_name(d.type); })
      .def_property_readonly("index",
                             [](const Device& d) -> py::object {
                               if (!d.has_index()) return py::none();
                               return py::int_(d.index);
                             })
      .def("__str__", &Device::str)
      .def("__repr__",
           [](const Device& d) {
             std::string s = std::string("device(type='") + device_type_name(d.type) + "'";
             if (d.has_index()) s += ", index=" + std::to_string(d.index);
             return s + ")";
           })
      .def("__eq__",
           [](const Device& a, py::handle b) {
             return py::isinstance<Device>(b) && a == b.cast<Device>();
           })
      .def("__ne__",
           [](const Device& a, py::handle b) {
             return !(py::isinstance<Device>(b) && a == b.cast<Device>());
           })
      .def("__hash__", [](const Device& d) { return std::hash<Device>()(d); })
      .def("__reduce__", [](const Device& d) -> py::tuple {
        py::object cls = py::module_::import("cudalite").attr("device");
        if (d.has_index())
          return py::make_tuple(cls, py::make_tuple(device_type_name(d.type), int(d.index)));
        return py::make_tuple(cls, py::make_tuple(device_type_name(d.type)));
      });
}

}  // namespace cl::bind
