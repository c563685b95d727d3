"""``Work``: the handle a collective returns with ``async_op=True``, and ``ReduceOp``."""

from __future__ import annotations

import enum
import os

__all__ = ["ReduceOp", "Work"]


class RedOpType(enum.Enum):
    SUM = 0
    AVG = 1
    PRODUCT = 2
    MIN = 3
    MAX = 4
    BAND = 5
    BOR = 6
    BXOR = 7
    PREMUL_SUM = 8
    UNUSED = 9

    def __int__(self):
        return self.value


class ReduceOp:
    """torch's ReduceOp: the members are RedOpType values (``ReduceOp.SUM`` prints as
    ``RedOpType.SUM``)."""

    RedOpType = RedOpType
    SUM = RedOpType.SUM
    AVG = RedOpType.AVG
    PRODUCT = RedOpType.PRODUCT
    MIN = RedOpType.MIN
    MAX = RedOpType.MAX
    BAND = RedOpType.BAND
    BOR = RedOpType.BOR
    BXOR = RedOpType.BXOR
    PREMUL_SUM = RedOpType.PREMUL_SUM

    def __init__(self, op=RedOpType.SUM):
        self.op = _as_op(op)

    def __eq__(self, other):
        return self.op == _as_op(other)

    def __hash__(self):
        return hash(self.op)

    def __repr__(self):
        return repr(self.op)


def _as_op(op) -> RedOpType:
    if isinstance(op, RedOpType):
        return op
    if isinstance(op, ReduceOp):
        return op.op
    if isinstance(op, int):
        return RedOpType(op)
    raise TypeError(f"op must be a ReduceOp, got {type(op).__name__}")


class Work:
    """A queued collective. ``wait()`` makes the current CUDA stream wait for it (the host
    does not wait, unless ``TORCH_NCCL_BLOCKING_WAIT=1``); on the CPU backend the work is
    already done when the call returns."""

    def __init__(self, event=None, device=None, tensors=(), error_source=None, result=None):
        self._event = event
        self._device = device
        self._tensors = tensors
        self._error_source = error_source  # the process group, for watchdog errors
        self._result = list(result) if result is not None else list(tensors)

    def _check(self):
        err = self._error_source._error if self._error_source is not None else None
        if err is not None:
            raise err

    def wait(self, timeout=None) -> bool:
        self._check()
        if self._event is not None:
            import cudalite.cuda

            self._event.wait(cudalite.cuda.current_stream(self._device))
            if os.environ.get("TORCH_NCCL_BLOCKING_WAIT") == "1":
                self._event.synchronize()
                self._check()
        return True

    def block_current_stream(self) -> None:
        self.wait()

    def synchronize(self) -> None:
        self.wait()

    def is_completed(self) -> bool:
        return self._event is None or self._event.query()

    def is_success(self) -> bool:
        return self.is_completed() and self.exception() is None

    def exception(self):
        return self._error_source._error if self._error_source is not None else None

    def result(self):
        return self._result

    def get_future(self):
        return _Future(self)


class _Future:
    """torch.futures.Future's subset for Work.get_future(): ``wait()`` waits for the work
    (on the current stream) and returns its tensors."""

    def __init__(self, work: Work):
        self._work = work

    def wait(self):
        self._work.wait()
        return self._work.result()

    def value(self):
        return self._work.result()

    def done(self) -> bool:
        return self._work.is_completed()

    def then(self, callback):
        fut = _Future(self._work)
        result = callback(self)
        fut.value = lambda: result  # type: ignore[method-assign]
        fut.wait = lambda: (self._work.wait(), result)[1]  # type: ignore[method-assign]
        return fut
