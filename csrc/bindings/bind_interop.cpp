// Zero-copy exchange with other array libraries: DLPack (both directions) and the CUDA
// Array Interface (export). python/cudalite/_interop.py attaches these to the Tensor class.
//
// Note [DLPack lifetimes]
// Export: the capsule owns a context that holds the tensor's Storage (not the TensorImpl,
// which set_() may re-point), so the memory lives until the consumer calls the deleter;
// an unconsumed capsule calls it from its own destructor. Import: the new storage's
// deleter calls the producer's deleter, and the capsule is renamed "used_dltensor[...]" so
// it can't be consumed twice or freed by its destructor.
#include "bindings/convert.h"
#include "bindings/dlpack.h"
#include "core/cuda_api.h"
#include "core/error.h"

namespace cl::bind {

namespace {

using namespace cl::dlpack;

constexpr const char* kLegacyName = "dltensor";
constexpr const char* kLegacyUsed = "used_dltensor";
constexpr const char* kVersionedName = "dltensor_versioned";
constexpr const char* kVersionedUsed = "used_dltensor_versioned";

[[noreturn]] void raise(PyObject* type, const std::string& msg) {
  PyErr_SetString(type, msg.c_str());
  throw py::error_already_set();
}

// ---- dtypes and devices ----

DLDataType to_dl_dtype(ScalarType t) {
  uint8_t bits = uint8_t(itemsize(t) * 8);
  switch (t) {
    case ScalarType::Bool:
      return {kDLBool, 8, 1};
    case ScalarType::UInt8:
      return {kDLUInt, 8, 1};
    case ScalarType::BFloat16:
      return {kDLBfloat, 16, 1};
    case ScalarType::Float16:
    case ScalarType::Float32:
    case ScalarType::Float64:
      return {kDLFloat, bits, 1};
    default:
      return {kDLInt, bits, 1};
  }
}

// torch's messages (aten/src/ATen/DLConvertor.cpp), with cudalite's name.
ScalarType from_dl_dtype(DLDataType d) {
  if (d.lanes != 1) throw Error("cudalite does not support lanes != 1");
  std::string bits = std::to_string(d.bits);
  switch (d.code) {
    case kDLUInt:
      if (d.bits == 8) return ScalarType::UInt8;
      throw Error("Unsupported kUInt bits " + bits);
    case kDLInt:
      switch (d.bits) {
        case 8:
          return ScalarType::Int8;
        case 16:
          return ScalarType::Int16;
        case 32:
          return ScalarType::Int32;
        case 64:
          return ScalarType::Int64;
      }
      throw Error("Unsupported kInt bits " + bits);
    case kDLFloat:
      switch (d.bits) {
        case 16:
          return ScalarType::Float16;
        case 32:
          return ScalarType::Float32;
        case 64:
          return ScalarType::Float64;
      }
      throw Error("Unsupported kFloat bits " + bits);
    case kDLBfloat:
      if (d.bits == 16) return ScalarType::BFloat16;
      throw Error("Unsupported kBFloat bits " + bits);
    case kDLBool:
      if (d.bits == 8) return ScalarType::Bool;
      throw Error("Unsupported kDLBool bits " + bits);
    case kDLComplex:
      throw Error("cudalite does not support complex dtypes (kDLComplex, " + bits + " bits)");
    default:
      throw Error("Unsupported code " + std::to_string(int(d.code)));
  }
}

DLDevice to_dl_device(const Tensor& t) {
  if (t->is_cuda()) return {kDLCUDA, t->device().index};
  return {t->storage->pinned ? kDLCUDAHost : kDLCPU, 0};
}

Device from_dl_device(DLDevice d) {
  switch (d.device_type) {
    case kDLCPU:
    case kDLCUDAHost:
      return Device(DeviceType::CPU);
    case kDLCUDA:
    case kDLCUDAManaged:
      cuda::check_device_index(d.device_id);
      return Device(DeviceType::CUDA, d.device_id);
    default:
      throw Error("Unsupported device_type: " + std::to_string(d.device_type));
  }
}

// ---- export ----

struct ExportContext {
  Storage storage;
  Shape shape, strides;
  DLManagedTensor legacy{};
  DLManagedTensorVersioned versioned{};
};

void delete_legacy(DLManagedTensor* m) { delete static_cast<ExportContext*>(m->manager_ctx); }
void delete_versioned(DLManagedTensorVersioned* m) {
  delete static_cast<ExportContext*>(m->manager_ctx);
}

// Frees an unconsumed capsule's tensor; keeps any exception that is being raised.
template <class Managed>
void capsule_destructor(PyObject* cap, const char* name) {
  if (!PyCapsule_IsValid(cap, name)) return;  // consumed: renamed "used_..."
  PyObject *type, *value, *tb;
  PyErr_Fetch(&type, &value, &tb);
  auto* m = static_cast<Managed*>(PyCapsule_GetPointer(cap, name));
  if (m && m->deleter) m->deleter(m);
  PyErr_Restore(type, value, tb);
}
void legacy_capsule_destructor(PyObject* cap) {
  capsule_destructor<DLManagedTensor>(cap, kLegacyName);
}
void versioned_capsule_destructor(PyObject* cap) {
  capsule_destructor<DLManagedTensorVersioned>(cap, kVersionedName);
}

// The stream protocol of __dlpack__: the consumer names the stream it will use; the data
// must be ready there. None and 1 mean the legacy default stream, 2 the per-thread one,
// -1 "don't synchronise".
void sync_for_consumer(const Tensor& t, py::handle stream) {
  if (!stream.is_none() && !(PyLong_Check(stream.ptr()) && !PyBool_Check(stream.ptr()))) {
    raise(PyExc_TypeError, "stream must be ``int`` or ``none``");
  }
  int64_t s = stream.is_none() ? 1 : stream.cast<int64_t>();
  if (!t->is_cuda()) {
    if (!stream.is_none() && s != -1) raise(PyExc_AssertionError, "stream should be None on cpu.");
    return;
  }
  if (s == -1) return;
  if (s == 0) raise(PyExc_AssertionError, "unsupported stream on CUDA: 0.");
  int dev = t->device().index;
  cuda::StreamHandle ours = cuda::current_stream(dev);
  // Our default stream is the legacy one (handle 0); the protocol names it 1.
  auto theirs = reinterpret_cast<cuda::StreamHandle>(s == 1 ? 0 : s);
  if (theirs != ours) cuda::stream_wait_stream(theirs, ours, dev);
}

// A copy on `target` when one is needed or asked for; `t` itself otherwise.
Tensor for_device(const Tensor& t, py::handle dl_device, py::handle copy, bool* copied) {
  bool must_copy = !copy.is_none() && copy.cast<bool>();
  bool may_copy = copy.is_none() || must_copy;
  Device target = t->device();
  if (!dl_device.is_none()) {
    auto dd = dl_device.cast<std::pair<int, int>>();
    DLDevice own = to_dl_device(t);
    bool same = dd.first == own.device_type && dd.second == own.device_id;
    if (dd.first == kDLCPU && dd.second == 0 && !t->is_cuda()) same = true;  // pinned is CPU
    if (!same) {
      if (dd.first == kDLCPU && dd.second == 0) {
        target = Device(DeviceType::CPU);
      } else if (dd.first == kDLCUDA) {
        target = Device(DeviceType::CUDA, dd.second);
      } else {
        raise(PyExc_BufferError, "Unsupported dl_device (" + std::to_string(dd.first) + ", " +
                                     std::to_string(dd.second) + ")");
      }
      if (!may_copy) {
        raise(PyExc_BufferError, "copy=False, but exporting to dl_device (" +
                                     std::to_string(dd.first) + ", " + std::to_string(dd.second) +
                                     ") needs a copy");
      }
      must_copy = true;
    }
  }
  *copied = must_copy;
  if (!must_copy) return t;
  if (target.is_cuda()) cuda::check_device_index(target.index);
  return to(t, target, t->dtype, /*non_blocking=*/false, /*copy=*/true);
}

py::capsule make_capsule(const Tensor& t, bool versioned, uint32_t minor, bool copied) {
  auto* ctx = new ExportContext{t->storage, t->sizes, t->strides, {}, {}};
  DLTensor dl{};
  dl.data = t->numel() ? static_cast<void*>(t->data()) : t->storage->data.get();
  dl.device = to_dl_device(t);
  dl.ndim = int32_t(t->dim());
  dl.dtype = to_dl_dtype(t->dtype);
  dl.shape = ctx->shape.data();
  dl.strides = ctx->strides.data();
  dl.byte_offset = 0;
  PyObject* cap;
  if (versioned) {
    ctx->versioned.version = {kMajorVersion, minor};
    ctx->versioned.manager_ctx = ctx;
    ctx->versioned.deleter = &delete_versioned;
    ctx->versioned.flags = copied ? kFlagIsCopied : 0;
    ctx->versioned.dl_tensor = dl;
    cap = PyCapsule_New(&ctx->versioned, kVersionedName, &versioned_capsule_destructor);
  } else {
    ctx->legacy.dl_tensor = dl;
    ctx->legacy.manager_ctx = ctx;
    ctx->legacy.deleter = &delete_legacy;
    cap = PyCapsule_New(&ctx->legacy, kLegacyName, &legacy_capsule_destructor);
  }
  if (!cap) {
    delete ctx;
    throw py::error_already_set();
  }
  return py::reinterpret_steal<py::capsule>(cap);
}

py::capsule to_dlpack(const Tensor& t, py::handle stream, py::handle max_version,
                      py::handle dl_device, py::handle copy) {
  if (t->is_cuda()) {
    int cur = cuda::current_device();
    if (t->device().index != cur) {
      raise(PyExc_BufferError, "Can't export tensors on a different CUDA device index. Expected: " +
                                   std::to_string(t->device().index) +
                                   ". Current device: " + std::to_string(cur) + ".");
    }
  }
  export_storage(t);
  sync_for_consumer(t, stream);
  bool versioned = false;
  uint32_t minor = kMinorVersion;
  if (!max_version.is_none()) {
    auto mv = max_version.cast<std::pair<int64_t, int64_t>>();
    versioned = mv.first >= 1;
    if (mv.first == 1 && mv.second < int64_t(kMinorVersion)) minor = uint32_t(mv.second);
  }
  bool copied = false;
  Tensor src = for_device(t, dl_device, copy, &copied);
  if (copied) export_storage(src);
  return make_capsule(src, versioned, minor, copied);
}

// ---- import ----

void release_legacy(void* ctx) {
  auto* m = static_cast<DLManagedTensor*>(ctx);
  if (m->deleter) m->deleter(m);
}
void release_versioned(void* ctx) {
  auto* m = static_cast<DLManagedTensorVersioned*>(ctx);
  if (m->deleter) m->deleter(m);
}

Tensor from_dlpack(py::handle obj) {
  PyObject* cap = obj.ptr();
  bool versioned = PyCapsule_IsValid(cap, kVersionedName);
  if (!versioned && !PyCapsule_IsValid(cap, kLegacyName)) {
    throw Error(
        "from_dlpack received an invalid capsule. Note that DLTensor capsules can be consumed "
        "only once, so you might have already constructed a tensor from it once.");
  }
  void* managed = PyCapsule_GetPointer(cap, versioned ? kVersionedName : kLegacyName);
  const DLTensor* dl;
  if (versioned) {
    auto* m = static_cast<DLManagedTensorVersioned*>(managed);
    if (m->version.major > kMajorVersion) {
      throw Error("Unsupported DLPack version " + std::to_string(m->version.major) + "." +
                  std::to_string(m->version.minor) + "; cudalite reads major version " +
                  std::to_string(kMajorVersion));
    }
    dl = &m->dl_tensor;
  } else {
    dl = &static_cast<DLManagedTensor*>(managed)->dl_tensor;
  }
  // Everything that can fail happens before the capsule changes hands.
  ScalarType dtype = from_dl_dtype(dl->dtype);
  Device device = from_dl_device(dl->device);
  Shape sizes(dl->shape, dl->shape + dl->ndim);
  Shape strides =
      dl->strides ? Shape(dl->strides, dl->strides + dl->ndim) : contiguous_strides(sizes);
  int64_t extent = 1;
  for (int32_t d = 0; d < dl->ndim; ++d) {
    CL_CHECK_VALUE(strides[d] >= 0 || sizes[d] <= 1,
                   "from_dlpack: negative strides are not supported by cudalite tensors");
    if (sizes[d] == 0) extent = 0;
  }
  if (extent) {
    for (int32_t d = 0; d < dl->ndim; ++d)
      extent += (sizes[d] - 1) * std::max<int64_t>(0, strides[d]);
  }
  char* data = static_cast<char*>(dl->data) + dl->byte_offset;
  DataPtr ptr(data, managed, versioned ? &release_versioned : &release_legacy, device);
  auto storage = std::make_shared<StorageImpl>(std::move(ptr), size_t(extent) * itemsize(dtype));
  storage->pinned = dl->device.device_type == kDLCUDAHost;
  storage->resizable = false;  // the producer's memory
  storage->exported = true;    // which the producer may use at any time
  PyCapsule_SetName(cap, versioned ? kVersionedUsed : kLegacyUsed);
  return std::make_shared<TensorImpl>(std::move(storage), sizes, strides, 0, dtype);
}

// ---- CUDA Array Interface (version 3) ----

const char* typestr(ScalarType t) {
  switch (t) {
    case ScalarType::Bool:
      return "|b1";
    case ScalarType::UInt8:
      return "|u1";
    case ScalarType::Int8:
      return "|i1";
    case ScalarType::Int16:
      return "<i2";
    case ScalarType::Int32:
      return "<i4";
    case ScalarType::Int64:
      return "<i8";
    case ScalarType::Float16:
      return "<f2";
    case ScalarType::BFloat16:
      return "<V2";  // what ml_dtypes.bfloat16 reports, as torch does
    case ScalarType::Float32:
      return "<f4";
    case ScalarType::Float64:
      return "<f8";
  }
  return "";
}

const char* legacy_type_name(ScalarType t) {  // "cudalite.FloatTensor"
  switch (t) {
    case ScalarType::Bool:
      return "cudalite.BoolTensor";
    case ScalarType::UInt8:
      return "cudalite.ByteTensor";
    case ScalarType::Int8:
      return "cudalite.CharTensor";
    case ScalarType::Int16:
      return "cudalite.ShortTensor";
    case ScalarType::Int32:
      return "cudalite.IntTensor";
    case ScalarType::Int64:
      return "cudalite.LongTensor";
    case ScalarType::Float16:
      return "cudalite.HalfTensor";
    case ScalarType::BFloat16:
      return "cudalite.BFloat16Tensor";
    case ScalarType::Float32:
      return "cudalite.FloatTensor";
    case ScalarType::Float64:
      return "cudalite.DoubleTensor";
  }
  return "";
}

py::dict cuda_array_interface(const Tensor& t) {
  if (!t->is_cuda()) {
    throw py::attribute_error(
        std::string("Can't get __cuda_array_interface__ on non-CUDA tensor type: ") +
        legacy_type_name(t->dtype) +
        " If CUDA data is required use tensor.cuda() to copy tensor to device memory.");
  }
  export_storage(t);
  py::dict d;
  d["typestr"] = typestr(t->dtype);
  d["shape"] = py::tuple(py::cast(t->sizes));
  if (t->is_contiguous()) {
    d["strides"] = py::none();  // the protocol's way of saying C-contiguous
  } else {
    py::tuple st(t->sizes.size());
    for (size_t i = 0; i < t->strides.size(); ++i) {
      st[i] = py::int_(t->strides[i] * int64_t(t->element_size()));
    }
    d["strides"] = st;
  }
  uintptr_t ptr = t->numel() ? reinterpret_cast<uintptr_t>(t->data()) : 0;
  d["data"] = py::make_tuple(ptr, false);
  d["version"] = 3;
  // Work on the data may still be queued on our current stream: the consumer syncs with it.
  cuda::StreamHandle s = cuda::current_stream(t->device().index);
  d["stream"] = s ? reinterpret_cast<uintptr_t>(s) : uintptr_t(1);
  return d;
}

}  // namespace

void bind_interop(py::module_& m) {
  m.def("_to_dlpack", &to_dlpack, py::arg("tensor"), py::arg("stream") = py::none(),
        py::arg("max_version") = py::none(), py::arg("dl_device") = py::none(),
        py::arg("copy") = py::none());
  m.def("_dlpack_device", [](const Tensor& t) {
    DLDevice d = to_dl_device(t);
    return py::make_tuple(d.device_type, d.device_id);
  });
  m.def("_from_dlpack", &from_dlpack, py::arg("capsule"));
  // Whether an unconsumed versioned capsule marks its memory read-only (DLPack 1.0's flag):
  // cudalite tensors are always writable, so from_dlpack copies such memory.
  m.def(
      "_dlpack_read_only",
      [](py::handle obj) {
        PyObject* cap = obj.ptr();
        if (!PyCapsule_IsValid(cap, kVersionedName)) return false;
        auto* m = static_cast<DLManagedTensorVersioned*>(PyCapsule_GetPointer(cap, kVersionedName));
        return (m->flags & kFlagReadOnly) != 0;
      },
      py::arg("capsule"));
  // The stream a consumer passes to a producer's __dlpack__: our current stream on `device`.
  m.def("_dlpack_stream", [](int device) {
    cuda::StreamHandle s = cuda::current_stream(device);
    return s ? reinterpret_cast<uintptr_t>(s) : uintptr_t(1);
  });
  m.def("_cuda_array_interface", &cuda_array_interface, py::arg("tensor"));
}

}  // namespace cl::bind
