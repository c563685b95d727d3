"""The CUDA runtime calls that torch.cuda exposes as Python: ``cudart()``, ``check_error``,
``CudaError`` and ``_sleep``."""

from cudalite import _C
from cudalite.cuda._lazy import _lazy_init

_enum = []


def _cuda_error():
    """``cudaError``, the runtime's status codes as an IntEnum (only success is named, as in
    torch's ``_cudart``); made on first use, so ``enum`` stays out of ``import cudalite``."""
    if not _enum:
        import enum

        class cudaError(enum.IntEnum):  # noqa: N801  (torch's name)
            success = 0

        _enum.append(cudaError)
    return _enum[0]


def __getattr__(name):
    if name == "cudaError":
        return _cuda_error()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


class _CudaRuntime:
    """What ``cudart()`` returns: the runtime functions torch's ``_cudart`` module offers for
    profiling. Each returns the runtime's status code, for :func:`check_error`."""

    @property
    def cudaError(self):  # noqa: N802
        return _cuda_error()

    @staticmethod
    def cudaProfilerStart():  # noqa: N802
        return _C._cuda._profiler_start()

    @staticmethod
    def cudaProfilerStop():  # noqa: N802
        return _C._cuda._profiler_stop()

    @staticmethod
    def cudaGetErrorString(code):  # noqa: N802
        return _C._cuda._error_string(int(code))


_cudart = _CudaRuntime()


class CudaError(RuntimeError):
    """A CUDA runtime status other than success: "<the runtime's text> (<code>)"."""

    def __init__(self, code: int) -> None:
        msg = _cudart.cudaGetErrorString(code)
        super().__init__(f"{msg} ({code})")


def check_error(res: int) -> None:
    """Raises :class:`CudaError` unless ``res`` is the runtime's success code."""
    if res != 0:  # cudaError.success
        raise CudaError(res)


def cudart():
    """The CUDA runtime API object (``cudaProfilerStart``, ``cudaProfilerStop``,
    ``cudaGetErrorString``); initialises CUDA, as torch's does."""
    _lazy_init()
    return _cudart


def _sleep(cycles):
    """Queues a kernel on the current stream that spins for ``cycles`` GPU clock cycles
    (for tests and demonstrations of streams and events)."""
    _C._cuda._sleep(cycles)
