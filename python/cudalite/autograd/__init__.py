"""Autograd entry points. Grad mode switches live here; the graph recorder arrives with the
autograd issue, and until then tensors record ``requires_grad`` only."""

from __future__ import annotations

import functools

from cudalite import _C

__all__ = ["Variable", "no_grad", "enable_grad", "set_grad_enabled", "is_grad_enabled"]


def is_grad_enabled():
    """Whether operations record gradients in this thread."""
    return _C._is_grad_enabled()


class _GradMode:
    def __init__(self, mode):
        self._mode = mode

    def __enter__(self):
        self._prev = is_grad_enabled()
        _C._set_grad_enabled(self._mode)
        return self

    def __exit__(self, *exc):
        _C._set_grad_enabled(self._prev)
        return False

    def __call__(self, fn):
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with (
                self.__class__()
                if type(self) is not set_grad_enabled
                else set_grad_enabled(self._mode)
            ):
                return fn(*args, **kwargs)

        return wrapper


class no_grad(_GradMode):  # noqa: N801 - torch's name
    """Context manager and decorator that disables gradient recording."""

    def __init__(self):
        super().__init__(False)


class enable_grad(_GradMode):  # noqa: N801
    """Context manager and decorator that enables gradient recording."""

    def __init__(self):
        super().__init__(True)


class set_grad_enabled(_GradMode):  # noqa: N801
    """Sets gradient recording on or off (immediately, and as a context manager)."""

    def __init__(self, mode):
        super().__init__(bool(mode))
        self._prev = is_grad_enabled()
        _C._set_grad_enabled(bool(mode))

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        _C._set_grad_enabled(self._prev)
        return False


def Variable(data, requires_grad=False, volatile=False):  # noqa: N802 - torch's name
    """The legacy wrapper: since torch 0.4 it returns the tensor itself."""
    if requires_grad:
        data.requires_grad_(True)
    return data
