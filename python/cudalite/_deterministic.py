"""torch.use_deterministic_algorithms and its debug-mode spelling.

The setting is recorded and read back as torch does. cudalite's ops are deterministic except
``index_put_(..., accumulate=True)`` on CUDA (it adds with atomics); that op does not yet
consult the setting.
"""

__all__ = [
    "are_deterministic_algorithms_enabled",
    "get_deterministic_debug_mode",
    "is_deterministic_algorithms_warn_only_enabled",
    "set_deterministic_debug_mode",
    "use_deterministic_algorithms",
]

_mode = {"enabled": False, "warn_only": False}


def _check_bool(value, name, position):
    if type(value) is not bool:
        where = f" (position {position})" if position else ""
        raise TypeError(
            f"_set_deterministic_algorithms(): argument '{name}'{where} must be bool, not "
            f"{type(value).__name__}"
        )


def use_deterministic_algorithms(mode: bool, *, warn_only: bool = False) -> None:
    r"""Sets whether PyTorch operations must use "deterministic" algorithms.

    Args:
        mode (:class:`bool`): If True, makes potentially nondeterministic operations switch to
            a deterministic algorithm or throw a runtime error. If False, allows
            nondeterministic operations.

    Keyword args:
        warn_only (:class:`bool`, optional): If True, operations that do not have a
            deterministic implementation will throw a warning instead of an error.
            Default: ``False``
    """
    _check_bool(mode, "mode", 1)
    _check_bool(warn_only, "warn_only", 0)
    _mode["enabled"] = mode
    _mode["warn_only"] = warn_only


def are_deterministic_algorithms_enabled() -> bool:
    r"""Returns True if the global deterministic flag is turned on. Refer to
    :func:`cudalite.use_deterministic_algorithms` documentation for more details.
    """
    return _mode["enabled"]


def is_deterministic_algorithms_warn_only_enabled() -> bool:
    r"""Returns True if the global deterministic flag is set to warn only."""
    return _mode["warn_only"]


def set_deterministic_debug_mode(debug_mode) -> None:
    r"""Sets the debug mode for deterministic operations.

    Args:
        debug_mode(str or int): If "default" or 0, don't error or warn on nondeterministic
            operations. If "warn" or 1, warn on nondeterministic operations. If "error" or 2,
            error on nondeterministic operations.
    """
    if isinstance(debug_mode, str):
        names = {"default": 0, "warn": 1, "error": 2}
        if debug_mode not in names:
            raise RuntimeError(
                "invalid value of debug_mode, expected one of `default`, `warn`, `error`, "
                f"but got {debug_mode}"
            )
        debug_mode = names[debug_mode]
    elif not isinstance(debug_mode, int):
        raise TypeError(f"debug_mode must be str or int, but got {type(debug_mode)}")
    if debug_mode not in (0, 1, 2):
        raise RuntimeError(
            f"invalid value of debug_mode, expected 0, 1, or 2, but got {debug_mode}"
        )
    _mode["enabled"] = debug_mode != 0
    _mode["warn_only"] = debug_mode == 1


def get_deterministic_debug_mode() -> int:
    r"""Returns the current value of the debug mode for deterministic operations. Refer to
    :func:`cudalite.set_deterministic_debug_mode` documentation for more details.
    """
    if not _mode["enabled"]:
        return 0
    return 1 if _mode["warn_only"] else 2
