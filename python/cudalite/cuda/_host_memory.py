"""Pinned (page-locked) host memory: statistics and cache control of the caching pinned
allocator that ``Tensor.pin_memory()``, ``pin_memory=True`` and the DataLoader use.

The statistics have torch's keys and meanings (``torch.cuda.host_memory_stats``); blocks
are sized without torch's power-of-two rounding (see ``docs/pinned_memory.md``).
"""

import collections

from cudalite import _C
from cudalite.cuda._lazy import is_initialized


def _flatten_stats(nested):
    """torch's flat statistics: dotted keys ("a.b.c") of a nested dict, sorted."""
    result = []

    def add(prefix, obj):
        if isinstance(obj, dict):
            for k, v in obj.items():
                add(f"{prefix}.{k}" if prefix else k, v)
        else:
            result.append((prefix, obj))

    add("", nested)
    result.sort()
    return collections.OrderedDict(result)


def host_memory_stats() -> dict:
    r"""Return a dictionary of pinned (host) allocator statistics.

    Core statistics (host pinned allocator):

    - ``"allocations.{current,peak,allocated,freed}"``: pinned blocks owned by the
      allocator (active + cached). Grows when a new block is created via CUDA and shrinks
      when cached blocks are returned.
    - ``"allocated_bytes.{current,peak,allocated,freed}"``: bytes of pinned blocks owned
      by the allocator (active + cached), using the block size requested from CUDA.
    - ``"active_requests.{current,peak,allocated,freed}"``: blocks currently checked out to
      callers (increments on handout, decrements when the block becomes reusable after
      stream deps finish).
    - ``"active_bytes.{current,peak,allocated,freed}"``: bytes corresponding to active
      blocks.

    Event/timing counters:

    - ``"num_host_alloc"`` / ``"num_host_free"``: blocks created to grow the pool / cached
      blocks returned to CUDA.
    - ``"host_alloc_time.{total,max,min,count,avg}"``: time in CUDA alloc calls when
      growing the pool (microseconds).
    - ``"host_free_time.{total,max,min,count,avg}"``: time in CUDA free calls when cached
      blocks are returned (microseconds).

    Block sizes are the request rounded up by less than 1/8 (not to a power of two).
    """
    return _flatten_stats(host_memory_stats_as_nested_dict())


def host_memory_stats_as_nested_dict() -> dict:
    r"""Return the result of :func:`host_memory_stats` as a nested dictionary."""
    if not is_initialized():
        return {}
    return _C._cuda._host_memory_stats()


def reset_accumulated_host_memory_stats() -> None:
    r"""Reset the "accumulated" (historical) stats tracked by the host memory allocator.

    Accumulated stats correspond to the ``"allocated"`` and ``"freed"`` keys in each
    individual stat dict, and the counts and totals of the timings.
    """
    return _C._cuda._host_reset_accumulated_stats()


def reset_peak_host_memory_stats() -> None:
    r"""Reset the "peak" stats tracked by the host memory allocator."""
    return _C._cuda._host_reset_peak_stats()


def host_empty_cache() -> None:
    r"""Release all unoccupied cached pinned memory (and idle copy staging buffers).

    Blocks still used by tensors, or by copies that have not finished, stay allocated.
    torch has this only as the private ``torch._C._host_emptyCache()``.
    """
    if is_initialized():
        _C._cuda._host_empty_cache()


__all__ = [
    "host_empty_cache",
    "host_memory_stats",
    "host_memory_stats_as_nested_dict",
    "reset_accumulated_host_memory_stats",
    "reset_peak_host_memory_stats",
]
