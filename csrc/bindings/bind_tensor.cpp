// The tensor class: metadata, views and shape functions. Ops are in bind_ops.cpp and
// bind_arith.cpp; the Python layer (python/cudalite/_tensor.py) adds the methods that are
// compositions.
#include <functional>

#include "bindings/convert.h"
#include "bindings/fast_method.h"
#include "bindings/gil.h"
#include "core/cuda_api.h"
#include "core/error.h"
#include "core/resize.h"
#include "core/shared_memory.h"

namespace cl::bind {

namespace {
py::handle g_tensor_type;
py::object* g_legacy_ctor = nullptr;  // cudalite._legacy.legacy_new, set at import
}  // namespace

bool strict_bool(py::handle h, const char* what) {
  if (h.ptr() == Py_True) return true;
  if (h.ptr() == Py_False) return false;
  throw TypeError(detail::str(what, " must be bool, not ",
                              std::string(py::str(py::type::of(h).attr("__name__")))));
}

namespace {
// A Python int as int64_t: torch's ValueError when it does not fit (THPUtils_unpackLong).
int64_t unpack_long(PyObject* p) {
  int overflow = 0;
  long long v = PyLong_AsLongLongAndOverflow(p, &overflow);
  if (overflow) throw ValueError("Overflow when unpacking long long");
  if (v == -1 && PyErr_Occurred()) throw py::error_already_set();
  return int64_t(v);
}
}  // namespace

int64_t to_int(py::handle h, const char* what) {
  if (PyLong_Check(h.ptr()) && !PyBool_Check(h.ptr())) return unpack_long(h.ptr());
  if (is_tensor(h)) {
    Tensor t = as_tensor(h);
    if (t->numel() == 1 && !is_floating(t->dtype) && t->dtype != ScalarType::Bool) {
      return item(t).to_int();
    }
  } else if (!PyFloat_Check(h.ptr()) && !PyBool_Check(h.ptr()) && PyIndex_Check(h.ptr())) {
    // NumPy integers and other objects with __index__; one whose __index__ raises is
    // reported as any other wrong element.
    py::object i = py::reinterpret_steal<py::object>(PyNumber_Index(h.ptr()));
    if (i) return unpack_long(i.ptr());
    PyErr_Clear();
  }
  throw TypeError(detail::str(what, " must be tuple of ints, but found element of type ",
                              std::string(py::str(py::type::of(h).attr("__name__")))));
}

namespace {

// size(dim) / stride(dim): an int; a name is torch's RuntimeError (no named tensors here),
// anything else its TypeError.
int64_t dim_arg(const char* fn, const Tensor& t, py::handle dim) {
  if (PyUnicode_Check(dim.ptr())) {
    std::string dims;
    for (int64_t i = 0; i < t->dim(); ++i) dims += i ? ", None" : "None";
    throw Error(
        detail::str("Name '", std::string(py::str(dim)), "' not found in Tensor[", dims, "]."));
  }
  try {
    return to_int(dim, "dim");
  } catch (const TypeError&) {
    throw TypeError(detail::str(fn, "() received an invalid combination of arguments - got (",
                                std::string(py::str(py::type::of(dim).attr("__name__"))),
                                "), but expected one of:"));
  }
}

Shape dims_from_args(const py::args& args) { return shape_from_args(args); }

// x.view(*shape) or x.view(dtype): a view, or the same bytes read as another dtype.
py::object view_args(const Tensor& t, py::args a) {
  if (a.size() == 1 && (py::isinstance<DType>(a[0]))) {
    return py::cast(view_dtype(t, to_dtype(a[0])));
  }
  return py::cast(view_of(t, view(t, shape_from_args(a))));
}

std::string type_name(py::handle h) { return py::str(py::type::of(h).attr("__name__")); }

// The arguments of reshape(*shape) / permute(*dims) given by keyword too, as torch's parser
// takes them (x.reshape(shape=(6,))); the positional form, the usual one, passes through.
py::args keyword_sizes(const char* fn, const char* kw, const py::args& a, const py::kwargs& k) {
  if (k.size() == 1 && k.contains(kw)) {
    if (!a.empty())
      throw TypeError(detail::str(fn, "() got multiple values for argument '", kw, "'"));
    py::object v = k[kw];
    if (!py::isinstance<py::sequence>(v) || py::isinstance<py::str>(v))
      throw TypeError(
          detail::str(fn, "(): argument '", kw, "' must be tuple of ints, not ", type_name(v)));
    return py::args(py::make_tuple(v));
  }
  throw TypeError(detail::str(fn, "() missing 1 required positional arguments: \"", kw, "\""));
}
}  // namespace

py::handle tensor_type() { return g_tensor_type; }

py::object wrap_tensor(Tensor t) {
  static const py::detail::type_info* info = py::detail::get_type_info(typeid(TensorImpl));
  return py::reinterpret_steal<py::object>(py::detail::type_caster_generic::cast(
      t.get(), py::return_value_policy::take_ownership, py::handle(), info, nullptr, nullptr, &t));
}
bool is_tensor(py::handle h) {
  return PyObject_TypeCheck(h.ptr(), (PyTypeObject*)g_tensor_type.ptr());
}

Shape to_shape(py::handle h) {
  Shape s;
  if (py::isinstance<py::tuple>(h) || py::isinstance<py::list>(h)) {
    for (auto item : h) s.push_back(to_int(item, "size"));
    return s;
  }
  s.push_back(to_int(h, "size"));
  return s;
}

Shape shape_from_args(const py::args& args) {
  if (args.size() == 1 &&
      (py::isinstance<py::tuple>(args[0]) || py::isinstance<py::list>(args[0]))) {
    return to_shape(args[0]);
  }
  Shape s;
  for (auto a : args) s.push_back(to_int(a, "size"));
  return s;
}

namespace {
PyTypeObject* size_type() {
  static auto* t = reinterpret_cast<PyTypeObject*>(
      py::object(py::module_::import("cudalite._size").attr("Size")).release().ptr());
  return t;
}

// Size is a tuple subclass with no state of its own: made as tuple's own constructor makes
// subclass instances (tp_alloc, then the items), without calling the class. item(i) returns
// a new reference.
py::object new_size(Py_ssize_t n, const std::function<PyObject*(Py_ssize_t)>& item) {
  PyTypeObject* type = size_type();
  py::object out = py::reinterpret_steal<py::object>(type->tp_alloc(type, n));
  if (!out) throw py::error_already_set();
  for (Py_ssize_t i = 0; i < n; ++i) {
    PyObject* v = item(i);
    if (!v) throw py::error_already_set();
    PyTuple_SET_ITEM(out.ptr(), i, v);
  }
  return out;
}

// Size.__getitem__: tuple's, with slices giving a Size (as torch.Size).
PyObject* size_getitem(PyObject* self, PyObject* key) {
  return guarded([&]() -> py::object {
    PyObject* r = PyTuple_Type.tp_as_mapping->mp_subscript(self, key);
    if (!r) throw py::error_already_set();
    py::object got = py::reinterpret_steal<py::object>(r);
    if (!PySlice_Check(key)) return got;
    return new_size(PyTuple_GET_SIZE(r), [&](Py_ssize_t i) {
      PyObject* v = PyTuple_GET_ITEM(r, i);
      Py_INCREF(v);
      return v;
    });
  });
}
PyMethodDef g_size_getitem = {"__getitem__", &size_getitem, METH_O, "self[key]"};
}  // namespace

py::object make_size(const Shape& s) {
  return new_size(Py_ssize_t(s.size()),
                  [&](Py_ssize_t i) { return PyLong_FromLongLong(s[size_t(i)]); });
}

namespace {
// Note [Tensor attributes in C]
// shape, dtype, device, ndim and is_cuda, and len(), are read in loops (x.shape[0],
// x.device): plain CPython getters rather than pybind11 properties, whose dispatch costs
// several times the read. Device objects are cached (one per device: they are immutable).
template <class F>
PyObject* getter(PyObject* self, F&& f) {
  return guarded([&]() -> py::object {
    Tensor t;
    if (!load_tensor(self, t)) throw TypeError("expected a cudalite.Tensor");
    return f(t);
  });
}

py::object device_pyobject(Device d) {
  static PyObject* cache[2][65] = {};
  const int k = d.is_cuda() ? 1 : 0;
  const int i = d.index + 1;
  if (i < 0 || i > 64) return py::cast(d);
  if (!cache[k][i]) cache[k][i] = py::cast(d).release().ptr();  // kept for the process
  return py::reinterpret_borrow<py::object>(cache[k][i]);
}

PyGetSetDef g_getters[] = {
    {"shape",
     [](PyObject* s, void*) {
       return getter(s, [](const Tensor& t) { return make_size(t->sizes); });
     },
     nullptr, "the tensor's sizes, a cudalite.Size", nullptr},
    {"dtype",
     [](PyObject* s, void*) {
       return getter(s, [](const Tensor& t) {
         return py::reinterpret_borrow<py::object>(dtype_pyobject(t->dtype));
       });
     },
     nullptr, "the tensor's dtype", nullptr},
    {"device",
     [](PyObject* s, void*) {
       return getter(s, [](const Tensor& t) { return device_pyobject(t->device()); });
     },
     nullptr, "the device that holds the tensor", nullptr},
    {"ndim",
     [](PyObject* s, void*) {
       return getter(s, [](const Tensor& t) { return py::int_(t->dim()); });
     },
     nullptr, "the number of dimensions", nullptr},
    {"is_cuda",
     [](PyObject* s, void*) {
       return getter(s, [](const Tensor& t) { return py::bool_(t->is_cuda()); });
     },
     nullptr, "whether the tensor is in CUDA memory", nullptr},
    {"_version",
     [](PyObject* s, void*) {
       return getter(s, [](const Tensor& t) { return py::int_(t->version()); });
     },
     nullptr, "how many in-place writes this tensor and its views have seen (read-only)", nullptr},
    {nullptr, nullptr, nullptr, nullptr, nullptr}};

PyObject* len_method(PyObject* self, PyObject*) {
  return getter(self, [](const Tensor& t) {
    if (t->dim() == 0) throw TypeError("len() of a 0-d tensor");
    return py::int_(t->sizes[0]);
  });
}

PyMethodDef g_len_def[] = {{"__len__", &len_method, METH_NOARGS, "len(self): the size of dim 0"},
                           {nullptr, nullptr, 0, nullptr}};

void set_metadata(const Tensor& t, const Tensor& src) {
  t->storage = src->storage;
  t->own_version = src->own_version;
  t->sizes = src->sizes;
  t->strides = src->strides;
  t->offset = src->offset;
  t->dtype = src->dtype;
  t->refresh();
}

// contiguous / is_contiguous with a memory_format: cudalite/_memory_format.py (the calls
// without one, the usual ones, stay here).
py::object memory_format_fn(const char* name) {
  return py::module_::import("cudalite._memory_format").attr(name);
}
}  // namespace

void bind_tensor(py::module_& m) {
  PyTensor cls(m, "Tensor", py::dynamic_attr());
  g_tensor_type = cls;
  // The legacy constructor Tensor(2, 3) / Tensor([1, 2]) / Tensor(other): the argument
  // parsing lives in Python; the new object aliases what it returns.
  cls.def(py::init([](py::args a, py::kwargs k) {
    CL_CHECK(g_legacy_ctor, "cudalite is not initialised");
    return alias((*g_legacy_ctor)(*a, **k).cast<Tensor>());
  }));
  m.def("_set_legacy_ctor", [](py::object f) { g_legacy_ctor = new py::object(std::move(f)); });
  for (PyGetSetDef* g = g_getters; g->name; ++g) {
    py::object d = py::reinterpret_steal<py::object>(
        PyDescr_NewGetSet(reinterpret_cast<PyTypeObject*>(cls.ptr()), g));
    if (!d) throw py::error_already_set();
    py::setattr(cls, g->name, d);
  }
  add_tensor_methods(g_len_def);
  m.def("_install_size_getitem", [](py::handle cls) {
    auto* type = reinterpret_cast<PyTypeObject*>(cls.ptr());
    py::object d = py::reinterpret_steal<py::object>(PyDescr_NewMethod(type, &g_size_getitem));
    if (!d) throw py::error_already_set();
    py::setattr(cls, "__getitem__", d);
  });
  cls.def_property(
         "_requires_grad_flag", [](const Tensor& t) { return t->requires_grad; },
         [](const Tensor& t, bool v) { t->requires_grad = v; })
      .def_property_readonly("is_cpu", [](const Tensor& t) { return t->device().is_cpu(); })
      .def("dim", [](const Tensor& t) { return t->dim(); })
      .def("ndimension", [](const Tensor& t) { return t->dim(); })
      .def("numel", [](const Tensor& t) { return t->numel(); })
      .def("nelement", [](const Tensor& t) { return t->numel(); })
      .def("element_size", [](const Tensor& t) { return t->element_size(); })
      .def_property_readonly("itemsize", [](const Tensor& t) { return t->element_size(); })
      .def_property_readonly(
          "nbytes", [](const Tensor& t) { return t->numel() * int64_t(t->element_size()); })
      .def(
          "size",
          [](const Tensor& t, py::object dim) -> py::object {
            if (dim.is_none()) return make_size(t->sizes);
            int64_t d = dim_arg("size", t, dim);
            return py::int_(t->dim() == 0 ? (wrap_dim(d, 0), 1) : t->sizes[wrap_dim(d, t->dim())]);
          },
          py::arg("dim") = py::none())
      .def(
          "stride",
          [](const Tensor& t, py::object dim) -> py::object {
            if (dim.is_none()) return py::tuple(py::cast(t->strides));
            int64_t d = dim_arg("stride", t, dim);
            return py::int_(t->dim() == 0 ? (wrap_dim(d, 0), 1)
                                          : t->strides[wrap_dim(d, t->dim())]);
          },
          py::arg("dim") = py::none())
      .def("storage_offset", [](const Tensor& t) { return t->offset; })
      .def(
          "is_contiguous",
          [](const Tensor& t, py::object fmt) -> py::object {
            if (fmt.is_none()) return py::bool_(t->is_contiguous());
            return memory_format_fn("is_contiguous")(t, fmt);
          },
          py::arg("memory_format") = py::none())
      // The address leaves cudalite: queued work on it is launched first, and work on its
      // memory is never deferred again (Note [Deferred launches] in csrc/cuda/deferred.cpp).
      .def("data_ptr",
           [](const Tensor& t) {
             export_storage(t);
             return reinterpret_cast<uintptr_t>(t->data());
           })
      .def("get_device", [](const Tensor& t) { return t->is_cuda() ? int(t->device().index) : -1; })
      .def("is_pinned", [](const Tensor& t) { return t->storage->pinned; })
      .def(
          "_storage_ptr",
          [](const Tensor& t, bool exporting) {
            if (exporting) export_storage(t);
            return reinterpret_cast<uintptr_t>(t->storage->data.get());
          },
          py::arg("exporting") = true)
      .def("_storage_nbytes", [](const Tensor& t) { return t->storage->nbytes; })
      // ---- Shared CPU memory (core/shared_memory.h) ----
      .def("_share_memory_fd", [](const Tensor& t, int fd) { share_memory(*t->storage, fd); })
      .def("_is_shared_memory", [](const Tensor& t) { return is_shared_memory(*t->storage); })
      .def("_shared_memory_fd", [](const Tensor& t) { return shared_memory_fd(*t->storage); })
      .def("_is_same_storage",
           [](const Tensor& a, const Tensor& b) { return a->storage == b->storage; })
      // How many tensors share this storage: autograd keeps a gradient buffer as `.grad` only
      // when nothing else can see (and later be changed by) its memory.
      .def("_storage_use_count", [](const Tensor& t) { return t->storage.use_count(); })
      .def("_alias", [](const Tensor& t) { return alias(t); })  // detach(): not a view
      // torch's _base (the root of a chain of views; None for a tensor that is not a view)
      .def_property_readonly("_base", [](const Tensor& t) { return t->base; })
      .def("_is_view", [](const Tensor& t) { return bool(t->base); })
      // x.data: an alias with a version counter of its own (torch's variable_data), so that
      // `p.data.mul_(2)` does not count as a change of p (Note [Version counters]).
      .def("_variable_data",
           [](const Tensor& t) {
             Tensor out = alias(t);
             out->own_version = std::make_shared<VersionCounter>();
             return out;
           })
      // In-place re-pointing at src's memory, sharing its version counter (Parameter(data),
      // the in-place views t_(), squeeze_() ...).
      .def("_set_metadata", &set_metadata)
      // x.data = y: as _set_metadata, but x keeps counting its own versions, as in torch.
      .def("_set_data",
           [](const Tensor& t, const Tensor& src) {
             auto own = std::make_shared<VersionCounter>(t->version());
             set_metadata(t, src);
             t->own_version = std::move(own);
           })
      // Counts an in-place write made by a composition of other calls (in-place views).
      .def("_bump_version", [](const Tensor& t) { t->bump_version(); })
      // resize_ (the argument checks and autograd's are in python/cudalite/_resize.py): the
      // storage is kept, or grown in place, so views of it see the new memory. The user's
      // resize_ (bump_version) counts as a write when the sizes change, as torch's does;
      // out= arguments are resized uncounted (the write that follows counts).
      .def(
          "_resize_",
          [](const Tensor& t, py::handle sizes, py::handle strides, bool bump_version) {
            Shape st = strides.is_none() ? Shape{} : to_shape(strides);
            Shape sz = to_shape(sizes);
            bool changed = sz != t->sizes;
            resize_(t, sz, strides.is_none() ? nullptr : &st);
            if (bump_version && changed) t->bump_version();
          },
          py::arg("sizes"), py::arg("strides") = py::none(), py::arg("bump_version") = false)
      // views
      // Positional calls take the first overload; keyword forms (torch's parser takes
      // x.view(size=...), x.reshape(shape=...), x.permute(dims=...)) fall to the second,
      // so the usual call pays nothing for them.
      .def("view", &view_args)
      .def("view",
           [](const Tensor& t, py::args a, py::kwargs k) {
             bool ok = a.empty() && k.size() == 1 &&
                       ((k.contains("size") && py::isinstance<py::sequence>(k["size"])) ||
                        (k.contains("dtype") && py::isinstance<DType>(k["dtype"])));
             if (!ok) {
               std::string got;  // torch's listing: "(int, size=tuple)", "(size=int, )"
               for (auto v : a) got += (got.empty() ? "" : ", ") + type_name(v);
               for (auto kv : k)
                 got += (got.empty() ? "" : ", ") + std::string(py::str(kv.first)) + "=" +
                        type_name(kv.second);
               if (a.empty()) got += ", ";
               throw TypeError(detail::str("view() received an invalid combination of ",
                                           "arguments - got (", got, "), but expected one of:"));
             }
             return view_args(t, py::args(py::make_tuple(k.begin()->second)));
           })
      .def("reshape",
           [](const Tensor& t, py::args a) {
             Shape sizes = shape_from_args(a);
             return view_of(
                 t, maybe_without_gil(worth_releasing(t), [&] { return reshape(t, sizes); }));
           })
      .def("reshape",
           [](const Tensor& t, py::args a, py::kwargs k) {
             Shape sizes = shape_from_args(keyword_sizes("reshape", "shape", a, k));
             return view_of(
                 t, maybe_without_gil(worth_releasing(t), [&] { return reshape(t, sizes); }));
           })
      .def("permute",
           [](const Tensor& t, py::args a) { return view_of(t, permute(t, dims_from_args(a))); })
      .def("permute",
           [](const Tensor& t, py::args a, py::kwargs k) {
             return view_of(t, permute(t, dims_from_args(keyword_sizes("permute", "dims", a, k))));
           })
      .def("transpose",
           [](const Tensor& t, int64_t a, int64_t b) { return view_of(t, transpose(t, a, b)); })
      .def("swapaxes",
           [](const Tensor& t, int64_t a, int64_t b) { return view_of(t, transpose(t, a, b)); })
      .def("expand",
           [](const Tensor& t, py::args a) { return view_of(t, expand(t, shape_from_args(a))); })
      .def(
          "squeeze",
          [](const Tensor& t, py::object dim) {
            if (dim.is_none()) return view_of(t, squeeze(t));
            if (py::isinstance<py::tuple>(dim) || py::isinstance<py::list>(dim))
              return view_of(t, squeeze_dims(t, to_shape(dim)));
            return view_of(t, squeeze_dims(t, {dim.cast<int64_t>()}));
          },
          py::arg("dim") = py::none())
      .def(
          "unsqueeze", [](const Tensor& t, int64_t d) { return view_of(t, unsqueeze(t, d)); },
          py::arg("dim"))
      .def(
          "flatten",
          [](const Tensor& t, int64_t s, int64_t e) { return view_of(t, flatten(t, s, e)); },
          py::arg("start_dim") = 0, py::arg("end_dim") = -1)
      .def("select",
           [](const Tensor& t, int64_t d, int64_t i) {
             // torch's select() words range errors differently from indexing (x[i] uses _select).
             if (t->dim() > 0) {
               int64_t wd = wrap_dim(d, t->dim());
               int64_t size = t->sizes[wd];
               CL_CHECK_INDEX(i >= -size && i < size, "select(): index ", i,
                              " out of range for tensor of size ", shape_str(t->sizes),
                              " at dimension ", wd);
             }
             return view_of(t, select(t, d, i));
           })
      .def("_select",
           [](const Tensor& t, int64_t d, int64_t i) { return view_of(t, select(t, d, i)); })
      .def("_slice", [](const Tensor& t, int64_t d, int64_t start, int64_t stop,
                        int64_t step) { return view_of(t, slice(t, d, start, stop, step)); })
      .def(
          "as_strided",
          [](const Tensor& t, py::handle size, py::handle stride, py::object off) {
            Shape sz = to_shape(size), st = to_shape(stride);
            int64_t o = off.is_none() ? t->offset : off.cast<int64_t>();
            check_as_strided(t, sz, st, o);
            return view_of(t, as_strided(t, sz, st, o));
          },
          py::arg("size"), py::arg("stride"), py::arg("storage_offset") = py::none())
      .def(
          "contiguous",
          [](const Tensor& t, py::object fmt) -> py::object {
            if (fmt.is_none()) {
              return py::cast(maybe_without_gil(!t->is_contiguous() && worth_releasing(t),
                                                [&] { return contiguous(t); }));
            }
            return memory_format_fn("contiguous")(t, fmt);
          },
          py::arg("memory_format") = py::none())
      .def("_clone", [](const Tensor& t) {
        return maybe_without_gil(worth_releasing(t), [&] { return clone(t); });
      });
  // A flat CPU tensor of `dtype` over the shared file `fd` (core/shared_memory.h).
  m.def("_map_shared_memory", [](int fd, size_t nbytes, py::handle dtype) {
    ScalarType dt = to_dtype(dtype);
    CL_CHECK_VALUE(nbytes % itemsize(dt) == 0, "_map_shared_memory: ", nbytes,
                   " bytes are not a whole number of elements");
    Storage st = map_shared_memory(fd, nbytes);
    return std::make_shared<TensorImpl>(std::move(st), Shape{int64_t(nbytes / itemsize(dt))},
                                        Shape{1}, 0, dt);
  });
  m.def("_wrap_dim", &wrap_dim, py::arg("dim"), py::arg("ndim"));
  m.def("_broadcast_shapes", [](py::handle a, py::handle b) {
    return make_size(broadcast_shapes(to_shape(a), to_shape(b)));
  });
}

}  // namespace cl::bind
