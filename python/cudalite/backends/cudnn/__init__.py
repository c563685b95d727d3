"""cudalite.backends.cudnn: the cuDNN switches (torch.backends.cudnn).

cudalite has no convolutions yet and so does not link cuDNN: :func:`is_available` is
``False`` and :func:`version` is ``None``. The flags are stored and read back with torch's
checks, so code that sets ``cudalite.backends.cudnn.benchmark = True`` runs unchanged; they
will reach cuDNN once convolutions exist.
"""

import sys
import types
from contextlib import contextmanager

__all__ = ["flags", "is_acceptable", "is_available", "set_flags", "version"]

# enabled, benchmark, deterministic, allow_tf32: torch's defaults.
_flags = {"enabled": True, "benchmark": False, "deterministic": False, "allow_tf32": True}
# The name torch's setter gives in its type error.
_setter_names = {
    "enabled": "set_enabled_cudnn",
    "benchmark": "set_benchmark_cudnn",
    "deterministic": "set_deterministic_cudnn",
    "allow_tf32": "set_allow_tf32_cublas",
}


def _set(name, value):
    if not isinstance(value, bool):
        raise RuntimeError(f"{_setter_names[name]} expects a bool, but got {type(value).__name__}")
    _flags[name] = value


def is_available() -> bool:
    r"""Return a bool indicating if CUDNN is currently available (cudalite does not link it)."""
    return False


def version():
    r"""Return the version of cuDNN (``None``: cudalite does not link it)."""
    return None


def is_acceptable(tensor) -> bool:
    r"""Whether cuDNN would run an op on ``tensor`` (never: cudalite does not link it)."""
    return False


def set_flags(
    _enabled=None, _benchmark=None, _benchmark_limit=None, _deterministic=None, _allow_tf32=None
):
    r"""Set the flags given (those not ``None``) and return the previous ones, in this
    function's argument order."""
    orig = (
        _flags["enabled"],
        _flags["benchmark"],
        None,
        _flags["deterministic"],
        _flags["allow_tf32"],
    )
    for name, value in (
        ("enabled", _enabled),
        ("benchmark", _benchmark),
        ("deterministic", _deterministic),
        ("allow_tf32", _allow_tf32),
    ):
        if value is not None:
            _set(name, value)
    return orig


@contextmanager
def flags(enabled=False, benchmark=False, benchmark_limit=10, deterministic=False, allow_tf32=True):
    r"""Context manager that sets the cuDNN flags and restores them on exit."""
    orig = set_flags(enabled, benchmark, benchmark_limit, deterministic, allow_tf32)
    try:
        yield
    finally:
        set_flags(*orig)


def _prop(name):
    return property(lambda self: _flags[name], lambda self, value: _set(name, value))


class _CudnnModule(types.ModuleType):
    """The module's class: its flags are properties, checked when set (as torch's are)."""

    enabled = _prop("enabled")
    benchmark = _prop("benchmark")
    deterministic = _prop("deterministic")
    allow_tf32 = _prop("allow_tf32")


sys.modules[__name__].__class__ = _CudnnModule

# For type checkers: the properties above, seen as module attributes.
enabled: bool
benchmark: bool
deterministic: bool
allow_tf32: bool
#: cuDNN's benchmark search limit; torch leaves it ``None`` where cuDNN is unavailable.
benchmark_limit: int | None = None
