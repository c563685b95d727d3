"""cudalite.cuda._dynlib: where the optional NVIDIA libraries (cuBLAS, cuDNN, NCCL) are looked
for in pip's nvidia-* wheels and in the environment, before the core's dlopen search
(csrc/cuda/dynlib.h) falls back to the loader's search path. Runs without a GPU."""

import sys

from cudalite.backends import cudnn
from cudalite.cuda import _dynlib, _pip_library_dirs


def _wheel(root, sub, files=()):
    d = root.joinpath(*sub.split("/"))
    d.mkdir(parents=True)
    for f in files:
        (d / f).write_bytes(b"")
    return d


def test_wheel_dirs_in_sys_path_order(tmp_path, monkeypatch):
    a, b = tmp_path / "a", tmp_path / "b"
    cu13 = _wheel(a, "nvidia/cu13/lib")
    cublas_b = _wheel(b, "nvidia/cublas/lib")
    cublas_a = _wheel(a, "nvidia/cublas/lib")
    monkeypatch.setattr(sys, "path", [str(a), str(tmp_path / "missing"), str(b), str(a)])
    # each sys.path entry in turn, each subfolder in the order given, no folder twice
    assert _dynlib.wheel_dirs("nvidia/cu13/lib", "nvidia/cublas/lib") == [
        str(cu13),
        str(cublas_a),
        str(cublas_b),
    ]
    assert _dynlib.wheel_dirs("nvidia/nccl/lib") == []
    # cuBLAS's and cuDNN's searches are these folders
    assert _pip_library_dirs() == [str(cu13), str(cublas_a), str(cublas_b)]
    cudnn_dir = _wheel(b, "nvidia/cudnn/lib")
    assert cudnn._pip_library_dirs() == [str(cudnn_dir)]


def test_wheel_dirs_empty_entry_is_the_current_directory(tmp_path, monkeypatch):
    _wheel(tmp_path, "nvidia/cudnn/lib")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", [""])
    assert _dynlib.wheel_dirs("nvidia/cudnn/lib") == ["./nvidia/cudnn/lib"]


def test_wheel_files_only_existing_files(tmp_path, monkeypatch):
    with_lib = _wheel(tmp_path / "a", "nvidia/nccl/lib", ["libnccl.so.2"])
    _wheel(tmp_path / "b", "nvidia/nccl/lib")  # the folder without the library
    monkeypatch.setattr(sys, "path", [str(tmp_path / "b"), str(tmp_path / "a")])
    assert _dynlib.wheel_files("libnccl.so.2", "nvidia/nccl/lib") == [
        str(with_lib / "libnccl.so.2")
    ]


def test_env_library(tmp_path, monkeypatch):
    monkeypatch.delenv("CUDALITE_TEST_LIB_PATH", raising=False)
    assert _dynlib.env_library("CUDALITE_TEST_LIB_PATH", "libx.so.1") is None
    monkeypatch.setenv("CUDALITE_TEST_LIB_PATH", "")
    assert _dynlib.env_library("CUDALITE_TEST_LIB_PATH", "libx.so.1") is None
    # a file (existing or not) is the library itself; a folder holds it
    monkeypatch.setenv("CUDALITE_TEST_LIB_PATH", "/opt/x/libx.so.1")
    assert _dynlib.env_library("CUDALITE_TEST_LIB_PATH", "libx.so.1") == "/opt/x/libx.so.1"
    monkeypatch.setenv("CUDALITE_TEST_LIB_PATH", str(tmp_path))
    assert _dynlib.env_library("CUDALITE_TEST_LIB_PATH", "libx.so.1") == str(tmp_path / "libx.so.1")
