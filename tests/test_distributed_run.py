"""python -m cudalite.distributed.run: torchrun's variables, failures, flags."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

import cudalite
from cudalite.distributed import run

# The folder holding the cudalite under test (the source tree, or site-packages when installed).
PYTHON_DIR = os.path.dirname(os.path.dirname(os.path.abspath(cudalite.__file__)))

SCRIPT = """
import json, os, sys
keys = ["RANK", "LOCAL_RANK", "WORLD_SIZE", "LOCAL_WORLD_SIZE", "GROUP_RANK", "ROLE_RANK",
        "ROLE_WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT", "TORCHELASTIC_RUN_ID",
        "TORCHELASTIC_RESTART_COUNT", "OMP_NUM_THREADS"]
with open(os.path.join(sys.argv[1], "env" + os.environ["RANK"]), "w") as f:
    json.dump({k: os.environ.get(k) for k in keys} | {"argv": sys.argv[2:]}, f)
if os.environ["RANK"] == "1" and "fail" in sys.argv:
    sys.exit(3)
"""


def _run(tmp_path, *flags, extra=()):
    script = tmp_path / "s.py"
    script.write_text(SCRIPT)
    env = dict(os.environ, PYTHONPATH=PYTHON_DIR)
    env.pop("OMP_NUM_THREADS", None)
    cmd = [
        sys.executable,
        "-m",
        "cudalite.distributed.run",
        *flags,
        str(script),
        str(tmp_path),
        *extra,
    ]
    return subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=120)


def test_sets_torchruns_variables(tmp_path):
    p = _run(tmp_path, "--nproc_per_node=2", "--master_port=29555", extra=["--lr", "1"])
    assert p.returncode == 0, p.stderr
    envs = [json.loads((tmp_path / f"env{r}").read_text()) for r in (0, 1)]
    for r, e in enumerate(envs):
        assert e["RANK"] == e["LOCAL_RANK"] == e["ROLE_RANK"] == str(r)
        assert e["WORLD_SIZE"] == e["LOCAL_WORLD_SIZE"] == e["ROLE_WORLD_SIZE"] == "2"
        assert e["GROUP_RANK"] == "0" and e["TORCHELASTIC_RESTART_COUNT"] == "0"
        assert e["MASTER_ADDR"] == "127.0.0.1" and e["MASTER_PORT"] == "29555"
        assert e["OMP_NUM_THREADS"] == "1" and e["argv"] == ["--lr", "1"]
    assert envs[0]["TORCHELASTIC_RUN_ID"] == envs[1]["TORCHELASTIC_RUN_ID"]
    assert "Setting OMP_NUM_THREADS environment variable" in p.stderr


def test_multi_node_ranks(tmp_path):
    p = _run(tmp_path, "--nnodes=2", "--node-rank=1", "--nproc-per-node=2", "--standalone")
    assert p.returncode == 0, p.stderr  # --standalone makes it one node
    args = run.parse_args(["--nnodes", "2", "--node_rank", "1", "--nproc_per_node", "2", "x"])
    e = run.worker_env(args, 1, 2, 2, "id")
    assert e["RANK"] == "3" and e["GROUP_RANK"] == "1" and e["WORLD_SIZE"] == "4"


def test_a_failing_worker_fails_the_job(tmp_path):
    p = _run(tmp_path, "--nproc_per_node=2", "--standalone", extra=["fail"])
    assert p.returncode == 3
    assert "local_rank 1 (rank 1) failed with exit code 3" in p.stderr


def test_unsupported_flags():
    with pytest.raises(ValueError, match="elastic"):
        run.run(run.parse_args(["--nnodes", "1:2", "x"]))
    with pytest.raises(ValueError, match="max-restarts"):
        run.run(run.parse_args(["--max-restarts", "1", "x"]))


def test_log_dir_and_local_ranks_filter(tmp_path):
    script = tmp_path / "p.py"
    script.write_text(
        "import os, sys; print('out', os.environ['RANK']); "
        "print('err', os.environ['RANK'], file=sys.stderr)"
    )
    env = dict(os.environ, PYTHONPATH=PYTHON_DIR, OMP_NUM_THREADS="1")
    logs = tmp_path / "logs"
    cmd = [sys.executable, "-m", "cudalite.distributed.run", "--standalone",
           "--nproc_per_node=2", f"--log_dir={logs}", "--redirects=1:3",
           "--local_ranks_filter=1", str(script)]  # fmt: skip
    p = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    # rank 0 is filtered out; rank 1's output goes to its log files
    assert "out 0" not in p.stdout and "err 0" not in p.stderr
    assert (logs / "attempt_0" / "1" / "stdout.log").read_text() == "out 1\n"
    assert (logs / "attempt_0" / "1" / "stderr.log").read_text() == "err 1\n"
