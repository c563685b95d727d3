"""``python -m cudalite.distributed.run``: torchrun's launcher for static jobs.

Starts ``--nproc_per_node`` copies of a script on this node with the variables torchrun
sets (RANK, LOCAL_RANK, WORLD_SIZE, LOCAL_WORLD_SIZE, GROUP_RANK, ROLE_RANK,
ROLE_WORLD_SIZE, MASTER_ADDR, MASTER_PORT, TORCHELASTIC_RUN_ID, ...), so scripts written
for torchrun run unchanged. Several nodes: run it once per node with the same
``--nnodes``, ``--master_addr`` and ``--master_port`` and each node's ``--node_rank``.
If a worker fails, the others are stopped and the launcher exits with the worker's code.
Elastic restarts and membership changes are not supported (``--max-restarts`` must be 0).
"""

from __future__ import annotations

import argparse
import os
import random
import signal
import socket
import subprocess
import sys
import time
import uuid

__all__ = ["main", "parse_args"]


def _flag(parser, name, **kw):
    """torchrun accepts both --a_b and --a-b spellings."""
    dashed = name.replace("_", "-")
    names = [name] if dashed == name else [name, dashed]
    parser.add_argument(*names, **kw)


def get_args_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m cudalite.distributed.run",
        description="Launch one process per GPU with torchrun's environment variables.",
    )
    _flag(p, "--nnodes", type=str, default="1", help="Number of nodes (N or N:N).")
    _flag(
        p,
        "--nproc_per_node",
        type=str,
        default="1",
        help="Processes per node: a number, 'gpu' (one per GPU), 'cpu' or 'auto'.",
    )
    _flag(p, "--node_rank", type=int, default=0, help="This node's rank (multi-node jobs).")
    _flag(p, "--master_addr", type=str, default="127.0.0.1", help="Address of node 0.")
    _flag(p, "--master_port", type=int, default=29500, help="Port of the store on node 0.")
    p.add_argument(
        "--standalone",
        action="store_true",
        help="One node: rendezvous on localhost through a free port.",
    )
    _flag(p, "--rdzv_backend", type=str, default="static", help="Accepted: static, c10d.")
    _flag(p, "--rdzv_endpoint", type=str, default="", help="host:port of the rendezvous.")
    _flag(p, "--rdzv_id", type=str, default="none", help="The job's id.")
    _flag(p, "--max_restarts", type=int, default=0, help="Must be 0 (no elastic restarts).")
    _flag(p, "--monitor_interval", type=float, default=0.1, help="Seconds between checks.")
    _flag(p, "--log_dir", type=str, default=None, help="Folder for the workers' logs.")
    p.add_argument(
        "-r",
        "--redirects",
        type=str,
        default="0",
        help="Into --log_dir: 0 nothing, 1 stdout, 2 stderr, 3 both (N, or local_rank:N,...).",
    )
    _flag(
        p,
        "--local_ranks_filter",
        type=str,
        default="",
        help="Show only these local ranks' output (comma-separated), e.g. 0.",
    )
    p.add_argument("-m", "--module", action="store_true", help="Run the script as a module.")
    _flag(p, "--no_python", action="store_true", help="Run the script as an executable.")
    p.add_argument("training_script", type=str, help="The script (or module) to run.")
    p.add_argument("training_script_args", nargs=argparse.REMAINDER)
    return p


def parse_args(argv=None):
    return get_args_parser().parse_args(argv)


def _free_port() -> int:
    """A port free now, below Linux's ephemeral range (32768-60999): the workers bind it only
    later, and a port the kernel hands out as ephemeral (to NCCL's bootstrap sockets, say)
    could be taken by then."""
    rng = random.Random()
    for _ in range(64):
        port = rng.randrange(20000, 32000)
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
            try:
                s.bind(("127.0.0.1", port))
            except OSError:
                continue
            return port
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _nproc(value: str) -> int:
    if value in ("gpu", "auto"):
        from cudalite import cuda

        n = cuda.device_count()
        if n > 0 or value == "gpu":
            if n == 0:
                raise ValueError("Cuda is not available.")
            return n
        return os.cpu_count() or 1
    if value == "cpu":
        return os.cpu_count() or 1
    try:
        return int(value)
    except ValueError:
        raise ValueError(f"Unsupported nproc_per_node value: {value}") from None


def _nnodes(value: str) -> int:
    lo, _, hi = value.partition(":")
    if hi and hi != lo:
        raise ValueError("elastic jobs (--nnodes MIN:MAX with MIN != MAX) are not supported")
    return int(lo)


def worker_env(args, local_rank: int, nproc: int, nnodes: int, run_id: str) -> dict:
    """The environment of one worker (torchrun's variables)."""
    env = dict(os.environ)
    rank = args.node_rank * nproc + local_rank
    world = nnodes * nproc
    env.update(
        LOCAL_RANK=str(local_rank),
        RANK=str(rank),
        GROUP_RANK=str(args.node_rank),
        ROLE_RANK=str(rank),
        ROLE_NAME="default",
        LOCAL_WORLD_SIZE=str(nproc),
        WORLD_SIZE=str(world),
        GROUP_WORLD_SIZE=str(nnodes),
        ROLE_WORLD_SIZE=str(world),
        MASTER_ADDR=args.master_addr,
        MASTER_PORT=str(args.master_port),
        TORCHELASTIC_RESTART_COUNT="0",
        TORCHELASTIC_MAX_RESTARTS="0",
        TORCHELASTIC_RUN_ID=run_id,
        TORCHELASTIC_USE_AGENT_STORE="False",
        PYTHON_EXEC=sys.executable,
    )
    if nproc > 1 and "OMP_NUM_THREADS" not in os.environ:
        env["OMP_NUM_THREADS"] = "1"
    return env


def _command(args) -> list[str]:
    if args.no_python:
        return [args.training_script, *args.training_script_args]
    if args.module:
        return [sys.executable, "-u", "-m", args.training_script, *args.training_script_args]
    return [sys.executable, "-u", args.training_script, *args.training_script_args]


def _redirect(spec: str, local_rank: int) -> int:
    """torchrun's --redirects: N for every rank, or "local_rank:N,..."."""
    if ":" not in spec:
        return int(spec)
    for part in spec.split(","):
        r, _, n = part.partition(":")
        if int(r) == local_rank:
            return int(n)
    return 0


def _outputs(args, local_rank, files):
    """(stdout, stderr) of one worker: inherited, a log file, or discarded."""
    shown = not args.local_ranks_filter or str(local_rank) in args.local_ranks_filter.split(",")
    mode = _redirect(args.redirects, local_rank)
    streams = []
    for bit, name in ((1, "stdout"), (2, "stderr")):
        if args.log_dir and mode & bit:
            folder = os.path.join(args.log_dir, "attempt_0", str(local_rank))
            os.makedirs(folder, exist_ok=True)
            f = open(os.path.join(folder, f"{name}.log"), "w")  # noqa: SIM115 (closed by run)
            files.append(f)
            streams.append(f)
        else:
            streams.append(None if shown else subprocess.DEVNULL)
    return streams[0], streams[1]


def run(args) -> int:
    """Starts the workers and waits for them; returns the exit code."""
    if args.max_restarts:
        raise ValueError("--max-restarts: elastic restarts are not supported (use 0)")
    nnodes = _nnodes(args.nnodes)
    nproc = _nproc(args.nproc_per_node)
    if args.standalone:
        nnodes, args.node_rank = 1, 0
        args.master_addr, args.master_port = "127.0.0.1", _free_port()
    elif args.rdzv_endpoint:
        host, _, port = args.rdzv_endpoint.rpartition(":")
        args.master_addr = host or args.rdzv_endpoint
        if port:
            args.master_port = int(port)
    if not 0 <= args.node_rank < nnodes:
        raise ValueError(f"--node_rank {args.node_rank} is not in [0, {nnodes})")
    if nproc > 1 and "OMP_NUM_THREADS" not in os.environ:
        print(
            "*****************************************\n"
            "Setting OMP_NUM_THREADS environment variable for each process to be 1 in default, "
            "to avoid your system being overloaded, please further tune the variable for "
            "optimal performance in your application as needed. \n"
            "*****************************************",
            file=sys.stderr,
        )
    run_id = args.rdzv_id if args.rdzv_id != "none" else uuid.uuid4().hex
    cmd = _command(args)
    procs, files = [], []
    for i in range(nproc):
        out, err = _outputs(args, i, files)
        env = worker_env(args, i, nproc, nnodes, run_id)
        procs.append(subprocess.Popen(cmd, env=env, stdout=out, stderr=err))

    def forward(signum, frame):
        for p in procs:
            if p.poll() is None:
                p.send_signal(signum)

    old = {s: signal.signal(s, forward) for s in (signal.SIGTERM, signal.SIGINT)}
    try:
        failed = None
        while True:
            codes = [p.poll() for p in procs]
            bad = [(i, c) for i, c in enumerate(codes) if c not in (None, 0)]
            if bad:
                failed = bad[0]
                break
            if all(c == 0 for c in codes):
                return 0
            time.sleep(args.monitor_interval)
        for p in procs:
            if p.poll() is None:
                p.terminate()
        deadline = time.monotonic() + 30
        for p in procs:
            try:
                p.wait(max(deadline - time.monotonic(), 0.1))
            except subprocess.TimeoutExpired:
                p.kill()
        local_rank, code = failed
        print(
            f"cudalite.distributed.run: worker with local_rank {local_rank} (rank "
            f"{args.node_rank * nproc + local_rank}) failed with exit code {code}; the other "
            "workers were stopped.",
            file=sys.stderr,
        )
        return code if code > 0 else 128 - code
    finally:
        for s, h in old.items():
            signal.signal(s, h)
        for f in files:
            f.close()


def main(argv=None) -> None:
    sys.exit(run(parse_args(argv)))


if __name__ == "__main__":
    main()
