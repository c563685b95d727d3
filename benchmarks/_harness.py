"""Shared timing helpers for the benchmarks: medians, side-by-side rows, ratios.

GPU work is timed after a synchronize (or with events by the caller); every figure is the
median of several repeats, and inputs are random (never zeros).
"""

from __future__ import annotations

import importlib
import statistics
import time


def optional(name):
    """The module, or None when it is not importable here."""
    try:
        return importlib.import_module(name)
    except Exception:
        return None


def per_call(fn, **kwargs):
    """Median seconds per call of ``fn`` over ``repeat`` runs of ``number`` calls."""
    return per_call_stats(fn, **kwargs)[0]


def per_call_stats(fn, *, number=None, repeat=7, sync=None, min_time=0.05):
    """(median, best) seconds per call of ``fn`` over ``repeat`` runs of ``number`` calls.
    The median is every table's figure. The best run is what the host does without
    interference from other work on the machine (timeit's advice); the launch-bound tables
    show it too, because on the shared device machines that interference moves their
    medians by up to 40 % from one process to the next."""
    fn()
    if sync:
        sync()
    if number is None:
        number, t = 1, 0.0
        while True:
            t0 = time.perf_counter()
            for _ in range(number):
                fn()
            if sync:
                sync()
            t = time.perf_counter() - t0
            if t > min_time / 5 or number > 1_000_000:
                break
            number *= 10
        number = max(1, int(number * (min_time / max(t, 1e-9))))
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        for _ in range(number):
            fn()
        if sync:
            sync()
        times.append((time.perf_counter() - t0) / number)
    return statistics.median(times), min(times)


def paired_tables(title):
    """Two tables for one measurement: the median of the runs and the best run."""
    return Table(f"{title}, median of runs"), Table(f"{title}, best run")


def fmt_time(s):
    if s < 1e-6:
        return f"{s * 1e9:8.1f} ns"
    if s < 1e-3:
        return f"{s * 1e6:8.2f} us"
    if s < 1:
        return f"{s * 1e3:8.2f} ms"
    return f"{s:8.3f} s "


class Table:
    """Rows of (case, {library: value}) printed with cudalite's ratio to each other library."""

    def __init__(self, title, unit="time", higher_is_better=False):
        self.title, self.unit, self.hib = title, unit, higher_is_better
        self.rows = []

    def add(self, case, **values):
        self.rows.append((case, {k: v for k, v in values.items() if v is not None}))

    def render(self):
        libs = []
        for _, vals in self.rows:
            for k in vals:
                if k not in libs:
                    libs.append(k)
        out = [
            f"\n== {self.title} ({self.unit}; ratio = cudalite vs other, >1 means cudalite "
            f"is better) =="
        ]
        head = f"{'case':44s}" + "".join(f"{lib:>14s}" for lib in libs)
        others = [lib for lib in libs if lib != "cudalite"]
        head += "".join(f"{'vs ' + lib:>12s}" for lib in others)
        out.append(head)
        for case, vals in self.rows:
            line = f"{case:44s}"
            for lib in libs:
                v = vals.get(lib)
                if v is None:
                    line += f"{'-':>14s}"
                elif self.unit == "time":
                    line += f"{fmt_time(v):>14s}"
                else:
                    line += f"{v:14.2f}"
            for lib in others:
                a, b = vals.get("cudalite"), vals.get(lib)
                if a is None or b is None or a == 0 or b == 0:
                    line += f"{'-':>12s}"
                else:
                    r = (a / b) if self.hib else (b / a)
                    line += f"{r:11.2f}x"
            out.append(line)
        return "\n".join(out)
