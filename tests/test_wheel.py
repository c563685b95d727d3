"""A prebuilt wheel (scripts/build_wheels.sh) installs into a fresh virtualenv that has no
compiler, and works there.

The wheel is named by CUDALITE_WHEEL (the test is skipped without it):
``scripts/build_wheels.sh cpu && CUDALITE_WHEEL=$(ls dist/cpu/*.whl) pytest tests/test_wheel.py``.
The new virtualenv gets the numpy of this interpreter through a .pth file (pip sees it as
installed), so the install needs no network.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

WHEEL = os.environ.get("CUDALITE_WHEEL", "")
pytestmark = pytest.mark.skipif(
    not WHEEL, reason="CUDALITE_WHEEL names no wheel (scripts/build_wheels.sh builds one)"
)

SMOKE = """
import cudalite as torch
x = torch.arange(6, dtype=torch.float32).reshape(2, 3)
y = (x * 2 + 1).t().contiguous().to(torch.float16)
print(torch.__file__)
print(y.float().sum().item(), y.shape, y.dtype)
print(torch.version.cuda, torch.cuda.is_available())
if torch.cuda.is_available():  # a CUDA wheel on a GPU: the same on the device
    print((x.cuda() * 2 + 1).t().contiguous().to(torch.float16).float().sum().item())
"""


def _numpy_site(tmp_path: Path) -> Path:
    """A folder holding only this interpreter's numpy (package, bundled libraries, metadata)."""
    site = tmp_path / "numpy-site"
    site.mkdir()
    root = Path(np.__file__).resolve().parent.parent
    for entry in root.iterdir():
        if entry.name == "numpy" or entry.name.startswith(("numpy-", "numpy.libs")):
            (site / entry.name).symlink_to(entry)
    return site


def test_wheel_installs_without_a_compiler(tmp_path):
    wheel = Path(WHEEL).resolve()
    assert wheel.is_file(), f"CUDALITE_WHEEL={WHEEL} is not a file"
    # The platform tag says which Linux systems it installs on: manylinux_2_<glibc minor>.
    assert re.search(r"-manylinux_2_\d+_x86_64(\.|-)", wheel.name), wheel.name

    start = time.monotonic()
    env_dir = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", env_dir], check=True)
    py = env_dir / "bin" / "python"
    purelib = subprocess.run(
        [py, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()
    Path(purelib, "numpy-site.pth").write_text(f"{_numpy_site(tmp_path)}\n")

    # No compiler to be found: only the virtualenv's bin on the PATH, and the compiler
    # variables pointing nowhere. pip may neither download nor build anything.
    nowhere = str(tmp_path / "no-compiler")
    env = {
        "PATH": str(env_dir / "bin"),
        "HOME": str(tmp_path),
        "CC": nowhere,
        "CXX": nowhere,
        "CUDACXX": nowhere,
        "PIP_NO_INDEX": "1",
        "PIP_ONLY_BINARY": ":all:",
        "PIP_DISABLE_PIP_VERSION_CHECK": "1",
    }
    for k in ("CUDA_VISIBLE_DEVICES", "LD_LIBRARY_PATH", "TMPDIR"):
        if k in os.environ:
            env[k] = os.environ[k]
    subprocess.run([py, "-m", "pip", "install", "-q", wheel], check=True, env=env, cwd=tmp_path)
    subprocess.run([py, "-m", "pip", "check"], check=True, env=env, cwd=tmp_path)
    out = subprocess.run(
        [py, "-c", SMOKE], check=True, env=env, cwd=tmp_path, capture_output=True, text=True
    ).stdout.splitlines()
    elapsed = time.monotonic() - start
    print(f"fresh virtualenv, install and first import: {elapsed:.1f} s")

    # The installed package ran, not a source tree.
    assert Path(out[0]).resolve().is_relative_to(env_dir.resolve()), out[0]
    expected = float((np.arange(6) * 2 + 1).sum())
    assert out[1] == f"{expected} cudalite.Size([3, 2]) cudalite.float16", out[1]
    version_cuda, available = out[2].split()
    if version_cuda == "None":
        assert available == "False"
    else:
        assert re.fullmatch(r"\d+\.\d+", version_cuda), version_cuda
    if wheel.parent.name == "cpu":
        assert version_cuda == "None"
    if available == "True":
        assert out[3] == str(expected), out[3]
