"""Training benchmarks side by side with torch (issue 7), on CUDA when available, else CPU.

1. One training step (zero_grad, forward, MSE loss, backward, SGD step) of a 3-layer MLP:
   Linear(1024, 1024) -> ReLU -> Linear(1024, 1024) -> ReLU -> Linear(1024, 1024), batch 256,
   float32. Goal on the GPU: <= 0.8x torch's time.
2. The seeds' regression: Linear(1, 1) on 256 points, 200 SGD steps. Goal on the GPU:
   <= 0.6x torch's time (launch-bound: per-op overhead decides).
3. The per-step overhead of the same loop on tiny tensors (forward + backward + step), which
   is what the framework itself costs.

    python benchmarks/bench_training.py [--device cpu|cuda] [--phases]

Run with an interpreter that has both cudalite and torch importable to get the ratios.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(__file__))
import cudalite  # noqa: E402
from _harness import Table, optional, per_call  # noqa: E402

torch = optional("torch")


def _has_cuda():
    return cudalite._C._cuda.device_count() > 0


class Lib:
    """What the benchmark needs from a framework (cudalite or torch)."""

    def __init__(self, mod, device):
        self.mod, self.device = mod, device
        if device != "cuda":
            self.sync = None
        elif mod is not cudalite:
            self.sync = mod.cuda.synchronize
        else:
            cuda = getattr(cudalite, "cuda", None)
            self.sync = getattr(cuda, "synchronize", None) or (
                lambda: cudalite._C._cuda.synchronize(cudalite._C._cuda.current_device())
            )


def mlp_step(lib, width=1024, batch=256):
    t = lib.mod
    t.manual_seed(0)
    nn = t.nn
    model = nn.Sequential(
        nn.Linear(width, width),
        nn.ReLU(),
        nn.Linear(width, width),
        nn.ReLU(),
        nn.Linear(width, width),
    ).to(lib.device)
    x = t.randn(batch, width, device=lib.device)
    y = t.randn(batch, width, device=lib.device)
    opt = t.optim.SGD(model.parameters(), lr=1e-3)
    loss_fn = nn.MSELoss()

    def step():
        opt.zero_grad()
        loss = loss_fn(model(x), y)
        loss.backward()
        opt.step()

    return step


def mlp_phases(lib, steps=50):
    """The MLP step's phases, each timed to completion (synchronised before and after): where
    a step's time goes. Medians over `steps` steps, in seconds."""
    t = lib.mod
    t.manual_seed(0)
    nn = t.nn
    model = nn.Sequential(
        nn.Linear(1024, 1024), nn.ReLU(), nn.Linear(1024, 1024), nn.ReLU(), nn.Linear(1024, 1024)
    ).to(lib.device)
    x = t.randn(256, 1024, device=lib.device)
    y = t.randn(256, 1024, device=lib.device)
    opt = t.optim.SGD(model.parameters(), lr=1e-3)
    loss_fn = nn.MSELoss()
    sync = lib.sync or (lambda: None)
    times = {"zero_grad": [], "forward + loss": [], "backward": [], "optimizer step": []}
    for i in range(steps + 5):
        sync()
        t0 = time.perf_counter()
        opt.zero_grad()
        sync()
        t1 = time.perf_counter()
        loss = loss_fn(model(x), y)
        sync()
        t2 = time.perf_counter()
        loss.backward()
        sync()
        t3 = time.perf_counter()
        opt.step()
        sync()
        t4 = time.perf_counter()
        if i >= 5:
            for k, a, b in zip(times, (t0, t1, t2, t3), (t1, t2, t3, t4), strict=True):
                times[k].append(b - a)
    return {k: statistics.median(v) for k, v in times.items()}


def regression(lib, steps=200, points=256):
    t = lib.mod
    t.manual_seed(0)
    x = t.linspace(-1, 1, points, device=lib.device).reshape(points, 1)
    y = 3 * x + 0.5

    class LinearRegression(t.nn.Module):
        def __init__(self):
            super().__init__()
            self.linear = t.nn.Linear(1, 1)

        def forward(self, x):
            return self.linear(x)

    model = LinearRegression().to(device=lib.device)
    opt = t.optim.SGD(model.parameters(), lr=0.1)
    loss_fn = t.nn.MSELoss()

    def run():
        for _ in range(steps):
            opt.zero_grad()
            loss = loss_fn(model(x), y)
            loss.backward()
            opt.step()

    return run


def tiny_step(lib):
    """One step of a 2-layer MLP on 8x8 tensors: framework overhead only."""
    t = lib.mod
    t.manual_seed(0)
    nn = t.nn
    model = nn.Sequential(nn.Linear(8, 8), nn.ReLU(), nn.Linear(8, 1)).to(lib.device)
    x = t.randn(8, 8, device=lib.device)
    y = t.randn(8, 1, device=lib.device)
    opt = t.optim.SGD(model.parameters(), lr=1e-3)
    loss_fn = nn.MSELoss()

    def step():
        opt.zero_grad()
        loss_fn(model(x), y).backward()
        opt.step()

    return step


def tiny_forward(lib):
    t = lib.mod
    nn = t.nn
    model = nn.Sequential(nn.Linear(8, 8), nn.ReLU(), nn.Linear(8, 1)).to(lib.device)
    x = t.randn(8, 8, device=lib.device)

    def fwd():
        model(x)

    return fwd


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--device", choices=["cpu", "cuda"], default=None)
    ap.add_argument("--repeat", type=int, default=7)
    ap.add_argument("--phases", action="store_true", help="also time the MLP step by phase")
    args = ap.parse_args()
    device = args.device or ("cuda" if _has_cuda() else "cpu")
    libs = {"cudalite": Lib(cudalite, device)}
    if torch is not None and (device == "cpu" or torch.cuda.is_available()):
        torch.set_num_threads(os.cpu_count() or 1)
        libs["torch"] = Lib(torch, device)

    table = Table(f"training on {device} (time per call)")
    cases = [
        ("MLP 3x1024, batch 256: one SGD step", mlp_step, 0.5),
        ("Linear(1,1) regression: 200 steps", regression, 0.5),
        ("tiny MLP (8x8): one step (overhead)", tiny_step, 0.2),
        ("tiny MLP (8x8): forward only", tiny_forward, 0.2),
    ]
    for name, make, min_time in cases:
        row = {}
        for lib_name, lib in libs.items():
            fn = make(lib)
            row[lib_name] = per_call(fn, repeat=args.repeat, sync=lib.sync, min_time=min_time)
        table.add(name, **row)
    print(table.render())
    if args.phases:
        phases = Table(f"MLP 3x1024 step on {device}, by phase (each synchronised; median)")
        by_lib = {name: mlp_phases(lib) for name, lib in libs.items()}
        for phase in by_lib["cudalite"]:
            phases.add(phase, **{name: v[phase] for name, v in by_lib.items()})
        print(phases.render())
    if "torch" in libs:
        print(
            "\nratio = torch time / cudalite time; goals on the GPU: MLP step >= 1.25x "
            "(cudalite <= 0.8x torch), regression >= 1.67x (cudalite <= 0.6x torch)"
        )


if __name__ == "__main__":
    main()
