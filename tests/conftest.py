"""Shared fixtures: every op test runs on the CPU and, where a GPU is visible, on CUDA."""

from __future__ import annotations

import collections

import numpy as np
import pytest

import cudalite
from cudalite import _C

HAS_CUDA = _C._cuda.device_count() > 0
requires_cuda = pytest.mark.skipif(not HAS_CUDA, reason="no CUDA GPU visible")

DEVICES = ["cpu", pytest.param("cuda", marks=requires_cuda)]


@pytest.fixture(params=DEVICES)
def device(request):
    """'cpu', and 'cuda' where a GPU is visible; checks CUDA memory comes back after the test."""
    if request.param == "cuda":
        cudalite.cuda.synchronize()
    yield request.param
    if request.param == "cuda":
        cudalite.cuda.synchronize()


def to_np(t):
    """A NumPy copy of a tensor on any device (bfloat16 as float32)."""
    if t.dtype == cudalite.bfloat16:
        t = t.float()
    return np.array(t.cpu().numpy(), copy=True)


@pytest.fixture(autouse=True)
def _default_dtype_guard():
    yield
    cudalite.set_default_dtype(cudalite.float32)


def exact(msg):
    """A pattern for exactly ``msg``; an "invalid combination of arguments" message given to
    "expected one of:" also matches when torch's list of overloads follows (tested whole in
    test_checked.py)."""
    import re

    tail = r"(\n[\s\S]*)?" if msg.endswith("expected one of:") else ""
    return "^" + re.escape(msg) + tail + "$"


def pytest_terminal_summary(terminalreporter):
    """Skipped tests, one line per reason with a count (pyproject's addopts leaves skips out of
    pytest's own short summary, which would list every location)."""
    counts = collections.Counter()
    for rep in terminalreporter.stats.get("skipped", []):
        reason = rep.longrepr[2] if isinstance(rep.longrepr, tuple) else str(rep.longrepr)
        counts[reason.removeprefix("Skipped: ")] += 1
    if counts:
        terminalreporter.write_sep("=", "skipped tests by reason")
        for reason, n in counts.most_common():
            terminalreporter.write_line(f"{n:6d}  {reason}")


def mypy_env(package_dir):
    """os.environ for running mypy on code that imports the cudalite in ``package_dir``: an
    installed cudalite mypy finds by itself (and refuses site-packages in MYPYPATH); a source
    tree on PYTHONPATH it finds through MYPYPATH, since mypy ignores PYTHONPATH."""
    import os
    import site
    import sysconfig
    from pathlib import Path

    root = Path(package_dir).resolve().parent
    installed = {Path(p).resolve() for p in site.getsitepackages() + [site.getusersitepackages()]}
    installed |= {Path(sysconfig.get_paths()[k]).resolve() for k in ("purelib", "platlib")}
    env = dict(os.environ)
    if root not in installed:
        env["MYPYPATH"] = str(root)
    return env
