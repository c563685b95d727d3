r"""
This package adds support for CUDA tensor types.

It implements the same function as CPU tensors, but they utilize GPUs for computation.

It is lazily initialized, so you can always import it, and use :func:`is_available()` to
determine if your system supports CUDA. Neither :func:`is_available()` nor
:func:`device_count()` initialises CUDA, so forking afterwards stays safe.
"""

import os  # noqa: F401  (torch.cuda.os is part of torch's namespace; tutorials use it)

from cudalite import _C
from cudalite.cuda import _dynlib
from cudalite.cuda._device import (  # noqa: F401  (private names torch.cuda also has)
    _CudaDeviceProperties,
    _exchange_device,
    _get_device_index,
    _maybe_exchange_device,
    can_device_access_peer,
    current_blas_handle,
    current_device,
    device,
    device_count,
    device_of,
    get_arch_list,
    get_device_capability,
    get_device_name,
    get_device_properties,
    get_gencode_flags,
    is_available,
    is_bf16_supported,
    is_tf32_supported,
    mem_get_info,
    set_device,
    synchronize,
)
from cudalite.cuda._ipc import ipc_collect
from cudalite.cuda._lazy import (  # noqa: F401
    DeferredCudaCallError,
    _is_compiled,
    _is_in_bad_fork,
    _lazy_call,
    _lazy_init,
    init,
    is_initialized,
)
from cudalite.cuda._nvml import (
    clock_rate,
    device_memory_used,
    list_gpu_processes,
    memory_usage,
    power_draw,
    temperature,
    utilization,
)
from cudalite.cuda._runtime import CudaError, _sleep, check_error, cudart  # noqa: F401

AcceleratorError = _C.AcceleratorError
OutOfMemoryError = _C.OutOfMemoryError
has_half: bool = True
has_magma: bool = False


def _pip_library_dirs():
    """site-packages/nvidia/*/lib folders, where pip's CUDA wheels put libcublas."""
    return _dynlib.wheel_dirs("nvidia/cu13/lib", "nvidia/cublas/lib")


if _is_compiled():
    _C._cuda._set_library_dirs(_pip_library_dirs())


_GRAPH_NAMES = (
    "CUDAGraph",
    "graph",
    "graph_pool_handle",
    "is_current_stream_capturing",
    "make_graphed_callables",
)


def __getattr__(name):
    if name == "amp":  # torch.cuda.amp: deprecated spellings of cudalite.amp, loaded on use
        import importlib

        return importlib.import_module("cudalite.cuda.amp")
    if name in ("nccl", "comm"):  # loaded on use: NCCL itself opens at the first collective
        import importlib

        return importlib.import_module(f"cudalite.cuda.{name}")
    # torch code reads torch.cuda._initialized; the flag lives in _lazy.
    if name == "_initialized":
        from cudalite.cuda import _lazy

        return _lazy._initialized
    if name == "default_generators":  # filled when CUDA initialises, as torch's
        return _random.default_generators()
    # CUDA graphs (torch.cuda.graphs), imported on first use.
    if name in _GRAPH_NAMES or name == "graphs":
        import importlib

        graphs = importlib.import_module("cudalite.cuda.graphs")
        return graphs if name == "graphs" else getattr(graphs, name)
    raise AttributeError(f"module 'cudalite.cuda' has no attribute '{name}'")


__all__ = [
    "AcceleratorError",
    "CudaError",
    "DeferredCudaCallError",
    "OutOfMemoryError",
    "can_device_access_peer",
    "check_error",
    "clock_rate",
    "current_blas_handle",
    "current_device",
    "cudart",
    "device",
    "device_count",
    "device_memory_used",
    "device_of",
    "get_arch_list",
    "get_device_capability",
    "get_device_name",
    "get_device_properties",
    "get_gencode_flags",
    "has_half",
    "has_magma",
    "init",
    "ipc_collect",
    "is_available",
    "is_bf16_supported",
    "is_initialized",
    "is_tf32_supported",
    "list_gpu_processes",
    "mem_get_info",
    "memory_usage",
    "power_draw",
    "set_device",
    "synchronize",
    "temperature",
    "utilization",
]

# Other parts of torch.cuda, each in its own module (they may import the names above).
from cudalite.cuda import memory as _memory  # noqa: E402
from cudalite.cuda import nvtx, profiler  # noqa: E402, F401
from cudalite.cuda import random as _random  # noqa: E402
from cudalite.cuda import streams as _streams  # noqa: E402
from cudalite.cuda.memory import *  # noqa: E402, F403
from cudalite.cuda.random import *  # noqa: E402, F403
from cudalite.cuda.streams import *  # noqa: E402, F403

__all__ += _memory.__all__ + _random.__all__ + _streams.__all__ + list(_GRAPH_NAMES)
