r"""NVIDIA Tools Extension (NVTX) annotations for profilers, as ``torch.cuda.nvtx``.

Ranges and marks show up on the timeline of Nsight Systems (``nsys profile python ...``).
Without a profiler attached the calls do nothing (``range_push``/``range_pop`` then return
a negative depth) and they never initialise CUDA. A CPU-only build raises torch's
"NVTX functions not installed" error.

    with cudalite.cuda.nvtx.range("forward {}", step):
        y = model(x)
"""

from contextlib import contextmanager

from cudalite import _C

__all__ = ["range_push", "range_pop", "range_start", "range_end", "mark", "range"]


def range_push(msg):
    """Pushes a range onto the calling thread's stack of nested ranges; returns the
    zero-based depth of the range started.

    Args:
        msg (str): ASCII message to associate with the range
    """
    return _C._cuda._nvtx_range_push(msg)


def range_pop():
    """Pops the innermost range of the calling thread; returns the zero-based depth of the
    range ended."""
    return _C._cuda._nvtx_range_pop()


def range_start(msg) -> int:
    """Starts a range that may end on another thread; returns its handle for
    :func:`range_end`.

    Args:
        msg (str): ASCII message to associate with the range.
    """
    return _C._cuda._nvtx_range_start(msg)


def range_end(range_id) -> None:
    """Ends the range that :func:`range_start` returned ``range_id`` for.

    Args:
        range_id (int): the handle of the range.
    """
    _C._cuda._nvtx_range_end(range_id)


def mark(msg):
    """Marks an instantaneous event.

    Args:
        msg (str): ASCII message to associate with the event.
    """
    return _C._cuda._nvtx_mark(msg)


@contextmanager
def range(msg, *args, **kwargs):
    """Context manager / decorator that pushes a range when its scope starts and pops it when
    the scope ends; extra arguments go to ``msg.format()``.

    Args:
        msg (str): message to associate with the range
    """
    range_push(msg.format(*args, **kwargs))
    try:
        yield
    finally:
        range_pop()
