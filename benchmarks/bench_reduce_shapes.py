"""Reductions along one dim of 2-D float32 tensors of every row length, beside torch and CuPy
(GB/s read), on a GPU machine. bench_gpu_math.py measures the issue's large square case;
this sweep covers the shapes real models reduce (rows of a few hundred to a few thousand
elements: losses, norms, softmax denominators) and the columns of the same tensors.

    python benchmarks/bench_reduce_shapes.py [--total MI] [--dims 1,0] [--ops sum,max,argmax]
        [--inner 16,64,...]
"""

from __future__ import annotations

import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(__file__))

import cudalite  # noqa: E402
from _harness import Table, optional, per_call  # noqa: E402

torch = optional("torch")
cupy = optional("cupy")

INNER = [16, 64, 256, 512, 1024, 2048, 4096, 8192, 16384, 65536]


def inputs(rows, cols):
    x = {"cudalite": cudalite.randn(rows, cols, device="cuda")}
    if torch:
        x["torch"] = torch.randn(rows, cols, device="cuda")
    if cupy:
        x["cupy"] = cupy.random.standard_normal((rows, cols), dtype="float32")
    return x


def sync(lib):
    if lib == "cudalite":
        return cudalite.cuda.synchronize
    if lib == "torch":
        return torch.cuda.synchronize
    return cupy.cuda.Device().synchronize


def call(lib, x, op, dim):
    if lib == "cupy":
        return lambda: getattr(x, op)(axis=dim)
    return lambda: getattr(x, op)(dim=dim)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--total", type=int, default=32, help="elements per tensor, in Mi")
    ap.add_argument("--dims", default="1,0")
    ap.add_argument("--ops", default="sum,max,argmax")
    ap.add_argument("--inner", default=",".join(map(str, INNER)), help="row lengths")
    args = ap.parse_args()
    if not cudalite.cuda.is_available():
        print("no CUDA GPU visible: nothing to measure")
        return
    n = args.total * 2**20
    for dim in (int(d) for d in args.dims.split(",")):
        t = Table(
            f"x.op(dim={dim}) of float32 [rows, cols], {args.total} Mi elements (GB/s read)",
            unit="GB/s",
            higher_is_better=True,
        )
        for inner in (int(i) for i in args.inner.split(",")):
            rows, cols = n // inner, inner
            x = inputs(rows, cols)
            for op in args.ops.split(","):
                row = {
                    lib: n * 4 / per_call(call(lib, v, op, dim), repeat=5, sync=sync(lib)) / 1e9
                    for lib, v in x.items()
                }
                t.add(f"{op} [{rows}, {cols}]", **row)
            del x
        print(t.render(), flush=True)


if __name__ == "__main__":
    main()
