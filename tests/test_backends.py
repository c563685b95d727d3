"""cudalite.backends: mps (never available), cudnn's flags, cuda.matmul's TF32 switch."""

from __future__ import annotations

import re

import pytest

import cudalite
from cudalite.backends import cudnn, mps


def test_mps_is_never_there():
    assert mps.is_available() is False
    assert mps.is_built() is False
    assert mps.is_macos_or_newer(13, 0) is False
    assert mps.is_macos13_or_newer() is False
    assert cudalite.backends.mps is mps


def test_cudnn_availability_and_version():
    avail = cudnn.is_available()
    assert isinstance(avail, bool)
    if not cudalite._C._cuda.is_compiled():
        assert avail is False
    v = cudnn.version()
    assert (v is None) if not avail else (isinstance(v, int) and v >= 90000)
    assert cudnn.is_acceptable(cudalite.ones(2)) is False  # a CPU tensor
    assert cudnn.benchmark_limit is None
    assert cudalite.backends.cudnn is cudnn


def test_importing_cudalite_does_not_load_cudnn():
    import subprocess
    import sys

    code = (
        "import cudalite, cudalite.nn, cudalite.backends.cudnn as c; "
        "print(c._loaded, any('libcudnn' in line for line in open('/proc/self/maps')))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["None", "False"]


@pytest.fixture
def restore_cudnn():
    saved = {k: getattr(cudnn, k) for k in ("enabled", "benchmark", "deterministic", "allow_tf32")}
    yield
    for k, v in saved.items():
        setattr(cudnn, k, v)


def test_cudnn_defaults():
    # torch's defaults, in a process that has not changed them.
    code = (
        "import cudalite; c = cudalite.backends.cudnn; "
        "print(c.enabled, c.benchmark, c.deterministic, c.allow_tf32)"
    )
    import subprocess
    import sys

    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["True", "False", "False", "True"]


@pytest.mark.parametrize("name", ["enabled", "benchmark", "deterministic", "allow_tf32"])
def test_cudnn_flags_are_stored(name, restore_cudnn):
    for value in (True, False, True):
        setattr(cudalite.backends.cudnn, name, value)
        assert getattr(cudnn, name) is value


@pytest.mark.parametrize(
    "name, setter",
    [
        ("enabled", "set_enabled_cudnn"),
        ("benchmark", "set_benchmark_cudnn"),
        ("deterministic", "set_deterministic_cudnn"),
        ("allow_tf32", "set_allow_tf32_cublas"),
    ],
)
@pytest.mark.parametrize("bad", ["x", 1, None])
def test_cudnn_flags_refuse_non_bools(name, setter, bad, restore_cudnn):
    before = getattr(cudnn, name)
    msg = f"{setter} expects a bool, but got {type(bad).__name__}"
    with pytest.raises(RuntimeError, match=f"^{re.escape(msg)}$"):
        setattr(cudnn, name, bad)
    assert getattr(cudnn, name) is before


def test_cudnn_flags_context(restore_cudnn):
    cudnn.benchmark = True
    with cudnn.flags(enabled=True, benchmark=False, deterministic=True, allow_tf32=False):
        assert (cudnn.enabled, cudnn.benchmark, cudnn.deterministic, cudnn.allow_tf32) == (
            True,
            False,
            True,
            False,
        )
    assert (cudnn.benchmark, cudnn.deterministic, cudnn.allow_tf32) == (True, False, True)


def test_cudnn_flags_context_restores_after_error(restore_cudnn):
    with pytest.raises(KeyError), cudnn.flags(enabled=False, deterministic=True):
        raise KeyError("inside")
    assert (cudnn.enabled, cudnn.deterministic) == (True, False)


def test_cudnn_set_flags_returns_previous(restore_cudnn):
    old = cudnn.set_flags(_benchmark=True)
    assert old == (True, False, None, False, True)
    assert cudnn.benchmark is True
    assert cudnn.set_flags(*old) == (True, True, None, False, True)
    assert cudnn.benchmark is False


def test_matmul_allow_tf32():
    mod = cudalite.backends.cuda
    saved = (mod._flags(), mod._fp32_precision, mod._precision_with_tf32)
    matmul = mod.matmul
    try:
        matmul.allow_tf32 = True
        assert matmul.allow_tf32 is True
        matmul.allow_tf32 = False
        assert matmul.allow_tf32 is False
        with pytest.raises(RuntimeError, match="^set_allow_tf32_cublas expects a bool, but got"):
            matmul.allow_tf32 = 1
    finally:
        cudalite._C._cuda._set_matmul_flags(*saved[0])
        mod._fp32_precision, mod._precision_with_tf32 = saved[1:]


def test_backends_names():
    assert {"cuda", "cudnn", "mps"} <= set(cudalite.backends.__all__)


def test_python_m_cudalite_reports_cudnn():
    import json
    import subprocess
    import sys

    out = subprocess.run(
        [sys.executable, "-m", "cudalite", "--json"], capture_output=True, text=True, check=True
    )
    info = json.loads(out.stdout)
    if cudnn.is_available():
        assert info["cudnn"]["version"] == cudnn.version()
        assert "libcudnn" in info["cudnn"]["path"]
    else:
        assert info["cudnn"] is None
