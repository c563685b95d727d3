// launch<kernel>(grid, block, stream, args...): what kernel<<<grid, block, 0, stream>>>(args...)
// does (launch_smem<kernel>(grid, block, smem, stream, args...) with dynamic shared memory),
// through the driver (Note [Driver launches] in csrc/cuda/launch.cpp). The arguments are converted
// to the kernel's parameter types before their addresses are taken, as a
// <<<>>> launch converts them.
#pragma once

#include <cuda_runtime.h>

#include "cuda/launch.h"

namespace cl::gpu {

namespace detail {
template <class T>
struct same {
  using type = T;
};

// One handle per kernel, resolved on first use (thread-safe static initialisation).
template <auto K>
const void* handle_of() {
  static const void* h = cuda::kernel_handle(reinterpret_cast<const void*>(K));
  return h;
}

template <class... P>
void launch_with(void (*k)(P...), const void* handle, dim3 grid, dim3 block, size_t smem,
                 cudaStream_t stream, typename same<P>::type... args) {
  void* params[] = {static_cast<void*>(&args)...};
  cuda::launch_kernel(reinterpret_cast<const void*>(k), handle, grid, block, smem, stream, params);
}
}  // namespace detail

template <auto K, class... A>
void launch(dim3 grid, dim3 block, cudaStream_t stream, A&&... args) {
  detail::launch_with(K, detail::handle_of<K>(), grid, block, 0, stream, static_cast<A&&>(args)...);
}

template <auto K, class... A>
void launch_smem(dim3 grid, dim3 block, size_t smem, cudaStream_t stream, A&&... args) {
  detail::launch_with(K, detail::handle_of<K>(), grid, block, smem, stream,
                      static_cast<A&&>(args)...);
}

}  // namespace cl::gpu
