"""sort, topk and logsumexp beside torch (and NumPy on the CPU): medians per call.

    python benchmarks/bench_sort.py [--device cpu|cuda|both] [--n 1048576] [--k 1,100,1000]

Cases: sort of one row of n keys (float32 and int64, ascending and descending), sort of
many short rows (the segmented path), topk of one row for each k, and logsumexp over the
rows of a [n / 1024, 1024] float32 tensor. Inputs are random (float32 normal, int64 over a
range wider than n). The CPU's sorts are NumPy's stable sorts (np.argsort kind='stable' and
np.sort; np.partition for topk, which leaves the k unordered).
"""

from __future__ import annotations

import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(__file__))

import numpy as np  # noqa: E402

import cudalite  # noqa: E402
from _harness import Table, optional, per_call  # noqa: E402

torch = optional("torch")


def _sync(lib, device):
    if device != "cuda":
        return None
    return cudalite.cuda.synchronize if lib == "cudalite" else torch.cuda.synchronize


def _inputs(device, dtype, shape, seed=0):
    rng = np.random.default_rng(seed)
    n = int(np.prod(shape))
    a = (
        rng.standard_normal(n).astype(np.float32)
        if dtype == "float32"
        else rng.integers(-(2**40), 2**40, n)
    )
    a = a.reshape(shape)
    x = {"cudalite": cudalite.from_numpy(a).to(device)}
    if torch is not None:
        x["torch"] = torch.from_numpy(a).to(device)
    if device == "cpu":
        x["numpy"] = a
    return x


def _time(table, case, device, xs, calls):
    row = {}
    for lib, x in xs.items():
        f = calls.get(lib)
        if f is None:
            continue
        row[lib] = per_call(lambda f=f, x=x: f(x), sync=_sync(lib, device), repeat=7)
    table.add(case, **row)


def run(device, n, ks):
    t = Table(f"sort, topk and logsumexp on {device}")
    lib = {"cudalite": cudalite, "torch": torch}
    libs = [(m, M) for m, M in lib.items() if M]
    for dtype in ("float32", "int64"):
        xs = _inputs(device, dtype, (n,))
        for desc in (False, True):
            calls = {
                m: (lambda x, M=M, d=desc: M.sort(x, descending=d)) for m, M in lib.items() if M
            }
            calls["numpy"] = (lambda x: np.sort(x)) if not desc else (lambda x: np.sort(x)[::-1])
            _time(t, f"sort {dtype} [{n}] {'desc' if desc else 'asc'}", device, xs, calls)
        calls = {m: (lambda x, M=M: M.argsort(x, stable=True)) for m, M in libs}
        calls["numpy"] = lambda x: np.argsort(x, kind="stable")
        _time(t, f"argsort stable {dtype} [{n}]", device, xs, calls)
        for k in ks:
            calls = {m: (lambda x, M=M, k=k: M.topk(x, k)) for m, M in libs}
            calls["numpy"] = lambda x, k=k: np.partition(x, len(x) - k)[len(x) - k :]
            _time(t, f"topk {dtype} [{n}] k={k}", device, xs, calls)
    rows = max(1, n // 1024)
    xs = _inputs(device, "float32", (rows, 1024))
    calls = {m: (lambda x, M=M: M.sort(x, dim=-1)) for m, M in libs}
    calls["numpy"] = lambda x: np.sort(x, axis=-1)
    _time(t, f"sort float32 [{rows}, 1024] dim=-1", device, xs, calls)
    calls = {m: (lambda x, M=M: M.topk(x, 8, dim=-1)) for m, M in libs}
    calls["numpy"] = lambda x: np.partition(x, 1016, axis=-1)[:, 1016:]
    _time(t, f"topk float32 [{rows}, 1024] k=8", device, xs, calls)
    calls = {m: (lambda x, M=M: M.logsumexp(x, 1)) for m, M in libs}
    calls["numpy"] = lambda x: np.log(np.exp(x - x.max(1, keepdims=True)).sum(1)) + x.max(1)
    _time(t, f"logsumexp float32 [{rows}, 1024] dim=1", device, xs, calls)
    print(t.render())


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--device", default="both", choices=["cpu", "cuda", "both"])
    ap.add_argument("--n", type=int, default=2**20, help="keys per row")
    ap.add_argument("--k", default="1,100,1000", help="topk's k values")
    args = ap.parse_args()
    ks = [int(k) for k in args.k.split(",")]
    devices = ["cpu", "cuda"] if args.device == "both" else [args.device]
    for device in devices:
        if device == "cuda" and not cudalite.cuda.is_available():
            print("no CUDA GPU visible: the CUDA table is skipped")
            continue
        run(device, args.n, ks)


if __name__ == "__main__":
    main()
