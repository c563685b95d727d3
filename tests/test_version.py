"""cudalite.version (torch.version) and cudalite.__version__, stated once."""

from __future__ import annotations

import pathlib
import re

import cudalite
from cudalite import _C

ROOT = pathlib.Path(__file__).resolve().parents[1]


def test_version_module():
    v = cudalite.version
    assert v.__version__ == cudalite.__version__
    assert re.fullmatch(r"\d+\.\d+\.\d+(\S*)", v.__version__)
    assert v.hip is None and v.rocm is None and v.xpu is None
    assert isinstance(v.debug, bool)
    assert v.git_version == "Unknown" or re.fullmatch(r"[0-9a-f]{40}", v.git_version)
    assert set(v.__all__) == {"__version__", "cuda", "debug", "git_version", "hip", "rocm", "xpu"}


def test_cuda_version_follows_the_build():
    if _C._cuda.is_compiled():
        full = _C._cuda.compiled_version()
        assert re.fullmatch(r"\d+\.\d+", cudalite.version.cuda)
        assert full.startswith(cudalite.version.cuda + ".") or full == cudalite.version.cuda
    else:
        assert cudalite.version.cuda is None


def test_version_is_written_once():
    # pyproject.toml reads the version from version.py; nothing else states it.
    pyproject = (ROOT / "pyproject.toml").read_text()
    assert re.search(r'^dynamic = \["version"\]$', pyproject, re.M)
    assert re.search(r"^version\s*=", pyproject, re.M) is None
    assert 'input = "python/cudalite/version.py"' in pyproject
    init = (ROOT / "python" / "cudalite" / "__init__.py").read_text()
    assert "__version__ =" not in init
    text = (ROOT / "python" / "cudalite" / "version.py").read_text()
    assert re.findall(r'^__version__ = "([^"]+)"$', text, re.M) == [cudalite.__version__]
