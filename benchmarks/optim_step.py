"""Optimizer step over a GPT's parameters, for-loop vs foreach vs fused, beside torch: Adam,
AdamW and SGD (momentum 0.9) on the parameter list of nanoGPT's shakespeare_char model
(6 layers, 6 heads, 384 wide, block 256, vocabulary 65, no biases: 10.65 M parameters in 39
tensors), GradScaler's ``unscale_`` + ``update`` and ``clip_grad_norm_`` (torch's
``_foreach_norm`` per group, the total norm, one ``_foreach_mul_``) over the same gradients.
Each case is timed in alternating rounds, cudalite and torch taking turns, and the median round
is the figure (the step times move by tens of percent from one measurement to the next on a
shared machine, which one measurement per library would turn into the ratio). On CUDA when a
GPU is visible, else the CPU; float32 parameters and gradients (``--dtype bfloat16`` for
16-bit ones).

    python benchmarks/optim_step.py [--device cpu|cuda] [--dtype float32|bfloat16]

Run with an interpreter that has both cudalite and torch importable to get the ratios; the
last table is cudalite's own speed-up of foreach and fused over its for-loop step.
"""

from __future__ import annotations

import argparse
import math
import os
import statistics
import sys

sys.path.insert(0, os.path.dirname(__file__))
import cudalite  # noqa: E402
from _harness import Table, optional, per_call  # noqa: E402

torch = optional("torch")

N_LAYER, N_EMBD, BLOCK, VOCAB = 6, 384, 256, 65


def gpt_shapes():
    """nanoGPT's parameter shapes (bias=False; the output layer shares wte)."""
    shapes = [(VOCAB, N_EMBD), (BLOCK, N_EMBD)]
    for _ in range(N_LAYER):
        shapes += [
            (N_EMBD,),  # ln_1
            (3 * N_EMBD, N_EMBD),  # attn.c_attn
            (N_EMBD, N_EMBD),  # attn.c_proj
            (N_EMBD,),  # ln_2
            (4 * N_EMBD, N_EMBD),  # mlp.c_fc
            (N_EMBD, 4 * N_EMBD),  # mlp.c_proj
        ]
    return shapes + [(N_EMBD,)]  # ln_f


OPTIMIZERS = [
    ("Adam", {"lr": 6e-4}),
    ("AdamW", {"lr": 6e-4}),
    ("SGD", {"lr": 0.01, "momentum": 0.9}),
]
MODES = {"for-loop": {"foreach": False}, "foreach": {"foreach": True}, "fused": {"fused": True}}


def params_with_grads(mod, device, dtype):
    mod.manual_seed(0)
    dt = getattr(mod, dtype)
    params = [mod.nn.Parameter(mod.randn(*s, device=device, dtype=dt) * 0.02) for s in gpt_shapes()]
    for p in params:
        p.grad = mod.randn(*p.shape, device=device, dtype=dt) * 1e-3
    return params


def step_fn(mod, device, dtype, name, kwargs):
    opt = getattr(mod.optim, name)(params_with_grads(mod, device, dtype), **kwargs)
    opt.step()  # the state exists before timing
    return opt.step


def scaler_fn(mod, device, dtype):
    params = params_with_grads(mod, device, dtype)
    opt = mod.optim.SGD(params, lr=0.01)
    scaler = mod.amp.GradScaler(device, init_scale=1.0)  # scale 1: the gradients stay put
    scaler.scale(mod.ones((), device=device))

    def run():
        scaler.unscale_(opt)
        scaler.update()

    return run


def clip_fn(mod, device, dtype):
    params = params_with_grads(mod, device, dtype)
    return lambda: mod.nn.utils.clip_grad_norm_(params, 1.0)


ROUNDS = 3


def timed(make, libs, syncs):
    """{lib: seconds per call}: the median of ROUNDS rounds in which the libraries take turns
    (the order alternating), each round a fresh ``make(mod)`` timed with ``per_call``."""
    runs = {lib: [] for lib in libs}
    names = list(libs)
    for r in range(ROUNDS):
        for lib in names if r % 2 == 0 else names[::-1]:
            runs[lib].append(per_call(make(libs[lib]), sync=syncs.get(lib)))
    return {lib: statistics.median(ts) for lib, ts in runs.items()}


def main():
    ap = argparse.ArgumentParser()
    has_cuda = cudalite._C._cuda.device_count() > 0
    ap.add_argument("--device", default="cuda" if has_cuda else "cpu")
    ap.add_argument("--dtype", default="float32", choices=["float32", "bfloat16"])
    args = ap.parse_args()
    device, dtype = args.device, args.dtype
    syncs = {}
    if device == "cuda":
        syncs["cudalite"] = cudalite.cuda.synchronize
        if torch is not None:
            syncs["torch"] = torch.cuda.synchronize
    libs = {"cudalite": cudalite} | ({"torch": torch} if torch is not None else {})
    n = len(gpt_shapes())
    numel = sum(math.prod(s) for s in gpt_shapes())
    table = Table(
        f"optimizer step, {numel / 1e6:.2f} M {dtype} parameters in {n} tensors on {device}"
    )
    own = Table(
        f"cudalite's speed-up over its own for-loop step on {device}",
        unit="x",
        higher_is_better=True,
    )
    # the GPU at its clocks before the first figure
    timed(lambda mod: step_fn(mod, device, dtype, "Adam", {"lr": 6e-4, "fused": True}), libs, syncs)
    for name, kw in OPTIMIZERS:
        loop_time = None
        for mode, mkw in MODES.items():
            times = timed(
                lambda mod, kw=kw, mkw=mkw, name=name: step_fn(
                    mod, device, dtype, name, {**kw, **mkw}
                ),
                libs,
                syncs,
            )
            table.add(f"{name} {mode}", **times)
            if mode == "for-loop":
                loop_time = times["cudalite"]
            else:
                own.add(f"{name} {mode}", cudalite=loop_time / times["cudalite"])
    table.add(
        "GradScaler unscale_ + update",
        **timed(lambda mod: scaler_fn(mod, device, dtype), libs, syncs),
    )
    table.add("clip_grad_norm_", **timed(lambda mod: clip_fn(mod, device, dtype), libs, syncs))
    print(table.render())
    print(own.render())


if __name__ == "__main__":
    main()
