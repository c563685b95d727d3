"""All-reduce over NCCL: cudalite.distributed beside torch.distributed.

Each library runs in its own process group, launched the same way (``python -m
cudalite.distributed.run --standalone --nproc_per_node N``, one process per GPU, with
NCCL_NVLS_ENABLE=0), and all-reduces float32 tensors of 8 B to 1 GiB in place
(``async_op=False``). Printed per size: the bus bandwidth (nccl-tests' busbw = bytes / time
x 2(n-1)/n) of both and the ratio; then the 8-byte all-reduce: wall time per call
(a loop of calls, one synchronize at the end) and the host time of one call.

    python benchmarks/nccl_bench.py [--nproc 2] [--libs cudalite,torch] [--max-bytes 1073741824]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))


def worker(lib, out, max_bytes, reps):
    torch = __import__("cudalite" if lib == "cudalite" else "torch")
    import importlib

    dist = importlib.import_module(f"{torch.__name__}.distributed")
    local = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local)
    dev = torch.device("cuda", local)
    dist.init_process_group("nccl", device_id=dev)
    n = dist.get_world_size()
    sync = torch.cuda.synchronize
    rows = []
    size = 8
    big = torch.randn((max_bytes // 4,), device=dev)
    while size <= max_bytes:
        x = big[: size // 4]
        for _ in range(3):
            dist.all_reduce(x)
        sync()
        t0 = time.perf_counter()
        dist.all_reduce(x)
        sync()
        est = max(time.perf_counter() - t0, 1e-6)
        iters = int(min(max(0.1 / est, 5), 2000))
        # every rank must run the same number of collectives: rank 0's count for all
        agreed = torch.tensor([float(iters)], device=dev)
        dist.broadcast(agreed, 0)
        iters = int(agreed.item())
        times = []
        for _ in range(reps):
            dist.barrier()
            sync()
            t0 = time.perf_counter()
            for _ in range(iters):
                dist.all_reduce(x)
            sync()
            times.append((time.perf_counter() - t0) / iters)
        t = statistics.median(times)
        rows.append((size, t, size / t * 2 * (n - 1) / n / 1e9))
        size *= 2
    x = big[:2]
    lat, host = [], []
    for _ in range(reps):
        sync()
        t0 = time.perf_counter()
        for _ in range(2000):
            dist.all_reduce(x)
        sync()
        lat.append((time.perf_counter() - t0) / 2000)
        sync()
        t0 = time.perf_counter()
        dist.all_reduce(x)
        host.append(time.perf_counter() - t0)
        sync()
    if dist.get_rank() == 0:
        with open(out, "w") as f:
            json.dump(
                {"rows": rows, "latency": statistics.median(lat), "host": min(host), "n": n}, f
            )
    dist.destroy_process_group()


def fmt_bytes(b):
    for unit in ("B", "KiB", "MiB", "GiB"):
        if b < 1024 or unit == "GiB":
            return f"{b:.0f} {unit}" if unit == "B" else f"{b:g} {unit}"
        b /= 1024
    return str(b)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--nproc", type=int, default=2)
    ap.add_argument("--libs", default="cudalite,torch")
    ap.add_argument("--max-bytes", type=int, default=1 << 30)
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--worker", default=None, help=argparse.SUPPRESS)
    ap.add_argument("--out", default=None, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.worker:
        worker(args.worker, args.out, args.max_bytes, args.reps)
        return
    env = dict(os.environ, NCCL_NVLS_ENABLE="0")
    results = {}
    for lib in args.libs.split(","):
        out = os.path.join(tempfile.mkdtemp(), f"{lib}.json")
        cmd = [
            sys.executable, "-m", "cudalite.distributed.run", "--standalone",
            f"--nproc_per_node={args.nproc}", os.path.abspath(__file__), "--worker", lib,
            "--out", out, "--max-bytes", str(args.max_bytes), "--reps", str(args.reps),
        ]  # fmt: skip
        r = subprocess.run(cmd, env=env)
        if r.returncode:
            print(f"{lib}: the launch failed (exit code {r.returncode})")
            continue
        with open(out) as f:
            results[lib] = json.load(f)
    libs = list(results)
    if not libs:
        return
    n = results[libs[0]]["n"]
    print(f"\n== all_reduce (float32, SUM, in place), {n} GPUs: bus bandwidth GB/s ==")
    head = f"{'size':>10}" + "".join(f"{lib:>12}" for lib in libs)
    print(head + (f"{libs[0] + '/' + libs[1]:>18}" if len(libs) == 2 else ""))
    rows = [results[lib]["rows"] for lib in libs]
    for i, (size, _, _) in enumerate(rows[0]):
        vals = [r[i][2] for r in rows]
        line = f"{fmt_bytes(size):>10}" + "".join(f"{v:12.2f}" for v in vals)
        if len(vals) == 2:
            line += f"{vals[0] / vals[1]:18.3f}"
        print(line)
    print("\n== 8-byte all_reduce ==")
    for lib in libs:
        r = results[lib]
        print(
            f"{lib:>10}: {r['latency'] * 1e6:8.2f} us per call (wall), "
            f"{r['host'] * 1e6:8.2f} us host time of one call"
        )
    if len(libs) == 2:
        a, b = (results[lib]["latency"] for lib in libs)
        print(f"{libs[0]} - {libs[1]}: {(a - b) * 1e6:+.2f} us per call")


if __name__ == "__main__":
    main()
