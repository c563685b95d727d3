"""cudalite.backends.mps: Apple's Metal backend (torch.backends.mps), which cudalite never has.

Device-agnostic code asks ``is_available()`` before choosing ``"mps"``; here the answer is
always ``False``, so such code falls through to the CPU.
"""

__all__ = ["is_available", "is_built", "is_macos13_or_newer", "is_macos_or_newer"]


def is_built() -> bool:
    r"""Return whether cudalite is built with MPS support (never).

    Note that this doesn't necessarily mean MPS is available; just that if this cudalite
    binary were run a machine with working MPS drivers and devices, we would be able to use
    it.
    """
    return False


def is_available() -> bool:
    r"""Return a bool indicating if MPS is currently available (never)."""
    return False


def is_macos_or_newer(major: int, minor: int) -> bool:
    r"""Return a bool indicating whether MPS is running on given MacOS or newer (never)."""
    return False


def is_macos13_or_newer(minor: int = 0) -> bool:
    r"""Return a bool indicating whether MPS is running on MacOS 13 or newer (never)."""
    return False
