"""Random fills of large tensors beside torch (and NumPy on the CPU): rand and randn in
float32 and float64, randint, and the sampling ops (randperm, multinomial with and without
replacement, dropout), on the CPU and, where a GPU is visible, on CUDA. cudalite and torch
draw the same numbers (docs/random.md), so this times the same work.

    python benchmarks/bench_random.py            # CPU, and CUDA when a GPU is visible
    python benchmarks/bench_random.py --threads 1  # torch's CPU fills draw serially too

Figures are medians (benchmarks/_harness.py); torch runs with one thread unless asked, as
its random CPU kernels are serial.
"""

from __future__ import annotations

import argparse
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(__file__))
import cudalite  # noqa: E402
from _harness import Table, optional, per_call  # noqa: E402

torch = optional("torch")

SIZES = [1 << 20, 1 << 24]


def cpu_table():
    t = Table("CPU random fills")
    rng = np.random.default_rng(0)
    for n in SIZES:
        for name, cl, th, npf in [
            ("rand float32", lambda: cudalite.rand(n), lambda: torch.rand(n),
             lambda: rng.random(n, dtype=np.float32)),
            ("rand float64", lambda: cudalite.rand(n, dtype=cudalite.float64),
             lambda: torch.rand(n, dtype=torch.float64), lambda: rng.random(n)),
            ("randn float32", lambda: cudalite.randn(n), lambda: torch.randn(n),
             lambda: rng.standard_normal(n, dtype=np.float32)),
            ("randn float64", lambda: cudalite.randn(n, dtype=cudalite.float64),
             lambda: torch.randn(n, dtype=torch.float64), lambda: rng.standard_normal(n)),
            ("randint [0, 100) int64", lambda: cudalite.randint(0, 100, (n,)),
             lambda: torch.randint(0, 100, (n,)), lambda: rng.integers(0, 100, n)),
        ]:  # fmt: skip
            t.add(
                f"{name} n={n}",
                cudalite=per_call(cl, repeat=5),
                torch=per_call(th, repeat=5) if torch else None,
                numpy=per_call(npf, repeat=5),
            )
    return t


def cuda_table():
    t = Table("CUDA random fills")
    sync_cl = cudalite.cuda.synchronize
    has_torch_cuda = torch is not None and torch.cuda.is_available()
    for n in SIZES + [1 << 28]:
        for name, cl, th in [
            ("rand float32", lambda: cudalite.rand(n, device="cuda"),
             lambda: torch.rand(n, device="cuda")),
            ("randn float32", lambda: cudalite.randn(n, device="cuda"),
             lambda: torch.randn(n, device="cuda")),
            ("randn float64", lambda: cudalite.randn(n, dtype=cudalite.float64, device="cuda"),
             lambda: torch.randn(n, dtype=torch.float64, device="cuda")),
            ("rand bfloat16", lambda: cudalite.rand(n, dtype=cudalite.bfloat16, device="cuda"),
             lambda: torch.rand(n, dtype=torch.bfloat16, device="cuda")),
        ]:  # fmt: skip
            t.add(
                f"{name} n={n}",
                cudalite=per_call(cl, sync=sync_cl),
                torch=per_call(th, sync=torch.cuda.synchronize) if has_torch_cuda else None,
            )
    return t


def _sampling_rows(T, dev):
    """(name, call) of the sampling ops for module T on device dev (inputs made once)."""
    probs = T.rand(64, 1000, device=dev)
    x32 = T.randn(1 << 24, device=dev)
    x16 = x32.half()
    return [
        ("randperm n=2^20", lambda: T.randperm(1 << 20, device=dev)),
        ("randperm n=2^24", lambda: T.randperm(1 << 24, device=dev)),
        ("randperm n=1000", lambda: T.randperm(1000, device=dev)),
        ("multinomial 64x1000 repl 1000", lambda: T.multinomial(probs, 1000, True)),
        ("multinomial 64x1000 no repl 100", lambda: T.multinomial(probs, 100)),
        ("dropout float32 n=2^24", lambda: T.nn.functional.dropout(x32, 0.1)),
        ("dropout float16 n=2^24", lambda: T.nn.functional.dropout(x16, 0.1)),
    ]


def sampling_table(dev):
    t = Table(f"{dev.upper()} sampling")
    has_torch = torch is not None and (dev == "cpu" or torch.cuda.is_available())
    ours = _sampling_rows(cudalite, dev)
    theirs = _sampling_rows(torch, dev) if has_torch else [(n, None) for n, _ in ours]
    rng = np.random.default_rng(0)
    numpy_rows = {
        "randperm n=2^20": lambda: rng.permutation(1 << 20),
        "randperm n=2^24": lambda: rng.permutation(1 << 24),
        "randperm n=1000": lambda: rng.permutation(1000),
    }
    sync_cl = cudalite.cuda.synchronize if dev == "cuda" else None
    sync_th = torch.cuda.synchronize if has_torch and dev == "cuda" else None
    for (name, cl), (_, th) in zip(ours, theirs, strict=True):
        cols = {
            "cudalite": per_call(cl, sync=sync_cl, repeat=5),
            "torch": per_call(th, sync=sync_th, repeat=5) if th else None,
        }
        if dev == "cpu":
            npf = numpy_rows.get(name)
            cols["numpy"] = per_call(npf, repeat=5) if npf else None
        t.add(name, **cols)
    return t


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--threads", type=int, default=1, help="torch's CPU threads")
    args = ap.parse_args()
    if torch is not None:
        torch.set_num_threads(args.threads)
    print(cpu_table().render())
    print(sampling_table("cpu").render())
    if cudalite.cuda.is_available():
        print(cuda_table().render())
        print(sampling_table("cuda").render())


if __name__ == "__main__":
    main()
