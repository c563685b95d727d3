// The deferred batch (Note [Deferred launches] in csrc/cuda/deferred.cpp): one block that
// runs small elementwise ops and reductions one after another, each through its own loop
// function, and the launchers that queue them instead of launching them.
//
// Every (op, dtypes) loop of the op table has a __device__ function here, small_loop, and a
// __device__ variable holding its address, which the host reads once per device and puts in
// the op's entry; the batch kernel calls it through that pointer. The loop is the dense CUDA
// loop's (kernels/loops.cuh) without vectors: the same functor on the same compute type, so
// results are bit for bit the same. A reduction of one small row is reduce.cu's block_rows
// for one block (the same walk and tree, reduce.cuh), its tree in the batch's shared memory.
#include <array>
#include <atomic>
#include <cstring>
#include <mutex>
#include <type_traits>

#include "cuda/cuda_check.h"
#include "cuda/deferred.h"
#include "cuda/graphs.h"
#include "cuda/streams.h"
#include "kernels/deferred.cuh"
#include "kernels/launch.cuh"
#include "kernels/loops.cuh"
#include "kernels/reduce.cuh"
#include "ops/op_table.h"

namespace cl::gpu {

namespace {

using DeferredFn = void (*)(const cuda::DeferredOp&, void* smem);
constexpr int kAccBytes = 16;  // the largest reduction accumulator (an index and a double)
static_assert(cuda::kDeferredThreads == cuda::reducer::kThreads, "block_rows' block size");
constexpr int kDeferDevices = 8;  // ops on devices from 8 up are launched as usual

template <class out_t, class in_t, int N, class F>
__device__ void small_loop(const cuda::DeferredOp& op, void*) {
  using op_t = opmath_t<in_t>;
  constexpr int NK = N > 0 ? N : 1;
  const F f{};
  for (int i = threadIdx.x; i < op.n; i += blockDim.x) {
    op_t args[NK][1];
#pragma unroll
    for (int k = 0; k < N; ++k) {
      if (op.scalar_mask & (1u << k)) {
        op_t v;
        memcpy(&v, &op.sval[k], sizeof(op_t));
        args[k][0] = v;
      } else {
        const int j = (op.scalar_mask & (1u << (8 + k))) ? 0 : i;  // broadcast: element 0
        args[k][0] = op_t(reinterpret_cast<const in_t*>(op.in[k])[j]);
      }
    }
    reinterpret_cast<out_t*>(op.out)[i] =
        convert<out_t>(apply_at(f, args, 0, std::make_index_sequence<N>{}));
  }
}

// One row (op.in[0], op.n elements) reduced into op.out[0] and, for the Arg ops, the index
// into op.in[1].
template <class T, class Red>
__device__ void small_reduce(const cuda::DeferredOp& op, void* smem) {
  using acc_t = typename Red::acc_t;
  static_assert(sizeof(acc_t) <= kAccBytes, "the batch's shared memory holds the tree");
  const T* row = reinterpret_cast<const T*>(op.in[0]);
  acc_t total = cuda::reducer::block_reduce<Red>(cuda::reducer::block_walk<T, Red>(row, op.n, 0, 1),
                                                 static_cast<acc_t*>(smem));
  if (threadIdx.x == 0) {
    Red::store(total, op.out, reinterpret_cast<int64_t*>(const_cast<char*>(op.in[1])), 0);
  }
}

template <auto F>
__device__ DeferredFn device_address = F;

// A stream of cudalite's own per device for reading the addresses: a blocking copy on the
// legacy stream would wait for all of the work queued there.
cudaStream_t symbol_stream(int device) {
  static std::array<std::atomic<cudaStream_t>, kDeferDevices> streams{};
  static std::mutex mu;
  cudaStream_t s = streams[size_t(device)].load(std::memory_order_acquire);
  if (!s) {
    std::lock_guard<std::mutex> lock(mu);
    s = streams[size_t(device)].load(std::memory_order_relaxed);
    if (!s && cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking) == cudaSuccess) {
      streams[size_t(device)].store(s, std::memory_order_release);
    }
  }
  return s;
}

// F's address on `device` (the current one), read once; nullptr if it can't be. Not read
// while a CUDA graph is being captured: the read waits for a stream, which the global and
// thread_local capture modes forbid (the capture would be invalidated); the op is launched
// directly instead, and its address read at its first use outside a capture.
template <auto F>
const void* loop_address(int device) {
  static std::array<std::atomic<const void*>, kDeferDevices> cache{};
  const void* p = cache[size_t(device)].load(std::memory_order_acquire);
  if (!p) {
    if (cuda::captures_underway() > 0) return nullptr;
    DeferredFn fn = nullptr;
    cudaStream_t s = symbol_stream(device);
    if (!s ||
        cudaMemcpyFromSymbolAsync(&fn, device_address<F>, sizeof(fn), 0, cudaMemcpyDeviceToHost,
                                  s) != cudaSuccess ||
        cudaStreamSynchronize(s) != cudaSuccess || !fn) {
      cudaGetLastError();
      return nullptr;
    }
    p = reinterpret_cast<const void*>(fn);
    cache[size_t(device)].store(p, std::memory_order_release);
  }
  return p;
}

__global__ void __launch_bounds__(cuda::kDeferredThreads)
    deferred_batch_kernel(const cuda::DeferredBatch b) {
  __shared__ alignas(kAccBytes) unsigned char smem[cuda::kDeferredThreads * kAccBytes];
  for (int i = 0; i < b.count; ++i) {
    const cuda::DeferredOp op = b.ops[i];
    reinterpret_cast<DeferredFn>(const_cast<void*>(op.fn))(op, smem);
    __syncthreads();  // the next op sees this one's results
  }
}

// The op table's launcher that queues instead of launching; `queued` says whether it did
// (functors with state and loops it can't address are launched as usual).
struct DeferLaunch {
  bool* queued;
  template <class out_t, class in_t, int N, class F>
  void run(const ElementwiseIter& it, F) const {
    using op_t = opmath_t<in_t>;
    static_assert(sizeof(op_t) <= sizeof(uint64_t), "numbers ride in 8 bytes");
    if constexpr (N <= 3 && std::is_empty_v<F>) {
      const int device = it.device.index;
      const void* fn = loop_address<&small_loop<out_t, in_t, N, F>>(device);
      if (!fn) return;
      cuda::DeferredOp op{};
      op.fn = fn;
      op.out = it.data[0];
      op.n = int32_t(it.numel);
      for (int k = 0; k < N; ++k) {
        op.in[k] = it.data[k + 1];
        if (it.ndim == 1 && !it.is_scalar[k + 1] && it.strides[k + 1][0] == 0) {
          op.scalar_mask |= 1u << (8 + k);  // one element broadcast to all
        }
        if (it.is_scalar[k + 1]) {  // as gpu_kernel rounds numbers (kernels/loops.cuh)
          const Scalar& s = it.scalars[k + 1];
          op_t v = (it.scalar_opmath >> (k + 1) & 1u) ? s.template to<op_t>()
                                                      : op_t(s.template to<in_t>());
          std::memcpy(&op.sval[k], &v, sizeof(v));
          op.scalar_mask |= 1u << k;
        }
      }
      *queued = cuda::defer(device, cuda::current_stream_unflushed(device), op);
    }
  }
};

template <class T, ReduceOp OP>
const void* reduce_address(int device) {
  return loop_address<&small_reduce<T, cuda::reducer::R<T, OP>>>(device);
}

const void* reduce_loop(ReduceOp op, ScalarType dtype, int device) {
  const void* fn = nullptr;
  CL_DISPATCH_ALL_TYPES(dtype, "reduce", [&] {
    using T = scalar_t;
    cuda::reducer::with_reduce_op(
        op, [&](auto k) { fn = reduce_address<T, decltype(k)::value>(device); });
  });
  return fn;
}

bool exported(const Tensor& t) { return t && t->storage->exported.load(std::memory_order_relaxed); }

// One flat loop: the output dense, every tensor input dense or one element broadcast.
bool flat(const ElementwiseIter& it) {
  if (it.ndim == 0) return true;
  if (it.ndim > 1 || it.strides[0][0] != int64_t(itemsize(it.out_dtype))) return false;
  const int64_t isz = int64_t(itemsize(it.in_dtype));
  for (int k = 1; k < it.noperands; ++k) {
    if (!it.is_scalar[k] && it.strides[k][0] != isz && it.strides[k][0] != 0) return false;
  }
  return true;
}

bool deferrable(const ElementwiseIter& it) {
  return it.numel > 0 && it.numel <= cuda::kDeferredMaxNumel && !it.exported &&
         it.device.index < kDeferDevices && flat(it) && cuda::deferral_enabled();
}

}  // namespace

}  // namespace cl::gpu

namespace cl::cuda {

void launch_deferred_batch(const DeferredBatch& batch, void* stream) {
  gpu::launch<gpu::deferred_batch_kernel>(1, kDeferredThreads, static_cast<cudaStream_t>(stream),
                                          batch);
  CL_CUDA_KERNEL_LAUNCH_CHECK();
}

bool defer_binary(const ElementwiseIter& it, BinaryOp op) {
  bool queued = false;
  if (gpu::deferrable(it)) dispatch_binary(it, op, gpu::DeferLaunch{&queued});
  return queued;
}

bool defer_unary(const ElementwiseIter& it, UnaryOp op) {
  bool queued = false;
  if (gpu::deferrable(it)) dispatch_unary(it, op, gpu::DeferLaunch{&queued});
  return queued;
}

bool defer_where(const ElementwiseIter& it) {
  bool queued = false;
  if (gpu::deferrable(it)) dispatch_where(it, gpu::DeferLaunch{&queued});
  return queued;
}

bool defer_cast(const ElementwiseIter& it) {
  bool queued = false;
  if (gpu::deferrable(it)) dispatch_cast(it, gpu::DeferLaunch{&queued});
  return queued;
}

bool defer_fma(const ElementwiseIter& it) {
  bool queued = false;
  if (gpu::deferrable(it)) dispatch_fma(it, gpu::DeferLaunch{&queued});
  return queued;
}

bool defer_reduce(ReduceOp op, const Tensor& in, int64_t inner, const Tensor& out,
                  const Tensor& idx) {
  const int device = in->device().index;
  if (inner <= 0 || inner > kDeferredMaxNumel || device >= gpu::kDeferDevices ||
      gpu::exported(in) || gpu::exported(out) || gpu::exported(idx) || !deferral_enabled()) {
    return false;
  }
  const void* fn = gpu::reduce_loop(op, in->dtype, device);
  if (!fn) return false;
  DeferredOp d{};
  d.fn = fn;
  d.out = static_cast<char*>(out->data());
  d.in[0] = static_cast<const char*>(in->data());
  d.in[1] = idx ? static_cast<const char*>(idx->data()) : nullptr;
  d.n = int32_t(inner);
  return defer(device, current_stream_unflushed(device), d);
}

}  // namespace cl::cuda
