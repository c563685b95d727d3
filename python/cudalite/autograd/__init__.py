"""Automatic differentiation: grad mode, the graph of ``grad_fn`` nodes and the backward pass.

When grad mode is on and an input requires grad, every differentiable op records a node
(named like torch's, e.g. ``AddmmBackward0``) on its output; ``backward()`` and
``autograd.grad()`` walk those nodes from the output back to the leaves. See
docs/autograd.md.
"""

from __future__ import annotations

import functools

from cudalite import _C, _arg_parser
from cudalite.autograd.engine import backward, grad
from cudalite.autograd.gradcheck import gradcheck, gradgradcheck
from cudalite.autograd.graph import Node
from cudalite.autograd.variable import Variable

__all__ = [
    "Variable",
    "Function",
    "backward",
    "grad",
    "no_grad",
    "enable_grad",
    "set_grad_enabled",
    "inference_mode",
    "is_grad_enabled",
    "gradcheck",
    "gradgradcheck",
    "Node",
]


def is_grad_enabled():
    """Whether operations record gradients in this thread."""
    return _C._is_grad_enabled()


class _GradMode:
    _args = ()

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
            with type(self)(*self._args):
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


class inference_mode(_GradMode):  # noqa: N801
    """Like ``no_grad`` (cudalite has no separate inference tensors); ``mode=False`` is a
    no-op, as in torch."""

    def __init__(self, mode=True):
        super().__init__(False if mode else is_grad_enabled())
        self._args = (mode,)

    def __enter__(self):
        from cudalite.autograd.graph import INFERENCE  # views made here say so in errors

        if self._args[0]:
            INFERENCE.depth += 1
        return super().__enter__()

    def __exit__(self, *exc):
        from cudalite.autograd.graph import INFERENCE

        if self._args[0]:
            INFERENCE.depth -= 1
        return super().__exit__(*exc)


class set_grad_enabled(_GradMode):  # noqa: N801
    """Sets gradient recording on or off (immediately, and as a context manager)."""

    def __init__(self, mode):
        if mode is not True and mode is not False:
            raise TypeError(
                "set_grad_enabled(): argument 'enabled' (position 1) must be bool, not "
                f"{_arg_parser.tp_name(mode)}"
            )
        super().__init__(bool(mode))
        self._args = (mode,)
        self._prev = is_grad_enabled()
        _C._set_grad_enabled(bool(mode))

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        _C._set_grad_enabled(self._prev)
        return False

    def __call__(self, fn):
        # as a decorator it must not leave the mode changed at definition time (torch)
        _C._set_grad_enabled(self._prev)
        return super().__call__(fn)


def __getattr__(name):
    # Function loads on first use: it is not needed to train.
    if name == "Function":
        from cudalite.autograd.function import Function

        return Function
    if name in ("function", "graph"):
        import importlib

        return importlib.import_module(f"cudalite.autograd.{name}")
    raise AttributeError(f"module 'cudalite.autograd' has no attribute '{name}'")
