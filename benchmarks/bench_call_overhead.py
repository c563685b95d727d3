"""Host time of tiny CPU ops, where argument parsing is most of the call: cudalite beside
torch (and NumPy where it has the call), median and best of several repeats of timeit.

    python benchmarks/bench_call_overhead.py [--repeat 9]
"""

from __future__ import annotations

import argparse
import statistics
import timeit

from _harness import optional

CALLS = [
    "a.add(b)",
    "a.sum(0)",
    "a.view(2, 2)",
    "t.zeros(3)",
    "a.mul_(2)",
    "a.sum(dim=0, keepdim=True)",
    "a.clamp(min=0)",
    "a.transpose(0, 0)",
    "t.add(a, b)",
    # calls whose Python definitions parse with torch's signatures on the way in
    "m.diagonal()",
    "a.unfold(0, 2, 1)",
    "a.movedim(0, 0)",
    "a.as_strided((2,), (1,))",
    "t.empty_strided((2,), (1,))",
    "a.sum_to_size(4)",
    "a.type_as(b)",
    "a.split([2, 2])",
]
NUMPY = {
    "a.add(b)": "np.add(a, b)",
    "a.sum(0)": "a.sum(0)",
    "t.zeros(3)": "np.zeros(3)",
    "a.sum(dim=0, keepdim=True)": "a.sum(axis=0, keepdims=True)",
}


def measure(setup, stmt, repeat):
    timer = timeit.Timer(stmt, setup)
    number, _ = timer.autorange()
    runs = [t / number for t in timer.repeat(repeat, number)]
    return statistics.median(runs), min(runs)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=9)
    ap.add_argument("--no-torch", action="store_true")
    opts = ap.parse_args()
    libs = [("cudalite", "import cudalite as t")]
    if not opts.no_torch and optional("torch") is not None:
        libs.append(("torch", "import torch as t"))
    print(f"{'call':32}" + "".join(f"{n + ' med/best (ns)':>28}" for n, _ in libs) + "   ratio")
    for stmt in CALLS:
        row, meds = f"{stmt:32}", []
        for _, imp in libs:
            med, best = measure(
                f"{imp}; a = t.ones(4); b = t.ones(4); m = t.ones(2, 2)", stmt, opts.repeat
            )
            meds.append(med)
            row += f"{med * 1e9:>19.0f} / {best * 1e9:<6.0f}"
        if len(meds) == 2:
            row += f"   {meds[0] / meds[1]:.2f}"
        print(row)


if __name__ == "__main__":
    main()
