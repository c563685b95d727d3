r"""This package adds support for device memory management implemented in CUDA.

The functions mirror ``torch.cuda.memory``: the same names, statistics keys, printed summary,
snapshot format (PyTorch's memory_viz viewer opens ``_dump_snapshot`` files) and errors.
The allocator behind them is described in ``docs/allocator.md``.
"""

from __future__ import annotations

import sys
import warnings

from cudalite import _C
from cudalite.cuda._host_memory import (
    _flatten_stats,
    host_empty_cache,
    host_memory_stats,
    host_memory_stats_as_nested_dict,
    reset_accumulated_host_memory_stats,
    reset_peak_host_memory_stats,
)
from cudalite.cuda._memory_summary import _format_summary

TYPE_CHECKING = False  # typing and pickle stay out of `import cudalite`
if TYPE_CHECKING:
    from typing import Any

__all__ = [
    "caching_allocator_alloc",
    "caching_allocator_delete",
    "get_per_process_memory_fraction",
    "set_per_process_memory_fraction",
    "empty_cache",
    "memory_stats",
    "memory_stats_as_nested_dict",
    "reset_accumulated_memory_stats",
    "reset_peak_memory_stats",
    "reset_max_memory_allocated",
    "reset_max_memory_cached",
    "memory_allocated",
    "max_memory_allocated",
    "memory_reserved",
    "max_memory_reserved",
    "memory_cached",
    "max_memory_cached",
    "memory_snapshot",
    "memory_summary",
    "get_allocator_backend",
    "plot_timeline",
    # Pinned host memory (torch.cuda.memory has these too); see _host_memory.py.
    "host_empty_cache",
    "host_memory_stats",
    "host_memory_stats_as_nested_dict",
    "reset_accumulated_host_memory_stats",
    "reset_peak_host_memory_stats",
]

_mem = _C._memory

_TRACE_ACTIONS = (
    "alloc",
    "free_requested",
    "free_completed",
    "segment_alloc",
    "segment_free",
    "segment_map",
    "segment_unmap",
    "oom",
    "snapshot",
)
_skip_actions: frozenset = frozenset()


# cudalite.cuda's own helpers (lazy initialisation, device and stream lookup) are used when
# that package provides them; the fallbacks keep this module usable on its own.
def _cuda_attr(name):
    mod = sys.modules.get("cudalite.cuda")
    return getattr(mod, name, None) if mod is not None else None


def is_initialized() -> bool:
    f = _cuda_attr("is_initialized")
    return f() if f is not None and f is not is_initialized else _C._cuda.is_initialized()


def _lazy_init() -> None:
    f = _cuda_attr("_lazy_init")
    if f is not None:
        f()
    else:
        _C._cuda.lazy_init()


def _current_device() -> int:
    _lazy_init()
    return _C._cuda.current_device()


def _get_device_index(device: Any, optional: bool = False) -> int:
    """A CUDA device index from an int, a str, a cudalite.device or None (the current device,
    or -1 when CUDA is not available)."""
    f = _cuda_attr("_get_device_index")
    if f is not None:
        return f(device, optional=optional)
    if isinstance(device, int):
        return device
    if isinstance(device, str):
        device = _C.device(device)
    if isinstance(device, _C.device):
        if device.type != "cuda":
            raise ValueError(f"Expected a cuda device, but got: {device}")
        idx = device.index
    elif hasattr(device, "idx"):
        return device.idx
    else:
        idx = None
    if idx is None:
        if not optional:
            raise ValueError(
                f"Expected a cudalite.device with a specified index or an integer, but got:{device}"
            )
        return _current_device() if _C._cuda.device_count() > 0 else -1
    return idx


def _checked_index(device: Any, what: str) -> int:
    idx = _get_device_index(device, optional=True)
    if idx is None or idx < 0:
        raise RuntimeError(f"invalid argument to {what}")
    if idx >= _C._cuda.device_count():
        raise RuntimeError("Invalid device argument ")
    return idx


def caching_allocator_alloc(size, device=None, stream=None):
    r"""Perform a memory allocation using the CUDA memory allocator.

    Memory is allocated for a given device and a stream, this
    function is intended to be used for interoperability with other
    frameworks. Allocated memory is released through
    :func:`~cudalite.cuda.caching_allocator_delete`.

    Args:
        size (int): number of bytes to be allocated.
        device (cudalite.device or int, optional): selected device. If it is
            ``None`` the default CUDA device is used.
        stream (cudalite.cuda.Stream or int, optional): selected stream. If is ``None`` then
            the default stream for the selected device is used.
    """
    if device is None:
        device = _current_device()
    device = _get_device_index(device)
    if stream is None:
        current_stream = _cuda_attr("current_stream")
        stream = current_stream(device) if current_stream is not None else 0
    if hasattr(stream, "cuda_stream"):
        stream = stream.cuda_stream
    if not isinstance(stream, int):
        raise TypeError(
            "Invalid type for stream argument, must be "
            "`cudalite.cuda.Stream` or `int` representing a pointer "
            "to a existing stream"
        )
    _lazy_init()
    return _mem.raw_alloc(size, device, stream)


def caching_allocator_delete(mem_ptr):
    r"""Delete memory allocated using the CUDA memory allocator.

    Memory allocated with :func:`~cudalite.cuda.caching_allocator_alloc`.
    is freed here. The associated device and stream are tracked inside
    the allocator.

    Args:
        mem_ptr (int): memory address to be freed by the allocator.
    """
    _mem.raw_delete(mem_ptr)


def set_per_process_memory_fraction(fraction, device=None) -> None:
    r"""Set memory fraction for a process.

    The fraction is used to limit an caching allocator to allocated memory on a CUDA device.
    The allowed value equals the total visible memory multiplied fraction.
    If trying to allocate more than the allowed value in a process, will raise an out of
    memory error in allocator.

    Args:
        fraction(float): Range: 0~1. Allowed memory equals total_memory * fraction.
        device (cudalite.device or int, optional): selected device. If it is
            ``None`` the default CUDA device is used.
    """
    _lazy_init()
    if device is None:
        device = _current_device()
    device = _get_device_index(device)
    if not isinstance(fraction, float):
        raise TypeError("Invalid type for fraction argument, must be `float`")
    if fraction < 0 or fraction > 1:
        raise ValueError(f"Invalid fraction value: {fraction}. Allowed range: 0~1")
    _mem.set_memory_fraction(fraction, device)


def get_per_process_memory_fraction(device=None) -> float:
    r"""Get memory fraction for a process.

    Args:
        device (cudalite.device or int, optional): selected device. If it is
            ``None`` the default CUDA device is used.
    Returns:
        memory fraction, in range 0~1. Allowed memory equals total_memory * fraction.
    """
    _lazy_init()
    if device is None:
        device = _current_device()
    device = _get_device_index(device)
    return _mem.get_memory_fraction(device)


def empty_cache() -> None:
    r"""Release all unoccupied cached memory currently held by the caching
    allocator so that those can be used in other GPU application and visible in
    `nvidia-smi`.

    .. note::
        :func:`~cudalite.cuda.empty_cache` doesn't increase the amount of GPU
        memory available for cudalite. However, it may help reduce fragmentation
        of GPU memory in certain cases.
    """
    if is_initialized():
        _mem.empty_cache()


def memory_stats(device=None) -> dict[str, Any]:
    r"""Return a dictionary of CUDA memory allocator statistics for a given device.

    The return value of this function is a dictionary of statistics, each of
    which is a non-negative integer.

    Core statistics:

    - ``"allocation.{all,large_pool,small_pool}.{current,peak,allocated,freed}"``:
      number of allocation requests received by the memory allocator.
    - ``"allocated_bytes.{all,large_pool,small_pool}.{current,peak,allocated,freed}"``:
      amount of allocated memory.
    - ``"segment.{all,large_pool,small_pool}.{current,peak,allocated,freed}"``:
      number of reserved segments (contiguous runs of memory held from the driver).
    - ``"reserved_bytes.{all,large_pool,small_pool}.{current,peak,allocated,freed}"``:
      amount of reserved memory.
    - ``"active.{all,large_pool,small_pool}.{current,peak,allocated,freed}"``:
      number of active memory blocks.
    - ``"active_bytes.{all,large_pool,small_pool}.{current,peak,allocated,freed}"``:
      amount of active memory.
    - ``"inactive_split.{all,large_pool,small_pool}.{current,peak,allocated,freed}"``:
      number of inactive, non-releasable memory blocks.
    - ``"inactive_split_bytes.{all,large_pool,small_pool}.{current,peak,allocated,freed}"``:
      amount of inactive, non-releasable memory.
    - ``"requested_bytes.{all,large_pool,small_pool}.{current,peak,allocated,freed}"``:
      memory requested by client code, before rounding.

    Pool type: ``all`` (combined), ``large_pool`` (allocations above 1 MiB) and
    ``small_pool`` (1 MiB or less). Metric type: ``current``, ``peak``, ``allocated``
    (historical total increase) and ``freed`` (historical total decrease).

    Event counters: ``"num_alloc_retries"``, ``"num_ooms"``, ``"num_sync_all_streams"``,
    ``"num_device_alloc"`` (cudaMalloc and cuMemMap calls), ``"num_device_free"``
    (cudaFree and cuMemUnmap calls), plus ``"max_split_size"``,
    ``"oversize_allocations.{current,peak,allocated,freed}"`` and
    ``"oversize_segments.{current,peak,allocated,freed}"``.

    Args:
        device (cudalite.device or int, optional): selected device. Returns
            statistics for the current device, given by
            :func:`~cudalite.cuda.current_device`, if :attr:`device` is ``None`` (default).
    """
    return _flatten_stats(memory_stats_as_nested_dict(device=device))


def memory_stats_as_nested_dict(device=None) -> dict[str, Any]:
    r"""Return the result of :func:`~cudalite.cuda.memory_stats` as a nested dictionary."""
    if not is_initialized():
        return {}
    device = _get_device_index(device, optional=True)
    if device < 0 or device >= _C._cuda.device_count():
        raise RuntimeError("Invalid device argument ")
    return _mem.memory_stats(device)


def reset_accumulated_memory_stats(device=None) -> None:
    r"""Reset the "accumulated" (historical) stats tracked by the CUDA memory allocator.

    Accumulated stats correspond to the `"allocated"` and `"freed"` keys in each individual
    stat dict, as well as `"num_alloc_retries"` and `"num_ooms"`.
    """
    _mem.reset_accumulated_memory_stats(_checked_index(device, "reset_accumulated_memory_stats"))


def reset_peak_memory_stats(device=None) -> None:
    r"""Reset the "peak" stats tracked by the CUDA memory allocator.

    Peak stats correspond to the `"peak"` key in each individual stat dict.
    """
    _mem.reset_peak_memory_stats(_checked_index(device, "reset_peak_memory_stats"))


def reset_max_memory_allocated(device=None) -> None:
    r"""Reset the starting point in tracking maximum GPU memory occupied by tensors.

    .. warning::
        This function now calls :func:`~cudalite.cuda.reset_peak_memory_stats`, which resets
        /all/ peak memory stats.
    """
    warnings.warn(
        "cudalite.cuda.reset_max_memory_allocated now calls "
        "cudalite.cuda.reset_peak_memory_stats, which resets /all/ peak memory stats.",
        FutureWarning,
        stacklevel=2,
    )
    return reset_peak_memory_stats(device=device)


def reset_max_memory_cached(device=None) -> None:
    r"""Reset the starting point in tracking maximum GPU memory managed by the caching allocator.

    .. warning::
        This function now calls :func:`~cudalite.cuda.reset_peak_memory_stats`, which resets
        /all/ peak memory stats.
    """
    warnings.warn(
        "cudalite.cuda.reset_max_memory_cached now calls "
        "cudalite.cuda.reset_peak_memory_stats, which resets /all/ peak memory stats.",
        FutureWarning,
        stacklevel=2,
    )
    return reset_peak_memory_stats(device=device)


def memory_allocated(device=None) -> int:
    r"""Return the current GPU memory occupied by tensors in bytes for a given device."""
    return memory_stats(device=device).get("allocated_bytes.all.current", 0)


def max_memory_allocated(device=None) -> int:
    r"""Return the maximum GPU memory occupied by tensors in bytes for a given device.

    By default, this returns the peak allocated memory since the beginning of
    this program. :func:`~cudalite.cuda.reset_peak_memory_stats` can be used to
    reset the starting point in tracking this metric.
    """
    return memory_stats(device=device).get("allocated_bytes.all.peak", 0)


def memory_reserved(device=None) -> int:
    r"""Return the current GPU memory managed by the caching allocator in bytes."""
    return memory_stats(device=device).get("reserved_bytes.all.current", 0)


def max_memory_reserved(device=None) -> int:
    r"""Return the maximum GPU memory managed by the caching allocator in bytes.

    By default, this returns the peak cached memory since the beginning of this
    program. :func:`~cudalite.cuda.reset_peak_memory_stats` can be used to reset
    the starting point in tracking this metric.
    """
    return memory_stats(device=device).get("reserved_bytes.all.peak", 0)


def memory_cached(device=None) -> int:
    r"""Deprecated; see :func:`~cudalite.cuda.memory_reserved`."""
    warnings.warn(
        "`cudalite.cuda.memory_cached` has been renamed to `cudalite.cuda.memory_reserved`",
        FutureWarning,
        stacklevel=2,
    )
    return memory_reserved(device=device)


def max_memory_cached(device=None) -> int:
    r"""Deprecated; see :func:`~cudalite.cuda.max_memory_reserved`."""
    warnings.warn(
        "`cudalite.cuda.max_memory_cached` has been renamed to `cudalite.cuda.max_memory_reserved`",
        FutureWarning,
        stacklevel=2,
    )
    return max_memory_reserved(device=device)


def memory_snapshot(mempool_id=None, include_traces=True):
    r"""Return a snapshot of the CUDA memory allocator state across all devices.

    Interpreting the output of this function requires familiarity with the
    memory allocator internals.
    """
    return _mem.snapshot()["segments"]


def memory_summary(device=None, abbreviated: bool = False) -> str:
    r"""Return a human-readable printout of the current memory allocator statistics.

    This can be useful to display periodically during training, or when
    handling out-of-memory exceptions.

    Args:
        device (cudalite.device or int, optional): selected device. Returns
            printout for the current device, given by :func:`~cudalite.cuda.current_device`,
            if :attr:`device` is ``None`` (default).
        abbreviated (bool, optional): whether to return an abbreviated summary
            (default: False).
    """
    device = _get_device_index(device, optional=True)
    stats = memory_stats(device=device)
    return _format_summary(stats, device, abbreviated)


def _record_memory_history_legacy(
    enabled: bool,
    record_context=True,
    trace_alloc_max_entries=1,
    trace_alloc_record_context=False,
    device=None,
    record_context_cpp=False,
    clear_history=False,
    compile_context=False,
    global_record_annotations=False,
    skip_actions=None,
):
    if trace_alloc_record_context:
        context = "alloc"
    elif record_context:
        context = "state"
    else:
        context = None
    _record_memory_history_impl(
        ("all" if trace_alloc_max_entries > 1 else "state") if enabled else None,
        context=context,
        stacks="all" if record_context_cpp else "python",
        max_entries=trace_alloc_max_entries,
        clear_history=clear_history,
        skip_actions=skip_actions,
    )


def _record_memory_history(enabled="all", *args, **kwargs) -> None:
    """Enable recording of stack traces associated with memory
    allocations, so you can tell what allocated any piece of memory in
    :func:`cudalite.cuda.memory._snapshot()`.

    In addition to keeping stack traces with each current allocation and free,
    this will also enable recording of a history of all alloc/free events.

    Use :func:`cudalite.cuda.memory._snapshot()` to retrieve this information, and
    PyTorch's memory_viz viewer (pytorch.org/memory_viz) to look at a
    :func:`cudalite.cuda.memory._dump_snapshot` file.

    Args:
        enabled (Literal[None, "state", "all"], optional):
            `None`, disable recording memory history.
            `"state"`, keep information for currently allocated memory.
            `"all"`, additionally keep a history of all alloc/free calls.
            Defaults to "all".
        context (Literal[None, "state", "alloc", "all"], optional):
            `None`, Do not record any tracebacks.
            `"state"`, Record tracebacks for currently allocated memory.
            `"alloc"`, additionally keep tracebacks for alloc calls.
            `"all"`, additionally keep tracebacks for free calls.
            Defaults to "all".
        stacks (Literal["python", "all"], optional):
            `"python"` and `"all"` both record Python frames (cudalite records no C++
            frames). Defaults to "all".
        max_entries (int, optional): Keep a maximum of `max_entries`
            alloc/free events in the recorded history recorded.
        clear_history (bool, optional): Clear history when enabling, defaults to False.
        skip_actions (list[str], optional): action types left out of the history.
    """
    if isinstance(enabled, bool):
        return _record_memory_history_legacy(enabled, *args, **kwargs)
    return _record_memory_history_impl(enabled, *args, **kwargs)


def _record_memory_history_impl(
    enabled="all",
    context="all",
    stacks: str = "all",
    max_entries: int = sys.maxsize,
    device=None,
    clear_history: bool = False,
    compile_context: bool = False,
    global_record_annotations: bool = False,
    skip_actions=None,
):
    global _skip_actions
    if enabled is not None and enabled not in ("state", "all"):
        raise RuntimeError("expected state to be 'state', 'all', or None")
    if context is not None and context not in ("state", "alloc", "all"):
        raise RuntimeError("expected context to be 'state', 'alloc', 'all', or None")
    if stacks not in ("python", "all"):
        raise RuntimeError("expected stacks to be 'python', or 'all'")
    skip = frozenset(skip_actions or ())
    unknown = sorted(skip - set(_TRACE_ACTIONS))
    if unknown:
        raise ValueError(
            f"unknown action {unknown[0]!r} in skip_actions; valid actions: "
            + ", ".join(_TRACE_ACTIONS)
        )
    _lazy_init()
    _skip_actions = skip
    _mem.record_memory_history(enabled, context, stacks, max_entries, clear_history)


def _snapshot(device=None, augment_with_fx_traces=False):
    """Save a snapshot of CUDA memory state at the time it was called.

    The state is a dictionary with torch's layout: ``segments`` (one per contiguous range
    of reserved memory, each with its ``blocks``), ``device_traces`` (the recorded history
    per device, when :func:`_record_memory_history` is on), ``allocator_settings`` and
    ``external_annotations``.
    """
    s = _mem.snapshot()
    if _skip_actions:
        s["device_traces"] = [
            [e for e in trace if e["action"] not in _skip_actions] for trace in s["device_traces"]
        ]
    return s


def _dump_snapshot(filename="dump_snapshot.pickle", augment_with_fx_traces=False):
    """Save a pickled version of the `cudalite.cuda.memory._snapshot()` dictionary to a file.

    This file can be opened by the interactive snapshot viewer at pytorch.org/memory_viz,
    by torch's ``python -m torch.cuda._memory_viz`` and by :func:`plot_timeline`. It is
    written with pickle protocol 4, the newest the viewer reads.
    """
    _write_snapshot(_snapshot(augment_with_fx_traces=augment_with_fx_traces), filename)


def _write_snapshot(snapshot, filename) -> None:
    import pickle

    with open(filename, "wb") as f:
        pickle.dump(snapshot, f, protocol=4)


def plot_timeline(path, snapshot=None, device=None, **kwargs) -> None:
    """Draw the active-memory timeline as a self-contained SVG file at ``path``.

    The picture is the 'Active Memory Timeline' of torch's viewer (allocations stacked over
    the recorded events), plus the reserved-bytes line, out-of-memory markers and the
    largest allocations alive at the peak, named by the first frame of user code that made
    them. It needs no script and no network. Record history first with
    :func:`_record_memory_history`.

    Args:
        path (str or os.PathLike): the SVG file to write.
        snapshot (dict, str or os.PathLike, optional): a snapshot dict, or the path of a
            pickle written by :func:`_dump_snapshot` (cudalite's or torch's). By default
            :func:`_snapshot` is taken now.
        device (int, optional): the device to draw; by default the only one with history.
        **kwargs: ``max_entries``, ``width``, ``height``, ``show_reserved``, ``top`` and
            ``title`` of :func:`cudalite.cuda._memory_viz.static_plot`.
    """
    import os

    from cudalite.cuda import _memory_viz

    if snapshot is None:
        snapshot = _snapshot()
    elif isinstance(snapshot, (str, bytes, os.PathLike)):
        snapshot = _memory_viz._read(os.fsdecode(snapshot))
    elif not isinstance(snapshot, dict):
        raise TypeError(
            "plot_timeline(): snapshot must be a snapshot dict, a file path or None, "
            f"not {type(snapshot).__name__}"
        )
    svg = _memory_viz.static_plot(snapshot, device=device, **kwargs)
    with open(path, "w", encoding="utf-8") as f:
        f.write(svg)


def _set_allocator_settings(env: str) -> None:
    """Change the caching allocator's settings at run time, with ``CUDALITE_ALLOC_CONF``'s
    syntax (for example ``"expandable_segments:False,max_split_size_mb:128"``). Keys not
    named keep their defaults. Raises ValueError on unknown keys and bad values."""
    _mem.set_allocator_settings(env)


def get_allocator_backend() -> str:
    r"""Return a string describing the active allocator backend: always ``native``."""
    return "native"


# `python -m cudalite.cuda.memory plot snapshot.pickle -o timeline.svg` runs this file while
# the package has already imported it as cudalite.cuda.memory; runpy warns about that unless
# the module has a __path__ (no submodules are found in it).
__path__: list = []

if __name__ == "__main__":
    from cudalite.cuda._memory_viz import main

    sys.exit(main(prog="python -m cudalite.cuda.memory"))
