// Checksummed bytes of checkpoints (python/cudalite/_archive.py checks every record with
// them), with the GIL released:
// _C._crc32(data, value=0): zlib.crc32's contract over any contiguous buffer, at memory speed.
// _C._read_file_crc32(fd, offset, buffer, skip=0, value=0, fresh=True): reads len(buffer)
// bytes of the file at offset into buffer and `skip` more into scratch memory, and returns
// the CRC-32 of them all (Note [Reading records into fresh memory]; `fresh`: buffer was just
// allocated).
#include "bindings/convert.h"
#include "core/crc32.h"
#include "core/file_read.h"

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
      "_read_file_crc32",
      [](int fd, uint64_t offset, py::handle buffer, size_t skip, uint32_t value, bool fresh) {
        Py_buffer view;
        if (PyObject_GetBuffer(buffer.ptr(), &view, PyBUF_SIMPLE | PyBUF_WRITABLE) != 0) {
          throw py::error_already_set();
        }
        uint32_t out;
        try {
          py::gil_scoped_release release;
          out = cl::read_file_crc32(fd, offset, view.buf, size_t(view.len), skip, value, fresh);
        } catch (...) {
          PyBuffer_Release(&view);
          throw;
        }
        PyBuffer_Release(&view);
        return out;
      },
      py::arg("fd"), py::arg("offset"), py::arg("buffer"), py::arg("skip") = 0,
      py::arg("value") = 0, py::arg("fresh") = true);
  m.def(
      "_crc32_table",
      [](py::bytes data, uint32_t value) {
        std::string_view s = data;
        return cl::crc32_table(value, s.data(), s.size());
      },
      py::arg("data"), py::arg("value") = 0);
}

}  // namespace cl::bind
