// Conversions between Python objects and core types, shared by the bind_*.cpp files.
#pragma once

#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <optional>

#include "core/cuda_api.h"
#include "core/device.h"
#include "core/dtype.h"
#include "core/memory_stats.h"
#include "core/tensor.h"
#include "ops/ops.h"

namespace py = pybind11;

namespace cl::bind {

// The address of `t`'s memory is handed to other code: work queued on it is launched, and
// work on it is never deferred again (Note [Deferred launches] in csrc/cuda/deferred.cpp).
inline void export_storage(const Tensor& t) {
  t->storage->exported.store(true, std::memory_order_relaxed);
  if (t->is_cuda()) cuda::flush_deferred_launches();
}

// One Python object per dtype, so `x.dtype is cudalite.float32` holds.
struct DType {
  ScalarType type;
};
DType* dtype_object(ScalarType t);
// The Python object of a dtype (borrowed; it lives as long as the module).
PyObject* dtype_pyobject(ScalarType t);
// Whether h is one of the dtype objects (cudalite.float32, ...).
bool is_dtype_object(PyObject* h);

// Tensor as seen from Python: the core TensorImpl with shared ownership.
using PyTensor = py::class_<TensorImpl, std::shared_ptr<TensorImpl>>;
py::handle tensor_type();
bool is_tensor(py::handle h);
// The TensorImpl of a Tensor (or subclass), read straight from pybind11's instance: the
// generic holder caster looks the type up twice per argument, which a one-element op
// notices. False for anything else (or a subclass whose __init__ never ran).
inline bool load_tensor(py::handle h, Tensor& out) {
  if (!is_tensor(h)) return false;
  auto v_h = reinterpret_cast<py::detail::instance*>(h.ptr())->get_value_and_holder();
  if (!v_h.holder_constructed()) return false;
  out = v_h.template holder<Tensor>();
  return true;
}
// As load_tensor; anything else raises pybind11's cast error (a RuntimeError in Python).
inline Tensor as_tensor(py::handle h) {
  Tensor t;
  if (!load_tensor(h, t)) {
    throw py::cast_error("Unable to cast Python instance of type " +
                         std::string(py::str(py::type::of(h).attr("__name__"))) + " to Tensor");
  }
  return t;
}
// A new reference to the Python Tensor for `t` (None for a null one): what py::cast does,
// with the class's type record looked up once.
py::object wrap_tensor(Tensor t);

// Accepts a cudalite.device, "cuda:1", or an int (a CUDA ordinal).
Device to_device(py::handle h);
std::optional<Device> to_optional_device(py::handle h);
ScalarType to_dtype(py::handle h);
std::optional<ScalarType> to_optional_dtype(py::handle h);
// A tensor or Python number; nullopt for anything else (the caller returns NotImplemented).
std::optional<Operand> to_operand(py::handle h);
Scalar to_scalar(py::handle h);
// A Python bool, int or float for a Scalar (bind_ops.cpp).
py::object scalar_to_py(const Scalar& s);
// The dtype of a NumPy array or scalar; TypeError with torch's text for unsupported ones.
ScalarType from_numpy_dtype_object(py::handle numpy_dtype);
// Sizes given as ints, a tuple, a list or a Size: f(2, 3), f((2, 3)), f([2, 3]).
Shape to_shape(py::handle h);
// One int (not a bool; a one-element integer tensor too); `what` names it in the TypeError.
int64_t to_int(py::handle h, const char* what);
// True or False only (torch's parser takes no other object for a bool).
bool strict_bool(py::handle h, const char* what);
Shape shape_from_args(const py::args& args);
// A cudalite.Size (a tuple subclass defined in Python) for these sizes.
py::object make_size(const Shape& s);
// A memory statistic as torch's {"current", "peak", "allocated", "freed"} (bind_memory.cpp).
py::dict stat_dict(const Stat& s);

void bind_errors(py::module_& m);
void bind_dtype(py::module_& m);
void bind_device(py::module_& m);
void bind_tensor(py::module_& m);
void bind_ops(py::module_& m);
void bind_nn(py::module_& m);       // the fused nn kernels (layer_norm, softmax, nll_loss, gelu)
void bind_methods(py::module_& m);  // also the fast methods' shared machinery
void bind_arith(py::module_& m);
void bind_creation(py::module_& m);
void bind_numpy(py::module_& m);
void bind_cuda(py::module_& m);
void bind_streams(py::module_& m);  // after bind_cuda: adds to _C._cuda
void bind_graphs(py::module_& m);   // after bind_cuda: adds to _C._cuda
void bind_interop(py::module_& m);
void bind_memory(py::module_& m);
void bind_autograd(py::module_& m);
void bind_checked(py::module_& m);
void bind_checksum(py::module_& m);
void bind_parallel(py::module_& m);
void bind_version(py::module_& m);
void bind_nccl(py::module_& m);  // NCCL (cudalite.cuda.nccl, cudalite.distributed)
void bind_foreach(py::module_& m);

}  // namespace cl::bind

// Every binding's Tensor arguments and results (const Tensor&, std::vector<Tensor>, return
// values) go through load_tensor and wrap_tensor rather than pybind11's generic holder
// caster: the same objects, without the per-call type lookups.
namespace pybind11::detail {
// Shape converts as std::vector<int64_t> does (a list out, any sequence of ints in).
template <>
struct type_caster<cl::Shape> : list_caster<cl::Shape, int64_t> {};
template <>  // still the class's holder (class_ checks this through the caster by default)
struct is_holder_type<cl::TensorImpl, cl::Tensor> : std::true_type {};
template <>
struct type_caster<cl::Tensor> {
  PYBIND11_TYPE_CASTER(cl::Tensor, const_name("Tensor"));
  bool load(handle src, bool) { return cl::bind::load_tensor(src, value); }
  static handle cast(const cl::Tensor& t, return_value_policy, handle) {
    return cl::bind::wrap_tensor(t).release();
  }
};
}  // namespace pybind11::detail
