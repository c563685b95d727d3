// The caching allocator for cudalite.cuda.memory (_C._memory): statistics and snapshots as
// torch's dictionaries, history recording with Python stacks, settings, and
// _HostCachingAllocator, the host-memory allocator tests use on machines without a GPU.
#include "bindings/convert.h"
#include "bindings/fast_method.h"
// After Python.h (convert.h): frame access for history stacks.
#include <frameobject.h>

#include <algorithm>
#include <cstring>
#include <unordered_map>
#include <utility>
#include <vector>

#include "core/alloc_replay.h"
#include "core/caching_allocator.h"
#include "core/cuda_api.h"
#include "core/error.h"
#include "core/host_backend.h"

namespace cl::bind {

py::dict stat_dict(const Stat& s) {
  py::dict d;
  d["current"] = s.current;
  d["peak"] = s.peak;
  d["allocated"] = s.allocated;
  d["freed"] = s.freed;
  return d;
}

namespace {

// torch.cuda.memory_stats_as_nested_dict's layout.
py::dict stats_dict(const DeviceStats& st) {
  py::dict d;
  d["num_alloc_retries"] = st.num_alloc_retries;
  d["num_ooms"] = st.num_ooms;
  d["max_split_size"] = st.max_split_size;
  d["num_sync_all_streams"] = st.num_sync_all_streams;
  d["num_device_alloc"] = st.num_device_alloc;
  d["num_device_free"] = st.num_device_free;
  st.for_each_array([&](const char* name, const StatArray& a) {
    py::dict sub;
    for (int t = 0; t < kNumStatTypes; ++t) sub[stat_type_name(t)] = stat_dict(a[t]);
    d[name] = sub;
  });
  d["oversize_allocations"] = stat_dict(st.oversize_allocations);
  d["oversize_segments"] = stat_dict(st.oversize_segments);
  return d;
}

py::list frames_list(const StackContext& ctx) {
  py::list l;
  if (!ctx) return l;
  for (const StackFrame& f : *ctx) {
    py::dict fd;
    fd["filename"] = f.filename;
    fd["line"] = f.line;
    fd["name"] = f.name;
    l.append(fd);
  }
  return l;
}

py::dict settings_dict(const AllocatorSettings& s) {
  py::dict d;
  d["CUDALITE_ALLOC_CONF"] = s.text;
  d["max_split_size"] =
      s.max_split_size == std::numeric_limits<size_t>::max() ? -1 : int64_t(s.max_split_size);
  d["garbage_collection_threshold"] = s.garbage_collection_threshold;
  d["expandable_segments"] = s.expandable_segments;
  d["pinned_num_register_threads"] = s.pinned_num_register_threads;
  d["release_lock_on_cudamalloc"] = s.release_lock_on_cudamalloc;
  d["pinned_use_cuda_host_register"] = s.pinned_use_cuda_host_register;
  d["graph_capture_record_stream_reuse"] = s.graph_capture_record_stream_reuse;
  d["large_segment_size"] = s.large_segment_size;
  d["page_lending"] = s.page_lending;
  py::dict r;
  size_t key = 1;
  for (size_t v : s.roundup_power2_divisions) {
    r[py::str(std::to_string(key))] = v;
    key *= 2;
  }
  d["roundup_power2_divisions"] = r;
  return d;
}

py::list segments_list(const MemorySnapshot& snap, int device) {
  py::list segs;
  for (const SegmentInfo& s : snap.segments) {
    py::dict d;
    d["device"] = device;
    d["address"] = s.address;
    d["total_size"] = s.total_size;
    d["allocated_size"] = s.allocated_size;
    d["active_size"] = s.active_size;
    d["requested_size"] = s.requested_size;
    d["stream"] = s.stream;
    d["segment_type"] = s.is_large ? "large" : "small";
    d["segment_pool_id"] = py::make_tuple(s.pool_id.first, s.pool_id.second);
    d["is_expandable"] = s.is_expandable;
    d["frames"] = py::list();
    py::list blocks;
    uintptr_t addr = s.address;
    for (const BlockInfo& b : s.blocks) {
      py::dict bd;
      bd["address"] = addr;
      bd["size"] = b.size;
      bd["requested_size"] = b.requested_size;
      bd["state"] = b.allocated ? "active_allocated"
                    : b.active  ? "active_pending_free"
                                : "inactive";
      bd["frames"] = frames_list(b.context);
      blocks.append(bd);
      addr += b.size;
    }
    d["blocks"] = blocks;
    segs.append(d);
  }
  return segs;
}

py::list trace_list(const MemorySnapshot& snap) {
  py::list l;
  for (const TraceEntry& te : snap.trace) {
    py::dict d;
    d["action"] = trace_action_name(te.action);
    d[te.action == TraceEntry::kOom ? "device_free" : "addr"] = te.addr;
    d["size"] = te.size;
    d["stream"] = te.stream;
    d["time_us"] = te.time_us;
    d["frames"] = frames_list(te.context);
    l.append(d);
  }
  return l;
}

// torch.cuda.memory._snapshot()'s layout, for the allocators given (one per device).
py::dict replay_dict(const ReplayResult& r) {
  py::dict d;
  d["peak_reserved"] = r.peak_reserved;
  d["peak_allocated"] = r.peak_allocated;
  d["peak_requested"] = r.peak_requested;
  d["seconds"] = r.seconds;
  d["allocs"] = r.allocs;
  d["frees"] = r.frees;
  return d;
}

py::dict snapshot_dict(const std::vector<CachingAllocator*>& allocs) {
  py::list segments, traces;
  AllocatorSettings settings = global_allocator_settings();
  for (size_t dev = 0; dev < allocs.size(); ++dev) {
    if (!allocs[dev]) {
      traces.append(py::list());
      continue;
    }
    MemorySnapshot snap;
    {
      py::gil_scoped_release nogil;
      snap = allocs[dev]->snapshot();
    }
    for (auto seg : segments_list(snap, int(dev))) segments.append(seg);
    traces.append(trace_list(snap));
    settings = snap.settings;
  }
  py::dict d;
  d["segments"] = segments;
  d["device_traces"] = traces;
  d["allocator_settings"] = settings_dict(settings);
  d["external_annotations"] = py::list();
  return d;
}

// Note [History stacks]
// History recording's context: the Python stack, innermost frame first. Runs before the
// allocator takes its lock, possibly on a thread that released the GIL, once per recorded
// event. Programs allocate from the same few stacks over and over (a training step is a
// loop), so each distinct stack, keyed by its frames' code objects and lines, is converted
// to strings once and shared by every event made from it. The cache holds references to the
// code objects of its keys (an address is not reused while it is cached) and starts over
// when it holds kMaxStacks stacks.
// Where a frame is: its instruction's offset where Python has that (3.11+: cheaper than the
// line, which the cache computes once per stack), else its line.
#if PY_VERSION_HEX >= 0x030B0000
constexpr bool kKeyIsOffset = true;
int frame_position(PyFrameObject* f) { return PyFrame_GetLasti(f); }
#else
constexpr bool kKeyIsOffset = false;
int frame_position(PyFrameObject* f) { return PyFrame_GetLineNumber(f); }
#endif

struct StackKeyHash {
  size_t operator()(const std::vector<std::pair<PyObject*, int>>& k) const {
    size_t h = k.size();
    for (const auto& [code, line] : k) {
      h ^= std::hash<const void*>()(code) + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
      h ^= size_t(line) + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
    }
    return h;
  }
};

class StackCache {
 public:
  static constexpr size_t kMaxStacks = 4096;
  // With the GIL held.
  StackContext lookup(std::vector<std::pair<PyObject*, int>>&& key) {
    auto it = stacks_.find(key);
    if (it != stacks_.end()) return it->second;
    if (stacks_.size() >= kMaxStacks) clear();
    auto frames = std::make_shared<std::vector<StackFrame>>();
    frames->reserve(key.size());
    for (const auto& [code, line] : key) {
      py::handle co(code);
      StackFrame sf;
      sf.filename = py::str(co.attr("co_filename"));
      sf.name = py::str(co.attr("co_name"));
      sf.line = kKeyIsOffset ? PyCode_Addr2Line(reinterpret_cast<PyCodeObject*>(code), line) : line;
      frames->push_back(std::move(sf));
      Py_INCREF(code);
    }
    StackContext ctx = std::move(frames);
    stacks_.emplace(std::move(key), ctx);
    return ctx;
  }

 private:
  void clear() {
    for (auto& kv : stacks_) {
      for (const auto& frame : kv.first) Py_DECREF(frame.first);
    }
    stacks_.clear();
  }
  std::unordered_map<std::vector<std::pair<PyObject*, int>>, StackContext, StackKeyHash> stacks_;
};

StackContext gather_python_stack() {
  if (!Py_IsInitialized()) return nullptr;
  py::gil_scoped_acquire gil;
  static auto* cache = new StackCache;  // never destroyed: it holds Python objects
  std::vector<std::pair<PyObject*, int>> key;
  key.reserve(32);
  PyFrameObject* f = PyEval_GetFrame();
  Py_XINCREF(f);
  while (f) {
    PyCodeObject* code = PyFrame_GetCode(f);  // a new reference
    key.emplace_back(reinterpret_cast<PyObject*>(code), frame_position(f));
    Py_DECREF(code);  // the frame keeps it alive until the lookup below
    PyFrameObject* back = PyFrame_GetBack(f);
    Py_DECREF(f);
    f = back;
  }
  return cache->lookup(std::move(key));
}

RecordContext parse_context(const std::optional<std::string>& context) {
  if (!context) return RecordContext::kNever;
  if (*context == "all") return RecordContext::kAll;
  if (*context == "alloc") return RecordContext::kAlloc;
  return RecordContext::kState;
}

void check_history_args(const std::optional<std::string>& enabled,
                        const std::optional<std::string>& context, const std::string& stacks) {
  CL_CHECK(!enabled || *enabled == "state" || *enabled == "all",
           "expected state to be 'state', 'all', or None");
  CL_CHECK(!context || *context == "state" || *context == "alloc" || *context == "all",
           "expected context to be 'state', 'alloc', 'all', or None");
  CL_CHECK(stacks == "python" || stacks == "all", "expected stacks to be 'python', or 'all'");
}

CachingAllocator& device_caching_allocator(int device) {
  CachingAllocator* a = cuda::caching_allocator(device);
  CL_CHECK(a, "the caching allocator is disabled (CUDALITE_NO_CUDA_MEMORY_CACHING=1)");
  return *a;
}

// Note [Raw allocation entry points]
// caching_allocator_alloc / caching_allocator_delete end in these two, as torch's end in its
// _cuda_cudaCachingAllocator_raw_alloc / raw_delete: plain CPython functions (METH_FASTCALL),
// since pybind11's dispatcher would cost more than the cached allocation itself
// (benchmarks/fragmentation.py replays traces through them).
uint64_t int_arg(PyObject* const* args, Py_ssize_t i, const char* fn) {
  if (!PyLong_Check(args[i])) {
    throw TypeError(
        detail::str(fn, "(): argument ", i + 1, " must be int, not ", Py_TYPE(args[i])->tp_name));
  }
  const uint64_t v = PyLong_AsUnsignedLongLong(args[i]);
  if (PyErr_Occurred()) throw py::error_already_set();  // negative or too large
  return v;
}

PyObject* raw_alloc_entry(PyObject*, PyObject* const* args, Py_ssize_t nargs) {
  return guarded([&]() -> py::object {
    if (nargs != 3) throw TypeError("raw_alloc(nbytes, device, stream) takes 3 arguments");
    const size_t nbytes = size_t(int_arg(args, 0, "raw_alloc"));
    const uint64_t device = int_arg(args, 1, "raw_alloc");
    const uintptr_t stream = uintptr_t(int_arg(args, 2, "raw_alloc"));
    CL_CHECK(device < uint64_t(std::numeric_limits<int>::max()), "invalid device ", device);
    CachingAllocator& a = device_caching_allocator(int(device));
    void* p = nullptr;
    {
      py::gil_scoped_release nogil;  // growing or out of memory, it may wait for the GPU
      cuda::DeviceGuard g{int(device)};
      p = a.raw_alloc(nbytes, stream);
    }
    return py::reinterpret_steal<py::object>(PyLong_FromUnsignedLongLong(uintptr_t(p)));
  });
}

PyObject* raw_delete_entry(PyObject*, PyObject* const* args, Py_ssize_t nargs) {
  return guarded([&]() -> py::object {
    if (nargs != 1) throw TypeError("raw_delete(ptr) takes 1 argument");
    void* ptr = reinterpret_cast<void*>(uintptr_t(int_arg(args, 0, "raw_delete")));
    for (CachingAllocator* a : cuda::caching_allocators()) {
      if (!a) continue;
      try {
        a->raw_delete(ptr);
        return py::none();
      } catch (const Error&) {
      }
    }
    throw Error(detail::str("invalid device pointer: ", ptr));
  });
}

PyMethodDef g_raw_defs[] = {
    {"raw_alloc", as_cfunction(&raw_alloc_entry), METH_FASTCALL,
     "raw_alloc(nbytes, device, stream) -> int: a cached block's address"},
    {"raw_delete", as_cfunction(&raw_delete_entry), METH_FASTCALL,
     "raw_delete(ptr): frees what raw_alloc returned"},
};

std::vector<TraceOp> to_trace(const py::iterable& ops) {
  std::vector<TraceOp> out;
  for (py::handle op : ops) {
    auto t = op.cast<py::tuple>();
    std::string kind = t[0].cast<std::string>();
    CL_CHECK_AS(ValueError, kind == "alloc" || kind == "free",
                "trace operations are ('alloc', id, nbytes) or ('free', id), got '", kind, "'");
    if (kind == "alloc") {
      out.push_back({true, t[1].cast<int64_t>(), t[2].cast<size_t>()});
    } else {
      out.push_back({false, t[1].cast<int64_t>(), 0});
    }
  }
  return out;
}

// A caching allocator over a HostBackend, owning the allocations it hands to Python (which
// sees them as addresses).
class HostCachingAllocator {
 public:
  HostCachingAllocator(size_t capacity, const std::string& settings, bool vmm) {
    auto backend = std::make_unique<HostBackend>(capacity, vmm);
    backend_ = backend.get();
    alloc_ =
        std::make_unique<CachingAllocator>(std::move(backend), parse_allocator_settings(settings));
  }
  ~HostCachingAllocator() {
    live_.clear();  // free before the allocator goes
  }
  uintptr_t alloc(size_t nbytes, StreamId stream) {
    DataPtr p;
    {
      py::gil_scoped_release nogil;
      p = alloc_->allocate(nbytes, stream);
    }
    auto addr = uintptr_t(p.get());
    if (addr) live_.emplace(addr, std::move(p));
    return addr;
  }
  void free(uintptr_t addr) {
    auto it = live_.find(addr);
    CL_CHECK(it != live_.end(), "invalid device pointer: ", reinterpret_cast<void*>(addr));
    DataPtr p = std::move(it->second);
    live_.erase(it);
    py::gil_scoped_release nogil;
    p.reset();
  }
  void record_stream(uintptr_t addr, StreamId stream) {
    auto it = live_.find(addr);
    CL_CHECK(it != live_.end(), "invalid device pointer: ", reinterpret_cast<void*>(addr));
    alloc_->record_stream(it->second.context(), stream);
  }
  // The pages behind an allocation (CachingAllocator::arena_pages): their sizes, and where
  // the allocation starts in the first.
  py::tuple arena_pages(uintptr_t addr) {
    auto it = live_.find(addr);
    CL_CHECK(it != live_.end(), "invalid device pointer: ", reinterpret_cast<void*>(addr));
    size_t offset = 0;
    std::vector<size_t> sizes;
    for (const auto& page : alloc_->arena_pages(it->second.context(), &offset)) {
      sizes.push_back(page.second);
    }
    return py::make_tuple(sizes, offset);
  }
  CachingAllocator& allocator() { return *alloc_; }
  HostBackend& backend() { return *backend_; }

 private:
  HostBackend* backend_;
  std::unique_ptr<CachingAllocator> alloc_;
  std::unordered_map<uintptr_t, DataPtr> live_;
};

void bind_host_allocator(py::module_& mm) {
  using H = HostCachingAllocator;
  py::class_<H>(mm, "_HostCachingAllocator",
                "The caching allocator over host memory with a set capacity (for tests).")
      .def(py::init<size_t, const std::string&, bool>(), py::arg("capacity"),
           py::arg("settings") = "", py::arg("vmm") = true)
      .def("alloc", &H::alloc, py::arg("nbytes"), py::arg("stream") = 0)
      .def("free", &H::free, py::arg("ptr"))
      .def("record_stream", &H::record_stream, py::arg("ptr"), py::arg("stream"))
      .def(
          "begin_allocate_to_pool",
          [](H& h, MempoolId id, std::vector<StreamId> streams) {
            h.allocator().begin_allocate_to_pool(id, [streams](StreamId s) {
              return std::find(streams.begin(), streams.end(), s) != streams.end();
            });
          },
          py::arg("pool_id"), py::arg("streams"),
          "Allocations on `streams` come from the private pool `pool_id` (a capture begins).")
      .def(
          "end_allocate_to_pool",
          [](H& h, MempoolId id) { h.allocator().end_allocate_to_pool(id); }, py::arg("pool_id"))
      .def(
          "release_pool", [](H& h, MempoolId id) { h.allocator().release_pool(id); },
          py::arg("pool_id"))
      .def(
          "private_pool_use_count",
          [](H& h, MempoolId id) { return h.allocator().private_pool_use_count(id); },
          py::arg("pool_id"))
      .def("private_pool_count", [](H& h) { return h.allocator().private_pool_count(); })
      .def("launch", [](H& h, StreamId s) { h.backend().launch(s); })
      .def("complete", [](H& h, StreamId s) { h.backend().complete(s); })
      .def("memory_stats", [](H& h) { return stats_dict(h.allocator().stats()); })
      .def("snapshot", [](H& h) { return snapshot_dict({&h.allocator()}); })
      .def(
          "empty_cache", [](H& h) { h.allocator().empty_cache(); },
          py::call_guard<py::gil_scoped_release>())
      .def("reset_peak_memory_stats", [](H& h) { h.allocator().reset_peak_stats(); })
      .def("reset_accumulated_memory_stats", [](H& h) { h.allocator().reset_accumulated_stats(); })
      .def("set_settings",
           [](H& h, const std::string& s) {
             h.allocator().set_settings(parse_allocator_settings(s));
           })
      .def("set_memory_fraction", [](H& h, double f) { h.allocator().set_memory_fraction(f); })
      .def("get_memory_fraction", [](H& h) { return h.allocator().memory_fraction(); })
      .def(
          "record_memory_history",
          [](H& h, std::optional<std::string> enabled, std::optional<std::string> context,
             const std::string& stacks, size_t max_entries, bool clear) {
            check_history_args(enabled, context, stacks);
            h.allocator().record_history(enabled.has_value(), &gather_python_stack,
                                         enabled && *enabled == "all" ? max_entries : 1,
                                         parse_context(context), clear);
          },
          py::arg("enabled") = "all", py::arg("context") = "all", py::arg("stacks") = "all",
          py::arg("max_entries") = SIZE_MAX, py::arg("clear_history") = false)
      .def_property(
          "capacity", [](H& h) { return h.backend().capacity(); },
          [](H& h, size_t c) { h.backend().set_capacity(c); })
      .def_property_readonly("backend_used", [](H& h) { return h.backend().used(); })
      .def_property_readonly("supports_vmm", [](H& h) { return h.backend().supports_vmm(); })
      .def_property(
          "driver_costs", [](H& h) { return h.backend().driver_costs(); },
          [](H& h, bool on) { h.backend().set_driver_costs(on); },
          "Whether each backend call lasts what the matching CUDA call costs on a GPU "
          "(Note [Driver costs]), so that replays time the driver's share too.")
      .def_static("driver_cost_us", &HostBackend::driver_cost_us, py::arg("call"),
                  py::arg("nbytes"),
                  "Microseconds the driver-cost model charges one call of this kind and size.")
      .def("enable_peer_access", [](H& h, int peer) { h.allocator().enable_peer_access(peer); })
      .def("arena_pages", &H::arena_pages, py::arg("ptr"))
      .def_property_readonly("peers", [](H& h) { return h.backend().peers(); })
      .def(
          "backend_calls",
          [](H& h) {
            HostBackend::Calls c = h.backend().calls();
            py::dict d;
            d["create"] = c.create;
            d["release"] = c.release;
            d["map"] = c.map;
            d["mapped_pages"] = c.mapped_pages;
            d["set_access"] = c.set_access;
            d["unmap"] = c.unmap;
            d["synchronize"] = c.synchronize;
            d["driver_us"] = c.driver_us;
            return d;
          },
          "Virtual-memory calls and stream synchronisations made so far, by kind.")
      .def(
          "fail_next",
          [](H& h, const std::string& call, int count, int after, bool out_of_memory) {
            h.backend().fail_next(call, count, after, out_of_memory);
          },
          py::arg("call"), py::arg("count") = 1, py::arg("after") = 0,
          py::arg("out_of_memory") = false,
          "After `after` more backend calls of this kind, the next `count` fail with "
          "AcceleratorError, or with out_of_memory report an exhausted device (tests).")
      .def("fill", [](H&, uintptr_t p, size_t n, int v) { std::memset((void*)p, v, n); })
      .def("check",
           [](H&, uintptr_t p, size_t n, int v) {
             auto* c = reinterpret_cast<const unsigned char*>(p);
             for (size_t i = 0; i < n; ++i) {
               if (c[i] != (unsigned char)v) return false;
             }
             return true;
           })
      .def(
          "replay",
          [](H& h, const py::iterable& ops, StreamId stream) {
            auto trace = to_trace(ops);
            ReplayResult r;
            {
              py::gil_scoped_release nogil;
              r = replay_trace(h.allocator(), trace, stream);
            }
            return replay_dict(r);
          },
          py::arg("ops"), py::arg("stream") = 0)
      .def(
          "time_alloc_free_ns",
          [](H& h, size_t n, size_t iters, int rounds) {
            return time_alloc_free_ns(h.allocator(), n, iters, rounds);
          },
          py::arg("nbytes"), py::arg("iters") = 100000, py::arg("rounds") = 5,
          py::call_guard<py::gil_scoped_release>())
      .def(
          "stress",
          [](H& h, int threads, int iters, size_t max_bytes, int streams, uint64_t seed) {
            return stress_threads(h.allocator(), threads, iters, max_bytes, streams, seed);
          },
          py::arg("threads"), py::arg("iters"), py::arg("max_bytes"), py::arg("streams") = 1,
          py::arg("seed") = 0, py::call_guard<py::gil_scoped_release>());
}

}  // namespace

void bind_memory(py::module_& m) {
  auto mm = m.def_submodule("_memory", "the caching allocator");
  mm.def("memory_stats", [](int device) {
    CachingAllocator* a = cuda::caching_allocator(device);
    return stats_dict(a ? a->stats() : DeviceStats());
  });
  mm.def("reset_peak_memory_stats", [](int device) {
    if (CachingAllocator* a = cuda::caching_allocator(device)) a->reset_peak_stats();
  });
  mm.def("reset_accumulated_memory_stats", [](int device) {
    if (CachingAllocator* a = cuda::caching_allocator(device)) a->reset_accumulated_stats();
  });
  mm.def(
      "empty_cache",
      [] {
        for (CachingAllocator* a : cuda::caching_allocators()) {
          if (a) a->empty_cache();
        }
      },
      py::call_guard<py::gil_scoped_release>());
  mm.def("snapshot", [] { return snapshot_dict(cuda::caching_allocators()); });
  mm.def("record_memory_history",
         [](std::optional<std::string> enabled, std::optional<std::string> context,
            const std::string& stacks, size_t max_entries, bool clear) {
           check_history_args(enabled, context, stacks);
           int n = cuda::device_count();
           for (int d = 0; d < n; ++d) {
             if (CachingAllocator* a = cuda::caching_allocator(d)) {
               a->record_history(enabled.has_value(), &gather_python_stack,
                                 enabled && *enabled == "all" ? max_entries : 1,
                                 parse_context(context), clear);
             }
           }
         });
  for (PyMethodDef& d : g_raw_defs) {
    mm.add_object(d.ml_name, py::reinterpret_steal<py::object>(PyCFunction_NewEx(
                                 &d, nullptr, py::str("cudalite._C._memory").ptr())));
  }
  mm.def("set_memory_fraction", [](double fraction, int device) {
    device_caching_allocator(device).set_memory_fraction(fraction);
  });
  mm.def("get_memory_fraction", [](int device) {
    CachingAllocator* a = cuda::caching_allocator(device);
    return a ? a->memory_fraction() : 1.0;
  });
  mm.def("set_allocator_settings", [](const std::string& s) {
    AllocatorSettings st = parse_allocator_settings(s);
    set_global_allocator_settings(st);
    for (CachingAllocator* a : cuda::caching_allocators()) {
      if (a) a->set_settings(st);
    }
  });
  mm.def("get_allocator_settings", [] { return global_allocator_settings().text; });
  mm.def("parse_allocator_settings",
         [](const std::string& s) { return settings_dict(parse_allocator_settings(s)); });
  mm.def("format_size", &format_size);
  // Benchmarks: the device allocator driven from C++, without Python in the loop.
  mm.def(
      "_replay_device",
      [](const py::iterable& ops, int device, uintptr_t stream) {
        auto trace = to_trace(ops);
        CachingAllocator& a = device_caching_allocator(device);
        ReplayResult r;
        {
          py::gil_scoped_release nogil;
          cuda::DeviceGuard g(device);
          r = replay_trace(a, trace, stream);
        }
        return replay_dict(r);
      },
      py::arg("ops"), py::arg("device") = 0, py::arg("stream") = 0);
  mm.def(
      "_time_device_alloc_free_ns",
      [](int device, size_t nbytes, size_t iters) {
        CachingAllocator& a = device_caching_allocator(device);
        py::gil_scoped_release nogil;
        return time_alloc_free_ns(a, nbytes, iters);
      },
      py::arg("device"), py::arg("nbytes"), py::arg("iters") = 100000);
  bind_host_allocator(mm);
}

}  // namespace cl::bind
