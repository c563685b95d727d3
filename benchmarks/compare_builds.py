"""Two builds of cudalite side by side (old against new), on one machine in one run: tiny-op
latency, host time of parsed calls, bandwidth rows, the MLP training step, the regression
loop and ``import cudalite``. Prints old / new / ratio per case (ratio = new time / old
time, for bandwidth old GB/s / new GB/s: above 1 means new is slower) with the spread of the
runs.

    python benchmarks/compare_builds.py OLD_SITE NEW_SITE [--device cuda|cpu] [--rounds 3]

OLD_SITE and NEW_SITE are folders that hold a ``cudalite`` package (``pip install
--target``, or a source tree's ``python`` folder with its built ``_C``). Each round runs one
fresh process per build, in alternating order (old first in even rounds, new first in odd
ones), so drift of the machine affects both alike; every figure of a process is itself a
median of repeats, and the table shows the median over the rounds. ``import cudalite`` is
timed in fresh interpreters, old and new interleaved. scripts/gpu_compare_commits.sh builds
the two and runs this.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from _harness import fmt_time  # noqa: E402

# ---- one build, in its own process (--measure) ----


def _measure(device, quick):
    sys.modules["torch"] = None  # the benchmarks' torch columns stay empty: cudalite only
    sys.path.insert(0, HERE)
    import bench_training as bt
    import cudalite
    from _harness import per_call_stats

    cuda = device == "cuda"
    if cuda and not cudalite.cuda.is_available():
        raise SystemExit("no CUDA GPU visible")
    sync = cudalite.cuda.synchronize if cuda else None
    out = {}

    def timed(section, case, fn, **kw):
        out[f"{section}: {case}"] = {"unit": "s", "value": per_call_stats(fn, sync=sync, **kw)[0]}

    # tiny-op latency: 1-element tensors (launch-bound on CUDA, host-bound on the CPU); a
    # CUDA run times the CPU tensors' calls too
    for dev in dict.fromkeys((device, "cpu")):
        a = cudalite.randn(1, device=dev)
        b = cudalite.randn(1, device=dev)
        one = f"1-element, {dev}"
        s = sync if dev == device else None
        calls = {
            "a + b": lambda: a + b,
            "a.add_(b)": lambda: a.add_(b),
            "a.sum()": lambda: a.sum(),
            "a.item()": lambda: a.item(),
            "torch.empty(1)": lambda dev=dev: cudalite.empty(1, device=dev),
        }
        for case, fn in calls.items():
            value = per_call_stats(fn, sync=s, repeat=9)[0]
            out[f"{one}: {case}"] = {"unit": "s", "value": value}

    # host time of calls that the parser binds (CPU tensors: no launch in the figure)
    c = cudalite.randn(4)
    m = cudalite.randn(3, 3)
    host = "host, CPU tensors"
    calls = {
        "a.sum(0)": lambda: c.sum(0),
        "a.view(2, 2)": lambda: c.view(2, 2),
        "a.clamp(min=0)": lambda: c.clamp(min=0),
        "m.diagonal()": lambda: m.diagonal(),
        "a.unfold(0, 2, 1)": lambda: c.unfold(0, 2, 1),
        "a.movedim(0, 0)": lambda: c.movedim(0, 0),
        "a.as_strided((2,), (1,))": lambda: c.as_strided((2,), (1,)),
        "torch.empty_strided((2,), (1,))": lambda: cudalite.empty_strided((2,), (1,)),
    }
    for case, fn in calls.items():
        out[f"{host}: {case}"] = {"unit": "s", "value": per_call_stats(fn, repeat=9)[0]}

    # bandwidth rows
    n = (2**22 if quick else 2**26) if cuda else 2**20
    x = cudalite.randn(n, device=device)
    y = cudalite.randn(n, device=device)
    z = cudalite.empty(n, device=device)
    mt = cudalite.randn(4096, n // 4096, device=device).t()
    bw = f"bandwidth, {n // 2**20} Mi float32"
    rows = {
        "add(out=)": (3 * 4 * n, lambda: cudalite.add(x, y, out=z)),
        "x + y": (3 * 4 * n, lambda: x + y),
        "exp(x)": (2 * 4 * n, lambda: x.exp()),
        "x.sum()": (4 * n, lambda: x.sum()),
        "x.t().contiguous()": (2 * 4 * n, lambda: mt.contiguous()),
    }
    for case, (nbytes, fn) in rows.items():
        t = per_call_stats(fn, sync=sync, repeat=7, number=None if not cuda else 5)[0]
        out[f"{bw}: {case}"] = {"unit": "GB/s", "value": nbytes / t / 1e9}

    # training
    lib = bt.Lib(cudalite, device)
    width = 1024 if cuda else 256
    step = bt.mlp_step(lib, width=width)
    timed("training", f"MLP 3x{width}, batch 256: one SGD step", step, repeat=7, min_time=0.2)
    run = bt.regression(lib)
    timed("training", "Linear(1,1) regression: 200 steps", run, repeat=7, min_time=0.2)
    return out


# ---- the comparison (the default) ----


def _env(site):
    env = dict(os.environ)
    env["PYTHONPATH"] = site
    return env


def _run_measure(site, device, quick):
    cmd = [sys.executable, os.path.abspath(__file__), "--measure", "--device", device]
    if quick:
        cmd.append("--quick")
    r = subprocess.run(cmd, env=_env(site), capture_output=True, text=True, timeout=600)
    if r.returncode != 0:
        sys.stderr.write(r.stdout + r.stderr)
        raise SystemExit(f"the measuring process failed with {site}")
    return json.loads(r.stdout.strip().splitlines()[-1])


def _import_times(sites, n):
    code = "import time; t = time.perf_counter(); import cudalite; print(time.perf_counter() - t)"
    times = {k: [] for k in sites}
    for _ in range(n):
        for which, site in sites.items():
            r = subprocess.run(
                [sys.executable, "-c", code], env=_env(site), capture_output=True, text=True
            )
            if r.returncode != 0:
                sys.stderr.write(r.stderr)
                raise SystemExit(f"import cudalite failed with {site}")
            times[which].append(float(r.stdout.strip().splitlines()[-1]))
    return times


def _which_cudalite(site):
    code = "import cudalite, os; print(os.path.dirname(cudalite.__file__))"
    r = subprocess.run([sys.executable, "-c", code], env=_env(site), capture_output=True, text=True)
    return r.stdout.strip() or r.stderr.strip().splitlines()[-1]


def _spread(v):
    """(max - min) / median of the runs, in percent: the noise the ratio stands in."""
    med = statistics.median(v)
    return 100 * (max(v) - min(v)) / med if med else 0.0


def _fmt(value, unit):
    return f"{value:9.1f} GB/s" if unit == "GB/s" else fmt_time(value)


def compare(old, new, device, rounds, imports, quick):
    sites = {"old": old, "new": new}
    for which, site in sites.items():
        print(f"{which}: {_which_cudalite(site)}")
    t0 = time.perf_counter()
    runs = {"old": [], "new": []}
    for r in range(rounds):
        for which in ("old", "new") if r % 2 == 0 else ("new", "old"):
            runs[which].append(_run_measure(sites[which], device, quick))
    imp = _import_times(sites, imports)
    cases = list(runs["new"][0])
    header = f"{'case':58s}{'old':>16s}{'new':>16s}{'ratio':>8s}{'spread old/new':>17s}"
    print(f"\n{device}, {rounds} processes per build (median of them; ratio = new/old time)")
    print(header)
    section = None
    worst = []
    rows = [(c, runs["old"], runs["new"]) for c in cases]
    for case, o_runs, n_runs in rows:
        sec, name = case.split(": ", 1)
        if sec != section:
            print(f"-- {sec}")
            section = sec
        unit = n_runs[0][case]["unit"]
        ov = [r[case]["value"] for r in o_runs if case in r]
        nv = [r[case]["value"] for r in n_runs]
        if not ov:
            print(f"  {name:56s}{'-':>16s}{_fmt(statistics.median(nv), unit):>16s}")
            continue
        o, n = statistics.median(ov), statistics.median(nv)
        ratio = (o / n) if unit == "GB/s" else (n / o)
        worst.append((ratio, case))
        spread = f"{_spread(ov):5.1f}%/{_spread(nv):4.1f}%"
        print(f"  {name:56s}{_fmt(o, unit):>16s}{_fmt(n, unit):>16s}{ratio:7.3f}x{spread:>17s}")
    print("-- import cudalite (fresh interpreters, interleaved)")
    o, n = statistics.median(imp["old"]), statistics.median(imp["new"])
    spread = f"{_spread(imp['old']):5.1f}%/{_spread(imp['new']):4.1f}%"
    worst.append((n / o, "import cudalite"))
    print(f"  {f'import ({imports} each)':56s}{_fmt(o, 's'):>16s}{_fmt(n, 's'):>16s}", end="")
    print(f"{n / o:7.3f}x{spread:>17s}")
    over = [(r, c) for r, c in worst if r > 1.05]
    listed = ", ".join(f"{c} {r:.3f}x" for r, c in over) or "none"
    print(f"\n{len(worst)} cases; above 1.05x: {listed}")
    print(f"({time.perf_counter() - t0:.0f} s)")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("old_site", nargs="?")
    ap.add_argument("new_site", nargs="?")
    ap.add_argument("--device", choices=["cuda", "cpu"], default=None)
    ap.add_argument("--rounds", type=int, default=3, help="processes per build (default 3)")
    ap.add_argument("--imports", type=int, default=20, help="fresh imports per build")
    ap.add_argument("--quick", action="store_true", help="smaller bandwidth tensors")
    ap.add_argument("--measure", action="store_true", help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.measure:
        print(json.dumps(_measure(a.device or "cpu", a.quick)))
        return
    if not (a.old_site and a.new_site):
        ap.error("give OLD_SITE and NEW_SITE")
    device = a.device
    if device is None:
        probe = "import cudalite; print(cudalite.cuda.is_available())"
        r = subprocess.run(
            [sys.executable, "-c", probe], env=_env(a.new_site), capture_output=True, text=True
        )
        device = "cuda" if r.stdout.strip() == "True" else "cpu"
    old, new = os.path.abspath(a.old_site), os.path.abspath(a.new_site)
    compare(old, new, device, a.rounds, a.imports, a.quick)


if __name__ == "__main__":
    main()
