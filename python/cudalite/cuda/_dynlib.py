"""Where the optional NVIDIA libraries that the core opens with dlopen (cuBLAS, cuDNN, NCCL;
``csrc/cuda/dynlib.h``) are looked for besides the loader's own search path: pip's
``nvidia-*`` wheels put them in ``site-packages/nvidia/<name>/lib``, next to the Python
packages, and an environment variable (``CUDALITE_NCCL_PATH``) may name the library or its
folder. Found without importing anything."""

from __future__ import annotations

import os
import sys


def wheel_dirs(*subdirs: str) -> list[str]:
    """The folders ``<entry>/<subdir>`` that exist, for each entry of ``sys.path`` in turn
    (the current directory for an empty one) and each of ``subdirs`` (``"nvidia/cudnn/lib"``)."""
    dirs = []
    for base in sys.path:
        for sub in subdirs:
            d = os.path.join(base or ".", sub)
            if os.path.isdir(d) and d not in dirs:
                dirs.append(d)
    return dirs


def wheel_files(name: str, *subdirs: str) -> list[str]:
    """The files ``name`` in the folders of ``wheel_dirs(*subdirs)``."""
    return [p for p in (os.path.join(d, name) for d in wheel_dirs(*subdirs)) if os.path.isfile(p)]


def env_library(var: str, name: str) -> str | None:
    """The library named by environment variable ``var``: its value, or ``name`` in it when it
    is a folder; None when it is unset or empty."""
    value = os.environ.get(var)
    if not value:
        return None
    return os.path.join(value, name) if os.path.isdir(value) else value
