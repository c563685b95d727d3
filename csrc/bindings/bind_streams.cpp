// Streams, events, pinned memory and record_stream for cudalite.cuda: conversion code only.
// The Python classes in python/cudalite/cuda/streams.py subclass the bases defined here, as
// torch's do. Calls that wait for the GPU release the GIL.
#include <cstdlib>
#include <map>
#include <vector>

#include "bindings/convert.h"
#include "bindings/fast_method.h"
#include "core/cuda_api.h"
#include "core/host_block_cache.h"
#include "cuda/events.h"
#include "cuda/host_allocator.h"
#include "cuda/streams.h"

namespace cl::bind {

namespace {

using cuda::Event;
using cuda::Stream;

// torch's DeviceType enum value for CUDA, which Stream.device_type reports.
constexpr int kCudaDeviceType = 1;

py::tuple stream_tuple(const Stream& s) {
  return py::make_tuple(s.id(), s.device, kCudaDeviceType);
}

cuda::StreamHandle to_handle(uint64_t v) {
  return reinterpret_cast<cuda::StreamHandle>(static_cast<uintptr_t>(v));
}

// Note [Stream construction]
// Stream() is called in loops (one per micro-batch, per layer), and pybind11's constructor
// dispatch (matching the overloads, the argument casters, the function_call record) cost
// several times the pool lookup itself; torch's stream type is a plain CPython type. The two
// calls made all the time, (priority) and (stream_id, device_index) with positional ints
// (Stream(), current_stream()), construct the value here; every other call (torch's keyword
// forms, wrong types, ints out of range) goes to the pybind11 __init__ below, unchanged.
PyTypeObject* g_stream_type = nullptr;
py::detail::type_info* g_stream_tinfo = nullptr;
PyObject* g_stream_init_slow = nullptr;  // the pybind11 __init__ (kept for the process)

bool int_in_range(PyObject* o, long long lo, long long hi, long long& v) {
  if (!PyLong_CheckExact(o)) return false;
  int overflow = 0;
  v = PyLong_AsLongLongAndOverflow(o, &overflow);
  if (v == -1 && PyErr_Occurred()) {
    PyErr_Clear();
    return false;
  }
  return !overflow && v >= lo && v <= hi;
}

PyObject* stream_init(PyObject* self, PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames) {
  constexpr long long kIntMin = std::numeric_limits<int>::min();
  constexpr long long kIntMax = std::numeric_limits<int>::max();
  constexpr long long kI64Min = std::numeric_limits<long long>::min();
  constexpr long long kI64Max = std::numeric_limits<long long>::max();
  long long a = 0, b = 0;
  const bool fast = !kwnames && PyObject_TypeCheck(self, g_stream_type) &&
                    (nargs == 0 || (nargs == 1 && int_in_range(args[0], kIntMin, kIntMax, a)) ||
                     (nargs == 2 && int_in_range(args[0], kI64Min, kI64Max, a) &&
                      int_in_range(args[1], kIntMin, kIntMax, b)));
  if (!fast) {
    const Py_ssize_t nkw = kwnames ? PyTuple_GET_SIZE(kwnames) : 0;
    std::vector<PyObject*> all(size_t(nargs + nkw + 1));
    all[0] = self;
    for (Py_ssize_t i = 0; i < nargs + nkw; ++i) all[size_t(i + 1)] = args[i];
    return PyObject_Vectorcall(g_stream_init_slow, all.data(), size_t(nargs + 1), kwnames);
  }
  return guarded([&]() -> py::object {
    auto* inst = reinterpret_cast<py::detail::instance*>(self);
    py::detail::value_and_holder v_h = inst->get_value_and_holder(g_stream_tinfo, true);
    if (v_h.instance_registered()) return py::none();  // a second __init__ is ignored, as pybind11
    Stream s =
        nargs == 2 ? Stream(int(b), to_handle(uint64_t(a))) : cuda::stream_from_pool(-1, int(a));
    v_h.value_ptr() = new Stream(s);
    v_h.type->init_instance(inst, nullptr);
    return py::none();
  });
}

void install_fast_stream_init(py::handle cls) {
  g_stream_type = reinterpret_cast<PyTypeObject*>(cls.ptr());
  g_stream_tinfo = py::detail::get_type_info(g_stream_type);
  g_stream_init_slow = py::getattr(cls, "__init__").release().ptr();
  static std::string doc = py::str(py::getattr(g_stream_init_slow, "__doc__"));
  static PyMethodDef def = {"__init__", as_cfunction(&stream_init), METH_FASTCALL | METH_KEYWORDS,
                            doc.c_str()};
  py::object descr = py::reinterpret_steal<py::object>(PyDescr_NewMethod(g_stream_type, &def));
  if (!descr) throw py::error_already_set();
  py::setattr(cls, "__init__", descr);
}

void bind_stream(py::module_& c) {
  py::class_<Stream>(c, "_CudaStreamBase")
      // Overloads, fastest first: pybind11 matches positional ints much faster than
      // keywords, and current_stream() and Stream() are called in loops.
      // (stream_id, device_index): wraps a stream that exists (current_stream() uses it).
      .def(py::init([](int64_t stream_id, int device_index) {
        return Stream(device_index, to_handle(uint64_t(stream_id)));
      }))
      // (priority): a stream from the pool of the current device.
      .def(py::init([](int priority) { return cuda::stream_from_pool(-1, priority); }),
           py::arg("priority") = 0)
      // torch's keyword forms.
      .def(py::init([](int64_t stream_id, int device_index, int device_type, int priority) {
             (void)device_type;
             (void)priority;
             return Stream(device_index, to_handle(uint64_t(stream_id)));
           }),
           py::kw_only(), py::arg("stream_id"), py::arg("device_index"), py::arg("device_type"),
           py::arg("priority") = 0)
      .def(py::init([](uint64_t stream_ptr, int priority) {
             (void)priority;
             return cuda::external_stream(to_handle(stream_ptr), -1);
           }),
           py::kw_only(), py::arg("stream_ptr"), py::arg("priority") = 0)
      .def_property_readonly("cuda_stream",
                             [](const Stream& s) { return reinterpret_cast<uintptr_t>(s.handle); })
      .def_property_readonly("stream_id", &Stream::id)
      .def_property_readonly("device_index", [](const Stream& s) { return s.device; })
      .def_property_readonly("device_type", [](const Stream&) { return kCudaDeviceType; })
      .def_property_readonly("device",
                             [](const Stream& s) { return Device(DeviceType::CUDA, s.device); })
      .def_property_readonly("priority", &Stream::priority)
      .def_static("priority_range",
                  [] {
                    auto r = cuda::priority_range();
                    return py::make_tuple(r.first, r.second);
                  })
      .def("query", &Stream::query)
      .def("synchronize", &Stream::synchronize, py::call_guard<py::gil_scoped_release>())
      .def("__eq__", [](const Stream& a, py::handle b) {
        return py::isinstance<Stream>(b) && a == b.cast<const Stream&>();
      });
  install_fast_stream_init(c.attr("_CudaStreamBase"));
}

void bind_event(py::module_& c) {
  py::class_<Event>(c, "_CudaEventBase")
      .def(py::init([](bool enable_timing, bool blocking, bool interprocess, bool external) {
             (void)external;  // only meaningful under CUDA graph capture
             return std::make_unique<Event>(enable_timing, blocking, interprocess);
           }),
           py::arg("enable_timing") = false, py::arg("blocking") = false,
           py::arg("interprocess") = false, py::arg("external") = false)
      .def(py::init([](int device, py::bytes handle) {
             return std::make_unique<Event>(device, std::string(handle));
           }),
           py::kw_only(), py::arg("_ipc_device"), py::arg("_ipc_handle"))
      .def_property_readonly("cuda_event",
                             [](const Event& e) { return reinterpret_cast<uintptr_t>(e.handle()); })
      .def_property_readonly("event_id",
                             [](const Event& e) { return reinterpret_cast<uintptr_t>(e.handle()); })
      .def_property_readonly("device",
                             [](const Event& e) -> py::object {
                               if (!e.created()) return py::none();
                               return py::cast(Device(DeviceType::CUDA, e.device()));
                             })
      // Without a stream: the current stream of the current device (no Stream object to make).
      .def(
          "record", [](Event& e) { e.record(cuda::get_current_stream(-1)); },
          py::call_guard<py::gil_scoped_release>())
      .def("record", &Event::record, py::arg("stream"), py::call_guard<py::gil_scoped_release>())
      .def(
          "wait", [](const Event& e) { e.wait(cuda::get_current_stream(-1)); },
          py::call_guard<py::gil_scoped_release>())
      .def("wait", &Event::wait, py::arg("stream"), py::call_guard<py::gil_scoped_release>())
      .def("query", &Event::query)
      .def("elapsed_time", &Event::elapsed_time, py::arg("end_event"))
      .def("synchronize", &Event::synchronize, py::call_guard<py::gil_scoped_release>())
      .def("ipc_handle", [](Event& e) { return py::bytes(e.ipc_handle()); });
}

py::dict duration_dict(const HostDurationStat& s) {
  py::dict d;
  d["total"] = s.total;
  d["max"] = s.max;
  d["min"] = s.min;
  d["count"] = s.count;
  d["avg"] = s.count ? s.total / s.count : 0;
  return d;
}

// torch._C._cuda_hostMemoryStats()'s nested dict.
py::dict host_stats_dict(const HostMemoryStats& s) {
  py::dict d;
  d["allocations"] = stat_dict(s.allocations);
  d["allocated_bytes"] = stat_dict(s.allocated_bytes);
  d["active_requests"] = stat_dict(s.active_requests);
  d["active_bytes"] = stat_dict(s.active_bytes);
  d["num_host_alloc"] = s.num_host_alloc;
  d["num_host_free"] = s.num_host_free;
  d["host_alloc_time"] = duration_dict(s.host_alloc_time);
  d["host_free_time"] = duration_dict(s.host_free_time);
  return d;
}

// A HostBlockCache over malloc and events that tests complete by hand, so the reuse rules
// of the pinned allocator are checked on machines without a GPU.
class FakePinnedBackend final : public PinnedBackend {
 public:
  void* allocate(size_t n) override {
    if (limit && n > limit - used_) throw OutOfMemoryError("fake host backend: out of memory");
    void* p = std::malloc(n);
    if (!p) throw OutOfMemoryError("fake host backend: out of memory");
    used_ += n;
    sizes_[p] = n;
    return p;
  }
  void free(void* p) override {
    used_ -= sizes_[p];
    sizes_.erase(p);
    std::free(p);
  }
  void* record_event(int, void* stream) override {
    events_.push_back({stream, false});
    return reinterpret_cast<void*>(events_.size());  // 1-based index
  }
  bool query_event(void* e) override { return events_[reinterpret_cast<size_t>(e) - 1].done; }
  void release_event(void*) override {}
  // Completes the events recorded so far on `stream`, as if the GPU had caught up.
  void complete(void* stream) {
    for (auto& e : events_) e.done = e.done || e.stream == stream;
  }
  size_t limit = 0;  // bytes; 0: unlimited

 private:
  struct FakeEvent {
    void* stream;
    bool done;
  };
  size_t used_ = 0;
  std::map<void*, size_t> sizes_;
  std::vector<FakeEvent> events_;
};

struct HostCacheForTesting {
  FakePinnedBackend backend;
  HostBlockCache cache{&backend};
  std::map<uintptr_t, DataPtr> live;  // destroyed first: blocks go back before the cache dies
};

void* as_ptr(uintptr_t v) { return reinterpret_cast<void*>(v); }

void bind_host_memory(py::module_& c) {
  c.def("_host_memory_stats", [] { return host_stats_dict(cuda::host_memory_stats()); });
  c.def("_host_reset_peak_stats", &cuda::host_reset_peak_stats);
  c.def("_host_reset_accumulated_stats", &cuda::host_reset_accumulated_stats);
  c.def("_host_empty_cache", &cuda::host_empty_cache, py::call_guard<py::gil_scoped_release>());
  c.def("_pin_memory", &cuda::pin_memory, py::call_guard<py::gil_scoped_release>());
  c.def("_host_block_size", &HostBlockCache::block_size);

  using T = HostCacheForTesting;
  py::class_<T>(c, "_HostCacheForTesting")
      .def(py::init<>())
      .def("set_limit", [](T& t, size_t bytes) { t.backend.limit = bytes; })
      .def("allocate",
           [](T& t, size_t n) {
             DataPtr d = t.cache.allocate(n);
             auto p = reinterpret_cast<uintptr_t>(d.get());
             t.live.emplace(p, std::move(d));
             return p;
           })
      .def("free", [](T& t, uintptr_t p) { t.live.erase(p); })
      .def("record_stream",
           [](T& t, uintptr_t p, uintptr_t stream) {
             return t.cache.record_stream(as_ptr(p), 0, as_ptr(stream));
           })
      .def("complete", [](T& t, uintptr_t stream) { t.backend.complete(as_ptr(stream)); })
      .def("process_events", [](T& t) { t.cache.process_events(); })
      .def("empty_cache", [](T& t) { t.cache.empty_cache(); })
      .def("stats", [](T& t) { return host_stats_dict(t.cache.stats()); })
      .def("reset_peak_stats", [](T& t) { t.cache.reset_peak_stats(); })
      .def("reset_accumulated_stats", [](T& t) { t.cache.reset_accumulated_stats(); })
      .def_property_readonly("cached_blocks", [](T& t) { return t.cache.cached_blocks(); })
      .def_property_readonly("pending_blocks", [](T& t) { return t.cache.pending_blocks(); });
}

void bind_stream_functions(py::module_& c) {
  c.def("_current_stream",
        [](int device) { return stream_tuple(cuda::get_current_stream(device)); });
  c.def("_default_stream", [](int device) { return stream_tuple(cuda::default_stream(device)); });
  c.def("_stream_from_external", [](uint64_t ptr, int device) {
    return stream_tuple(cuda::external_stream(to_handle(ptr), device));
  });
  // torch's _cuda_setStream: the stream's device becomes the current device too.
  c.def(
      "_set_stream",
      [](int64_t stream_id, int device_index, int device_type) {
        (void)device_type;
        if (cuda::current_device() != device_index) cuda::set_device(device_index);
        cuda::set_current_stream(Stream(device_index, to_handle(uint64_t(stream_id))));
      },
      py::arg("stream_id"), py::arg("device_index"), py::arg("device_type"));
  c.def("_record_stream",
        [](const Tensor& t, const Stream& s) { cuda::record_stream(t->storage.get(), s.handle); });
  c.def("_pending_record_stream_frees", &cuda::pending_record_stream_frees);
}

}  // namespace

void bind_streams(py::module_& m) {
  auto c = py::reinterpret_borrow<py::module_>(m.attr("_cuda"));
  bind_stream(c);
  bind_event(c);
  bind_stream_functions(c);
  bind_host_memory(c);
}

}  // namespace cl::bind
