"""cudalite.cuda.nccl: loading (without importing anything at `import cudalite`), the
argument checks with torch's messages, and the collectives over two GPUs."""

from __future__ import annotations

import os
import subprocess
import sys
import warnings

import pytest

import cudalite
from cudalite.cuda import nccl

usable = pytest.mark.skipif(
    cudalite.cuda.device_count() < 2 or not nccl._loaded(), reason="needs 2 GPUs and NCCL"
)


def test_import_does_not_load_nccl():
    code = (
        "import cudalite, sys; "
        "assert 'cudalite.cuda.nccl' not in sys.modules; "
        "assert cudalite._C._nccl.library_path() == ''"
    )
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    subprocess.run([sys.executable, "-c", code], check=True, env=env)


def test_library_candidates(tmp_path, monkeypatch):
    lib = tmp_path / "nvidia" / "nccl" / "lib"
    lib.mkdir(parents=True)
    (lib / "libnccl.so.2").write_bytes(b"")
    monkeypatch.setattr(sys, "path", [str(tmp_path)])
    monkeypatch.setenv("CUDALITE_NCCL_PATH", "/opt/nccl/libnccl.so.2")
    assert nccl._library_candidates() == ["/opt/nccl/libnccl.so.2", str(lib / "libnccl.so.2")]
    monkeypatch.setenv("CUDALITE_NCCL_PATH", str(lib))
    assert nccl._library_candidates() == [str(lib / "libnccl.so.2")]


def test_load_failure_says_what_was_tried():
    if nccl._loaded():
        pytest.skip("NCCL loads here")
    assert not cudalite._C._nccl.is_available()
    assert "NCCL" in cudalite._C._nccl.load_error()
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        assert nccl.is_available([cudalite.ones(1)]) is False
    assert str(w[0].message) == "PyTorch is not compiled with NCCL support"


@pytest.mark.parametrize(
    "call",
    [
        lambda: nccl.all_reduce(cudalite.ones(2)),
        lambda: nccl.broadcast(cudalite.ones(2)),
        lambda: nccl.reduce(cudalite.ones(2)),
        lambda: nccl.all_gather(cudalite.ones(2), [cudalite.ones(2)]),
        lambda: nccl.reduce_scatter([cudalite.ones(2)], cudalite.ones(2)),
    ],
)
def test_a_bare_tensor_is_refused(call):
    with pytest.raises(TypeError, match="Inputs should be a collection of tensors"):
        call()


def test_reduce_output_and_outputs_are_exclusive():
    with pytest.raises(ValueError, match="'output' and 'outputs' can not be both specified"):
        nccl.reduce([cudalite.ones(2)], output=cudalite.ones(2), outputs=[cudalite.ones(2)])


def test_input_checks_have_torchs_messages():
    if not cudalite.cuda.is_available():
        # the checks run before NCCL is needed
        with pytest.raises(RuntimeError, match="input sequence can't be empty"):
            nccl._check_inputs([], [], 1, 1)
        with pytest.raises(RuntimeError, match="input and output elements have to be cuda"):
            nccl._check_inputs([cudalite.ones(2)], [cudalite.ones(2)], 1, 1)
        with pytest.raises(RuntimeError, match="inputs and outputs sequences have to be of"):
            nccl._check_inputs([cudalite.ones(2)], [], 1, 1)
        return
    a = cudalite.ones(4, device="cuda:0")
    with pytest.raises(RuntimeError, match="inputs must be on unique devices"):
        nccl._check_inputs([a, a.clone()], [a, a.clone()], 1, 1)
    with pytest.raises(RuntimeError, match="all inputs and outputs have to be contiguous"):
        nccl._check_inputs([a.view(2, 2).t()], [a.view(2, 2).t()], 1, 1)


# ---- two GPUs ----


@usable
def test_version_and_unique_id():
    v = nccl.version()
    assert len(v) == 3 and v[0] == 2
    uid = nccl.unique_id()
    assert isinstance(uid, bytes) and len(uid) == 128


@usable
@pytest.mark.parametrize(
    "dtype", [cudalite.float32, cudalite.float16, cudalite.bfloat16, cudalite.int64]
)
def test_collectives_on_two_gpus(dtype):
    def pair(v0, v1, n=4):
        return [
            cudalite.full((n,), v0, dtype=dtype, device="cuda:0"),
            cudalite.full((n,), v1, dtype=dtype, device="cuda:1"),
        ]

    xs = pair(1, 2)
    nccl.all_reduce(xs)
    assert [x.cpu().tolist() for x in xs] == [[3] * 4, [3] * 4]
    xs = pair(1, 2)
    out = cudalite.empty((4,), dtype=dtype, device="cuda:1")
    nccl.reduce(xs, output=out, root=1)
    assert out.cpu().tolist() == [3] * 4
    xs = pair(5, 0)
    nccl.broadcast(xs, root=0)
    assert xs[1].cpu().tolist() == [5] * 4
    xs = pair(1, 2, n=2)
    outs = [cudalite.empty((4,), dtype=dtype, device=f"cuda:{d}") for d in (0, 1)]
    nccl.all_gather(xs, outs)
    assert [o.cpu().tolist() for o in outs] == [[1, 1, 2, 2]] * 2
    xs = [cudalite.arange(4, device=f"cuda:{d}").to(dtype) for d in (0, 1)]
    outs = [cudalite.empty((2,), dtype=dtype, device=f"cuda:{d}") for d in (0, 1)]
    nccl.reduce_scatter(xs, outs)
    assert [o.cpu().tolist() for o in outs] == [[0, 2], [4, 6]]
    cudalite.cuda.synchronize(0)
    cudalite.cuda.synchronize(1)


@usable
def test_version_matches_torch_when_available():
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("torch without CUDA")
    assert nccl.version() == torch.cuda.nccl.version()[:3]
