// Tensor methods whose common call takes no arguments (sum, item, cuda, cpu), as plain
// CPython methods, and the machinery the fast methods share (bindings/fast_method.h).
//
// Note [Fast methods]
// `a.sum()`, `a.item()` and `x.cuda()` on one element are launch- or copy-bound, and the
// Python method around each (argument defaults, a pybind11 call) cost 0.3-0.6 us of their
// 4-6 us on an H200 (benchmarks/cpp/op_overhead.cu against bench_gpu_math.py --launch). So
// the argument-free call runs here in C++; every other call (arguments, keywords, a tensor
// that requires grad) goes to the full Python method, registered with _set_slow_methods,
// with the same arguments; that method records once autograd is armed (Note [Recording
// slots] in bind_checked.cpp).
#include <string>
#include <utility>
#include <vector>

#include "bindings/fast_method.h"
#include "bindings/gil.h"
#include "core/error.h"

namespace cl::bind {

namespace {
thread_local std::exception_ptr t_pending;
py::object* g_rethrow = nullptr;
py::dict* g_slow = nullptr;  // name -> the full Python method
}  // namespace

void set_python_error() {
  t_pending = std::current_exception();
  Py_XDECREF(PyObject_CallObject(g_rethrow->ptr(), nullptr));
}

py::object call_slow(const char* name, PyObject* self, PyObject* const* args, Py_ssize_t nargs,
                     PyObject* kwnames) {
  PyObject* slow = g_slow ? PyDict_GetItemString(g_slow->ptr(), name) : nullptr;
  CL_CHECK(slow, "cudalite: Tensor.", name, " used before cudalite was imported");
  Py_ssize_t nkw = kwnames ? PyTuple_GET_SIZE(kwnames) : 0;
  std::vector<PyObject*> full(size_t(1 + nargs + nkw));
  full[0] = self;
  for (Py_ssize_t i = 0; i < nargs + nkw; ++i) full[size_t(1 + i)] = args[i];
  PyObject* r = PyObject_Vectorcall(slow, full.data(), size_t(1 + nargs), kwnames);
  if (!r) throw py::error_already_set();
  return py::reinterpret_steal<py::object>(r);
}

void add_tensor_methods(PyMethodDef* defs) {
  py::handle cls = tensor_type();
  auto* type = reinterpret_cast<PyTypeObject*>(cls.ptr());
  for (PyMethodDef* d = defs; d->ml_name; ++d) {
    // Setting the attribute on the type also points its number slots (nb_add, ...) here.
    py::object descr = py::reinterpret_steal<py::object>(PyDescr_NewMethod(type, d));
    if (!descr) throw py::error_already_set();
    py::setattr(cls, d->ml_name, descr);
  }
}

namespace {

// The argument-free call of each method; the rest goes to the Python method of that name.
// Note [Releasing the GIL] (bindings/gil.h): large CPU work, and copies that wait for a GPU.
py::object sum_all(const Tensor& t) {
  return wrap_tensor(
      maybe_without_gil(worth_releasing(t), [&] { return reduce(ReduceOp::Sum, t, {}, false); }));
}
py::object item_value(const Tensor& t) {
  return scalar_to_py(maybe_without_gil(t->is_cuda(), [&] { return item(t); }));
}
py::object to_cuda(const Tensor& t) {
  return wrap_tensor(maybe_without_gil(
      !t->is_cuda(), [&] { return to(t, Device(DeviceType::CUDA), t->dtype, false, false); }));
}
py::object to_cpu(const Tensor& t) {
  return wrap_tensor(
      maybe_without_gil(t->is_cuda(), [&] { return to(t, Device(), t->dtype, false, false); }));
}

template <py::object (*F)(const Tensor&)>
PyObject* no_args(PyObject* self, PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames,
                  const char* name) {
  return guarded([&] {
    Tensor t;
    if (nargs == 0 && !kwnames && !autocast_active() && load_tensor(self, t) && !t->requires_grad)
      return F(t);
    return call_slow(name, self, args, nargs, kwnames);
  });
}

// Note [Basic indexing in C++]
// x[i], x[a:b] and tuples of ints and slices (the indexing of every tutorial loop) are views
// made here; anything else (None, Ellipsis, bools, tensors, lists, steps <= 0, an index out
// of range, a 0-dim tensor, a tensor that requires grad) goes to _indexing.getitem, which
// owns torch's rules and errors.
bool apply_basic(Tensor& view, int64_t& d, PyObject* i) {
  if (PyLong_CheckExact(i)) {
    int overflow = 0;
    const long long v = PyLong_AsLongLongAndOverflow(i, &overflow);
    if (overflow || d >= int64_t(view->dim())) return false;
    const int64_t size = view->sizes[size_t(d)];
    if (v < -size || v >= size) return false;
    view = select(view, d, v);
    return true;
  }
  if (PySlice_Check(i)) {
    Py_ssize_t start = 0, stop = 0, step = 0;
    if (PySlice_Unpack(i, &start, &stop, &step) < 0) {
      PyErr_Clear();
      return false;
    }
    if (step <= 0 || d >= int64_t(view->dim())) return false;
    view = slice(view, d, start, stop, step);
    ++d;
    return true;
  }
  return false;
}

PyObject* getitem_fast(PyObject* self, PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames) {
  return guarded([&] {
    Tensor t;
    if (nargs == 1 && !kwnames && load_tensor(self, t) && !t->requires_grad && t->dim() > 0) {
      PyObject* idx = args[0];
      Tensor view = t;
      int64_t d = 0;
      bool ok;
      if (PyTuple_CheckExact(idx)) {
        const Py_ssize_t n = PyTuple_GET_SIZE(idx);
        ok = n > 0 && n <= Py_ssize_t(t->dim());
        for (Py_ssize_t k = 0; ok && k < n; ++k)
          ok = apply_basic(view, d, PyTuple_GET_ITEM(idx, k));
      } else {
        ok = apply_basic(view, d, idx);
      }
      if (ok) return wrap_tensor(view_of(t, view));
    }
    return call_slow("__getitem__", self, args, nargs, kwnames);
  });
}

#define CL_NO_ARGS(name, fn, doc)                                                           \
  {name, as_cfunction(+[](PyObject* self, PyObject* const* a, Py_ssize_t n, PyObject* kw) { \
     return no_args<&fn>(self, a, n, kw, name);                                             \
   }),                                                                                      \
   METH_FASTCALL | METH_KEYWORDS, doc},

// clang-format off
PyMethodDef g_methods[] = {
    CL_NO_ARGS("sum", sum_all, "sum(dim=None, keepdim=False, *, dtype=None) -> Tensor")
    CL_NO_ARGS("item", item_value, "item() -> number: the value of a one-element tensor")
    CL_NO_ARGS("cuda", to_cuda, "cuda(device=None, non_blocking=False) -> Tensor: a copy in "
                                "CUDA memory (self if already there)")
    CL_NO_ARGS("cpu", to_cpu, "cpu() -> Tensor: a copy in host memory (self if already there)")
    {"__getitem__", as_cfunction(&getitem_fast), METH_FASTCALL | METH_KEYWORDS,
     "self[idx]: torch's indexing (Note [Basic indexing in C++])"},
    {nullptr, nullptr, 0, nullptr}};
// clang-format on

#undef CL_NO_ARGS

}  // namespace

void bind_methods(py::module_& m) {
  m.def("_rethrow_pending", [] {
    std::exception_ptr e = std::exchange(t_pending, nullptr);
    if (e) std::rethrow_exception(e);
  });
  g_rethrow = new py::object(m.attr("_rethrow_pending"));
  m.def(
      "_set_slow_methods",
      [](py::dict d) {
        if (!g_slow) g_slow = new py::dict();
        for (auto kv : d) (*g_slow)[kv.first] = kv.second;
      },
      "The full Python methods that Tensor's C++ fast methods hand their other calls to.");
  add_tensor_methods(g_methods);
}

}  // namespace cl::bind
