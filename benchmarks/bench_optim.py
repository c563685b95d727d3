"""Optimizer step time side by side with torch: each optimizer's step() on
(a) 4 parameters of 2**20 float32 elements (bandwidth-bound) and
(b) 100 parameters of 1000 elements (per-op overhead-bound),
on CUDA when available, else the CPU. torch runs its single-tensor implementation
(foreach=False, what cudalite computes) and its default (foreach on CUDA).

    python benchmarks/bench_optim.py [--device cpu|cuda]

Run with an interpreter that has both cudalite and torch importable to get the ratios.
"""

from __future__ import annotations

import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(__file__))
import cudalite  # noqa: E402
from _harness import Table, optional, per_call  # noqa: E402

torch = optional("torch")

OPTIMIZERS = [
    ("SGD", {"lr": 0.01, "momentum": 0.9}),
    ("Adam", {}),
    ("AdamW", {}),
    ("RMSprop", {}),
    ("Adagrad", {}),
    ("Adadelta", {}),
    ("Adamax", {}),
    ("NAdam", {}),
    ("RAdam", {}),
    ("Rprop", {}),
    ("ASGD", {}),
    ("Adafactor", {}),
]
SHAPES = {"4 x 2**20": [(1 << 20,)] * 4, "100 x 1000": [(1000,)] * 100}


def step_fn(mod, device, name, kwargs, shapes):
    mod.manual_seed(0)
    params = [mod.nn.Parameter(mod.randn(*s, device=device)) for s in shapes]
    for p in params:
        p.grad = mod.randn(*p.shape, device=device)
    opt = getattr(mod.optim, name)(params, **kwargs)
    opt.step()  # the state exists before timing
    return opt.step


def main():
    ap = argparse.ArgumentParser()
    has_cuda = cudalite._C._cuda.device_count() > 0
    ap.add_argument("--device", default="cuda" if has_cuda else "cpu")
    device = ap.parse_args().device
    syncs = {}
    if device == "cuda":
        syncs["cudalite"] = cudalite.cuda.synchronize
        if torch is not None:
            syncs["torch"] = torch.cuda.synchronize
    for shape_name, shapes in SHAPES.items():
        table = Table(f"optimizer step, {shape_name} float32 on {device}")
        for name, kwargs in OPTIMIZERS:
            times = {
                "cudalite": per_call(
                    step_fn(cudalite, device, name, kwargs, shapes), sync=syncs.get("cudalite")
                )
            }
            if torch is not None:
                single = {**kwargs, "foreach": False}  # (torch's Adafactor: its default too)
                times["torch_single"] = per_call(
                    step_fn(torch, device, name, single, shapes), sync=syncs.get("torch")
                )
                times["torch"] = per_call(
                    step_fn(torch, device, name, kwargs, shapes), sync=syncs.get("torch")
                )
            table.add(name, **times)
        print(table.render())


if __name__ == "__main__":
    main()
