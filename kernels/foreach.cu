// The CUDA side of the multi-tensor ops (ops/foreach.h): the foreach pointwise ops, norms,
// GradScaler's unscale-and-check and scale update, and the fused Adam/AdamW and SGD updates.
// Each op but the scale update is one multi-tensor apply (kernels/multi_tensor.cuh) per group
// of up to max_tensors<D>() tensors and kMaxBlocks chunks of 64 Ki elements, running the
// per-element math of ops/foreach_math.h on float for the 16-bit types. Bytes moved: the
// operands read plus those written, per element (Adam: 4 or 5 reads, 3 or 4 writes; the
// norm: one read, then 8 bytes per chunk).
#include <cuda_runtime.h>

#include <cmath>

#include "core/cuda_api.h"
#include "core/error.h"
#include "kernels/launch.cuh"
#include "kernels/multi_tensor.cuh"
#include "ops/ops.h"

namespace cl::cuda {
namespace {

using gpu::mta::kBlock;
using gpu::mta::kChunk;
using gpu::mta::kILP;
using gpu::mta::Meta;

#define CL_DISPATCH_FOREACH_TYPES(TYPE, NAME, ...)                    \
  [&] {                                                               \
    switch (TYPE) {                                                   \
      CL_CASE_TYPE(Float16, ::cl::Half, __VA_ARGS__)                  \
      CL_CASE_TYPE(BFloat16, ::cl::BFloat16, __VA_ARGS__)             \
      CL_CASE_TYPE(Float32, float, __VA_ARGS__)                       \
      CL_CASE_TYPE(Float64, double, __VA_ARGS__)                      \
      default:                                                        \
        throw ::cl::Error(std::string(NAME) + ": unsupported dtype"); \
    }                                                                 \
  }()

cudaStream_t stream_on(const Tensor& t) {
  return static_cast<cudaStream_t>(current_stream(t->device().index));
}

template <class T, int D, class Op>
void run(const std::vector<TensorList>& lists, const Op& op, const std::vector<double>* scalars,
         const TensorList* steps) {
  const Tensor& ref = lists[0][0];
  DeviceGuard g(ref->device().index);
  cudaStream_t s = stream_on(ref);
  gpu::mta::plan<D>(lists, scalars, steps, [&](const Meta<D>& m, int blocks) {
    gpu::launch<gpu::mta::apply_kernel<T, D, Op>>(dim3(blocks), dim3(kBlock), s, m, op);
    CL_CUDA_KERNEL_LAUNCH_CHECK();
  });
}

template <class T, class Op>
void run_depth(const std::vector<TensorList>& lists, const Op& op,
               const std::vector<double>* scalars, const TensorList* steps) {
  switch (lists.size()) {
    case 1:
      return run<T, 1>(lists, op, scalars, steps);
    case 2:
      return run<T, 2>(lists, op, scalars, steps);
    case 3:
      return run<T, 3>(lists, op, scalars, steps);
    case 4:
      return run<T, 4>(lists, op, scalars, steps);
    default:
      throw Error("foreach: at most 4 lists");
  }
}

// Norms: each block reduces its chunk to one partial (sum of squares, sum of |x| or max |x|) in
// slot [tensor][chunk] of a zeroed workspace; then one block per tensor reduces its row.
template <class O>
__device__ O block_reduce(O v, bool is_max) {
  __shared__ O sh[kBlock / 32];
  for (int off = 16; off > 0; off /= 2) {
    O o = __shfl_down_sync(0xffffffffu, v, off);
    v = is_max ? fn::Maximum{}(v, o) : v + o;
  }
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  if (lane == 0) sh[warp] = v;
  __syncthreads();
  const int nwarps = (blockDim.x + 31) / 32;
  v = threadIdx.x < nwarps ? sh[threadIdx.x] : O(0);
  if (warp == 0) {
    for (int off = 16; off > 0; off /= 2) {
      O o = __shfl_down_sync(0xffffffffu, v, off);
      v = is_max ? fn::Maximum{}(v, o) : v + o;
    }
  }
  return v;
}

template <class T>
__global__ void __launch_bounds__(kBlock)
    norm_partial_kernel(Meta<1> m, int ord, opmath_t<T>* ws, int max_chunks) {
  using O = opmath_t<T>;
  const int t = m.block_to_tensor[blockIdx.x];
  const int chunk = m.block_to_chunk[blockIdx.x];
  const int64_t start = int64_t(chunk) * kChunk;
  const int64_t rest = m.numel[t] - start;
  const int len = int(rest < kChunk ? rest : kChunk);
  const T* p = static_cast<const T*>(m.addr[0][t]) + start;
  O acc = 0;
  auto add = [&](O v) {
    O a = v < O(0) ? -v : v;
    acc = ord == 2 ? acc + v * v : ord == 1 ? acc + a : fn::Maximum{}(acc, a);
  };
  // kILP elements per load where the chunk allows it (as apply_kernel): the partials read
  // whole gradients, at the memory's speed only with several bytes in flight per thread
  struct alignas(kILP * sizeof(T)) Vec {
    T v[kILP];
  };
  if (len % kILP == 0 && reinterpret_cast<uintptr_t>(p) % (kILP * sizeof(T)) == 0) {
    const Vec* pv = reinterpret_cast<const Vec*>(p);
    for (int i = threadIdx.x; i < len / kILP; i += blockDim.x) {
      const Vec r = pv[i];
#pragma unroll
      for (int k = 0; k < kILP; ++k) add(O(r.v[k]));
    }
  } else {
    for (int i = threadIdx.x; i < len; i += blockDim.x) add(O(p[i]));
  }
  acc = block_reduce(acc, ord == 0);
  // the tensor's index in the caller's list rides in the scalar slot
  if (threadIdx.x == 0) ws[int64_t(m.scalar[t]) * max_chunks + chunk] = acc;
}

template <class O>
__global__ void __launch_bounds__(kBlock)
    norm_final_kernel(const O* ws, int max_chunks, int ord, O* out) {
  O acc = 0;
  const O* row = ws + int64_t(blockIdx.x) * max_chunks;
  for (int i = threadIdx.x; i < max_chunks; i += blockDim.x)
    acc = ord == 0 ? fn::Maximum{}(acc, row[i]) : acc + row[i];
  acc = block_reduce(acc, ord == 0);
  if (threadIdx.x == 0) out[blockIdx.x] = ord == 2 ? O(sqrt(acc)) : acc;
}

__global__ void update_scale_kernel(float* scale, int32_t* tracker, const float* found_inf,
                                    double growth, double backoff, int32_t interval) {
  foreach
    ::update_scale(scale, tracker, found_inf, growth, backoff, interval);
}

template <class T>
const float* f32_ptr(const Tensor& t) {
  return t ? reinterpret_cast<const float*>(t->data()) : nullptr;
}

}  // namespace

void foreach_pointwise(const std::vector<TensorList>& lists, const PointwiseArgs& a) {
  CL_DISPATCH_FOREACH_TYPES(lists[0][0]->dtype, "foreach_pointwise", [&] {
    using O = opmath_t<scalar_t>;
    foreach
      ::PointwiseOp<scalar_t> op{};
    op.op = a.op;
    op.nin = a.nin;
    op.inplace = a.inplace;
    op.b_kind = a.b_kind;
    op.lerp_list = a.lerp_list;
    op.alpha = O(a.alpha);
    op.b_device = a.b_device ? reinterpret_cast<const O*>(a.b_device->data()) : nullptr;
    run_depth<scalar_t>(lists, op, a.scalars.empty() ? nullptr : &a.scalars, nullptr);
  });
}

void foreach_norm(const TensorList& tensors, double ord, const Tensor& out) {
  const int ord_code = ord == 2 ? 2 : ord == 1 ? 1 : 0;
  int64_t max_numel = 0;
  for (const Tensor& t : tensors) max_numel = std::max(max_numel, t->numel());
  const int max_chunks = int(std::max<int64_t>(1, (max_numel + kChunk - 1) / kChunk));
  const int64_t n = int64_t(tensors.size());
  DeviceGuard g(tensors[0]->device().index);
  Tensor ws = full({n * max_chunks}, Scalar(0.0), out->dtype, out->device());
  std::vector<double> index(tensors.size());
  for (size_t i = 0; i < index.size(); ++i) index[i] = double(i);
  cudaStream_t s = stream_on(tensors[0]);
  CL_DISPATCH_FOREACH_TYPES(tensors[0]->dtype, "foreach_norm", [&] {
    using O = opmath_t<scalar_t>;
    O* wp = reinterpret_cast<O*>(ws->data());
    gpu::mta::plan<1>({tensors}, &index, nullptr, [&](const Meta<1>& m, int blocks) {
      gpu::launch<norm_partial_kernel<scalar_t>>(dim3(blocks), dim3(kBlock), s, m, ord_code, wp,
                                                 max_chunks);
      CL_CUDA_KERNEL_LAUNCH_CHECK();
    });
    gpu::launch<norm_final_kernel<O>>(dim3(unsigned(n)), dim3(kBlock), s, static_cast<const O*>(wp),
                                      max_chunks, ord_code, reinterpret_cast<O*>(out->data()));
    CL_CUDA_KERNEL_LAUNCH_CHECK();
  });
}

void amp_unscale(const TensorList& grads, const Tensor& found_inf, const Tensor& inv_scale) {
  CL_DISPATCH_FOREACH_TYPES(grads[0]->dtype, "_amp_foreach_non_finite_check_and_unscale_cuda", [&] {
    foreach
      ::UnscaleOp<scalar_t> op{};
    op.found_inf = reinterpret_cast<float*>(found_inf->data());
    op.inv_scale = reinterpret_cast<const float*>(inv_scale->data());
    run<scalar_t, 1>({grads}, op, nullptr, nullptr);
  });
}

void amp_update_scale(const Tensor& scale, const Tensor& growth_tracker, const Tensor& found_inf,
                      double growth_factor, double backoff_factor, int64_t growth_interval) {
  DeviceGuard g(scale->device().index);
  gpu::launch<update_scale_kernel>(dim3(1), dim3(1), stream_on(scale),
                                   reinterpret_cast<float*>(scale->data()),
                                   reinterpret_cast<int32_t*>(growth_tracker->data()),
                                   reinterpret_cast<const float*>(found_inf->data()), growth_factor,
                                   backoff_factor, int32_t(growth_interval));
  CL_CUDA_KERNEL_LAUNCH_CHECK();
}

void fused_adam(const std::vector<TensorList>& lists, const TensorList& steps, const AdamArgs& a) {
  CL_DISPATCH_FOREACH_TYPES(lists[0][0]->dtype, "_fused_adam", [&] {
    foreach
      ::AdamOp<scalar_t> op{};
    op.lr = a.lr;
    op.lr_device = f32_ptr<scalar_t>(a.lr_tensor);
    op.beta1 = a.beta1;
    op.beta2 = a.beta2;
    op.weight_decay = a.weight_decay;
    op.eps = a.eps;
    op.maximize = a.maximize;
    op.adamw = a.adamw;
    op.grad_scale = f32_ptr<scalar_t>(a.grad_scale);
    op.found_inf = f32_ptr<scalar_t>(a.found_inf);
    if (a.amsgrad) {
      run<scalar_t, 5>(lists, op, nullptr, &steps);
    } else {
      run<scalar_t, 4>(lists, op, nullptr, &steps);
    }
  });
}

void fused_sgd(const std::vector<TensorList>& lists, const SgdArgs& a) {
  CL_DISPATCH_FOREACH_TYPES(lists[0][0]->dtype, "_fused_sgd", [&] {
    foreach
      ::SgdOp<scalar_t> op{};
    op.lr = a.lr;
    op.lr_device = f32_ptr<scalar_t>(a.lr_tensor);
    op.weight_decay = a.weight_decay;
    op.momentum = a.momentum;
    op.dampening = a.dampening;
    op.nesterov = a.nesterov;
    op.maximize = a.maximize;
    op.is_first_step = a.is_first_step;
    op.grad_scale = f32_ptr<scalar_t>(a.grad_scale);
    op.found_inf = f32_ptr<scalar_t>(a.found_inf);
    if (lists.size() == 3) {
      run<scalar_t, 3>(lists, op, nullptr, nullptr);
    } else {
      run<scalar_t, 2>(lists, op, nullptr, nullptr);
    }
  });
}

}  // namespace cl::cuda
