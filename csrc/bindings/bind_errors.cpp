// One mapping from core exceptions to Python exceptions, with torch's classes.
#include "bindings/convert.h"
#include "core/error.h"

namespace cl::bind {

void bind_errors(py::module_& m) {
  // Leaked on purpose: Python may still raise them while the interpreter shuts down.
  static PyObject* oom =
      (new py::exception<OutOfMemoryError>(m, "OutOfMemoryError", PyExc_RuntimeError))->ptr();
  static PyObject* acc =
      (new py::exception<AcceleratorError>(m, "AcceleratorError", PyExc_RuntimeError))->ptr();
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const OutOfMemoryError& e) {
      PyErr_SetString(oom, e.what());
    } catch (const AcceleratorError& e) {
      py::object inst = py::reinterpret_borrow<py::object>(acc)(py::str(e.what()));
      inst.attr("error_code") = e.code();
      PyErr_SetObject(acc, inst.ptr());
    } catch (const AssertionError& e) {
      PyErr_SetString(PyExc_AssertionError, e.what());
    } catch (const IndexError& e) {
      PyErr_SetString(PyExc_IndexError, e.what());
    } catch (const ValueError& e) {
      PyErr_SetString(PyExc_ValueError, e.what());
    } catch (const TypeError& e) {
      PyErr_SetString(PyExc_TypeError, e.what());
    } catch (const NotImplementedError& e) {
      PyErr_SetString(PyExc_NotImplementedError, e.what());
    } catch (const Error& e) {
      PyErr_SetString(PyExc_RuntimeError, e.what());
    }
  });
}

}  // namespace cl::bind
