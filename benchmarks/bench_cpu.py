"""Foundation benchmarks on the CPU, side by side with NumPy (and torch when importable).

Goals (issue 2): import <= 0.10 s above a bare interpreter; `a + b` on 3-element tensors and
`tensor([1., 2., 3.])` each <= 2x NumPy; float32 add of 16 Mi elements >= 0.7x NumPy;
1024x1024 float32 matmul >= 0.8x NumPy.

    python benchmarks/bench_cpu.py
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(__file__))
import cudalite  # noqa: E402
from _harness import Table, optional, per_call  # noqa: E402

torch = optional("torch")


def import_time(module, runs=7):
    """Median wall time of `python -c 'import module'` minus a bare interpreter."""

    def wall(code):
        ts = []
        for _ in range(runs):
            out = subprocess.run(
                [
                    sys.executable,
                    "-c",
                    "import time; t=time.perf_counter(); "
                    + code
                    + "; print(time.perf_counter()-t)",
                ],
                capture_output=True,
                text=True,
                check=True,
            )
            ts.append(float(out.stdout.strip().splitlines()[-1]))
        return statistics.median(ts)

    return wall(f"import {module}") if module else 0.0


def main():
    t = Table("CPU: launch-bound and bandwidth-bound work")
    imp = Table("import (s above a bare interpreter)")
    imp.add(
        "import",
        cudalite=import_time("cudalite"),
        numpy=import_time("numpy"),
        torch=import_time("torch") if torch else None,
    )

    a, b = cudalite.tensor([1.0, 2.0, 3.0]), cudalite.tensor([4.0, 5.0, 6.0])
    na, nb = np.array([1.0, 2.0, 3.0], np.float32), np.array([4.0, 5.0, 6.0], np.float32)
    ta = tb = None
    if torch:
        ta, tb = torch.tensor([1.0, 2.0, 3.0]), torch.tensor([4.0, 5.0, 6.0])
    t.add(
        "a + b, 3 elements",
        cudalite=per_call(lambda: a + b),
        numpy=per_call(lambda: na + nb),
        torch=per_call(lambda: ta + tb) if torch else None,
    )
    t.add(
        "tensor([1., 2., 3.])",
        cudalite=per_call(lambda: cudalite.tensor([1.0, 2.0, 3.0])),
        numpy=per_call(lambda: np.array([1.0, 2.0, 3.0], np.float32)),
        torch=per_call(lambda: torch.tensor([1.0, 2.0, 3.0])) if torch else None,
    )

    # Everyday calls whose cost is all overhead (Notes [empty in one call], [Basic indexing
    # in C++], [Tensor attributes in C]); NumPy's equivalents where it has one.
    every = Table("CPU: everyday calls on a 4x4 float32 tensor (per call)")
    libs = {"cudalite": cudalite, "numpy": np, "torch": torch}
    xs = {k: (m.ones((4, 4), dtype=m.float32) if m else None) for k, m in libs.items()}
    cases = [
        ("x.shape[0]", lambda m, x: lambda: x.shape[0]),
        ("x.dtype", lambda m, x: lambda: x.dtype),
        ("x.device", lambda m, x: (lambda: x.device) if m is not np else None),
        ("len(x)", lambda m, x: lambda: len(x)),
        ("x[0]", lambda m, x: lambda: x[0]),
        ("x[:, 1:]", lambda m, x: lambda: x[:, 1:]),
        ("empty(16)", lambda m, x: lambda: m.empty(16)),
        ("zeros(16)", lambda m, x: lambda: m.zeros(16)),
    ]
    for name, make in cases:
        row = {}
        for k, m in libs.items():
            fn = make(m, xs[k]) if m else None
            row[k] = per_call(fn) if fn else None
        every.add(name, **row)

    n = 16 * 2**20
    rng = np.random.default_rng(0)
    x_np, y_np = rng.standard_normal(n, np.float32), rng.standard_normal(n, np.float32)
    z_np = np.empty_like(x_np)
    x, y, z = cudalite.from_numpy(x_np), cudalite.from_numpy(y_np), cudalite.empty(n)
    bw = Table("CPU bandwidth (GB/s, bytes read + written)", unit="GB/s", higher_is_better=True)
    nbytes = 3 * 4 * n
    row = dict(
        cudalite=nbytes / per_call(lambda: cudalite.add(x, y, out=z), repeat=5) / 1e9,
        numpy=nbytes / per_call(lambda: np.add(x_np, y_np, out=z_np), repeat=5) / 1e9,
    )
    if torch:
        tx, ty, tz = torch.from_numpy(x_np), torch.from_numpy(y_np), torch.empty(n)
        row["torch"] = nbytes / per_call(lambda: torch.add(tx, ty, out=tz), repeat=5) / 1e9
    bw.add("add(out=), 16 Mi float32", **row)
    # Transposed operands: the loop runs in the output's memory order (one dense run here).
    mt_np, zt_np = x_np.reshape(4096, -1).T, np.empty_like(x_np).reshape(4096, -1).T
    mt, zt = x.reshape(4096, -1).t(), z.reshape(4096, -1).t()
    nbytes = 2 * 4 * n
    row = dict(
        cudalite=nbytes / per_call(lambda: cudalite.mul(mt, 2, out=zt), repeat=5) / 1e9,
        numpy=nbytes / per_call(lambda: np.multiply(mt_np, 2, out=zt_np), repeat=5) / 1e9,
    )
    if torch:
        tmt, tzt = tx.reshape(4096, -1).t(), tz.reshape(4096, -1).t()
        row["torch"] = nbytes / per_call(lambda: torch.mul(tmt, 2, out=tzt), repeat=5) / 1e9
    bw.add("mul(x.t(), 2, out=z.t()), 16 Mi float32", **row)

    mm = Table("CPU matmul (GFLOP/s)", unit="GFLOP/s", higher_is_better=True)
    m_np = rng.standard_normal((1024, 1024), np.float32)
    m = cudalite.from_numpy(m_np)
    flops = 2 * 1024**3
    row = dict(
        cudalite=flops / per_call(lambda: m @ m, repeat=5) / 1e9,
        numpy=flops / per_call(lambda: m_np @ m_np, repeat=5) / 1e9,
    )
    if torch:
        tm = torch.from_numpy(m_np)
        row["torch"] = flops / per_call(lambda: tm @ tm, repeat=5) / 1e9
    mm.add("1024x1024 float32", **row)
    for table in (imp, t, every, bw, mm):
        print(table.render())


if __name__ == "__main__":
    main()
