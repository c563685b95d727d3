"""Lazy, thread-safe CUDA initialisation and calls queued until it happens.

Mirrors ``torch.cuda._lazy_init`` / ``_lazy_call``. The C++ side (``_C._cuda.lazy_init``)
does the real work once per process; this layer adds torch's Python-visible behaviour:
the "not compiled" and bad-fork errors, and calls queued before initialisation (seeding
the GPU generators, for instance) that run right after it.
"""

# _thread, not threading: the same primitives without threading's import cost.
import _thread

from cudalite import _C

_initialized = False
_tls = _thread._local()
_initialization_lock = _thread.allocate_lock()
# (callable, stack of the caller) pairs, run once CUDA is initialised.
_queued_calls = []
# Only the latest manual_seed / manual_seed_all call matters; kept apart from the queue.
_seed_calls = {}
_seed_order = 0


class DeferredCudaCallError(Exception):
    """A call queued before CUDA initialised failed when it finally ran."""


def _is_compiled():
    """True when this build of cudalite has the CUDA backend."""
    return _C._cuda.is_compiled()


def _is_in_bad_fork():
    """True in a child forked after the parent initialised CUDA."""
    return _C._cuda.is_in_bad_fork()


def is_initialized():
    r"""Return whether cudalite's CUDA state has been initialized."""
    return (_initialized or _C._cuda.is_initialized()) and not _is_in_bad_fork()


def _lazy_call(callable, **kwargs):
    """Run ``callable`` now if CUDA is initialised, else right after it initialises."""
    global _seed_order
    if is_initialized():
        # CUDA may have started from C++ (a tensor op): finish the Python side first.
        _lazy_init()
        callable()
        return
    import traceback

    with _initialization_lock:
        if _initialized:
            callable()
        elif kwargs.get("seed_all", False) or kwargs.get("seed", False):
            key = "seed_all" if kwargs.get("seed_all", False) else "seed"
            _seed_order += 1
            _seed_calls[key] = (_seed_order, callable, traceback.format_stack())
        else:
            _queued_calls.append((callable, traceback.format_stack()))


def init():
    r"""Initialize cudalite's CUDA state.

    You may need to call this explicitly if you are interacting with cudalite via its C
    API. Ordinary users should not need this, as all of cudalite's CUDA methods
    automatically initialize CUDA state on-demand.

    Does nothing if the CUDA state is already initialized.
    """
    _lazy_init()


def _lazy_init():
    global _initialized
    if (_initialized and not _is_in_bad_fork()) or hasattr(_tls, "is_initializing"):
        return
    with _initialization_lock:
        # Double-checked: another thread may have finished while this one waited.
        if _initialized and not _is_in_bad_fork():
            return
        if _is_in_bad_fork():
            raise RuntimeError(
                "Cannot re-initialize CUDA in forked subprocess. To use CUDA with "
                "multiprocessing, you must use the 'spawn' start method"
            )
        if not _is_compiled():
            raise AssertionError("cudalite not compiled with CUDA enabled")
        # Raises torch's errors ("Found no NVIDIA driver...", "No CUDA GPUs are available").
        _C._cuda.lazy_init()
        # Queued calls may call _lazy_init() again; that must return, not deadlock.
        _tls.is_initializing = True
        seeds = [(c, tb) for _, c, tb in sorted(_seed_calls.values(), key=lambda s: s[0])]
        try:
            for queued_call, orig_traceback in _queued_calls + seeds:
                try:
                    queued_call()
                except Exception as e:
                    msg = (
                        f"CUDA call failed lazily at initialization with error: {str(e)}\n\n"
                        f"CUDA call was originally invoked at:\n\n{''.join(orig_traceback)}"
                    )
                    raise DeferredCudaCallError(msg) from e
        finally:
            delattr(_tls, "is_initializing")
        _queued_calls.clear()
        _seed_calls.clear()
        _initialized = True
