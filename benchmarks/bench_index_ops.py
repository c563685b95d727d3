"""gather, scatter_add, index_add and cumsum at large sizes, cudalite beside torch (and NumPy
on the CPU): the indexing behind embedding backward, cross_entropy and one_hot, and the scans.
Medians of several runs; GB/s counts the bytes each op must move (inputs read, output
written, the index read once).

    python benchmarks/bench_index_ops.py [--device cuda|cpu] [--size MI] [--ops gather,...]
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

OPS = ["gather", "scatter_add", "index_add", "cumsum_rows", "cumsum_cols", "cumsum_1d"]


def _cases(op, n):
    """(case name, rows, cols, index length along the dim) for ``op`` with about n elements."""
    if op in ("gather", "scatter_add"):
        # [tokens, vocab] logits picked at one class per row (cross_entropy's gather), and
        # [rows, 64] picked along the rows.
        return [
            (f"{op} [{n // 32768}, 32768] dim=1 k=1", n // 32768, 32768, 1, 1),
            (f"{op} [{n // 64}, 64] dim=0 k=rows", n // 64, 64, n // 64, 0),
        ]
    if op == "index_add":
        # embedding backward: [tokens, 1024] gradient rows added into a [32000, 1024] table
        rows = max(n // 1024, 1)
        return [(f"index_add [32000, 1024] <- [{rows}, 1024]", 32000, 1024, rows, 0)]
    if op == "cumsum_rows":
        return [(f"cumsum [{n // 4096}, 4096] dim=1", n // 4096, 4096, 0, 1)]
    if op == "cumsum_cols":
        return [(f"cumsum [{n // 4096}, 4096] dim=0", n // 4096, 4096, 0, 0)]
    return [(f"cumsum [{n}] dim=0", 1, n, 0, 1)]


def _build(lib, device, op, rows, cols, k, dim, rng):
    x = rng.standard_normal((rows, cols)).astype(np.float32)
    if op in ("gather", "scatter_add"):
        ishape = (rows, k) if dim == 1 else (k, cols)
        idx = rng.integers(0, cols if dim == 1 else rows, ishape)
        src = rng.standard_normal(ishape).astype(np.float32)
    elif op == "index_add":
        idx = rng.integers(0, rows, k)
        src = rng.standard_normal((k, cols)).astype(np.float32)
    if lib == "numpy":
        if op == "gather":
            return lambda: np.take_along_axis(x, idx, axis=dim)
        if op == "scatter_add":
            full = list(np.indices(idx.shape))
            full[dim] = idx
            full = tuple(full)
            return lambda: np.add.at(x.copy(), full, src)
        if op == "index_add":
            return lambda: np.add.at(x.copy(), idx, src)
        if op == "cumsum_1d":
            return lambda: np.cumsum(x.reshape(-1))
        return lambda: np.cumsum(x, axis=dim)
    M = cudalite if lib == "cudalite" else torch
    t = M.tensor(x, device=device)
    if op == "cumsum_1d":
        t = t.reshape(-1)
        dim = 0
    if op.startswith("cumsum"):
        return lambda: t.cumsum(dim)
    it = M.tensor(idx, device=device)
    st = M.tensor(src, device=device)
    if op == "gather":
        return lambda: t.gather(dim, it)
    if op == "scatter_add":
        return lambda: t.scatter_add(dim, it, st)
    return lambda: t.index_add(0, it, st)


def _bytes(op, rows, cols, k, dim):
    if op in ("gather", "scatter_add"):
        m = rows * k if dim == 1 else k * cols
        moved = m * 4 + m * 8  # values and index
        return moved + (m * 4 if op == "gather" else 2 * rows * cols * 4)  # + the output
    if op == "index_add":
        return 2 * rows * cols * 4 + k * cols * 4 + k * 8
    return 2 * rows * cols * 4


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--device", default="cuda" if cudalite.cuda.is_available() else "cpu")
    ap.add_argument("--size", type=int, default=16, help="elements per tensor, in Mi")
    ap.add_argument("--ops", default=",".join(OPS))
    args = ap.parse_args()
    dev = args.device
    n = args.size * 2**20
    libs = ["cudalite"] + (["torch"] if torch else []) + (["numpy"] if dev == "cpu" else [])
    if dev == "cuda":
        syncs = {"cudalite": cudalite.cuda.synchronize}
        if torch:
            syncs["torch"] = torch.cuda.synchronize
    else:
        syncs = {}
    times = Table(f"index ops and scans on {dev} (float32)")
    rates = Table(f"index ops and scans on {dev} (float32)", unit="GB/s", higher_is_better=True)
    rng = np.random.default_rng(0)
    for op in args.ops.split(","):
        for case, rows, cols, k, dim in _cases(op, n):
            t, r = {}, {}
            for lib in libs:
                fn = _build(lib, dev, op, rows, cols, k, dim, rng)
                s = per_call(fn, repeat=7, sync=syncs.get(lib), min_time=0.2)
                t[lib] = s
                r[lib] = _bytes(op, rows, cols, k, dim) / s / 1e9
            times.add(case, **t)
            rates.add(case, **r)
    print(times.render())
    print(rates.render())


if __name__ == "__main__":
    main()
