"""CUDA graphs (``torch.cuda.graphs``): capture a stream's work once, replay it with one launch.

``CUDAGraph`` wraps the C++ graph (csrc/cuda/graphs.cpp); ``graph`` is the context manager
that captures into one; ``make_graphed_callables`` turns modules and functions into autograd
functions whose forward and backward replay graphs. docs/graphs.md has the rules: what may
be captured, how graphs own memory (private pools) and how random numbers advance.
"""

from __future__ import annotations

import gc

import cudalite
from cudalite import _C
from cudalite.cuda._lazy import _is_compiled

__all__ = [
    "is_current_stream_capturing",
    "graph_pool_handle",
    "CUDAGraph",
    "graph",
    "make_graphed_callables",
]

_COMPILED = _is_compiled()

# torch.compiler.config.force_cudagraph_gc: torch 2.11's graph() collects garbage before a
# capture only when asked (gc.collect() is slow, and captures often come in a row).
force_cudagraph_gc = False


def _dummy(name):
    raise RuntimeError(f"Tried to instantiate dummy base class {name}")


def is_current_stream_capturing() -> bool:
    r"""Return True if CUDA graph capture is underway on the current CUDA stream, False otherwise.

    If a CUDA context does not exist on the current device, returns False without initializing
    the context.
    """
    if not _COMPILED:
        _dummy("_cuda_isCurrentStreamCapturing")
    return _C._cuda._cuda_isCurrentStreamCapturing()


def graph_pool_handle():
    r"""Return an opaque token representing the id of a graph memory pool.

    Pass it as ``pool=`` to several captures to let their graphs share one memory pool.
    """
    if not _COMPILED:
        _dummy("_graph_pool_handle")
    return tuple(_C._cuda._graph_pool_handle())


_Base = _C._cuda._CUDAGraph


class CUDAGraph(_Base):
    r"""Wrapper around a CUDA graph.

    Arguments:
        keep_graph (bool, optional): If ``keep_graph=False``, the cudaGraphExec_t is
            instantiated at the end of ``capture_end`` and the underlying cudaGraph_t is
            destroyed. With ``keep_graph=True`` the cudaGraph_t stays (``raw_cuda_graph``,
            ``debug_dump``) and ``instantiate()``, or else the first ``replay()``,
            instantiates it.
    """

    def __init__(self, keep_graph: bool = False) -> None:
        if not _COMPILED:
            _dummy(type(self).__name__)
        super().__init__(keep_graph)

    def capture_begin(self, pool=None, capture_error_mode: str = "global") -> None:
        r"""Begin capturing CUDA work on the current stream.

        Typically you don't call ``capture_begin`` yourself: use :class:`graph` or
        :func:`make_graphed_callables`, which call it.

        Arguments:
            pool (optional): a token from :func:`graph_pool_handle` or another graph's
                :meth:`pool`, hinting this graph may share memory with that pool.
            capture_error_mode (str, optional): the cudaStreamCaptureMode of the capture:
                ``"global"``, ``"thread_local"`` or ``"relaxed"``. During capture some
                actions (synchronising, querying events) are unsafe: "global" makes them
                errors in every thread, "thread_local" only in this thread, "relaxed" never.
        """
        super().capture_begin(pool=pool, capture_error_mode=capture_error_mode)

    def capture_end(self) -> None:
        r"""End CUDA graph capture on the current stream. After ``capture_end``, ``replay``
        may be called on this instance."""
        super().capture_end()

    def instantiate(self) -> None:
        r"""Instantiate the CUDA graph: called by ``capture_end`` if ``keep_graph=False``, or
        by ``replay`` if ``keep_graph=True`` and ``instantiate`` was not called. Does not
        destroy the cudaGraph_t returned by ``raw_cuda_graph``."""
        super().instantiate()

    def replay(self) -> None:
        r"""Replay the CUDA work captured by this graph (on the current stream)."""
        super().replay()

    def reset(self) -> None:
        r"""Delete the graph currently held by this instance (and release its memory pool)."""
        super().reset()

    def pool(self):
        r"""Return an opaque token representing the id of this graph's memory pool. This id
        can optionally be passed to another graph's ``capture_begin``, which hints the other
        graph may share the same memory pool."""
        return tuple(super().pool())

    def enable_debug_mode(self) -> None:
        r"""Enable debugging mode for CUDAGraph.debug_dump (keeps the cudaGraph_t)."""
        return super().enable_debug_mode()

    def debug_dump(self, debug_path: str) -> None:
        r"""Dump the graph, in Graphviz dot format, to ``debug_path``. Needs the
        cudaGraph_t: ``keep_graph=True`` or ``enable_debug_mode()`` before the capture."""
        return super().debug_dump(debug_path)

    def raw_cuda_graph(self) -> int:
        r"""Returns the underlying cudaGraph_t. ``keep_graph`` must be True."""
        return super().raw_cuda_graph()

    def raw_cuda_graph_exec(self) -> int:
        r"""Returns the underlying cudaGraphExec_t (after ``instantiate``)."""
        return super().raw_cuda_graph_exec()


class graph:
    r"""Context-manager that captures CUDA work into a :class:`CUDAGraph` object for replay.

    Arguments:
        cuda_graph (CUDAGraph): Graph object used for capture.
        pool (optional): token from :func:`graph_pool_handle` or another graph's
            :meth:`CUDAGraph.pool`, hinting this graph's capture may share that memory pool.
        stream (Stream, optional): the stream to capture on; by default a side stream that
            ``graph`` creates once.
        capture_error_mode (str, optional): ``"global"`` (default), ``"thread_local"`` or
            ``"relaxed"``; see :meth:`CUDAGraph.capture_begin`.

    On entry it synchronizes the device and empties the caching allocator's cache, so that the
    capture finds as much memory as possible. If the block raises (an illegal call such as
    ``.item()`` during capture), the capture is abandoned, its memory pool released, and the
    exception propagates.
    """

    default_capture_stream = None

    def __init__(self, cuda_graph, pool=None, stream=None, capture_error_mode: str = "global"):
        if self.__class__.default_capture_stream is None:
            self.__class__.default_capture_stream = cudalite.cuda.Stream()
        self.pool = () if pool is None else (pool,)
        self.capture_stream = (
            stream if stream is not None else self.__class__.default_capture_stream
        )
        self.stream_ctx = cudalite.cuda.stream(self.capture_stream)
        self.cuda_graph = cuda_graph
        self.capture_error_mode = capture_error_mode

    def __enter__(self) -> None:
        cudalite.cuda.synchronize()
        if force_cudagraph_gc:
            gc.collect()
        cudalite.cuda.empty_cache()
        self.stream_ctx.__enter__()
        try:
            self.cuda_graph.capture_begin(*self.pool, capture_error_mode=self.capture_error_mode)
        except BaseException:
            self.stream_ctx.__exit__(None, None, None)
            raise

    def __exit__(self, exc_type, exc, tb) -> None:
        if exc_type is not None:
            # The capture is broken (CUDA invalidates it after an illegal call): end it, drop
            # what was captured and release the pool, and let the error through.
            self.cuda_graph._abort_capture()
            self.stream_ctx.__exit__(exc_type, exc, tb)
            return None
        try:
            self.cuda_graph.capture_end()
        finally:
            self.stream_ctx.__exit__(None, None, None)
        return None


def make_graphed_callables(
    callables, sample_args, num_warmup_iters=3, allow_unused_input=False, pool=None
):
    r"""Accept callables (functions or :class:`nn.Module`\ s) and return graphed versions.

    Each graphed callable's forward pass runs its source callable's forward CUDA work as a
    CUDA graph inside a single autograd node, whose backward replays a graph of the
    callable's backward work. Several callables (a tuple) share one memory pool and must be
    passed in the order they run.

    Arguments:
        callables: a module or function, or a tuple of them.
        sample_args: a tuple of tensors (one callable), or a tuple of such tuples.
        num_warmup_iters (int): warm-up iterations before capture. Default: ``3``.
        allow_unused_input (bool): if False, an input that the outputs don't depend on is an
            error. Default: False.
        pool (optional): a token from :func:`graph_pool_handle` or :meth:`CUDAGraph.pool`.

    Modules must have no hooks when passed, their buffers must not require grad, and
    ``sample_args`` must hold tensors only. The graphed callables take their arguments in
    the same order and format as ``sample_args``; double backward is not supported.
    """
    from cudalite.cuda import _graphed

    return _graphed.make_graphed_callables(
        callables, sample_args, num_warmup_iters, allow_unused_input, pool
    )
