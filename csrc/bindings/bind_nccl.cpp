// NCCL for cudalite.cuda.nccl and cudalite.distributed (_C._nccl): conversion code only.
#include "bindings/convert.h"
#include "cuda/events.h"
#include "cuda/nccl.h"
#include "cuda/streams.h"

namespace cl::bind {

namespace {

using cuda::nccl::Coll;
using cuda::nccl::Comm;
using cuda::nccl::RedOp;

Comm as_comm(uintptr_t h) { return reinterpret_cast<Comm>(h); }

// The tensor's memory as NCCL sees it: a dense CUDA buffer, with queued work launched.
void* buffer(const Tensor& t) {
  CL_CHECK_VALUE(t->is_cuda(), "Tensors must be CUDA and dense");
  CL_CHECK_VALUE(t->is_contiguous(), "Tensors must be contiguous");
  export_storage(t);
  return t->data();
}

// One collective on tensors: `send`/`recv` may be None where the collective has no such
// buffer (recv of Send, send of Recv, recv of Reduce off the root). The count comes from
// the tensors (see cuda::nccl::collective); `stream` 0 is the current stream. `event`, when
// given, is recorded on that stream after the collective. Returns the element count.
size_t collective(int kind, uintptr_t comm, py::handle send_h, py::handle recv_h, int op, int peer,
                  uintptr_t stream, py::handle event) {
  Tensor send, recv;
  if (!send_h.is_none()) send = as_tensor(send_h);
  if (!recv_h.is_none()) recv = as_tensor(recv_h);
  const Tensor& any = send ? send : recv;
  CL_CHECK_VALUE(any, "a collective needs a tensor");
  auto k = static_cast<Coll>(kind);
  const Tensor& counted = (k == Coll::ReduceScatter || k == Coll::Recv) ? recv : send;
  CL_CHECK_VALUE(counted, "a collective needs a tensor");
  if (send && recv) {
    CL_CHECK_TYPE(send->dtype == recv->dtype,
                  "all inputs and outputs must be of the same Tensor dtype");
  }
  const void* s = send ? buffer(send) : nullptr;
  void* r = recv ? buffer(recv) : nullptr;
  size_t count = size_t(counted->numel());
  ScalarType dtype = any->dtype;
  int device = any->device().index;
  void* st = stream ? reinterpret_cast<void*>(stream) : cuda::current_stream(device);
  {
    py::gil_scoped_release nogil;
    cuda::nccl::collective(k, s, r, count, dtype, static_cast<RedOp>(op), peer, as_comm(comm),
                           device, st);
  }
  // The event that tells when it is done (the watchdog's and Work's), recorded right after.
  if (!event.is_none()) event.cast<cuda::Event&>().record(cuda::Stream(device, st));
  return count;
}

}  // namespace

void bind_nccl(py::module_& m) {
  auto c = m.def_submodule("_nccl", "NCCL, loaded on first use");
  c.def("_set_library_candidates", &cuda::nccl::set_library_candidates);
  c.def("is_available", &cuda::nccl::is_available, py::call_guard<py::gil_scoped_release>());
  c.def("library_path", &cuda::nccl::library_path);
  c.def("load_error", &cuda::nccl::load_error);
  c.def("version", &cuda::nccl::version);
  c.def("unique_id", [] { return py::bytes(cuda::nccl::get_unique_id()); });
  c.def(
      "comm_init_rank",
      [](int nranks, const py::bytes& uid, int rank, int device) {
        std::string id = uid;
        py::gil_scoped_release nogil;
        return reinterpret_cast<uintptr_t>(cuda::nccl::comm_init_rank(nranks, id, rank, device));
      },
      py::arg("nranks"), py::arg("unique_id"), py::arg("rank"), py::arg("device"));
  c.def("comm_init_all", [](const std::vector<int>& devices) {
    std::vector<Comm> comms;
    {
      py::gil_scoped_release nogil;
      comms = cuda::nccl::comm_init_all(devices);
    }
    std::vector<uintptr_t> out;
    for (Comm x : comms) out.push_back(reinterpret_cast<uintptr_t>(x));
    return out;
  });
  c.def(
      "comm_destroy", [](uintptr_t h) { cuda::nccl::comm_destroy(as_comm(h)); },
      py::call_guard<py::gil_scoped_release>());
  c.def(
      "comm_abort", [](uintptr_t h) { cuda::nccl::comm_abort(as_comm(h)); },
      py::call_guard<py::gil_scoped_release>());
  c.def("comm_async_error", [](uintptr_t h) { return cuda::nccl::comm_async_error(as_comm(h)); });
  c.def("error_string", &cuda::nccl::error_string);
  c.def("last_error", [](uintptr_t h) { return cuda::nccl::last_error(as_comm(h)); });
  c.def("group_start", &cuda::nccl::group_start);
  c.def("group_end", &cuda::nccl::group_end, py::call_guard<py::gil_scoped_release>());
  c.def("supports", [](py::handle dtype) { return cuda::nccl::supports(to_dtype(dtype)); });
  c.def("collective", &collective, py::arg("kind"), py::arg("comm"), py::arg("send"),
        py::arg("recv"), py::arg("op") = 0, py::arg("peer") = 0, py::arg("stream") = 0,
        py::arg("event") = py::none());
}

}  // namespace cl::bind
