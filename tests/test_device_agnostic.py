"""A device-agnostic script written for torch runs unchanged with cudalite as ``torch``."""

from __future__ import annotations

import os
import pathlib
import subprocess
import sys

import cudalite
from conftest import HAS_CUDA

SCRIPT = pathlib.Path(__file__).parent / "data" / "device_agnostic_script.py"


def _run(tmp_path):
    # A `torch` package that is cudalite, as `import cudalite as torch` makes it inside a
    # program: the script itself is not edited.
    shim = tmp_path / "shim"
    (shim / "torch").mkdir(parents=True)
    (shim / "torch" / "__init__.py").write_text(
        "import sys\nimport cudalite\nsys.modules[__name__] = cudalite\n"
        "sys.modules['torch.nn'] = cudalite.nn\n"
    )
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(shim), *filter(None, [env.get("PYTHONPATH")])])
    return subprocess.run(
        [sys.executable, str(SCRIPT)], capture_output=True, text=True, env=env, timeout=120
    )


def test_script_runs_unchanged(tmp_path):
    out = _run(tmp_path)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    expected = "cuda" if HAS_CUDA else "cpu"
    assert lines[0] == f"device: {expected}"
    assert lines[1] == f"accelerator: {expected if HAS_CUDA else None}"
    assert lines[2] == f"torch {cudalite.__version__} cuda {cudalite.version.cuda}"
    assert lines[3] == "threads: 2"
    assert lines[4] == "loss went down: True"
    assert out.stderr == ""


def test_script_is_plain_torch_code():
    text = SCRIPT.read_text()
    assert "cudalite" not in text.split("\n", 3)[3]  # below its header comment
    assert "import torch\n" in text
