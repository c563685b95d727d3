"""cudalite.use_deterministic_algorithms and the deterministic debug mode."""

from __future__ import annotations

import re

import pytest

import cudalite


@pytest.fixture(autouse=True)
def restore_mode():
    yield
    cudalite.use_deterministic_algorithms(False)


def test_default_off():
    assert cudalite.are_deterministic_algorithms_enabled() is False
    assert cudalite.is_deterministic_algorithms_warn_only_enabled() is False
    assert cudalite.get_deterministic_debug_mode() == 0


def test_use_and_read_back():
    cudalite.use_deterministic_algorithms(True)
    assert cudalite.are_deterministic_algorithms_enabled() is True
    assert cudalite.is_deterministic_algorithms_warn_only_enabled() is False
    assert cudalite.get_deterministic_debug_mode() == 2
    cudalite.use_deterministic_algorithms(True, warn_only=True)
    assert cudalite.is_deterministic_algorithms_warn_only_enabled() is True
    assert cudalite.get_deterministic_debug_mode() == 1
    # torch keeps warn_only when the mode is off, and reports debug mode 0.
    cudalite.use_deterministic_algorithms(False, warn_only=True)
    assert cudalite.are_deterministic_algorithms_enabled() is False
    assert cudalite.is_deterministic_algorithms_warn_only_enabled() is True
    assert cudalite.get_deterministic_debug_mode() == 0


@pytest.mark.parametrize(
    "mode, enabled, warn_only",
    [
        ("default", False, False),
        ("warn", True, True),
        ("error", True, False),
        (0, False, False),
        (1, True, True),
        (2, True, False),
        (True, True, True),
    ],
)
def test_debug_mode(mode, enabled, warn_only):
    cudalite.set_deterministic_debug_mode(mode)
    assert cudalite.are_deterministic_algorithms_enabled() is enabled
    assert cudalite.is_deterministic_algorithms_warn_only_enabled() is warn_only
    names = {"default": 0, "warn": 1, "error": 2}
    assert cudalite.get_deterministic_debug_mode() == (names[mode] if mode in names else int(mode))


@pytest.mark.parametrize("bad", [1, "x", None])
def test_mode_must_be_bool(bad):
    msg = (
        "_set_deterministic_algorithms(): argument 'mode' (position 1) must be bool, not "
        f"{type(bad).__name__}"
    )
    with pytest.raises(TypeError, match=f"^{re.escape(msg)}$"):
        cudalite.use_deterministic_algorithms(bad)
    assert cudalite.are_deterministic_algorithms_enabled() is False


def test_warn_only_must_be_bool():
    msg = "_set_deterministic_algorithms(): argument 'warn_only' must be bool, not int"
    with pytest.raises(TypeError, match=f"^{re.escape(msg)}$"):
        cudalite.use_deterministic_algorithms(True, warn_only=1)
    assert cudalite.are_deterministic_algorithms_enabled() is False


def test_mode_is_required():
    with pytest.raises(TypeError, match="missing 1 required positional argument: 'mode'"):
        cudalite.use_deterministic_algorithms()


@pytest.mark.parametrize(
    "bad, exc, msg",
    [
        (
            "x",
            RuntimeError,
            "invalid value of debug_mode, expected one of `default`, `warn`, `error`, but got x",
        ),
        (3, RuntimeError, "invalid value of debug_mode, expected 0, 1, or 2, but got 3"),
        (1.0, TypeError, "debug_mode must be str or int, but got <class 'float'>"),
    ],
)
def test_bad_debug_mode(bad, exc, msg):
    with pytest.raises(exc, match=f"^{re.escape(msg)}$"):
        cudalite.set_deterministic_debug_mode(bad)
