r"""CUDA streams and events (torch.cuda.streams), and the current-stream functions.

A stream is a queue of GPU work on one device. Each thread has a current stream per
device, the legacy default stream until something else is selected; every op and copy on a
device is queued on the current stream of that device. Work on different streams may run
in any order unless it is ordered explicitly with :meth:`Stream.wait_stream`,
:meth:`Stream.wait_event` / :meth:`Event.wait`, or a synchronize. See ``docs/streams.md``.
"""

from cudalite import _C
from cudalite.cuda import _lazy
from cudalite.cuda._device import _get_device_index, device
from cudalite.cuda._lazy import _is_compiled, _lazy_init

_COMPILED = _is_compiled()

_StreamBase = _C._cuda._CudaStreamBase
_EventBase = _C._cuda._CudaEventBase


def _init_for_stream():
    """``_lazy_init()``; where CUDA is unusable, the runtime's error for the current device.

    torch makes streams without lazy initialisation, so with a driver but no visible GPU its
    ``Stream()`` raises ``AcceleratorError`` ("CUDA error: no CUDA-capable device is
    detected"), not lazy initialisation's ``RuntimeError``.
    """
    try:
        _lazy_init()
        return
    except RuntimeError as e:
        failed = e
    _C._cuda._check_current_device()  # outside the handler: raised without a chained context
    raise failed


class Stream(_StreamBase):
    r"""Wrapper around a CUDA stream.

    A CUDA stream is a linear sequence of execution that belongs to a specific device,
    independent from other streams. It supports with statement as a context manager to
    ensure the operators within the with block are running on the corresponding stream.
    Streams come from a pool (32 per device and priority, created on first use), as
    torch's do: creating CUDA streams is slow.

    Args:
        device(cudalite.device or int, optional): a device on which to allocate the stream.
            If :attr:`device` is ``None`` (default) or a negative integer, this will use the
            current device.
        priority(int, optional): priority of the stream, which can be positive, 0, or
            negative. A lower number indicates a higher priority. By default, the priority
            is set to 0. If the value falls outside of the allowed priority range, it will
            automatically be mapped to the nearest valid priority (lowest for large positive
            numbers or highest for large negative numbers).
    """

    def __init__(self, device=None, priority=0, **kwargs):
        if device is None and not kwargs and _lazy._initialized:
            # The call made in loops: straight to the pool (Note [Stream construction]).
            _StreamBase.__init__(self, priority)
            return
        if not _COMPILED:
            raise RuntimeError("cudalite.cuda.Stream requires CUDA support")
        if "stream_id" in kwargs and "device_index" in kwargs:
            super().__init__(priority=priority, **kwargs)
            return
        if not _lazy._initialized:
            _init_for_stream()
        if device is None or (isinstance(device, int) and device < 0):
            super().__init__(priority, **kwargs)
        else:
            with _device_ctx(device):
                super().__init__(priority, **kwargs)

    def wait_event(self, event):
        r"""Make all future work submitted to the stream wait for an event.

        Args:
            event (Event): an event to wait for.

        .. note:: This is a wrapper around ``cudaStreamWaitEvent()``. This function
           returns without waiting for :attr:`event`: only future operations are affected.
        """
        event.wait(self)

    def wait_stream(self, stream):
        r"""Synchronize with another stream.

        All future work submitted to this stream will wait until all kernels submitted to
        a given stream at the time of call complete.

        Args:
            stream (Stream): a stream to synchronize.

        .. note:: This function returns without waiting for currently enqueued kernels in
           :attr:`stream`: only future operations are affected.
        """
        self.wait_event(stream.record_event())

    def record_event(self, event=None):
        r"""Record an event.

        Args:
            event (Event, optional): event to record. If not given, a new one will be
                allocated.

        Returns:
            Recorded event.
        """
        if event is None:
            event = Event()
        event.record(self)
        return event

    def query(self) -> bool:
        r"""Check if all the work submitted has been completed.

        Returns:
            A boolean indicating if all kernels in this stream are completed.
        """
        return super().query()

    def synchronize(self) -> None:
        r"""Wait for all the kernels in this stream to complete.

        .. note:: This is a wrapper around ``cudaStreamSynchronize()``; it releases the GIL
           while it waits.
        """
        super().synchronize()

    @property
    def native_handle(self):
        return self.cuda_stream

    @property
    def _as_parameter_(self):
        import ctypes

        return ctypes.c_void_p(self.cuda_stream)

    def __enter__(self):
        # Like torch.Stream: the stream (and its device) is current inside the block.
        prev = (_C._cuda.current_device(), current_stream(self.device_index))
        self.__dict__.setdefault("_ctx", []).append(prev)
        set_stream(self)
        return self

    def __exit__(self, exc_type, exc, tb):
        prev_device, prev_stream = self._ctx.pop()
        set_stream(prev_stream)
        _C._cuda.set_device(prev_device)
        return False

    def __eq__(self, o) -> bool:
        if isinstance(o, Stream):
            return super().__eq__(o)
        return False

    def __hash__(self):
        return hash((self.cuda_stream, self.device))

    def __repr__(self):
        return f"<cudalite.cuda.Stream device={self.device} cuda_stream={self.cuda_stream:#x}>"

    def __cuda_stream__(self):
        """The CUDA Stream Protocol: ``(version, address of the cudaStream_t)``."""
        return (0, self.cuda_stream)


class ExternalStream(Stream):
    r"""Wrapper around an externally allocated CUDA stream.

    This class is used to wrap streams allocated in other libraries in order to facilitate
    data exchange and multi-library interactions.

    .. note:: This class doesn't manage the stream life-cycle, it is the user
       responsibility to keep the referenced stream alive while this class is being used.

    Args:
        stream_ptr(int): Integer representation of the `cudaStream_t` value allocated
            externally.
        device(cudalite.device or int, optional): the device where the stream was
            originally allocated. If device is specified incorrectly, subsequent launches
            using this stream may fail.
    """

    def __init__(self, stream_ptr, device=None, **kwargs):
        if not _COMPILED:
            raise RuntimeError("cudalite.cuda.Stream requires CUDA support")
        _init_for_stream()
        with _device_ctx(device):
            _StreamBase.__init__(self, stream_ptr=stream_ptr, **kwargs)


class Event(_EventBase):
    r"""Wrapper around a CUDA event.

    CUDA events are synchronization markers that can be used to monitor the device's
    progress, to accurately measure timing, and to synchronize CUDA streams.

    The underlying CUDA events are lazily initialized when the event is first recorded or
    exported to another process. After creation, only streams on the same device may
    record the event. However, streams on any device can wait on the event.

    Args:
        enable_timing (bool, optional): indicates if the event should measure time
            (default: ``False``)
        blocking (bool, optional): if ``True``, :meth:`wait` will be blocking (default:
            ``False``)
        interprocess (bool): if ``True``, the event can be shared between processes
            (default: ``False``)
        external (bool, optional): only meaningful under CUDA graph capture, which
            cudalite does not do (default: ``False``)
    """

    def __init__(self, enable_timing=False, blocking=False, interprocess=False, external=False):
        if not _COMPILED:
            raise RuntimeError("Tried to instantiate dummy base class Event")
        super().__init__(enable_timing, blocking, interprocess, external)

    @classmethod
    def from_ipc_handle(cls, device, handle):
        r"""Reconstruct an event from an IPC handle on the given device."""
        if isinstance(device, str):
            device = _C.device(device)
        if isinstance(device, _C.device) and device.type != "cuda":
            raise RuntimeError(
                f"Event can only be created on CUDA devices, but got device type {device.type}"
            )
        _lazy_init()
        obj = cls.__new__(cls)
        _EventBase.__init__(
            obj, _ipc_device=_get_device_index(device, optional=True), _ipc_handle=handle
        )
        return obj

    def record(self, stream=None):
        r"""Record the event in a given stream.

        Uses ``cudalite.cuda.current_stream()`` if no stream is specified. The stream's
        device must match the event's device.
        """
        if stream is None:
            if not _lazy._initialized:
                _lazy_init()
            super().record()  # the current stream, without making a Stream object
        else:
            super().record(stream)

    def wait(self, stream=None) -> None:
        r"""Make all future work submitted to the given stream wait for this event.

        Use ``cudalite.cuda.current_stream()`` if no stream is specified.

        .. note:: This is a wrapper around ``cudaStreamWaitEvent()``.
        """
        if stream is None:
            if not _lazy._initialized:
                _lazy_init()
            super().wait()
        else:
            super().wait(stream)

    def query(self):
        r"""Check if all work currently captured by event has completed.

        Returns:
            A boolean indicating if all work currently captured by event has completed.
        """
        return super().query()

    def elapsed_time(self, end_event):
        r"""Return the time elapsed.

        Time reported in milliseconds after the event was recorded and before the end_event
        was recorded.
        """
        if not isinstance(end_event, Event):  # torch's check and error type
            raise RuntimeError("expected other to be a cudalite.cuda.Event object")
        return super().elapsed_time(end_event)

    def synchronize(self) -> None:
        r"""Wait for the event to complete.

        Waits until the completion of all work currently captured in this event. This
        prevents the CPU thread from proceeding until the event completes (the GIL is
        released meanwhile).

        .. note:: This is a wrapper around ``cudaEventSynchronize()``.
        """
        super().synchronize()

    def ipc_handle(self):
        r"""Return an IPC handle of this event.

        If not recorded yet, the event will use the current device.
        """
        _lazy_init()
        return super().ipc_handle()

    @property
    def _as_parameter_(self):
        import ctypes

        return ctypes.c_void_p(self.cuda_event)

    def __repr__(self) -> str:
        if self.cuda_event:
            return f"<cudalite.cuda.Event {self.cuda_event:#x}>"
        return "<cudalite.cuda.Event uninitialized>"


def _device_ctx(dev):
    return device(dev)


_new_base = _StreamBase.__new__
_init_base = _StreamBase.__init__


def _stream_from_tuple(data):
    # Stream(stream_id=..., device_index=..., device_type=...) without the keyword matching
    # (microseconds in pybind11): current_stream() is called in loops.
    s = _new_base(Stream)
    _init_base(s, data[0], data[1])
    return s


def current_stream(device=None) -> Stream:
    r"""Return the currently selected :class:`Stream` for a given device.

    Args:
        device (cudalite.device or int, optional): selected device. Returns the currently
            selected :class:`Stream` for the current device, given by
            :func:`~cudalite.cuda.current_device`, if :attr:`device` is ``None`` (default).
    """
    if not _lazy._initialized:
        _lazy_init()
    idx = -1 if device is None else _get_device_index(device, optional=True)
    return _stream_from_tuple(_C._cuda._current_stream(idx))


def default_stream(device=None) -> Stream:
    r"""Return the default :class:`Stream` for a given device.

    Args:
        device (cudalite.device or int, optional): selected device. Returns the default
            :class:`Stream` for the current device, given by
            :func:`~cudalite.cuda.current_device`, if :attr:`device` is ``None`` (default).
    """
    if not _lazy._initialized:
        _lazy_init()
    idx = -1 if device is None else _get_device_index(device, optional=True)
    return _stream_from_tuple(_C._cuda._default_stream(idx))


def get_stream_from_external(data_ptr, device=None) -> Stream:
    r"""Return a :class:`Stream` from an externally allocated CUDA stream.

    .. note:: This function doesn't manage the stream life-cycle, it is the user
       responsibility to keep the referenced stream alive while this returned stream is
       being used.
    """
    _lazy_init()
    return _stream_from_tuple(
        _C._cuda._stream_from_external(data_ptr, _get_device_index(device, optional=True))
    )


def set_stream(stream):
    r"""Set the current stream. This is a wrapper API to set the stream.

    Usage of this function is discouraged in favor of the ``stream`` context manager. As
    in torch, the stream's device also becomes the current device.

    Args:
        stream (Stream): selected stream. This function is a no-op if this argument is
            ``None``.
    """
    if stream is None:
        return
    _C._cuda._set_stream(
        stream_id=stream.stream_id,
        device_index=stream.device_index,
        device_type=stream.device_type,
    )


class StreamContext:
    r"""Context-manager that selects a given stream.

    All CUDA kernels queued within its context will be enqueued on a selected stream.

    Args:
        Stream (Stream): selected stream. This manager is a no-op if it's ``None``.
    .. note:: Streams are per-device.
    """

    __module__ = "cudalite.cuda"  # printed as <cudalite.cuda.StreamContext object at 0x...>

    def __init__(self, stream):
        self.stream = stream
        self.idx = _get_device_index(None, True)
        self.src_prev_stream = None
        self.dst_prev_stream = None

    def __enter__(self):
        cur_stream = self.stream
        # Nothing to do for None, or where CUDA isn't available.
        if cur_stream is None or self.idx == -1:
            return
        self.src_prev_stream = current_stream(None)
        # A stream on another device: remember that device's current stream too, and (as
        # set_stream does) make the stream's device current inside the block.
        if self.src_prev_stream.device != cur_stream.device:
            with device(cur_stream.device):
                self.dst_prev_stream = current_stream(cur_stream.device)
        set_stream(cur_stream)

    def __exit__(self, type, value, traceback):
        cur_stream = self.stream
        if cur_stream is None or self.idx == -1:
            return
        # Restore the stream on the destination device, then the original stream (which
        # makes the original device current again).
        if self.src_prev_stream.device != cur_stream.device:
            set_stream(self.dst_prev_stream)
        set_stream(self.src_prev_stream)


def stream(stream) -> StreamContext:
    r"""Wrap around the Context-manager StreamContext that selects a given stream.

    Arguments:
        stream (Stream): selected stream. This manager is a no-op if it's ``None``.
    """
    return StreamContext(stream)


__all__ = [
    "Event",
    "ExternalStream",
    "Stream",
    "StreamContext",
    "current_stream",
    "default_stream",
    "get_stream_from_external",
    "set_stream",
    "stream",
]
