// CUDA graphs for cudalite.cuda.graphs: conversion code only (the logic is csrc/cuda/graphs.cpp).
// The Python class CUDAGraph subclasses _CUDAGraph, as torch's does. Captures and replays
// queue work without waiting, so the GIL is kept; capture_end instantiates, which may take
// milliseconds, without it.
#include "bindings/convert.h"
#include "cuda/graphs.h"

namespace cl::bind {

namespace {

cuda::CaptureMode parse_mode(const std::string& mode) {
  if (mode == "global") return cuda::CaptureMode::kGlobal;
  if (mode == "thread_local") return cuda::CaptureMode::kThreadLocal;
  if (mode == "relaxed") return cuda::CaptureMode::kRelaxed;
  throw Error(
      "Unknown capture error mode. Expected `global`, `thread_local`, or "
      "`relaxed`, got " +
      mode);
}

}  // namespace

void bind_graphs(py::module_& parent) {
  using cuda::CudaGraph;
  auto m = py::reinterpret_borrow<py::module_>(parent.attr("_cuda"));
  py::class_<CudaGraph>(m, "_CUDAGraph")
      .def(py::init<bool>(), py::arg("keep_graph") = false)
      .def(
          "capture_begin",
          [](CudaGraph& g, std::optional<MempoolId> pool, const std::string& mode) {
            g.capture_begin(pool.value_or(MempoolId{0, 0}), parse_mode(mode));
          },
          py::arg("pool") = py::none(), py::arg("capture_error_mode") = "global")
      .def("capture_end",
           [](CudaGraph& g) {
             size_t nodes;
             {
               py::gil_scoped_release nogil;
               nodes = g.capture_end();
             }
             if (nodes == 0) {
               if (PyErr_WarnEx(PyExc_UserWarning,
                                "The CUDA Graph is empty. This usually means that the graph was "
                                "attempted to be captured on wrong device or stream.",
                                1) < 0) {
                 throw py::error_already_set();
               }
             }
           })
      .def("_abort_capture", &CudaGraph::abort_capture)
      .def("instantiate", &CudaGraph::instantiate, py::call_guard<py::gil_scoped_release>())
      .def("replay", &CudaGraph::replay)
      .def("reset", &CudaGraph::reset)
      .def("pool", &CudaGraph::pool)
      .def("enable_debug_mode", &CudaGraph::enable_debug_mode)
      .def("debug_dump", &CudaGraph::debug_dump, py::arg("debug_path"))
      .def("raw_cuda_graph", &CudaGraph::raw_cuda_graph)
      .def("raw_cuda_graph_exec", &CudaGraph::raw_cuda_graph_exec)
      .def_property_readonly("_capturing", &CudaGraph::capturing)
      .def_property_readonly("_rng_increment", &CudaGraph::rng_increment);
  m.def("_graph_pool_handle", &cuda::graph_pool_handle);
  m.def("_cuda_isCurrentStreamCapturing", &cuda::is_current_stream_capturing);
  m.def("_cuda_captures_underway", &cuda::captures_underway);
}

}  // namespace cl::bind
