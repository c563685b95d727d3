// Note [Releasing the GIL]
// Ops release the GIL around the core's work once that work is large enough to matter, so
// that two Python threads run large ops at the same time and a pure-Python thread keeps
// running beside a thread that computes (torch's and NumPy's ops do the same). The rules:
// - Every Python object is converted first (operands, scalars, shapes, dtypes, devices), and
//   the op's tensors are held by value (Tensor is a shared_ptr), so nothing the op reads can
//   be freed under it; the work itself is core code, which never touches Python.
// - Everything after the work that needs Python (wrapping the result, version bumps, the
//   resize warning) runs after the GIL is taken back.
// - Small ops keep the GIL: giving it up costs about 0.1 us uncontended, but a thread that
//   gave it up while another thread runs Python gets it back only when that thread yields it
//   (up to sys.getswitchinterval(), 5 ms). Below kReleaseGilNumel elements an op takes a few
//   microseconds, which releasing would not buy back.
// - CUDA work is asynchronous and keeps the GIL, except where it waits on the host: copies
//   between host and device memory, item(), synchronisation (bind_streams.cpp).
// The core state that such concurrent ops reach is safe for it: generators reserve their
// counters under a mutex, the CPU allocator is malloc, the deferred-launch batch and the
// CUDA allocator take their own locks, grad mode and current streams are thread-local, and
// version counters are bumped by the bindings with the GIL held (core/version_counter.h).
// Writing the same tensor from two threads at once is a data race, as in torch.
#pragma once

#include <pybind11/pybind11.h>

#include <algorithm>
#include <initializer_list>
#include <utility>

#include "core/shape.h"
#include "core/tensor.h"

namespace cl::bind {

// Elements of an op's largest tensor from which it runs without the GIL (about 10-30 us of
// work on one core for an elementwise float32 op).
constexpr int64_t kReleaseGilNumel = int64_t(1) << 15;

// Whether work over `t` (a CPU tensor with at least kReleaseGilNumel elements) is worth
// releasing the GIL for. Null and CUDA tensors are not.
inline bool worth_releasing(const Tensor& t) {
  return t && !t->is_cuda() && t->numel() >= kReleaseGilNumel;
}

// Whether a CPU tensor of these sizes would have at least kReleaseGilNumel elements (without
// overflowing on sizes that the op itself will refuse).
inline bool large_numel(const Shape& sizes) {
  for (int64_t s : sizes)
    if (s <= 0) return false;
  int64_t n = 1;
  for (int64_t s : sizes) {
    if (s >= kReleaseGilNumel) return true;
    n *= s;  // both factors below 2^15
    if (n >= kReleaseGilNumel) return true;
  }
  return false;
}

// Whether an op that broadcasts these CPU tensors (null ones skipped) writes at least
// kReleaseGilNumel elements: its result can be much larger than every operand (an outer
// product, `a[:, None] * b`, writes len(a) * len(b)). False when one of them is on a GPU.
inline bool large_broadcast(std::initializer_list<const Tensor*> ts) {
  size_t dims = 0;
  for (const Tensor* t : ts) {
    if (!t || !*t) continue;
    if ((*t)->is_cuda()) return false;
    dims = std::max(dims, (*t)->sizes.size());
  }
  Shape out(dims, 1);
  for (const Tensor* t : ts) {
    if (!t || !*t) continue;
    const Shape& s = (*t)->sizes;
    for (size_t i = 0; i < s.size(); ++i) {
      int64_t& o = out[dims - s.size() + i];
      if (s[i] != 1) o = o == 1 ? s[i] : std::min(o, s[i]);  // a mismatch fails in the op
    }
  }
  return large_numel(out);
}

// Whether a copy between `a` and `b` may block the host long enough to release the GIL: a
// large CPU copy, or any copy between host and device memory (it waits for the stream).
inline bool copy_worth_releasing(const Tensor& a, const Tensor& b) {
  if (!a || !b) return false;
  if (a->is_cuda() != b->is_cuda()) return true;
  return worth_releasing(a) || worth_releasing(b);
}

// f() run without the GIL when `release` is true, with it otherwise. f must not touch Python
// objects (see the Note).
template <class F>
decltype(auto) maybe_without_gil(bool release, F&& f) {
  if (!release) return std::forward<F>(f)();
  pybind11::gil_scoped_release nogil;
  return std::forward<F>(f)();
}

}  // namespace cl::bind
