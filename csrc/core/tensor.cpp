#include "core/tensor.h"

#include <algorithm>

#include "core/cuda_api.h"
#include "core/error.h"
#include "core/size_math.h"
#include "ops/ops.h"

namespace cl {

TensorImpl::TensorImpl(Storage s, Shape sz, Shape st, int64_t off, ScalarType dt)
    : storage(std::move(s)), sizes(std::move(sz)), strides(std::move(st)), offset(off), dtype(dt) {
  refresh();
}

void TensorImpl::refresh() {
  numel_ = checked_numel(sizes);
  contiguous_ = true;
  if (numel_ == 0) return;  // as torch: an empty tensor is contiguous whatever its strides
  int64_t expected = 1;
  for (int64_t d = dim() - 1; d >= 0; --d) {
    if (sizes[d] == 1) continue;
    if (strides[d] != expected) {
      contiguous_ = false;
      break;
    }
    expected *= sizes[d];
  }
}

// Wraps around as torch's computeStride does for the views of an empty tensor, whose strides
// never address memory; empty() checks its strides (checked_contiguous_strides).
Shape contiguous_strides(const Shape& sizes) {
  Shape st(sizes.size());
  uint64_t s = 1;
  for (int64_t d = int64_t(sizes.size()) - 1; d >= 0; --d) {
    st[d] = int64_t(s);
    s *= uint64_t(std::max<int64_t>(sizes[d], 1));
  }
  return st;
}

int64_t shape_numel(const Shape& sizes) { return checked_numel(sizes); }

std::string shape_str(const Shape& s) {
  std::string out = "[";
  for (size_t i = 0; i < s.size(); ++i) {
    if (i) out += ", ";
    out += std::to_string(s[i]);
  }
  return out + "]";
}

int64_t wrap_dim(int64_t dim, int64_t ndim) {
  int64_t n = std::max<int64_t>(ndim, 1);
  CL_CHECK_INDEX(dim >= -n && dim < n, "Dimension out of range (expected to be in range of [", -n,
                 ", ", n - 1, "], but got ", dim, ")");
  return dim < 0 ? dim + n : dim;
}

Device resolve_device(Device d) {
  if (d.is_cuda() && !d.has_index()) return Device(DeviceType::CUDA, cuda::current_device());
  if (d.is_cpu()) return Device(DeviceType::CPU);
  check_tensor_device(d);
  return d;
}

Allocator* allocator_for(Device device) {
  if (device.is_cpu()) return cpu_allocator();
  return cuda::device_allocator(device.index);
}

Tensor empty(const Shape& sizes, ScalarType dtype, Device device, bool pin_memory) {
  for (auto s : sizes) {
    CL_CHECK(s >= 0, "Trying to create tensor with negative dimension ", s, ": ", shape_str(sizes));
  }
  device = resolve_device(device);
  CL_CHECK(!pin_memory || device.is_cpu(), "Only dense CPU tensors can be pinned");
  // torch's order of errors: the byte count, then the strides (which overflow only when a
  // size is 0, since the byte count bounds them otherwise), before anything is allocated.
  size_t nbytes = storage_nbytes_contiguous(sizes, itemsize(dtype));
  Shape strides = checked_contiguous_strides(sizes);
  Allocator* alloc = pin_memory ? cuda::host_allocator() : allocator_for(device);
  auto storage = std::make_shared<StorageImpl>(alloc->allocate(nbytes), nbytes);
  storage->pinned = pin_memory;
  return std::make_shared<TensorImpl>(std::move(storage), sizes, std::move(strides), 0, dtype);
}

Tensor empty_like(const Tensor& t) { return empty(t->sizes, t->dtype, t->device()); }
Tensor empty_like(const Tensor& t, ScalarType dtype) { return empty(t->sizes, dtype, t->device()); }

// Every tensor made on another's storage comes through here: it shares that one's version
// counter (its storage's, or its own one).
Tensor as_strided(const Tensor& t, const Shape& sizes, const Shape& strides, int64_t offset) {
  auto v = std::make_shared<TensorImpl>(t->storage, sizes, strides, offset, t->dtype);
  v->own_version = t->own_version;
  return v;
}

void check_as_strided(const Tensor& t, const Shape& sizes, const Shape& strides, int64_t offset) {
  CL_CHECK(sizes.size() == strides.size(), "mismatch in length of strides and shape");
  for (int64_t s : strides) {
    CL_CHECK(s >= 0, "as_strided: Negative strides are not supported at the moment, got strides: ",
             shape_str(strides));
  }
  CL_CHECK(offset >= 0, "Tensor: invalid storage offset ", offset);
  // The elements the view reaches: none when it is empty, else up to its last element.
  bool empty = false, overflow = false;
  for (int64_t n : sizes) {
    overflow |= n < 0;
    empty |= n == 0;
  }
  int64_t end = offset + 1, step = 0;
  for (size_t i = 0; i < sizes.size() && !overflow && !empty; ++i) {
    overflow |= __builtin_mul_overflow(sizes[i] - 1, strides[i], &step) ||
                __builtin_add_overflow(end, step, &end);
  }
  int64_t bytes = 0;
  overflow |= !empty && __builtin_mul_overflow(end, int64_t(itemsize(t->dtype)), &bytes);
  CL_CHECK(!overflow, "Storage size calculation overflowed with sizes=", shape_str(sizes),
           " and strides=", shape_str(strides));
  if (empty) return;
  CL_CHECK(size_t(bytes) <= t->storage->nbytes, "setStorage: sizes ", shape_str(sizes),
           ", strides ", shape_str(strides), ", storage offset ", offset, ", and itemsize ",
           itemsize(t->dtype), " requiring a storage size of ", bytes,
           " are out of bounds for storage of size ", t->storage->nbytes);
}

Tensor alias(const Tensor& t) { return as_strided(t, t->sizes, t->strides, t->offset); }

Tensor view_dtype(const Tensor& t, ScalarType dtype) {
  const int64_t from = int64_t(t->element_size()), to = int64_t(itemsize(dtype));
  auto v = alias(t);
  v->dtype = dtype;
  if (from == to) return v;
  auto what = [&] {
    return detail::str(" to view ", dtype_short_name(t->dtype), " as ", dtype_short_name(dtype),
                       " (different element sizes)");
  };
  CL_CHECK(t->dim() > 0, "self.dim() cannot be 0", what());
  const size_t last = t->sizes.size() - 1;
  if (from > to) {  // each element becomes `ratio` elements along the last dimension
    const int64_t ratio = from / to;
    CL_CHECK(t->strides[last] == 1, "self.stride(-1) must be 1", what(), ", but got ",
             t->strides[last]);
    for (size_t d = 0; d < last; ++d) v->strides[d] *= ratio;
    v->sizes[last] *= ratio;
    v->offset *= ratio;
  } else {  // every `ratio` elements along the last dimension become one
    const int64_t ratio = to / from;
    CL_CHECK(t->sizes[last] % ratio == 0, "self.size(-1) must be divisible by ", ratio, what(),
             ", but got ", t->sizes[last]);
    CL_CHECK(t->offset % ratio == 0, "self.storage_offset() must be divisible by ", ratio, what(),
             ", but got ", t->offset);
    CL_CHECK(t->strides[last] == 1, "self.stride(-1) must be 1", what(), ", but got ",
             t->strides[last]);
    for (size_t d = 0; d < last; ++d) {
      CL_CHECK(t->strides[d] % ratio == 0, "self.stride(", d, ") must be divisible by ", ratio,
               what(), ", but got ", t->strides[d]);
      v->strides[d] /= ratio;
    }
    v->sizes[last] /= ratio;
    v->offset /= ratio;
  }
  v->strides[last] = 1;
  v->refresh();
  return v;
}

Shape infer_size(const Shape& sizes, int64_t numel) {
  Shape out = sizes;
  int64_t known = 1, infer = -1;
  bool overflow = false, zero = false;
  for (size_t i = 0; i < out.size(); ++i) {
    if (out[i] == -1) {
      CL_CHECK(infer < 0, "only one dimension can be inferred");
      infer = int64_t(i);
    } else {
      CL_CHECK(out[i] >= 0, "invalid shape dimension ", out[i]);
      zero |= out[i] == 0;
      overflow |= !checked_mul(known, out[i], &known);
    }
  }
  // The known sizes multiply to more than any tensor holds: no shape with them matches
  // `numel` elements, unless one of them is 0 (then the new tensor's own numel check decides).
  if (overflow) {
    CL_CHECK(zero || (numel == 0 && infer >= 0), "shape '", shape_str(sizes),
             "' is invalid for input of size ", numel);
    known = zero ? 0 : 1;
    if (!zero) {  // numel 0 with -1: the inferred size is 0
      out[infer] = 0;
      return out;
    }
  }
  if (infer >= 0) {
    CL_CHECK(known != 0 || numel != 0, "cannot reshape tensor of 0 elements into shape ",
             shape_str(sizes),
             " because the unspecified dimension size -1 can be any value and is ambiguous");
    CL_CHECK(known != 0 && numel % known == 0, "shape '", shape_str(sizes),
             "' is invalid for input of size ", numel);
    out[infer] = numel / known;
  } else {
    CL_CHECK(known == numel, "shape '", shape_str(sizes), "' is invalid for input of size ", numel);
  }
  return out;
}

// The strides a view of `t` with `sizes` would have, or an empty result when the memory
// layout cannot be expressed as a view (torch's computeStride).
static bool compute_view_strides(const Tensor& t, const Shape& sizes, Shape& out) {
  const Shape& old_sizes = t->sizes;
  const Shape& old_strides = t->strides;
  out.assign(sizes.size(), 0);
  if (old_sizes.empty()) {
    std::fill(out.begin(), out.end(), 1);
    return true;
  }
  if (t->numel() == 0) {
    out = contiguous_strides(sizes);
    return true;
  }
  int64_t view_d = int64_t(sizes.size()) - 1;
  int64_t chunk_base_stride = old_strides.back();
  int64_t tensor_numel = 1, view_numel = 1;
  for (int64_t d = int64_t(old_sizes.size()) - 1; d >= 0; --d) {
    tensor_numel *= old_sizes[d];
    if (d == 0 ||
        (old_sizes[d - 1] != 1 && old_strides[d - 1] != tensor_numel * chunk_base_stride)) {
      while (view_d >= 0 && (view_numel < tensor_numel || sizes[view_d] == 1)) {
        out[view_d] = view_numel * chunk_base_stride;
        view_numel *= sizes[view_d];
        --view_d;
      }
      if (view_numel != tensor_numel) return false;
      if (d > 0) {
        chunk_base_stride = old_strides[d - 1];
        tensor_numel = 1;
        view_numel = 1;
      }
    }
  }
  return view_d == -1;
}

Tensor view(const Tensor& t, Shape sizes) {
  sizes = infer_size(sizes, t->numel());
  Shape strides;
  CL_CHECK(compute_view_strides(t, sizes, strides),
           "view size is not compatible with input tensor's size and stride (at least one "
           "dimension spans across two contiguous subspaces). Use .reshape(...) instead.");
  return as_strided(t, sizes, strides, t->offset);
}

Tensor reshape(const Tensor& t, const Shape& sizes_in) {
  Shape sizes = infer_size(sizes_in, t->numel());
  Shape strides;
  if (compute_view_strides(t, sizes, strides)) return as_strided(t, sizes, strides, t->offset);
  return view(contiguous(t), sizes);
}

Tensor permute(const Tensor& t, const Shape& dims) {
  int64_t n = t->dim();
  CL_CHECK(int64_t(dims.size()) == n,
           "permute(sparse_coo): number of dimensions in the tensor input does not match the "
           "length of the desired ordering of dimensions i.e. input.dim() = ",
           n, " is not equal to len(dims) = ", dims.size());
  Shape sizes(n), strides(n);
  std::vector<bool> seen(n, false);
  for (int64_t i = 0; i < n; ++i) {
    int64_t d = wrap_dim(dims[i], n);
    CL_CHECK(!seen[d], "permute(): duplicate dims are not allowed.");
    seen[d] = true;
    sizes[i] = t->sizes[d];
    strides[i] = t->strides[d];
  }
  return as_strided(t, sizes, strides, t->offset);
}

Tensor transpose(const Tensor& t, int64_t d0, int64_t d1) {
  int64_t n = t->dim();
  if (n == 0) {
    wrap_dim(d0, 0);
    wrap_dim(d1, 0);
    return alias(t);
  }
  d0 = wrap_dim(d0, n);
  d1 = wrap_dim(d1, n);
  Shape sizes = t->sizes, strides = t->strides;
  std::swap(sizes[d0], sizes[d1]);
  std::swap(strides[d0], strides[d1]);
  return as_strided(t, sizes, strides, t->offset);
}

Tensor expand(const Tensor& t, const Shape& sizes) {
  int64_t n = int64_t(sizes.size()), tn = t->dim();
  CL_CHECK(n >= tn, "expand(", t->is_cuda() ? "cudalite.cuda." : "cudalite.",
           dtype_short_name(t->dtype), "Tensor{", shape_str(t->sizes), "}, size=", shape_str(sizes),
           "): the number of sizes provided (", n,
           ") must be greater or equal to the number of dimensions in the tensor (", tn, ")");
  Shape out_sizes(n), out_strides(n);
  for (int64_t i = n - 1; i >= 0; --i) {
    int64_t ti = i - (n - tn);
    int64_t size = ti >= 0 ? t->sizes[ti] : 1;
    int64_t stride = ti >= 0 ? t->strides[ti] : 0;
    int64_t target = sizes[i];
    if (target == -1) {
      CL_CHECK(ti >= 0,
               "The expanded size of the tensor (-1) isn't allowed in a leading, "
               "non-existing dimension ",
               i);
      target = size;
    }
    if (size != target) {
      CL_CHECK(size == 1, "The expanded size of the tensor (", target,
               ") must match the existing size (", size, ") at non-singleton dimension ", i,
               ".  Target sizes: ", shape_str(sizes), ".  Tensor sizes: ", shape_str(t->sizes));
      stride = 0;
    }
    out_sizes[i] = target;
    out_strides[i] = stride;
  }
  return as_strided(t, out_sizes, out_strides, t->offset);
}

Tensor squeeze(const Tensor& t) {
  Shape sizes, strides;
  for (int64_t d = 0; d < t->dim(); ++d) {
    if (t->sizes[d] != 1) {
      sizes.push_back(t->sizes[d]);
      strides.push_back(t->strides[d]);
    }
  }
  return as_strided(t, sizes, strides, t->offset);
}

Tensor squeeze_dims(const Tensor& t, const Shape& dims) {
  std::vector<bool> drop(t->dim(), false), seen(std::max<int64_t>(t->dim(), 1), false);
  for (auto d : dims) {
    int64_t w = wrap_dim(d, t->dim());
    CL_CHECK(!seen[w], "dim ", w, " appears multiple times in the list of dims");
    seen[w] = true;
    if (t->dim() > 0 && t->sizes[w] == 1) drop[w] = true;
  }
  Shape sizes, strides;
  for (int64_t d = 0; d < t->dim(); ++d) {
    if (!drop[d]) {
      sizes.push_back(t->sizes[d]);
      strides.push_back(t->strides[d]);
    }
  }
  return as_strided(t, sizes, strides, t->offset);
}

Tensor unsqueeze(const Tensor& t, int64_t dim) {
  dim = wrap_dim(dim, t->dim() + 1);
  Shape sizes = t->sizes, strides = t->strides;
  int64_t st = dim < t->dim() ? sizes[dim] * strides[dim] : 1;
  sizes.insert(sizes.begin() + dim, 1);
  strides.insert(strides.begin() + dim, st);
  return as_strided(t, sizes, strides, t->offset);
}

Tensor select(const Tensor& t, int64_t dim, int64_t index) {
  CL_CHECK_INDEX(t->dim() > 0, "select() cannot be applied to a 0-dim tensor.");
  dim = wrap_dim(dim, t->dim());
  int64_t size = t->sizes[dim];
  CL_CHECK_INDEX(index >= -size && index < size, "index ", index,
                 " is out of bounds for dimension ", dim, " with size ", size);
  if (index < 0) index += size;
  Shape sizes = t->sizes, strides = t->strides;
  int64_t off = t->offset + index * strides[dim];
  sizes.erase(sizes.begin() + dim);
  strides.erase(strides.begin() + dim);
  return as_strided(t, sizes, strides, off);
}

Tensor slice(const Tensor& t, int64_t dim, int64_t start, int64_t stop, int64_t step) {
  CL_CHECK_VALUE(step > 0, "step must be greater than zero");
  dim = wrap_dim(dim, t->dim());
  int64_t size = t->sizes[dim];
  auto clampi = [size](int64_t i) {
    if (i < 0) i += size;
    return std::min(std::max<int64_t>(i, 0), size);
  };
  start = clampi(start);
  stop = std::max(clampi(stop), start);
  Shape sizes = t->sizes, strides = t->strides;
  const int64_t len = stop - start;  // in [0, size]: no overflow below
  sizes[dim] = len == 0 ? 0 : (len - 1) / step + 1;
  // A step past the end leaves one element (or none): its stride then never moves.
  int64_t stepped;
  if (checked_mul(strides[dim], step, &stepped)) strides[dim] = stepped;
  return as_strided(t, sizes, strides, t->offset + start * t->strides[dim]);
}

Tensor flatten(const Tensor& t, int64_t start, int64_t end) {
  int64_t n = t->dim();
  if (n == 0) return reshape(t, {1});
  start = wrap_dim(start, n);
  end = wrap_dim(end, n);
  CL_CHECK(start <= end, "flatten() has invalid args: start_dim cannot come after end_dim");
  if (start == end) return alias(t);
  Shape sizes(t->sizes.begin(), t->sizes.begin() + start);
  int64_t m = 1;
  for (int64_t d = start; d <= end; ++d) m *= t->sizes[d];
  sizes.push_back(m);
  sizes.insert(sizes.end(), t->sizes.begin() + end + 1, t->sizes.end());
  return reshape(t, sizes);
}

namespace {
thread_local bool t_grad_enabled = true;
}
bool grad_enabled() { return t_grad_enabled; }
void set_grad_enabled(bool enabled) { t_grad_enabled = enabled; }

Shape broadcast_shapes(const Shape& a, const Shape& b) {
  size_t n = std::max(a.size(), b.size());
  Shape out(n);
  for (size_t i = 0; i < n; ++i) {
    int64_t da = i < n - a.size() ? 1 : a[i - (n - a.size())];
    int64_t db = i < n - b.size() ? 1 : b[i - (n - b.size())];
    CL_CHECK(da == db || da == 1 || db == 1, "The size of tensor a (", da,
             ") must match the size of tensor b (", db, ") at non-singleton dimension ", i);
    out[i] = da == 1 ? db : da;
  }
  return out;
}

}  // namespace cl
