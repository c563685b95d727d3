"""scatter_reduce (sum, mean, amax), index_reduce (amax), take_along_dim, masked_select,
unique and tensor_split at large sizes, cudalite beside torch (and NumPy on the CPU).
Medians of several runs.

    python benchmarks/bench_shape_ops.py [--device cuda|cpu] [--size MI] [--ops unique,...]
"""

from __future__ import annotations

import argparse
import os
import sys
import warnings

sys.path.insert(0, os.path.dirname(__file__))

import numpy as np  # noqa: E402

import cudalite  # noqa: E402
from _harness import Table, optional, per_call  # noqa: E402

torch = optional("torch")

OPS = ["scatter_reduce_sum", "scatter_reduce_mean", "scatter_reduce_amax", "index_reduce_amax"]
OPS += ["take_along_dim", "masked_select", "unique", "tensor_split"]


def _numpy(op, x, idx, rows_idx, mask):
    if op == "scatter_reduce_sum":
        full = (np.indices(idx.shape)[0], idx)
        return lambda: np.add.at(x.copy(), full, x[:, : idx.shape[1]])
    if op == "scatter_reduce_amax":
        full = (np.indices(idx.shape)[0], idx)
        return lambda: np.maximum.at(x.copy(), full, x[:, : idx.shape[1]])
    if op == "take_along_dim":
        return lambda: np.take_along_axis(x, idx, 1)
    if op == "masked_select":
        return lambda: x[mask]
    if op == "unique":
        v = (x * 100).astype(np.int64).reshape(-1)
        return lambda: np.unique(v, return_counts=True)
    if op == "tensor_split":
        return lambda: np.array_split(x, 7, 1)
    return None


def _build(lib, device, op, x, idx, rows_idx, mask):
    if lib == "numpy":
        return _numpy(op, x, idx, rows_idx, mask)
    M = cudalite if lib == "cudalite" else torch
    t = M.tensor(x, device=device)
    it = M.tensor(idx, device=device)
    src = t[:, : idx.shape[1]].contiguous()
    if op.startswith("scatter_reduce"):
        red = op.split("_")[-1]
        return lambda: t.scatter_reduce(1, it, src, red)
    if op == "index_reduce_amax":
        ri = M.tensor(rows_idx, device=device)
        part = t[: len(rows_idx)].contiguous()
        return lambda: t.index_reduce(0, ri, part, "amax")
    if op == "take_along_dim":
        return lambda: t.take_along_dim(it, 1)
    if op == "masked_select":
        m = M.tensor(mask, device=device)
        return lambda: t.masked_select(m)
    if op == "unique":
        v = (t * 100).long().reshape(-1)
        return lambda: v.unique(return_counts=True)
    return lambda: t.tensor_split(7, 1)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--device", default="cuda" if cudalite.cuda.is_available() else "cpu")
    ap.add_argument("--size", type=int, default=4, help="elements of the input, in Mi")
    ap.add_argument("--ops", default=",".join(OPS))
    args = ap.parse_args()
    dev = args.device
    n = args.size * 2**20
    libs = ["cudalite"] + (["torch"] if torch else []) + (["numpy"] if dev == "cpu" else [])
    syncs = {}
    if dev == "cuda":
        syncs["cudalite"] = cudalite.cuda.synchronize
        if torch:
            syncs["torch"] = torch.cuda.synchronize
    rng = np.random.default_rng(0)
    rows, cols = n // 1024, 1024
    x = rng.standard_normal((rows, cols)).astype(np.float32)
    idx = rng.integers(0, cols, (rows, cols // 4))
    rows_idx = rng.integers(0, rows, rows // 4)
    mask = rng.random((rows, cols)) < 0.5
    times = Table(f"split, index and scatter ops on {dev} (float32 [{rows}, {cols}])")
    warnings.simplefilter("ignore")  # index_reduce's beta warning
    for op in args.ops.split(","):
        t = {}
        for lib in libs:
            fn = _build(lib, dev, op, x, idx, rows_idx, mask)
            if fn is not None:
                t[lib] = per_call(fn, repeat=5, sync=syncs.get(lib), min_time=0.2)
        times.add(op, **t)
    print(times.render())


if __name__ == "__main__":
    main()
