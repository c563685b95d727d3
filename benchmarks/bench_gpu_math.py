"""GPU math side by side with torch and CuPy (issue 6), on a GPU machine.

Bandwidth counts bytes read + bytes written (each input read once, output written once);
each figure is the median of several timed runs after a warm-up, synchronised, on random
data. Goals: bandwidth-bound ops >= 0.97x torch (broadcast/non-contiguous >= 0.8x);
reductions >= 0.97x the better of torch and CuPy; randn/rand >= torch; Linear(4096, 4096)
on 8192 rows >= 0.97x torch (TF32 off); launch-bound 1-element ops: a + b <= 3.5 us,
a.add_(b) <= 3.0 us, a.sum() <= 4.0 us. Those ops are deferred and launched in batches
(docs/cuda.md); the rows "one launch per op" time them with that off, as torch launches.

    python benchmarks/bench_gpu_math.py [--quick] [--launch (the launch-bound tables only)]
        [--reductions (the reductions table only)] [--elementwise (that table only)]
"""

from __future__ import annotations

import os
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(__file__))
import cudalite  # noqa: E402
from _harness import Table, optional, paired_tables, per_call, per_call_stats  # noqa: E402

torch = optional("torch")
cupy = optional("cupy")
N = 256 * 2**20


def make(lib, n, dtype="float32", shape=None):
    shape = shape or (n,)
    if lib == "cudalite":
        return cudalite.randn(*shape, device="cuda", dtype=getattr(cudalite, dtype))
    if lib == "torch":
        return torch.randn(*shape, device="cuda", dtype=getattr(torch, dtype))
    return cupy.random.standard_normal(shape, dtype="float32").astype(dtype)


def syncs():
    out = {"cudalite": cudalite.cuda.synchronize}
    if torch:
        out["torch"] = torch.cuda.synchronize
    if cupy:
        out["cupy"] = cupy.cuda.Device().synchronize
    return out


def bandwidth(table, case, nbytes, fns):
    row = {}
    for lib, fn in fns.items():
        if fn is None:
            continue
        t = per_call(fn, repeat=7, number=5, sync=syncs()[lib])
        row[lib] = nbytes / t / 1e9
    table.add(case, **row)


def libs():
    return [lib for lib, m in (("cudalite", cudalite), ("torch", torch), ("cupy", cupy)) if m]


def elementwise(quick):
    n = N // 8 if quick else N
    t = Table(f"elementwise, {n // 2**20} Mi elements (GB/s)", unit="GB/s", higher_is_better=True)
    for dtype in ("float32", "float16", "bfloat16"):
        ls = [lib for lib in libs() if not (lib == "cupy" and dtype == "bfloat16")]
        x = {lib: make(lib, n, dtype) for lib in ls}
        y = {lib: make(lib, n, dtype) for lib in ls}
        z = {lib: make(lib, n, dtype) for lib in ls}
        isz = x["cudalite"].element_size()
        add_out = {
            "cudalite": lambda: cudalite.add(x["cudalite"], y["cudalite"], out=z["cudalite"])
        }
        if "torch" in x:
            add_out["torch"] = lambda: torch.add(x["torch"], y["torch"], out=z["torch"])
        if "cupy" in x:
            add_out["cupy"] = lambda: cupy.add(x["cupy"], y["cupy"], out=z["cupy"])
        bandwidth(t, f"add(out=) {dtype}", 3 * n * isz, add_out)
        bandwidth(
            t, f"x + y {dtype}", 3 * n * isz, {lib: (lambda lib=lib: x[lib] + y[lib]) for lib in x}
        )
        bandwidth(
            t, f"x ** 2 {dtype}", 2 * n * isz, {lib: (lambda lib=lib: x[lib] ** 2) for lib in x}
        )
        ex = {"cudalite": lambda: x["cudalite"].exp()}
        if "torch" in x:
            ex["torch"] = lambda: x["torch"].exp()
        if "cupy" in x:
            ex["cupy"] = lambda: cupy.exp(x["cupy"])
        bandwidth(t, f"exp(x) {dtype}", 2 * n * isz, ex)
    x = {lib: make(lib, n) for lib in libs()}
    cast = {"cudalite": lambda: x["cudalite"].half()}
    if torch:
        cast["torch"] = lambda: x["torch"].half()
    if cupy:
        cast["cupy"] = lambda: x["cupy"].astype("float16")
    bandwidth(t, "float32 -> float16 cast", n * 6, cast)
    rows, cols = 16384, n // 16384
    m = {lib: make(lib, n, shape=(rows, cols)) for lib in libs()}
    v = {lib: make(lib, cols, shape=(1, cols)) for lib in libs()}
    bandwidth(
        t,
        "broadcast (16384 x k) + (1 x k)",
        2 * n * 4 + cols * 4,
        {lib: (lambda lib=lib: m[lib] + v[lib]) for lib in m},
    )
    mt = {"cudalite": m["cudalite"].t()}
    if torch:
        mt["torch"] = m["torch"].t()
    if cupy:
        mt["cupy"] = m["cupy"].T
    bandwidth(
        t, "transposed x.t() * 2", 2 * n * 4, {lib: (lambda lib=lib: mt[lib] * 2) for lib in mt}
    )
    tc = {"cudalite": lambda: mt["cudalite"].contiguous()}
    if torch:
        tc["torch"] = lambda: mt["torch"].contiguous()
    if cupy:
        tc["cupy"] = lambda: cupy.ascontiguousarray(mt["cupy"])
    bandwidth(t, "transposing copy x.t().contiguous()", 2 * n * 4, tc)
    sl = {lib: (lambda lib=lib: m[lib][:, 1:] + 1) for lib in m}
    bandwidth(t, "sliced x[:, 1:] + 1", 2 * (n - rows) * 4, sl)
    return t


def reductions(quick):
    n = N // 8 if quick else N
    t = Table(
        f"reductions, {n // 2**20} Mi float32 (GB/s read)", unit="GB/s", higher_is_better=True
    )
    x = {lib: make(lib, n) for lib in libs()}
    for name in ("sum", "max", "argmax"):
        fns = {"cudalite": lambda name=name: getattr(x["cudalite"], name)()}
        if torch:
            fns["torch"] = lambda name=name: getattr(x["torch"], name)()
        if cupy:
            fns["cupy"] = lambda name=name: getattr(x["cupy"], name)()
        bandwidth(t, f"x.{name}() over all", n * 4, fns)
    rows, cols = 16384, n // 16384
    m = {lib: x[lib].reshape(rows, cols) for lib in x}
    for dim in (0, 1):
        for name in ("sum", "max", "argmax"):

            def f(lib, name=name, dim=dim):
                if lib == "cupy":
                    return getattr(m[lib], name)(axis=dim)
                return getattr(m[lib], name)(dim=dim)

            bandwidth(
                t,
                f"x.{name}(dim={dim}) of {rows}x{cols}",
                n * 4,
                {lib: (lambda lib=lib, f=f: f(lib)) for lib in m},
            )
    return t


def random_fill(quick):
    n = N // 8 if quick else N
    t = Table(f"random, {n // 2**20} Mi float32 (GB/s written)", unit="GB/s", higher_is_better=True)
    fns = {"cudalite": lambda: cudalite.randn(n, device="cuda")}
    if torch:
        fns["torch"] = lambda: torch.randn(n, device="cuda")
    if cupy:
        fns["cupy"] = lambda: cupy.random.standard_normal(n, dtype="float32")
    bandwidth(t, "randn", n * 4, fns)
    fns = {"cudalite": lambda: cudalite.rand(n, device="cuda")}
    if torch:
        fns["torch"] = lambda: torch.rand(n, device="cuda")
    if cupy:
        fns["cupy"] = lambda: cupy.random.random(n, dtype="float32")
    bandwidth(t, "rand", n * 4, fns)
    return t


def linear():
    t = Table("Linear(4096, 4096) on 8192 rows (TFLOP/s)", unit="TFLOP/s", higher_is_better=True)
    flops = 2 * 8192 * 4096 * 4096
    if torch:
        torch.backends.cuda.matmul.allow_tf32 = False
    for dtype in ("float32", "bfloat16"):
        x = {
            lib: make(lib, 0, dtype, (8192, 4096))
            for lib in libs()
            if lib != "cupy" or dtype == "float32"
        }
        w = {lib: make(lib, 0, dtype, (4096, 4096)) for lib in x}
        b = {lib: make(lib, 4096, dtype) for lib in x}
        fns = {}
        for lib in x:
            if lib == "cupy":
                fns[lib] = lambda: x["cupy"] @ w["cupy"].T + b["cupy"]
            else:
                mod = cudalite if lib == "cudalite" else torch
                fns[lib] = lambda mod=mod, lib=lib: mod.addmm(b[lib], x[lib], w[lib].t())
        row = {
            lib: flops / per_call(fn, repeat=7, number=3, sync=syncs()[lib]) / 1e12
            for lib, fn in fns.items()
        }
        t.add(f"addmm {dtype}", **row)
    return t


# The launch-bound cases, and the libraries each runs in (CuPy has no in-place add_).
LAUNCH_CASES = {
    "a + b": lambda a, b: a + b,
    "a.add_(b)": lambda a, b: a.add_(b),
    "a.sum()": lambda a, b: a.sum(),
}


def launch_libs(case):
    return [lib for lib in libs() if not (lib == "cupy" and case == "a.add_(b)")]


class one_launch_per_op:
    """cudalite with deferred launches off (docs/cuda.md): every op its own kernel, as torch."""

    def __enter__(self):
        self.was = cudalite._C._cuda._set_deferred_launches(False)

    def __exit__(self, *exc):
        cudalite._C._cuda._set_deferred_launches(self.was)


def launch_bound(repeat=15):
    t, best = paired_tables("launch-bound, 1-element CUDA tensors (time per call)")
    for name, f in LAUNCH_CASES.items():
        row, row_best = {}, {}
        for lib in launch_libs(name):
            a, b = make(lib, 1), make(lib, 1)
            fn = lambda a=a, b=b, f=f: f(a, b)  # noqa: E731
            row[lib], row_best[lib] = per_call_stats(fn, sync=syncs()[lib], repeat=repeat)
            if lib == "cudalite":
                with one_launch_per_op():
                    single = per_call_stats(fn, sync=syncs()[lib], repeat=repeat)
        t.add(name, **row)
        best.add(name, **row_best)
        t.add(f"{name}, one launch per op", **{**row, "cudalite": single[0]})
        best.add(f"{name}, one launch per op", **{**row_best, "cudalite": single[1]})
    return [t, best]


def host_cost(calls=200, repeat=15):
    """The host's time per call alone: the same calls timed while the GPU is still busy with
    an 8192-square matmul queued before them, so that neither the GPU nor a full launch
    queue paces the loop (the table above is the slower of host and GPU)."""
    t, best = paired_tables("launch-bound, host time per call while the GPU is busy")
    for name, f in LAUNCH_CASES.items():
        row, row_best = {}, {}
        for lib in launch_libs(name):
            a, b, big = make(lib, 1), make(lib, 1), make(lib, 0, shape=(8192, 8192))
            sync = syncs()[lib]

            def timed(a=a, b=b, big=big, f=f, sync=sync):
                times = []
                for _ in range(repeat + 1):
                    f(a, b)
                    big @ big
                    t0 = time.perf_counter()
                    for _ in range(calls):
                        f(a, b)
                    times.append((time.perf_counter() - t0) / calls)
                    sync()
                return statistics.median(times[1:]), min(times[1:])

            row[lib], row_best[lib] = timed()
            if lib == "cudalite":
                with one_launch_per_op():
                    single = timed()
            del big
        t.add(name, **row)
        best.add(name, **row_best)
        t.add(f"{name}, one launch per op", **{**row, "cudalite": single[0]})
        best.add(f"{name}, one launch per op", **{**row_best, "cudalite": single[1]})
    return [t, best]


def main():
    if not cudalite.cuda.is_available():
        print("no CUDA GPU visible: nothing to measure")
        return
    quick = "--quick" in sys.argv
    sections = [launch_bound, host_cost]
    if "--reductions" in sys.argv:
        sections = [lambda: reductions(quick)]
    elif "--elementwise" in sys.argv:
        sections = [lambda: elementwise(quick)]
    elif "--launch" not in sys.argv:
        sections += [
            lambda: elementwise(quick),
            lambda: reductions(quick),
            lambda: random_fill(quick),
            linear,
        ]
    for section in sections:
        tables = section()
        for table in tables if isinstance(tables, list) else [tables]:
            print(table.render(), flush=True)


if __name__ == "__main__":
    main()
