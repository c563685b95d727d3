"""Threads and the GIL: do large ops of two Python threads run at the same time?

cudalite's ops release the GIL around their work once it is large enough to matter (Note
[Releasing the GIL] in csrc/bindings/gil.h), as torch's and NumPy's do. Two measurements, each
next to torch (when importable) and NumPy:

    2 threads / 1   throughput of two threads, each running the same large op on its own
                    tensors, over one thread's (2.00 is perfect overlap; 1.00 is none)
    python beside   the rate of a pure-Python loop while another thread runs large ops, over
                    its rate alone (1.00: the op thread takes nothing from it)

Goals (issue 30): >= 1.7x with two threads on two cores, and >= 0.80 for the Python thread,
with every library's intra-op pool at one thread (set here before anything is imported and
with set_num_threads(1)). The last table checks both for every op, cudalite's figure first.
The figures depend on the machine being otherwise idle: the CPUs the process may use and
the load average are printed with them. On a machine with more cores, pin it to two:

    taskset -c 0,1 python benchmarks/bench_threads.py [--numel N] [--seconds S] [--device cpu|cuda]

Each op's line of the last table is printed as soon as it is measured (about 5 s an op with
the defaults, under a minute in all); the tables of figures follow. `randn(n)` draws from one
Generator per thread, as independent work does (threads drawing from one generator take
turns, in torch as in cudalite). A run that stops making progress for --stall-limit seconds
prints every thread's Python stack and exits instead of waiting forever.
"""

from __future__ import annotations

import argparse
import faulthandler
import os
import statistics
import sys
import threading
import time

# One thread per library's intra-op pool (NumPy's BLAS, torch's OpenMP pool, cudalite's copy
# workers), before any of them is imported.
for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "CUDALITE_COPY_THREADS"):
    os.environ.setdefault(_var, "1")

import numpy as np  # noqa: E402

sys.path.insert(0, os.path.dirname(__file__))
import cudalite  # noqa: E402
from _harness import Table, optional  # noqa: E402

torch = optional("torch")

OVERLAP_GOAL = 1.7  # two threads' throughput over one thread's
BESIDE_GOAL = 0.80  # a pure-Python thread's rate beside large ops over its rate alone


def single_threaded(lib):
    if hasattr(lib, "set_num_threads"):
        lib.set_num_threads(1)


# Each workload: (name, make(lib, numel, device) -> state, op(state) -> None).
def _make_pair(lib, n, device):
    if lib is np:
        rng = np.random.default_rng(0)
        return rng.random(n, dtype=np.float32), rng.random(n, dtype=np.float32)
    return lib.rand(n, device=device), lib.rand(n, device=device)


def _make_out(lib, n, device):
    a, b = _make_pair(lib, n, device)
    return a, b, (np.empty_like(a) if lib is np else lib.empty_like(a))


def _make_square(lib, n, device):
    side = max(1, int((n // 8) ** 0.5))  # a product of about as many flops as n elements
    if lib is np:
        return (np.random.default_rng(0).random((side, side), dtype=np.float32),)
    return (lib.rand(side, side, device=device),)


def _make_randn(lib, n, device):
    # Its own generator, as each thread of independent work has.
    if lib is np:
        return n, device, np.random.default_rng(0)
    return n, device, lib.Generator(device=device).manual_seed(0)


def _randn(lib, s):
    if lib is np:
        return s[2].standard_normal(s[0], dtype=np.float32)
    return lib.randn(s[0], device=s[1], generator=s[2])


WORKLOADS = {
    "a + b": (_make_pair, lambda lib, s: s[0] + s[1]),
    "add(a, b, out=c)": (
        _make_out,
        lambda lib, s: np.add(s[0], s[1], out=s[2]) if lib is np else lib.add(s[0], s[1], out=s[2]),
    ),
    "a.sum()": (_make_pair, lambda lib, s: s[0].sum()),
    "a.exp()": (_make_pair, lambda lib, s: np.exp(s[0]) if lib is np else s[0].exp()),
    "a.to(float64)": (
        _make_pair,
        lambda lib, s: s[0].astype(np.float64) if lib is np else s[0].to(lib.float64),
    ),
    "randn(n)": (_make_randn, _randn),
    "m @ m": (_make_square, lambda lib, s: s[0] @ s[0]),
    "a.mul_(1.0001)": (
        _make_pair,
        lambda lib, s: np.multiply(s[0], 1.0001, out=s[0]) if lib is np else s[0].mul_(1.0001),
    ),
}


def _sync(lib, device):
    if device == "cuda" and lib is not np:
        lib.cuda.synchronize()


def ops_per_second(lib, op, states, device, seconds):
    """Total ops per second of len(states) threads, each running `op` on its own state."""
    threads = len(states)
    counts = [0] * threads
    start = threading.Barrier(threads + 1)
    stop = threading.Event()

    def work(i):
        s = states[i]
        start.wait()
        while not stop.is_set():
            op(lib, s)
            counts[i] += 1
        _sync(lib, device)

    ts = [threading.Thread(target=work, args=(i,)) for i in range(threads)]
    for t in ts:
        t.start()
    start.wait()
    t0 = time.perf_counter()
    time.sleep(seconds)
    stop.set()
    for t in ts:
        t.join()
    return sum(counts) / (time.perf_counter() - t0)


def python_loop(stop, out):
    n = 0
    x = 0
    while not stop.is_set():
        for i in range(1000):
            x = (x + i * 7) % 1013
        n += 1
    out.append(n)


def python_rate(seconds, beside=None):
    """Iterations per second of a pure-Python loop, alone or beside `beside()` in a loop."""
    stop = threading.Event()
    out = []
    helper = None
    if beside is not None:

        def run_ops():
            while not stop.is_set():
                beside()

        helper = threading.Thread(target=run_ops)
        helper.start()
        time.sleep(0.05)
    t = threading.Thread(target=python_loop, args=(stop, out))
    t0 = time.perf_counter()
    t.start()
    time.sleep(seconds)
    stop.set()
    t.join()
    elapsed = time.perf_counter() - t0
    if helper:
        helper.join()
    return out[0] / elapsed


def criteria_header(libs):
    """The head of the table of the two GIL criteria: cudalite's figure against its goal,
    then the other libraries' figures for reference."""
    others = [k for k in libs if k != "cudalite"]
    return "\n".join(
        [
            f"\n== GIL criteria (goals: 2 threads / 1 >= {OVERLAP_GOAL:.2f}x; Python thread "
            f"beside large ops >= {BESIDE_GOAL:.2f} of alone) ==",
            f"{'op':18s}{'2 threads / 1':>16s}{'':8s}{'python beside':>16s}{'':8s}"
            + "".join(f"{k + ' (2t, py)':>22s}" for k in others),
        ]
    )


def criteria_line(name, ratios, keeps):
    """One op's line of that table, and how many of its two goals cudalite meets."""
    r, k = ratios["cudalite"], keeps["cudalite"]
    ok_r, ok_k = r >= OVERLAP_GOAL, k >= BESIDE_GOAL
    line = f"{name:18s}{r:15.2f}x{'  met' if ok_r else '  MISSED':8s}"
    line += f"{k:16.2f}{'  met' if ok_k else '  MISSED':8s}"
    line += "".join(
        f"{f'{ratios[o]:.2f}x, {keeps[o]:.2f}':>22s}" for o in ratios if o != "cudalite"
    )
    return line, ok_r + ok_k


def measure_op(name, libs, args):
    """(ratios, rates, keeps) of one op for every library: the median over --repeat rounds,
    each round timing one thread, two threads and the Python thread beside the op for every
    library in turn (so that a change in the machine's load shifts all of them alike)."""
    dev = args.device
    make, op = WORKLOADS[name]
    states = {}
    for lib_name, lib in libs.items():
        states[lib_name] = [make(lib, args.numel, dev) for _ in range(2)]
        for s in states[lib_name]:
            op(lib, s)
        _sync(lib, dev)
    one = {k: [] for k in libs}
    two = {k: [] for k in libs}
    keep = {k: [] for k in libs}
    for _ in range(args.repeat):
        alone = python_rate(args.seconds)
        for lib_name, lib in libs.items():
            st = states[lib_name]
            one[lib_name].append(ops_per_second(lib, op, st[:1], dev, args.seconds))
            two[lib_name].append(ops_per_second(lib, op, st, dev, args.seconds))
            beside = python_rate(args.seconds, beside=lambda lib=lib, s=st[0]: op(lib, s))
            keep[lib_name].append(beside / alone)
    rates = {k: statistics.median(v) for k, v in one.items()}
    ratios = {k: statistics.median(two[k]) / rates[k] for k in libs}
    keeps = {k: statistics.median(v) for k, v in keep.items()}
    return ratios, rates, keeps


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--numel", type=int, default=1 << 22)
    p.add_argument("--seconds", type=float, default=0.15, help="length of one measurement")
    p.add_argument("--repeat", type=int, default=3, help="median of this many measurements")
    p.add_argument("--device", default="cpu", choices=["cpu", "cuda"])
    p.add_argument("--ops", nargs="*", default=list(WORKLOADS))
    p.add_argument(
        "--stall-limit",
        type=float,
        default=60.0,
        help="seconds without a finished op after which every thread's stack is printed and "
        "the run stops",
    )
    args = p.parse_args()

    libs = {"cudalite": cudalite, "numpy": np, "torch": torch}
    if args.device == "cuda":
        libs.pop("numpy")
        if torch is not None and not torch.cuda.is_available():
            libs.pop("torch")
    libs = {k: v for k, v in libs.items() if v is not None}
    for lib in libs.values():
        single_threaded(lib)
    dev = args.device
    began = time.perf_counter()

    cpus = sorted(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else None
    print(
        f"{args.numel} float32 elements on {dev}; {os.cpu_count()} CPUs, this process may run "
        f"on {len(cpus) if cpus else '?'} ({','.join(map(str, cpus or []))}); load average "
        f"before: {' '.join(f'{x:.2f}' for x in os.getloadavg())}; libraries: "
        f"{', '.join(libs)}",
        flush=True,
    )
    overlap = Table("2 threads / 1 thread, ops per second", unit="ratio", higher_is_better=True)
    solo = Table("1 thread, ops per second", unit="ops/s", higher_is_better=True)
    beside = Table(
        "pure-Python thread beside a thread of large ops / alone",
        unit="ratio",
        higher_is_better=True,
    )
    print(criteria_header(libs), flush=True)
    met = 0
    for name in args.ops:
        # A stall (a deadlock, or an op that never returns) shows where every thread is.
        faulthandler.dump_traceback_later(args.stall_limit, exit=True)
        ratios, rates, keeps = measure_op(name, libs, args)
        faulthandler.cancel_dump_traceback_later()
        line, ok = criteria_line(name, ratios, keeps)
        met += ok
        print(line, flush=True)
        overlap.add(name, **ratios)
        solo.add(name, **rates)
        beside.add(name, **keeps)
    print(f"cudalite meets {met} of {2 * len(args.ops)} goals")
    print(solo.render())
    print(overlap.render())
    print(beside.render())
    print(
        f"\nload average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}; "
        f"{time.perf_counter() - began:.0f} s in all"
    )


if __name__ == "__main__":
    main()
