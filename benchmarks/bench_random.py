"""Random fills of large tensors beside torch (and NumPy on the CPU): rand and randn in
float32 and float64, randint, on the CPU and, where a GPU is visible, on CUDA. cudalite and
torch draw the same numbers (docs/random.md), so this times the same work.

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


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--threads", type=int, default=1, help="torch's CPU threads")
    args = ap.parse_args()
    if torch is not None:
        torch.set_num_threads(args.threads)
    print(cpu_table().render())
    if cudalite.cuda.is_available():
        print(cuda_table().render())


if __name__ == "__main__":
    main()
