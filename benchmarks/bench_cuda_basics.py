"""CUDA runtime basics side by side with torch and CuPy (issue 3), on a GPU machine.

Goals: import <= 0.10 s; first CUDA tensor in a new process <= 0.5 s wall (torch 2.8 s,
CuPy 0.7 s on an H200); `cpu_tensor.cuda()` of one element <= 6 us (torch 8.4 us);
`tensor([1., 2., 3.], device="cuda")` <= 7 us (torch 10.5 us); `.item()` <= torch.

    python benchmarks/bench_cuda_basics.py
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys

sys.path.insert(0, os.path.dirname(__file__))
import cudalite  # noqa: E402
from _harness import Table, optional, paired_tables, per_call_stats  # noqa: E402

torch = optional("torch")
cupy = optional("cupy")

FIRST_TENSOR = {
    "cudalite": "import cudalite; x = cudalite.ones(1, device='cuda'); x.item()",
    "torch": "import torch; x = torch.ones(1, device='cuda'); x.item()",
    "cupy": "import cupy; x = cupy.ones(1); x.item()",
}


def process_wall(code, runs=5):
    """Median wall seconds of a fresh interpreter running `code`, minus a bare one."""

    def one(c):
        ts = []
        for _ in range(runs):
            out = subprocess.run(
                [
                    sys.executable,
                    "-c",
                    "import time; t=time.perf_counter()\n" + c + "\nprint(time.perf_counter()-t)",
                ],
                capture_output=True,
                text=True,
            )
            if out.returncode != 0:
                return None
            ts.append(float(out.stdout.strip().splitlines()[-1]))
        return statistics.median(ts)

    return one(code)


def main():
    if not cudalite.cuda.is_available():
        print("no CUDA GPU visible: nothing to measure")
        return
    libs = {"cudalite": cudalite, "torch": torch, "cupy": cupy}
    cold = Table("new process (wall seconds)")
    cold.add("import", **{k: process_wall(f"import {k}") for k, m in libs.items() if m})
    cold.add(
        "first CUDA tensor (import + create + item)",
        **{k: process_wall(FIRST_TENSOR[k]) for k, m in libs.items() if m},
    )

    sync_c = cudalite.cuda.synchronize
    t, best = paired_tables("per call")

    def add(case, fns):
        """One row of both tables: {library: (fn, sync)} for the libraries importable here."""
        stats = {lib: per_call_stats(fn, sync=sync, repeat=15) for lib, (fn, sync) in fns.items()}
        t.add(case, **{lib: s[0] for lib, s in stats.items()})
        best.add(case, **{lib: s[1] for lib, s in stats.items()})

    one_c = cudalite.ones(1)
    fns = {"cudalite": (lambda: one_c.cuda(), sync_c)}
    if torch:
        one_t = torch.ones(1)
        fns["torch"] = (lambda: one_t.cuda(), torch.cuda.synchronize)
    if cupy:
        import numpy as np

        one_n = np.ones(1, np.float32)
        fns["cupy"] = (lambda: cupy.asarray(one_n), cupy.cuda.Device().synchronize)
    add("cpu_tensor_1elem.cuda()", fns)

    fns = {"cudalite": (lambda: cudalite.tensor([1.0, 2.0, 3.0], device="cuda"), sync_c)}
    if torch:
        fns["torch"] = (
            lambda: torch.tensor([1.0, 2.0, 3.0], device="cuda"),
            torch.cuda.synchronize,
        )
    if cupy:
        fns["cupy"] = (
            lambda: cupy.array([1.0, 2.0, 3.0], dtype=cupy.float32),
            cupy.cuda.Device().synchronize,
        )
    add("tensor([1., 2., 3.], device='cuda')", fns)

    g_c = cudalite.ones(1, device="cuda")
    fns = {"cudalite": (lambda: g_c.item(), None)}
    if torch:
        g_t = torch.ones(1, device="cuda")
        fns["torch"] = (lambda: g_t.item(), None)
    if cupy:
        g_p = cupy.ones(1, dtype=cupy.float32)
        fns["cupy"] = (lambda: g_p.item(), None)
    add(".item() on a CUDA tensor", fns)
    print(cold.render())
    print(t.render())
    print(best.render())


if __name__ == "__main__":
    main()
