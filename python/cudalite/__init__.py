"""cudalite: torch.cuda semantics in a small, readable package.

``import cudalite as torch`` runs the tutorials' code: devices, tensors on CPU and GPU,
``.to()`` / ``.cuda()`` / ``.cpu()``, streams and events, pinned memory, a caching allocator
with torch's memory statistics. Importing never initialises CUDA.
"""

from cudalite import _C
from cudalite._C import (
    AcceleratorError,
    OutOfMemoryError,
    Tensor,
    can_cast,
    device,
    dtype,
    from_numpy,
    get_default_dtype,
    promote_types,
    set_default_dtype,
)
from cudalite._C import bfloat16, bool, float16, float32, float64, int8, int16, int32, int64, uint8
from cudalite._size import Size
from cudalite._memory_format import (
    channels_last,
    channels_last_3d,
    contiguous_format,
    memory_format,
    preserve_format,
)
from cudalite import _tensor, _tensor_math, _tensor_new, _tensor_random, _resize, _legacy
from cudalite import _strided, _tensor_views, _layout
from cudalite._layout import layout, strided
from cudalite._strided import empty_strided
from cudalite._creation import *  # noqa: F403
from cudalite._creation_random import *  # noqa: F403
from cudalite._ops import *  # noqa: F403
from cudalite._reductions import *  # noqa: F403
from cudalite._reductions import return_types
from cudalite._sorting import *  # noqa: F403
from cudalite._einsum import einsum
from cudalite._resize import resize_as_
from cudalite._finfo import finfo, iinfo
from cudalite._functional import *  # noqa: F403
from cudalite._foreach import *  # noqa: F403
from cudalite._fused import *  # noqa: F403

# ---- index, scan and triangle ops ----
from cudalite._tensor_scatter import *  # noqa: F403
from cudalite._tensor_scan import *  # noqa: F403
from cudalite._tensor_triangular import *  # noqa: F403
from cudalite._tensor_rearrange import *  # noqa: F403

# ---- split, index/scatter, unique, set_ and predicate ops ----
from cudalite._tensor_split import *  # noqa: F403
from cudalite._tensor_index_ops import *  # noqa: F403
from cudalite._tensor_scatter_reduce import *  # noqa: F403
from cudalite._tensor_scatter_views import *  # noqa: F403
from cudalite._tensor_unique import *  # noqa: F403
from cudalite._tensor_set import *  # noqa: F403
from cudalite._tensor_predicates import *  # noqa: F403
from cudalite import _tensor_apply  # noqa: F401 - Tensor.apply_, map_, map2_

# ---- more math: composed pointwise ops, statistics, products, diagonals, norms ----
from cudalite._pointwise import *  # noqa: F403
from cudalite._statistics import *  # noqa: F403
from cudalite._products import *  # noqa: F403
from cudalite._diagonals import *  # noqa: F403
from cudalite._norms import *  # noqa: F403
from cudalite.random import (
    Generator,
    default_generator,
    get_rng_state,
    initial_seed,
    manual_seed,
    seed,
    set_rng_state,
)
from cudalite._tensor import get_printoptions, set_printoptions
from cudalite import random, autograd, cuda, backends, version
from cudalite.version import __version__
from cudalite._parallel import get_num_threads, set_num_threads
from cudalite._deterministic import (
    are_deterministic_algorithms_enabled,
    get_deterministic_debug_mode,
    is_deterministic_algorithms_warn_only_enabled,
    set_deterministic_debug_mode,
    use_deterministic_algorithms,
)
from cudalite._interop import from_dlpack
from cudalite._asarray import asarray, frombuffer
from cudalite.backends import get_float32_matmul_precision, set_float32_matmul_precision
from cudalite.autograd import (
    enable_grad,
    inference_mode,
    is_grad_enabled,
    no_grad,
    set_grad_enabled,
)

_tensor.install()  # Tensor's Python methods and properties, set once (Note [Arming])
_C._set_legacy_ctor(_legacy.legacy_new)
globals().update(_legacy.make_legacy_types(is_cuda=False))
vars(cuda).update(_legacy.make_legacy_types(is_cuda=True))
# torch's dtype aliases.
float = float32
double = float64
half = float16
long = int64
int = int32
short = int16


def _dtype_from_name(name):
    """Unpickles a dtype."""
    return getattr(_C, name)


# Autograd wraps the differentiable ops defined above, so it is wired in last.
from cudalite.autograd import _install as _autograd_install  # noqa: E402

_autograd_install.install(globals())

from cudalite import _checked  # noqa: E402

_checked.install()  # torch's TypeErrors for arguments that fit no signature
swapdims = swapaxes  # noqa: F405 - torch's other name for it


# Submodules and functions that load on first use (``cudalite.nn``, ``from cudalite import
# nn``): torch imports them with torch, cudalite keeps them out of ``import cudalite``.
# __dir__ lists them; type checkers see them through __init__.pyi (scripts/gen_stubs.py).
_LAZY_MODULES = (
    "nn",
    "optim",
    "utils",
    "testing",
    "serialization",
    "accelerator",
    "amp",
    "distributed",
    "multiprocessing",
)
_LAZY_NAMES = ("save", "load", "UntypedStorage")
# torch.autocast and its state functions (cudalite.amp.autocast_mode)
_AUTOCAST_NAMES = (
    "autocast",
    "clear_autocast_cache",
    "get_autocast_dtype",
    "is_autocast_available",
    "is_autocast_cache_enabled",
    "is_autocast_enabled",
    "set_autocast_cache_enabled",
    "set_autocast_dtype",
    "set_autocast_enabled",
)


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY_MODULES) | set(_LAZY_NAMES) | set(_AUTOCAST_NAMES))


def __getattr__(name: str):  # types: __init__.pyi
    if name in _LAZY_MODULES:
        import importlib

        return importlib.import_module(f"cudalite.{name}")
    # save/load and storages are needed only by code that uses them.
    if name in ("save", "load"):
        from cudalite import serialization

        return getattr(serialization, name)
    if name in _AUTOCAST_NAMES:
        from cudalite.amp import autocast_mode

        return getattr(autocast_mode, name)
    if name == "UntypedStorage":
        from cudalite.storage import UntypedStorage

        return UntypedStorage
    raise AttributeError(f"module 'cudalite' has no attribute '{name}'")
