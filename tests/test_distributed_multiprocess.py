"""cudalite.distributed with two processes started by ``python -m cudalite.distributed.run``:
every collective on the CPU backend (always) and on NCCL (with two GPUs), and timeouts.
The ranks run tests/distributed_worker.py and report what they saw in JSON files."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys

import pytest

import cudalite

HERE = os.path.dirname(os.path.abspath(__file__))
# The folder holding the cudalite under test (the source tree, or site-packages when installed).
PYTHON_DIR = os.path.dirname(os.path.dirname(os.path.abspath(cudalite.__file__)))


def two_gpus() -> bool:
    return cudalite.cuda.device_count() >= 2 and cudalite.cuda.nccl._loaded()


BACKENDS = [
    "gloo",
    pytest.param("nccl", marks=pytest.mark.skipif(not two_gpus(), reason="needs 2 GPUs and NCCL")),
]


def launch(
    scenario,
    backend,
    tmp_path,
    nproc=2,
    extra_env=None,
    timeout=240,
    launcher="cudalite.distributed.run",
):
    """Runs the scenario on `nproc` ranks; returns (completed process, [rank results])."""
    env = dict(os.environ)
    env["PYTHONPATH"] = PYTHON_DIR + os.pathsep + env.get("PYTHONPATH", "")
    env.setdefault("OMP_NUM_THREADS", "1")
    env.setdefault("NCCL_NVLS_ENABLE", "0")
    env.update(extra_env or {})
    cmd = [
        sys.executable,
        "-m",
        launcher,
        "--standalone",
        f"--nproc_per_node={nproc}",
        os.path.join(HERE, "distributed_worker.py"),
        scenario,
        backend,
        str(tmp_path),
    ]
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=timeout)
    results = []
    for r in range(nproc):
        path = tmp_path / f"rank{r}.json"
        results.append(json.loads(path.read_text()) if path.exists() else None)
    return proc, results


@pytest.mark.parametrize("backend", BACKENDS)
def test_collectives(backend, tmp_path):
    proc, (r0, r1) = launch("collectives", backend, tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert r0["world"] == r1["world"] == 2 and r0["backend"] == backend
    for r in (r0, r1):
        for dt in ["float32", "int64"] + (["float16", "bfloat16"] if backend == "nccl" else []):
            # rank r contributes [r + 1, 2r + 3]: [1, 3] and [2, 5]
            assert r[f"all_reduce_SUM_{dt}"] == [3.0, 8.0]
            assert r[f"all_reduce_MAX_{dt}"] == [2.0, 5.0]
            assert r[f"all_reduce_MIN_{dt}"] == [1.0, 3.0]
            assert r[f"all_reduce_PRODUCT_{dt}"] == [2.0, 15.0]
            if dt != "int64":
                assert r[f"all_reduce_AVG_{dt}"] == [1.5, 4.0]
        assert r["broadcast"] == [1.0]
        assert r["all_gather_into_tensor"] == [0.0, 0.5, 1.0, 1.5]
        assert r["all_gather"] == [0.0, 10.0]
        assert r["async_sum"] == 3.0 * (1 << 16)
        assert r["async_completed"] is True
        assert r["objects"] == [{"r": 0}, {"r": 1}]
        assert r["initialized_after"] is False
    assert r0["reduce"] == [3.0] and r1["reduce"] == [2.0]
    assert r0["reduce_scatter_tensor"] == [1.0] and r1["reduce_scatter_tensor"] == [3.0]
    assert r1["recv"] == [42.0] and r1["recv_src"] == 0
    assert r0["subgroup"] == [0, 2, 2.0] and r1["subgroup"] == [1, 2, 2.0]


@pytest.mark.skipif(importlib.util.find_spec("torch") is None, reason="needs torch's torchrun")
@pytest.mark.parametrize("backend", BACKENDS)
def test_cudalite_scripts_run_under_torchrun(backend, tmp_path):
    # torchrun's agent serves a torch TCPStore; cudalite's ranks talk to it as clients
    proc, (r0, r1) = launch("ddp", backend, tmp_path, launcher="torch.distributed.run")
    assert proc.returncode == 0, proc.stderr
    assert r0["params"] == r1["params"]
    assert (
        max(
            abs(p - q)
            for u, v in zip(r0["params"], r0["ref"], strict=True)
            for p, q in zip(u, v, strict=True)
        )
        < 1e-5
    )


def launch_nodes(scenario, backend, tmp_path, nnodes=2, node_env=None, timeout=240):
    """Runs `nnodes` launchers of one process each on this host, as separate nodes of one
    job (static rendezvous over TCP on a free port)."""
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    procs = []
    for node in range(nnodes):
        env = dict(os.environ)
        env["PYTHONPATH"] = PYTHON_DIR + os.pathsep + env.get("PYTHONPATH", "")
        env.setdefault("NCCL_NVLS_ENABLE", "0")
        env.update((node_env or {}).get(node, {}))
        cmd = [
            sys.executable, "-m", "cudalite.distributed.run", f"--nnodes={nnodes}",
            f"--node_rank={node}", "--nproc_per_node=1", "--master_addr=127.0.0.1",
            f"--master_port={port}", os.path.join(HERE, "distributed_worker.py"), scenario,
            backend, str(tmp_path),
        ]  # fmt: skip
        procs.append(subprocess.Popen(cmd, env=env, stderr=subprocess.PIPE, text=True))
    errs = [p.communicate(timeout=timeout)[1] for p in procs]
    results = []
    for r in range(nnodes):
        path = tmp_path / f"rank{r}.json"
        results.append(json.loads(path.read_text()) if path.exists() else None)
    return [p.returncode for p in procs], errs, results


@pytest.mark.parametrize("backend", BACKENDS)
def test_two_nodes_on_one_host(backend, tmp_path):
    # Two launchers (--nnodes=2), one rank each; for NCCL each "node" sees its own GPU and
    # NCCL's socket transport is forced, as between machines.
    node_env = None
    if backend == "nccl":
        forced = {"NCCL_P2P_DISABLE": "1", "NCCL_SHM_DISABLE": "1"}
        node_env = {
            0: dict(forced, CUDA_VISIBLE_DEVICES="0"),
            1: dict(forced, CUDA_VISIBLE_DEVICES="1"),
        }
    codes, errs, (r0, r1) = launch_nodes("ddp", backend, tmp_path, node_env=node_env)
    assert codes == [0, 0], errs
    assert r0["params"] == r1["params"]
    assert (
        max(
            abs(p - q)
            for u, v in zip(r0["params"], r0["ref"], strict=True)
            for p, q in zip(u, v, strict=True)
        )
        < 1e-5
    )


def test_cpu_backend_timeout_names_the_missing_rank(tmp_path):
    proc, (r0, _) = launch("timeout", "gloo", tmp_path)
    assert r0["error"].startswith("DistBackendError: [Rank 0] all_reduce timed out after 2000 ms")
    assert "waiting for rank(s) [1]" in r0["error"]
    assert r0["seconds"] < 30


@pytest.mark.skipif(not two_gpus(), reason="needs 2 GPUs and NCCL")
def test_nccl_timeout_takes_the_process_down_with_the_reason(tmp_path):
    proc, (r0, _) = launch("timeout", "nccl", tmp_path)
    assert proc.returncode != 0
    assert "Watchdog caught collective operation timeout" in proc.stderr
    assert "OpType=ALLREDUCE" in proc.stderr and "Timeout(ms)=2000" in proc.stderr
    assert "taking the entire process down" in proc.stderr


@pytest.mark.skipif(not two_gpus(), reason="needs 2 GPUs and NCCL")
def test_nccl_timeout_raises_when_error_handling_is_off(tmp_path):
    proc, (r0, _) = launch(
        "timeout", "nccl", tmp_path, extra_env={"TORCH_NCCL_ASYNC_ERROR_HANDLING": "0"}
    )
    assert r0 is not None, proc.stderr
    # the hung all-reduce is aborted; the synchronize after it returns and the next call
    # on the group raises the watchdog's error (or the synchronize reports the abort)
    assert r0["seconds"] < 60


@pytest.mark.skipif(
    cudalite.cuda.device_count() < 1 or not cudalite.cuda.nccl._loaded(),
    reason="needs a GPU and NCCL",
)
def test_nccl_world_of_one(tmp_path):
    proc, (r0,) = launch("collectives_one", "nccl", tmp_path, nproc=1)
    assert proc.returncode == 0, proc.stderr
    assert r0["sum"] == [1.0, 2.0] and r0["barrier"] is True
