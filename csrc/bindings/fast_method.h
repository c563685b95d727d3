// Tensor methods written as plain CPython methods (METH_FASTCALL descriptors set on the
// pybind11 class) for the calls whose cost is mostly binding overhead: see Note [Arithmetic
// entry points] (bind_arith.cpp) and Note [Fast methods] (bind_methods.cpp).
#pragma once

#include <exception>

#include "bindings/convert.h"

namespace cl::bind {

// Inside a catch block: sets the Python error for the exception in flight. A C++ exception
// is rethrown inside a pybind11 function, whose dispatcher turns it into the Python
// exception every other binding would raise (through the module's registered translators).
void set_python_error();

// Runs `f` (returning a py::object) as a CPython method body: a new reference, or nullptr
// with the Python error set.
template <class F>
PyObject* guarded(F&& f) {
  try {
    return f().release().ptr();
  } catch (py::error_already_set& e) {
    e.restore();
  } catch (...) {
    set_python_error();
  }
  return nullptr;
}

// A METH_FASTCALL function as the PyCFunction that PyMethodDef stores.
template <class Fn>
PyCFunction as_cfunction(Fn* f) {
  return reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(f));
}

// Calls the full Python method `name` (registered with _C._set_slow_methods) on self with
// the same arguments: what a fast method does with every call it does not handle itself.
py::object call_slow(const char* name, PyObject* self, PyObject* const* args, Py_ssize_t nargs,
                     PyObject* kwnames);

// Whether an autocast region is enabled in this thread: the C++ fast paths of ops in
// autocast's lists (sum, **) then hand the call to the op's entry (Note [Autocast at the
// entry] in bind_checked.cpp).
bool autocast_active();

// Sets each method of the null-terminated `defs` on the Tensor class.
void add_tensor_methods(PyMethodDef* defs);

}  // namespace cl::bind
