"""Starting and stopping the CUDA profiler's collection, as ``torch.cuda.profiler``.

With ``nsys profile --capture-range=cudaProfilerApi python script.py`` Nsight Systems
records only what runs between :func:`start` and :func:`stop` (or inside :func:`profile`).
"""

import contextlib

from cudalite.cuda._runtime import check_error, cudart

__all__ = ["start", "stop", "profile"]


def start():
    """Starts the profiler's data collection (``cudaProfilerStart``).

    Raises CudaError when the profiler can't be started."""
    check_error(cudart().cudaProfilerStart())


def stop():
    """Stops the profiler's data collection (``cudaProfilerStop``).

    Raises CudaError when the profiler can't be stopped."""
    check_error(cudart().cudaProfilerStop())


@contextlib.contextmanager
def profile():
    """Collects profiling data for the scope of the ``with`` block."""
    try:
        start()
        yield
    finally:
        stop()
