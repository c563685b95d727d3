// TensorImpl: a strided view (sizes, strides, offset, dtype) of a shared Storage.
//
// Tensors are handled as std::shared_ptr<TensorImpl> (alias Tensor). Views share the
// storage; autograd state lives in the Python layer.
#pragma once

#include <memory>
#include <vector>

#include "core/dtype.h"
#include "core/shape.h"
#include "core/storage.h"

namespace cl {

struct TensorImpl {
  TensorImpl(Storage s, Shape sz, Shape st, int64_t off, ScalarType dt);

  Storage storage;
  Shape sizes;
  Shape strides;   // in elements
  int64_t offset;  // in elements
  ScalarType dtype;
  // Autograd slot: the graph lives in Python (cudalite.autograd); the core only carries the
  // flag so that C++ entry points can tell when to hand an op to the recorder.
  bool requires_grad = false;
  // The tensor this one is a view of (the root of a chain of views: torch's _base), null when
  // it is not a view. Set by view_of at the user-facing view entry points only: the view
  // functions below, used inside ops to build new tensors, leave it null.
  std::shared_ptr<TensorImpl> base;
  // A version counter apart from the storage's (x.data), shared by views; null for the others
  // (Note [Version counters] in core/version_counter.h).
  std::shared_ptr<VersionCounter> own_version;

  int64_t dim() const { return int64_t(sizes.size()); }
  int64_t numel() const { return numel_; }
  Device device() const { return storage->device(); }
  bool is_cuda() const { return device().is_cuda(); }
  bool is_contiguous() const { return contiguous_; }
  size_t element_size() const { return itemsize(dtype); }
  char* data() const {
    return static_cast<char*>(storage->data.get()) + offset * int64_t(itemsize(dtype));
  }
  VersionCounter& version_counter() const { return own_version ? *own_version : storage->version; }
  uint32_t version() const { return version_counter().get(); }
  // Counts an in-place write; called by the bindings (not by the core's own writes).
  void bump_version() const { version_counter().bump(); }
  // Recompute numel and contiguity after sizes/strides change.
  void refresh();

 private:
  int64_t numel_ = 1;
  bool contiguous_ = true;
};
using Tensor = std::shared_ptr<TensorImpl>;

Shape contiguous_strides(const Shape& sizes);
int64_t shape_numel(const Shape& sizes);
// Wraps a possibly negative dim into [0, ndim); throws IndexError with torch's message.
int64_t wrap_dim(int64_t dim, int64_t ndim);
std::string shape_str(const Shape& s);  // "[2, 3]"

// Allocation on any device; a CUDA device without an index means the current device.
Tensor empty(const Shape& sizes, ScalarType dtype, Device device, bool pin_memory = false);
Tensor empty_like(const Tensor& t);
Tensor empty_like(const Tensor& t, ScalarType dtype);
Allocator* allocator_for(Device device);
Device resolve_device(Device d);  // fills in the current CUDA device

// Marks `v`, a result of a view op on `src`, as a view of src's base (of src when src is not
// a view) and returns it; a result that is src itself or has its own storage (reshape's copy)
// is left as it is.
inline std::shared_ptr<TensorImpl> view_of(const std::shared_ptr<TensorImpl>& src,
                                           std::shared_ptr<TensorImpl> v) {
  if (v != src && v->storage == src->storage) v->base = src->base ? src->base : src;
  return v;
}

// Views: share storage, no copies.
Tensor as_strided(const Tensor& t, const Shape& sizes, const Shape& strides, int64_t offset);
// The checks of the user-facing as_strided (torch's errors): as many strides as sizes, no
// negative size, stride or offset, and every element inside t's storage.
void check_as_strided(const Tensor& t, const Shape& sizes, const Shape& strides, int64_t offset);
Tensor alias(const Tensor& t);
// The same bytes read as another dtype (x.view(dtype)): of another element size, the last
// dimension (which must have stride 1) scales by the ratio of the sizes; torch's checks.
Tensor view_dtype(const Tensor& t, ScalarType dtype);
Tensor view(const Tensor& t, Shape sizes);            // -1 inferred; torch's stride rules
Tensor reshape(const Tensor& t, const Shape& sizes);  // view when possible, else copy
Tensor permute(const Tensor& t, const Shape& dims);
Tensor transpose(const Tensor& t, int64_t d0, int64_t d1);
Tensor expand(const Tensor& t, const Shape& sizes);
Tensor squeeze(const Tensor& t);
Tensor squeeze_dims(const Tensor& t, const Shape& dims);
Tensor unsqueeze(const Tensor& t, int64_t dim);
Tensor select(const Tensor& t, int64_t dim, int64_t index);
Tensor slice(const Tensor& t, int64_t dim, int64_t start, int64_t stop, int64_t step);
Tensor flatten(const Tensor& t, int64_t start, int64_t end);
Shape infer_size(const Shape& sizes, int64_t numel);  // resolves one -1
Shape broadcast_shapes(const Shape& a, const Shape& b);

// Thread-local grad mode (torch.is_grad_enabled / no_grad).
bool grad_enabled();
void set_grad_enabled(bool enabled);

}  // namespace cl
