// The CUDA runtime for cudalite.cuda (python/cudalite/cuda/): conversion code only.
#include <cstdio>

#include "bindings/convert.h"
#include "core/cuda_api.h"
#include "cuda/ipc.h"

namespace cl::bind {

namespace {

// torch's _CUuuid: `bytes` as a list of ints, str() as the dashed hex form.
struct Uuid {
  std::array<uint8_t, 16> bytes;
};

std::string properties_repr(const cuda::DeviceProperties& p) {
  constexpr size_t kMiB = 1024 * 1024;
  return "_CudaDeviceProperties(name='" + p.name + "', major=" + std::to_string(p.major) +
         ", minor=" + std::to_string(p.minor) +
         ", total_memory=" + std::to_string(p.total_memory / kMiB) +
         "MB, multi_processor_count=" + std::to_string(p.multi_processor_count) +
         ", uuid=" + cuda::uuid_string(p.uuid) + ", pci_bus_id=" + std::to_string(p.pci_bus_id) +
         ", pci_device_id=" + std::to_string(p.pci_device_id) +
         ", pci_domain_id=" + std::to_string(p.pci_domain_id) +
         ", L2_cache_size=" + std::to_string(size_t(p.L2_cache_size) / kMiB) + "MB)";
}

void bind_properties(py::module_& c) {
  py::class_<Uuid>(c, "_CUuuid")
      .def_property_readonly(
          "bytes",
          [](const Uuid& u) { return std::vector<uint8_t>(u.bytes.begin(), u.bytes.end()); })
      .def("__str__", [](const Uuid& u) { return cuda::uuid_string(u.bytes); });
  using P = cuda::DeviceProperties;
  py::class_<P>(c, "_CudaDeviceProperties")
      .def_readonly("name", &P::name)
      .def_readonly("major", &P::major)
      .def_readonly("minor", &P::minor)
      .def_readonly("is_multi_gpu_board", &P::is_multi_gpu_board)
      .def_readonly("is_integrated", &P::is_integrated)
      .def_readonly("multi_processor_count", &P::multi_processor_count)
      .def_readonly("total_memory", &P::total_memory)
      .def_readonly("max_threads_per_multi_processor", &P::max_threads_per_multi_processor)
      .def_readonly("max_threads_per_block", &P::max_threads_per_block)
      .def_readonly("warp_size", &P::warp_size)
      .def_readonly("shared_memory_per_block", &P::shared_memory_per_block)
      .def_readonly("shared_memory_per_block_optin", &P::shared_memory_per_block_optin)
      .def_readonly("shared_memory_per_multiprocessor", &P::shared_memory_per_multiprocessor)
      .def_readonly("regs_per_multiprocessor", &P::regs_per_multiprocessor)
      .def_readonly("clock_rate", &P::clock_rate)
      .def_readonly("memory_clock_rate", &P::memory_clock_rate)
      .def_readonly("memory_bus_width", &P::memory_bus_width)
      .def_readonly("L2_cache_size", &P::L2_cache_size)
      .def_readonly("pci_bus_id", &P::pci_bus_id)
      .def_readonly("pci_device_id", &P::pci_device_id)
      .def_readonly("pci_domain_id", &P::pci_domain_id)
      // torch's CUDA builds answer the device name for this ROCm field.
      .def_readonly("gcnArchName", &P::name)
      .def_property_readonly("uuid", [](const P& p) { return Uuid{p.uuid}; })
      .def("__repr__", &properties_repr);
}

void bind_nvml(py::module_& c) {
  c.def("_nvml_available", &cuda::nvml::available);
  c.def("_nvml_device_count", [] { return cuda::nvml::visible_device_count(); });
  c.def(
      "_nvml_visible_device_count",
      [](std::optional<std::string> env, int raw_count, const std::vector<std::string>& uuids) {
        return cuda::nvml::visible_device_count(env ? env->c_str() : nullptr, raw_count, uuids);
      },
      py::arg("env"), py::arg("raw_count"), py::arg("uuids"));
  c.def("_nvml_index", &cuda::nvml::index_of);
  c.def("_nvml_utilization", &cuda::nvml::utilization);
  c.def("_nvml_memory_usage", &cuda::nvml::memory_usage);
  c.def("_nvml_temperature", &cuda::nvml::temperature);
  c.def("_nvml_power_draw", &cuda::nvml::power_draw);
  c.def("_nvml_clock_rate", &cuda::nvml::clock_rate);
  c.def("_nvml_memory_used", &cuda::nvml::memory_used);
  c.def("_nvml_processes", [](int device) {
    py::list out;
    for (const auto& p : cuda::nvml::compute_processes(device)) {
      py::object mem = p.used_memory == UINT64_MAX ? py::object(py::none())
                                                   : py::object(py::int_(p.used_memory));
      out.append(py::make_tuple(p.pid, mem));
    }
    return out;
  });
}

void bind_blas(py::module_& m, py::module_& c) {
  c.def("_nvtx_range_push", &cuda::nvtx_range_push);
  c.def("_nvtx_range_pop", &cuda::nvtx_range_pop);
  c.def("_nvtx_range_start", &cuda::nvtx_range_start);
  c.def("_nvtx_range_end", &cuda::nvtx_range_end);
  c.def("_nvtx_mark", &cuda::nvtx_mark);
  c.def("_profiler_start", &cuda::profiler_start);
  c.def("_profiler_stop", &cuda::profiler_stop);
  c.def("_error_string", &cuda::error_string);
  c.def("_sleep", &cuda::sleep_cycles);
  // Note [Deferred launches] (csrc/cuda/deferred.cpp): the pending batch, for tests.
  c.def("_deferred_ops_pending", &cuda::deferred_ops_pending);
  c.def("_flush_deferred", &cuda::flush_deferred_launches);
  c.def("_set_deferred_launches", &cuda::set_deferred_launches);
  c.def("current_blas_handle",
        [](int device) { return reinterpret_cast<uintptr_t>(cuda::blas_handle(device)); });
  c.def("_set_library_dirs", &cuda::set_library_dirs);
  c.def("_blas_library_path", &cuda::blas_library_path);
  c.def("_get_matmul_flags", [] {
    const auto& f = cuda::matmul_flags();
    return py::make_tuple(f.allow_tf32, f.allow_fp16_reduced_precision_reduction,
                          f.allow_bf16_reduced_precision_reduction);
  });
  c.def("_set_matmul_flags", [](bool tf32, bool fp16_reduced, bool bf16_reduced) {
    auto& f = cuda::matmul_flags();
    f.allow_tf32 = tf32;
    f.allow_fp16_reduced_precision_reduction = fp16_reduced;
    f.allow_bf16_reduced_precision_reduction = bf16_reduced;
    f.tf32_api_conflict = false;
  });
  c.def("_set_tf32_api_conflict",
        [](bool conflict) { cuda::matmul_flags().tf32_api_conflict = conflict; });
  m.def("_cuda_addmm", &cuda_addmm, py::arg("input"), py::arg("mat1"), py::arg("mat2"),
        py::arg("beta") = 1.0, py::arg("alpha") = 1.0);
  // ---- cuDNN (csrc/cuda/cudnn_*.cpp; nn/_cudnn_conv.py) ----
  c.def("_cudnn_is_available", &cuda::cudnn_available, py::call_guard<py::gil_scoped_release>());
  c.def("_cudnn_version", &cuda::cudnn_version);
  c.def("_cudnn_library_path", &cuda::cudnn_library_path);
  c.def("_set_cudnn_library_dirs", &cuda::set_cudnn_library_dirs);
  auto args = [](std::vector<int64_t> padding, std::vector<int64_t> stride,
                 std::vector<int64_t> dilation, int64_t groups, bool benchmark, bool deterministic,
                 bool allow_tf32) {
    return CudnnConvArgs{std::move(padding), std::move(stride), std::move(dilation), groups,
                         benchmark,          deterministic,     allow_tf32};
  };
  c.def("_cudnn_convolution",
        [args](const Tensor& x, const Tensor& w, std::vector<int64_t> padding,
               std::vector<int64_t> stride, std::vector<int64_t> dilation, int64_t groups,
               bool benchmark, bool deterministic, bool allow_tf32) {
          return cudnn_convolution(
              x, w, args(padding, stride, dilation, groups, benchmark, deterministic, allow_tf32));
        });
  c.def("_cudnn_convolution_backward_input",
        [args](std::vector<int64_t> x_sizes, const Tensor& dy, const Tensor& w,
               std::vector<int64_t> padding, std::vector<int64_t> stride,
               std::vector<int64_t> dilation, int64_t groups, bool benchmark, bool deterministic,
               bool allow_tf32) {
          return cudnn_convolution_backward_input(
              x_sizes, dy, w,
              args(padding, stride, dilation, groups, benchmark, deterministic, allow_tf32));
        });
  c.def("_cudnn_convolution_backward_weight",
        [args](std::vector<int64_t> w_sizes, const Tensor& dy, const Tensor& x,
               std::vector<int64_t> padding, std::vector<int64_t> stride,
               std::vector<int64_t> dilation, int64_t groups, bool benchmark, bool deterministic,
               bool allow_tf32) {
          return cudnn_convolution_backward_weight(
              w_sizes, dy, x,
              args(padding, stride, dilation, groups, benchmark, deterministic, allow_tf32));
        });
}

}  // namespace

void bind_cuda(py::module_& m) {
  auto c = m.def_submodule("_cuda", "CUDA runtime bindings");
  c.def("is_compiled", &cuda::is_compiled);
  c.def("compiled_archs", &cuda::compiled_archs);
  c.def("compiled_version", &cuda::compiled_version);
  c.def("device_count", &cuda::device_count);
  c.def("lazy_init", &cuda::lazy_init, py::call_guard<py::gil_scoped_release>());
  c.def("is_initialized", &cuda::is_initialized);
  c.def("is_in_bad_fork", &cuda::is_in_bad_fork);
  c.def("_poison_fork", &cuda::poison_fork);
  c.def("current_device", &cuda::current_device);
  c.def("set_device", &cuda::set_device);
  c.def("exchange_device", &cuda::exchange_device);
  c.def("maybe_exchange_device", &cuda::maybe_exchange_device);
  c.def("check_device_index", &cuda::check_device_index);
  c.def("_check_current_device", &cuda::check_current_device);
  c.def("synchronize", &cuda::synchronize, py::call_guard<py::gil_scoped_release>());
  c.def("mem_get_info", &cuda::mem_get_info);
  c.def("can_device_access_peer", &cuda::can_device_access_peer);
  c.def("get_device_properties", &cuda::get_device_properties, py::return_value_policy::reference);
  // ---- Peer access and CUDA IPC (csrc/cuda/peer_access.cpp, csrc/cuda/ipc.cpp) ----
  c.def("_p2p_access_state", &cuda::p2p_access_state, py::arg("device"), py::arg("peer"));
  c.def("_p2p_enable", &cuda::get_p2p_access, py::arg("device"), py::arg("peer"),
        py::call_guard<py::gil_scoped_release>());
  c.def("_p2p_selfcheck", &cuda::p2p_selfcheck, py::arg("device"), py::arg("peer"),
        py::arg("inject_fault") = false, py::call_guard<py::gil_scoped_release>());
  c.def(
      "_ipc_share",
      [](const Tensor& t, uintptr_t counter) {
        cuda::IpcShare s = cuda::ipc_share(*t->storage, reinterpret_cast<const int64_t*>(counter));
        py::object handle = s.fds.empty() ? py::object(py::bytes(s.handle)) : py::none();
        return py::make_tuple(handle, s.offset, s.segment_size, t->storage->nbytes, s.fds,
                              s.page_sizes);
      },
      py::arg("tensor"), py::arg("counter") = 0);
  c.def(
      "_ipc_open_pages",
      [](const std::vector<int>& fds, const std::vector<size_t>& sizes, int device, size_t offset,
         size_t nbytes, py::handle dtype, uintptr_t counter) {
        return cuda::ipc_open_pages(fds, sizes, device, offset, nbytes, to_dtype(dtype),
                                    reinterpret_cast<int64_t*>(counter));
      },
      py::arg("fds"), py::arg("sizes"), py::arg("device"), py::arg("offset"), py::arg("nbytes"),
      py::arg("dtype"), py::arg("counter") = 0);
  c.def("_ipc_collect", &cuda::ipc_collect);
  c.def("_ipc_limbo_size", &cuda::ipc_limbo_size);
  c.def(
      "_ipc_open",
      [](const py::bytes& handle, int device, size_t offset, size_t nbytes, py::handle dtype,
         uintptr_t counter) {
        return cuda::ipc_open(std::string(handle), device, offset, nbytes, to_dtype(dtype),
                              reinterpret_cast<int64_t*>(counter));
      },
      py::arg("handle"), py::arg("device"), py::arg("offset"), py::arg("nbytes"), py::arg("dtype"),
      py::arg("counter") = 0);
  c.def("_ipc_open_handles", &cuda::ipc_open_handles);
  c.def("_ipc_open_calls", &cuda::ipc_open_calls);
  bind_properties(c);
  bind_nvml(c);
  bind_blas(m, c);
}

}  // namespace cl::bind
