from cudalite import _C  # noqa: F401
