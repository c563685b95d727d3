// Zero-copy exchange with NumPy: from_numpy keeps the array alive through the storage's
// deleter; Tensor.numpy() returns an array whose base is the tensor.
#include <pybind11/numpy.h>

#include "bindings/convert.h"
#include "core/error.h"

namespace cl::bind {

static ScalarType from_numpy_dtype(const py::dtype& d) {
  char kind = d.kind();
  size_t size = d.itemsize();
  if (kind == 'b') return ScalarType::Bool;
  if (kind == 'u' && size == 1) return ScalarType::UInt8;
  if (kind == 'i') {
    switch (size) {
      case 1:
        return ScalarType::Int8;
      case 2:
        return ScalarType::Int16;
      case 4:
        return ScalarType::Int32;
      case 8:
        return ScalarType::Int64;
    }
  }
  if (kind == 'f') {
    switch (size) {
      case 2:
        return ScalarType::Float16;
      case 4:
        return ScalarType::Float32;
      case 8:
        return ScalarType::Float64;
    }
  }
  // NumPy's scalar type name, as torch prints it: numpy.object_, numpy.str_, numpy.uint16.
  std::string name = py::str(d.attr("type").attr("__name__"));
  throw TypeError(detail::str("can't convert np.ndarray of type numpy.", name,
                              ". The only supported types are: float64, float32, float16, "
                              "int64, int32, int16, int8, uint8, and bool."));
}

ScalarType from_numpy_dtype_object(py::handle numpy_dtype) {
  return from_numpy_dtype(py::reinterpret_borrow<py::dtype>(numpy_dtype));
}

namespace {

const char* numpy_dtype_name(ScalarType t) {
  switch (t) {
    case ScalarType::Bool:
      return "bool";
    case ScalarType::UInt8:
      return "uint8";
    case ScalarType::Int8:
      return "int8";
    case ScalarType::Int16:
      return "int16";
    case ScalarType::Int32:
      return "int32";
    case ScalarType::Int64:
      return "int64";
    case ScalarType::Float16:
      return "float16";
    case ScalarType::Float32:
      return "float32";
    case ScalarType::Float64:
      return "float64";
    default:
      throw TypeError(detail::str("Got unsupported ScalarType ", dtype_short_name(t)));
  }
}

void release_array(void* ctx) {
  py::gil_scoped_acquire gil;
  Py_DECREF(static_cast<PyObject*>(ctx));
}

// torch's warning, once per process, for a tensor made on a read-only array.
void warn_not_writable(int stacklevel) {
  static bool warned = false;
  if (warned) return;
  warned = true;
  if (PyErr_WarnEx(PyExc_UserWarning,
                   "The given NumPy array is not writable, and cudalite does not support "
                   "non-writable tensors. This means writing to this tensor will result in "
                   "undefined behavior. You may want to copy the array to protect its data or "
                   "make it writable before converting it to a tensor. This type of warning will "
                   "be suppressed for the rest of this program.",
                   stacklevel) < 0) {
    throw py::error_already_set();
  }
}

// from_numpy: a tensor on the array's memory. Its storage is not resizable (torch's
// "Trying to resize storage that is not resizable"), except for the private copies that
// cudalite's factories make (torch.tensor(ndarray), randperm, ...): torch's own memory there.
Tensor wrap_array(py::handle obj, bool resizable, bool warn) {
  if (!py::isinstance<py::array>(obj)) {
    throw TypeError(detail::str("expected np.ndarray (got ", Py_TYPE(obj.ptr())->tp_name, ")"));
  }
  py::array arr = py::reinterpret_borrow<py::array>(obj);
  CL_CHECK_VALUE(arr.dtype().attr("isnative").cast<bool>(),
                 "given numpy array has byte order different from the native byte order. "
                 "Conversion between byte orders is currently not supported.");
  ScalarType dt = from_numpy_dtype(arr.dtype());
  int64_t isz = int64_t(arr.itemsize());
  Shape sizes, strides;
  int64_t extent = 1;
  for (py::ssize_t d = 0; d < arr.ndim(); ++d) {
    int64_t st = arr.strides(d);
    CL_CHECK_VALUE(st >= 0,
                   "At least one stride in the given numpy array is negative, and tensors with "
                   "negative strides are not currently supported. (You can probably work "
                   "around this by making a copy of your array  with array.copy().) ");
    CL_CHECK_VALUE(st % isz == 0,
                   "given numpy array strides not a multiple of the element "
                   "byte size. Copy the numpy array to reallocate the memory.");
    sizes.push_back(arr.shape(d));
    strides.push_back(st / isz);
    if (arr.shape(d) == 0) extent = 0;
    if (extent) extent += (arr.shape(d) - 1) * (st / isz);
  }
  if (warn && !arr.writeable()) warn_not_writable(1);
  PyObject* owner = arr.ptr();
  Py_INCREF(owner);
  DataPtr dp(const_cast<void*>(arr.data()), owner, &release_array, Device(DeviceType::CPU));
  auto storage = std::make_shared<StorageImpl>(std::move(dp), size_t(extent * isz));
  storage->resizable = resizable;
  return std::make_shared<TensorImpl>(std::move(storage), sizes, strides, 0, dt);
}

}  // namespace

void bind_numpy(py::module_& m) {
  m.def(
      "from_numpy", [](py::handle obj) { return wrap_array(obj, false, true); },
      py::arg("ndarray"));
  // Without the read-only warning, for callers that copy (tensor(ndarray)) or decide later.
  m.def("_from_numpy_quiet", [](py::handle obj) { return wrap_array(obj, false, false); });
  m.def("_warn_numpy_not_writable", &warn_not_writable, py::arg("stacklevel") = 1);
  // For arrays made for the tensor alone: resize_ may grow the storage (into cudalite memory).
  m.def("_from_numpy_owned", [](py::handle obj) { return wrap_array(obj, true, false); });

  m.def("_numpy", [](py::handle self) {
    Tensor t = as_tensor(self);
    CL_CHECK_TYPE(t->device().is_cpu(), "can't convert ", t->device().str(),
                  " device type tensor to numpy. Use Tensor.cpu() to copy the tensor to host "
                  "memory first.");
    py::dtype dt(numpy_dtype_name(t->dtype));
    std::vector<py::ssize_t> shape(t->sizes.begin(), t->sizes.end());
    std::vector<py::ssize_t> strides;
    for (auto s : t->strides) strides.push_back(s * int64_t(t->element_size()));
    void* data = t->numel() ? static_cast<void*>(t->data()) : t->storage->data.get();
    return py::array(dt, shape, strides, data, self);
  });
  m.def("_numpy_dtype_name",
        [](py::handle d) { return std::string(numpy_dtype_name(to_dtype(d))); });
}

}  // namespace cl::bind
