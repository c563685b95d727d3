// _C._crc32(data, value=0): zlib.crc32's contract over any contiguous buffer, at memory
// speed and with the GIL released (python/cudalite/_archive.py checks checkpoint records
// with it).
#include "bindings/convert.h"
#include "core/crc32.h"

namespace cl::bind {

void bind_checksum(py::module_& m) {
  m.def(
      "_crc32",
      [](py::handle data, uint32_t value) {
        Py_buffer view;
        if (PyObject_GetBuffer(data.ptr(), &view, PyBUF_SIMPLE) != 0) throw py::error_already_set();
        uint32_t out;
        {
          py::gil_scoped_release release;
          out = cl::crc32(value, view.buf, size_t(view.len));
        }
        PyBuffer_Release(&view);
        return out;
      },
      py::arg("data"), py::arg("value") = 0);
  m.def(
      "_crc32_table",
      [](py::bytes data, uint32_t value) {
        std::string_view s = data;
        return cl::crc32_table(value, s.data(), s.size());
      },
      py::arg("data"), py::arg("value") = 0);
}

}  // namespace cl::bind
