// Autograd's helpers in C: Tensor.grad_fn of the tensors that have no node of their own in
// their instance dict, and the versions of the tensors a node saved (autograd/saved.py).
//
// Note [View grad_fn]
// A recorded op's output keeps its node in its instance dict as "grad_fn", which Python reads
// before this class-level descriptor (a non-data descriptor), so reading it costs a dict
// lookup. A view that autograd tracks instead keeps its node as "_view_fn" with the version
// its node was made at ("_attr_version"; python/cudalite/autograd/functions/views.py). When
// its base, or another view of it, was modified in place since, the version differs and the
// node is stale (it leads to the base's old history): as torch's VariableHooks::grad_fn, the
// resolver set from Python then makes a new AsStridedBackward0 of the base's current history,
// or raises torch's error for views made in no_grad mode and outputs of multi-view ops. Leaves
// and plain tensors, the common case here, cost one failed dict lookup.
#include <vector>

#include "bindings/fast_method.h"

namespace cl::bind {

namespace {

PyObject* g_resolver = nullptr;  // views.view_grad_fn(t), set by cudalite._tensor
PyObject* g_attr_version = nullptr;
PyObject* g_view_fn = nullptr;

PyObject* grad_fn_get(PyObject* self, PyObject* obj, PyObject*) {
  if (!obj) {  // Tensor.grad_fn: the descriptor itself
    Py_INCREF(self);
    return self;
  }
  PyObject** dictptr = _PyObject_GetDictPtr(obj);
  PyObject* dict = dictptr ? *dictptr : nullptr;
  if (!dict) Py_RETURN_NONE;
  PyObject* attr = PyDict_GetItemWithError(dict, g_attr_version);  // borrowed
  if (!attr) {
    if (PyErr_Occurred()) return nullptr;
    Py_RETURN_NONE;
  }
  Tensor t;
  if (load_tensor(obj, t) && PyLong_Check(attr)) {
    unsigned long v = PyLong_AsUnsignedLong(attr);
    if (v == (unsigned long)-1 && PyErr_Occurred()) return nullptr;
    if (v == t->version()) {
      PyObject* fn = PyDict_GetItemWithError(dict, g_view_fn);
      if (!fn) {
        if (PyErr_Occurred()) return nullptr;
        Py_RETURN_NONE;
      }
      Py_INCREF(fn);
      return fn;
    }
  }
  if (!g_resolver) Py_RETURN_NONE;
  return PyObject_CallOneArg(g_resolver, obj);
}

PyType_Slot g_slots[] = {
    {Py_tp_descr_get, reinterpret_cast<void*>(&grad_fn_get)},
    {Py_tp_doc, const_cast<char*>("Tensor.grad_fn of tensors without a node of their own")},
    {0, nullptr}};
PyType_Spec g_spec = {"cudalite._C._GradFnSlot", sizeof(PyObject), 0, Py_TPFLAGS_DEFAULT, g_slots};

// The version of each tensor in `v` (a tensor, or a tuple or list holding some): appended to
// `out` as ints; false when there is none.
bool versions_of(PyObject* v, std::vector<uint32_t>& out) {
  Tensor t;
  if (load_tensor(v, t)) {
    out.push_back(t->version());
    return true;
  }
  if (!PyTuple_Check(v) && !PyList_Check(v)) return false;
  size_t before = out.size();
  py::sequence seq = py::reinterpret_borrow<py::sequence>(v);
  for (py::handle e : seq) {
    if (load_tensor(e, t)) out.push_back(t->version());
  }
  return out.size() > before;
}

// What saved.capture records for one attribute: the version of a tensor, a tuple of the
// versions of a tuple's or list's tensors, or None.
py::object capture_one(PyObject* v) {
  if (v == Py_None) return py::none();
  Tensor t;
  if (load_tensor(v, t)) return py::reinterpret_steal<py::object>(PyLong_FromLong(t->version()));
  std::vector<uint32_t> vs;
  if (!versions_of(v, vs)) return py::none();
  py::tuple out(vs.size());
  for (size_t i = 0; i < vs.size(); ++i) out[i] = py::int_(vs[i]);
  return std::move(out);
}

// The attribute `name` of `node`, or null (a slot never set).
PyObject* get_attr(py::handle node, py::handle name) {
  PyObject* v = PyObject_GetAttr(node.ptr(), name.ptr());
  if (!v) {
    if (!PyErr_ExceptionMatches(PyExc_AttributeError)) throw py::error_already_set();
    PyErr_Clear();
  }
  return v;
}

PyObject* g_saved = nullptr;  // "_saved"
PyObject* g_vers = nullptr;   // "_vers"

// _saved_versions(node): saved.capture, one entry per name in node._saved (capture_one).
// Plain CPython functions: they run for every recorded op that saves a tensor, and pybind11's
// dispatch would cost more than their work.
PyObject* saved_versions(PyObject*, PyObject* node) {
  return guarded([&]() -> py::object {
    py::tuple names = py::reinterpret_steal<py::tuple>(PyObject_GetAttr(node, g_saved));
    if (!names) throw py::error_already_set();
    py::list out(names.size());
    for (size_t i = 0; i < names.size(); ++i) {
      PyObject* v = get_attr(node, names[i]);
      out[i] = v ? capture_one(v) : py::none();
      Py_XDECREF(v);
    }
    return std::move(out);
  });
}

// _first_modified(node): for saved.check, the index in node._saved of the first attribute
// whose tensors are no longer at the versions in node._vers, or -1.
PyObject* first_modified(PyObject*, PyObject* node) {
  return guarded([&]() -> py::object {
    py::tuple names = py::reinterpret_steal<py::tuple>(PyObject_GetAttr(node, g_saved));
    if (!names) throw py::error_already_set();
    py::list vers = py::reinterpret_steal<py::list>(PyObject_GetAttr(node, g_vers));
    if (!vers) throw py::error_already_set();
    std::vector<uint32_t> now;
    for (size_t i = 0; i < names.size(); ++i) {
      py::handle want = vers[i];
      if (want.is_none()) continue;
      PyObject* v = get_attr(node, names[i]);
      if (!v) return py::int_(i);
      now.clear();
      versions_of(v, now);
      Py_DECREF(v);
      bool same;
      if (PyLong_Check(want.ptr())) {
        same = now.size() == 1 && now[0] == want.cast<uint32_t>();
      } else {
        py::tuple w = py::reinterpret_borrow<py::tuple>(want);
        same = w.size() == now.size();
        for (size_t k = 0; same && k < now.size(); ++k) same = now[k] == w[k].cast<uint32_t>();
      }
      if (!same) return py::int_(i);
    }
    return py::int_(-1);
  });
}

PyMethodDef g_functions[] = {
    {"_saved_versions", &saved_versions, METH_O, "versions of what a node saved"},
    {"_first_modified", &first_modified, METH_O, "first saved entry modified since, or -1"},
    {nullptr, nullptr, 0, nullptr}};

void add_fast_functions(py::module_& m) {
  g_saved = PyUnicode_InternFromString("_saved");
  g_vers = PyUnicode_InternFromString("_vers");
  for (PyMethodDef* d = g_functions; d->ml_name; ++d) {
    py::object f = py::reinterpret_steal<py::object>(PyCFunction_NewEx(d, nullptr, m.ptr()));
    if (!f) throw py::error_already_set();
    m.add_object(d->ml_name, f);
  }
}

}  // namespace

void bind_autograd(py::module_& m) {
  g_attr_version = PyUnicode_InternFromString("_attr_version");
  g_view_fn = PyUnicode_InternFromString("_view_fn");
  // _grad_fn_slot(resolver): the descriptor to set as Tensor.grad_fn; resolver(t) gives a
  // tracked view's node when its version changed (or raises).
  m.def("_grad_fn_slot", [](py::object resolver) {
    py::object type = py::reinterpret_steal<py::object>(PyType_FromSpec(&g_spec));
    if (!type) throw py::error_already_set();
    py::object slot = type();
    Py_XDECREF(g_resolver);
    g_resolver = resolver.release().ptr();
    return slot;
  });
  add_fast_functions(m);
}

}  // namespace cl::bind
