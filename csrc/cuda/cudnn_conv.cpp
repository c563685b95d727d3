// Convolutions through cuDNN's legacy API: forward, backward data and backward filter of a
// grouped, strided, dilated cross-correlation on contiguous NC* tensors (the Python layer,
// nn/_cudnn_conv.py, adds the bias, handles transposed convolutions as the adjoint pair and
// falls back to im2col where cuDNN doesn't apply).
//
// Note [cuDNN algorithm choice]
// Each problem (kind, device, dtype, shapes, parameters, flags) picks its algorithm once:
// with `benchmark` by timing them (cudnnFind*AlgorithmEx, on the real buffers and a
// workspace from the caching allocator), else from cuDNN's heuristics (cudnnGet*_v7). The
// first candidate that succeeded, is deterministic when that is asked for, and whose
// workspace can be allocated wins; the choice is cached for the life of the process, like
// torch's per-problem cache. The workspace is an ordinary uint8 tensor from the caching
// allocator, freed (to the cache) when the call returns, on the stream the call ran on.
#include <climits>
#include <map>
#include <mutex>
#include <tuple>

#include "core/cuda_api.h"
#include "core/tensor.h"
#include "cuda/cuda_check.h"
#include "cuda/cudnn_loader.h"
#include "ops/ops.h"

namespace cl {

namespace {

using cuda::Cudnn;
namespace api = cuda::cudnn_api;

enum Kind { kForward = 0, kBackwardData = 1, kBackwardFilter = 2 };

int data_type(ScalarType t) {
  switch (t) {
    case ScalarType::Float16:
      return api::kHalf;
    case ScalarType::BFloat16:
      return api::kBFloat16;
    case ScalarType::Float64:
      return api::kDouble;
    case ScalarType::Float32:
      return api::kFloat;
    default:
      throw Error(
          detail::str("\"cudnn_convolution\" not implemented for '", dtype_short_name(t), "'"));
  }
}

int to_int(int64_t v) {
  CL_CHECK(v >= 0 && v <= INT_MAX, "cudnn_convolution: size ", v,
           " exceeds the 32-bit limit of cuDNN's legacy API");
  return int(v);
}

std::vector<int> ints(const std::vector<int64_t>& v) {
  std::vector<int> r;
  for (int64_t x : v) r.push_back(to_int(x));
  return r;
}

// The descriptors of one call, destroyed with it.
struct Descriptors {
  const Cudnn& c;
  api::TensorDesc x = nullptr, y = nullptr;
  api::FilterDesc w = nullptr;
  api::ConvDesc conv = nullptr;
  explicit Descriptors(const Cudnn& lib) : c(lib) {
    CL_CUDNN_CHECK(c.create_tensor_desc(&x));
    CL_CUDNN_CHECK(c.create_tensor_desc(&y));
    CL_CUDNN_CHECK(c.create_filter_desc(&w));
    CL_CUDNN_CHECK(c.create_conv_desc(&conv));
  }
  ~Descriptors() {
    if (conv) c.destroy_conv_desc(conv);
    if (w) c.destroy_filter_desc(w);
    if (y) c.destroy_tensor_desc(y);
    if (x) c.destroy_tensor_desc(x);
  }
  Descriptors(const Descriptors&) = delete;
  Descriptors& operator=(const Descriptors&) = delete;
};

void set_tensor(const Cudnn& c, api::TensorDesc d, const std::vector<int64_t>& sizes, int dt) {
  std::vector<int64_t> strides(sizes.size(), 1);
  for (size_t i = sizes.size() - 1; i-- > 0;) strides[i] = strides[i + 1] * sizes[i + 1];
  std::vector<int> di = ints(sizes), si = ints(strides);
  CL_CUDNN_CHECK(c.set_tensor_nd(d, dt, int(di.size()), di.data(), si.data()));
}

int compute_type(ScalarType t) {
  return t == ScalarType::Float64 ? api::kDouble : api::kFloat;  // half/bf16 accumulate in float
}

int math_type(ScalarType t, bool allow_tf32) {
  if (t == ScalarType::Float32) return allow_tf32 ? api::kDefaultMath : api::kFmaMath;
  if (t == ScalarType::Float64) return api::kDefaultMath;
  return api::kTensorOpMath;
}

// Fills the descriptors for conv(x: x_sizes, w: w_sizes) -> y: y_sizes.
void describe(const Descriptors& d, ScalarType dtype, const std::vector<int64_t>& x_sizes,
              const std::vector<int64_t>& w_sizes, const std::vector<int64_t>& y_sizes,
              const CudnnConvArgs& a) {
  const Cudnn& c = d.c;
  int dt = data_type(dtype);
  set_tensor(c, d.x, x_sizes, dt);
  set_tensor(c, d.y, y_sizes, dt);
  std::vector<int> wi = ints(w_sizes);
  CL_CUDNN_CHECK(c.set_filter_nd(d.w, dt, api::kTensorNCHW, int(wi.size()), wi.data()));
  std::vector<int> pad = ints(a.padding), stride = ints(a.stride), dil = ints(a.dilation);
  CL_CUDNN_CHECK(c.set_conv_nd(d.conv, int(pad.size()), pad.data(), stride.data(), dil.data(),
                               api::kCrossCorrelation, compute_type(dtype)));
  CL_CUDNN_CHECK(c.set_conv_group_count(d.conv, to_int(a.groups)));
  CL_CUDNN_CHECK(c.set_conv_math_type(d.conv, math_type(dtype, a.allow_tf32)));
}

using Key = std::tuple<int, int, int, std::vector<int64_t>, std::vector<int64_t>,
                       std::vector<int64_t>, std::vector<int64_t>, int64_t, bool, bool, bool>;

std::mutex g_cache_mu;
std::map<Key, api::AlgoPerf>& algo_cache() {
  static auto* cache = new std::map<Key, api::AlgoPerf>();
  return *cache;
}

// The descriptor order each kind's cuDNN calls take: (first, second, conv, third).
struct Order {
  void* first;
  void* second;
  void* third;
};
Order order(Kind kind, const Descriptors& d) {
  switch (kind) {
    case kForward:
      return {d.x, d.w, d.y};
    case kBackwardData:
      return {d.w, d.y, d.x};
    default:
      return {d.x, d.y, d.w};
  }
}

Tensor try_workspace(size_t bytes, Device dev) {
  return empty(Shape{int64_t(bytes)}, ScalarType::UInt8, dev);
}

// Runs kind's convolution: out = op(in0, in1), choosing (and caching) the algorithm
// (Note [cuDNN algorithm choice]).
void run(Kind kind, const Descriptors& d, const Key& key, const Tensor& in0, const Tensor& in1,
         const Tensor& out, ScalarType dtype, const CudnnConvArgs& a) {
  const Cudnn& c = d.c;
  Device dev = out->device();
  int device = dev.index;
  cuda::DeviceGuard guard(device);
  api::Handle h = cuda::cudnn_handle(device);
  Order o = order(kind, d);
  api::AlgoPerf chosen{};
  Tensor workspace;
  bool found = false;
  {
    std::lock_guard<std::mutex> lock(g_cache_mu);
    auto it = algo_cache().find(key);
    if (it != algo_cache().end()) {
      chosen = it->second;
      found = true;
    }
  }
  if (found) {
    if (chosen.memory) workspace = try_workspace(chosen.memory, dev);
  } else {
    constexpr int kMax = 16;
    api::AlgoPerf perf[kMax];
    int n = 0;
    if (a.benchmark) {
      // Time every algorithm whose workspace fits a generous buffer.
      size_t ws_bytes = 0;
      for (int algo = 0; algo < 8; ++algo) {
        size_t sz = 0;
        if (c.workspace_size[kind](h, o.first, o.second, d.conv, o.third, algo, &sz) == 0) {
          ws_bytes = std::max(ws_bytes, sz);
        }
      }
      Tensor ws;
      try {
        ws = try_workspace(ws_bytes, dev);
      } catch (const OutOfMemoryError&) {
        ws_bytes = 0;
        ws = try_workspace(0, dev);
      }
      CL_CUDNN_CHECK(c.find_algo[kind](h, o.first, in0->data(), o.second, in1->data(), d.conv,
                                       o.third, out->data(), kMax, &n, perf, ws->data(), ws_bytes));
    } else {
      CL_CUDNN_CHECK(c.get_algo[kind](h, o.first, o.second, d.conv, o.third, kMax, &n, perf));
    }
    for (int i = 0; i < n && !found; ++i) {
      const api::AlgoPerf& p = perf[i];
      if (p.status != 0) continue;
      if (a.deterministic && p.determinism != api::kDeterministic) continue;
      size_t sz = 0;
      if (c.workspace_size[kind](h, o.first, o.second, d.conv, o.third, p.algo, &sz) != 0) {
        continue;
      }
      try {
        workspace = sz ? try_workspace(sz, dev) : Tensor();
      } catch (const OutOfMemoryError&) {
        continue;
      }
      chosen = p;
      chosen.memory = sz;
      found = true;
    }
    CL_CHECK(found, "cuDNN error: CUDNN_STATUS_NOT_SUPPORTED. No ",
             a.deterministic ? "deterministic " : "",
             "convolution algorithm is available for this problem");
    std::lock_guard<std::mutex> lock(g_cache_mu);
    algo_cache().emplace(key, chosen);
  }
  // torch's errata: float32 without TF32 keeps FMA math; otherwise the algorithm's own.
  if (!(dtype == ScalarType::Float32 && !a.allow_tf32)) {
    CL_CUDNN_CHECK(c.set_conv_math_type(d.conv, chosen.math_type));
  }
  double one_d = 1.0, zero_d = 0.0;
  float one_f = 1.0f, zero_f = 0.0f;
  bool dbl = dtype == ScalarType::Float64;
  const void* alpha = dbl ? static_cast<const void*>(&one_d) : &one_f;
  const void* beta = dbl ? static_cast<const void*>(&zero_d) : &zero_f;
  void* ws = workspace ? workspace->data() : nullptr;
  CL_CUDNN_CHECK(c.run[kind](h, alpha, o.first, in0->data(), o.second, in1->data(), d.conv,
                             chosen.algo, ws, chosen.memory, beta, o.third, out->data()));
}

void check_inputs(const Tensor& a, const Tensor& b, const CudnnConvArgs& args) {
  check_same_device({&a, &b});
  CL_CHECK(a->is_cuda(), "cudnn_convolution: expected CUDA tensors, got ", a->device().str());
  CL_CHECK(a->dtype == b->dtype, "expected scalar type ", dtype_short_name(a->dtype), " but found ",
           dtype_short_name(b->dtype));
  CL_CHECK(a->is_contiguous() && b->is_contiguous(),
           "cudnn_convolution: expected contiguous tensors");
  size_t nd = size_t(a->dim()) - 2;
  CL_CHECK(a->dim() >= 4 && a->dim() <= 5 && b->dim() == a->dim() && args.padding.size() == nd &&
               args.stride.size() == nd && args.dilation.size() == nd && args.groups > 0,
           "cudnn_convolution: expected 4-D or 5-D tensors and one padding, stride and "
           "dilation per spatial dim");
}

Key make_key(Kind kind, const Tensor& t, const std::vector<int64_t>& x,
             const std::vector<int64_t>& w, const CudnnConvArgs& a) {
  std::vector<int64_t> params = a.padding;
  params.insert(params.end(), a.stride.begin(), a.stride.end());
  params.insert(params.end(), a.dilation.begin(), a.dilation.end());
  return Key(kind, t->device().index, int(t->dtype), x, w, params, {}, a.groups, a.benchmark,
             a.deterministic, a.allow_tf32);
}

std::vector<int64_t> vec(const Shape& s) { return std::vector<int64_t>(s.begin(), s.end()); }

}  // namespace

Tensor cudnn_convolution(const Tensor& x, const Tensor& w, const CudnnConvArgs& args) {
  check_inputs(x, w, args);
  std::vector<int64_t> xs = vec(x->sizes), ws = vec(w->sizes);
  std::vector<int64_t> ys{xs[0], ws[0]};
  for (size_t i = 0; i < args.padding.size(); ++i) {
    int64_t k = args.dilation[i] * (ws[2 + i] - 1) + 1;
    ys.push_back((xs[2 + i] + 2 * args.padding[i] - k) / args.stride[i] + 1);
  }
  Tensor y = empty(Shape(ys.begin(), ys.end()), x->dtype, x->device());
  if (y->numel() == 0) return y;
  Descriptors d(cuda::cudnn());
  describe(d, x->dtype, xs, ws, ys, args);
  run(kForward, d, make_key(kForward, x, xs, ws, args), x, w, y, x->dtype, args);
  return y;
}

Tensor cudnn_convolution_backward_input(const std::vector<int64_t>& x_sizes, const Tensor& dy,
                                        const Tensor& w, const CudnnConvArgs& args) {
  check_inputs(dy, w, args);
  Tensor dx = empty(Shape(x_sizes.begin(), x_sizes.end()), dy->dtype, dy->device());
  if (dx->numel() == 0) return dx;
  if (dy->numel() == 0) {
    fill_(dx, Scalar(0.0));
    return dx;
  }
  Descriptors d(cuda::cudnn());
  std::vector<int64_t> ws = vec(w->sizes);
  describe(d, dy->dtype, x_sizes, ws, vec(dy->sizes), args);
  run(kBackwardData, d, make_key(kBackwardData, dy, x_sizes, ws, args), w, dy, dx, dy->dtype, args);
  return dx;
}

Tensor cudnn_convolution_backward_weight(const std::vector<int64_t>& w_sizes, const Tensor& dy,
                                         const Tensor& x, const CudnnConvArgs& args) {
  check_inputs(dy, x, args);
  Tensor dw = empty(Shape(w_sizes.begin(), w_sizes.end()), dy->dtype, dy->device());
  if (dw->numel() == 0) return dw;
  if (dy->numel() == 0) {
    fill_(dw, Scalar(0.0));
    return dw;
  }
  Descriptors d(cuda::cudnn());
  std::vector<int64_t> xs = vec(x->sizes);
  describe(d, dy->dtype, xs, w_sizes, vec(dy->sizes), args);
  run(kBackwardFilter, d, make_key(kBackwardFilter, dy, xs, w_sizes, args), x, dy, dw, dy->dtype,
      args);
  return dw;
}

}  // namespace cl
