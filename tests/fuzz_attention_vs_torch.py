"""Differential fuzzing of the fused scaled_dot_product_attention on CUDA (float16 and
bfloat16) against torch 2.11's fused kernels (flash, else memory-efficient), both measured
against a float64 reference: random batch and head counts, lengths (L != S at times, lengths
that are not multiples of the 64-row tiles), head dims 32/64/96/128, is_causal, scale,
inputs given as transposed (B, L, H, D) views at times (as nanoGPT makes them); the output
and the three gradients. cudalite's error may be at most `FUDGE` times torch's (plus a small
floor). Not a test; needs torch and a GPU.

    python tests/fuzz_attention_vs_torch.py [--seed N] [--count N]

Exits non-zero on any mismatch, and checks that every case took the fused kernel.
"""

import argparse
import sys
import warnings

import numpy as np
import torch
from torch.nn.attention import SDPBackend, sdpa_kernel

import cudalite

warnings.simplefilter("ignore")
ap = argparse.ArgumentParser()
ap.add_argument("--seed", type=int, default=0)
ap.add_argument("--count", type=int, default=300)
opts = ap.parse_args()
rng = np.random.default_rng(opts.seed)

FUDGE = {"out": 3.0, "dq": 4.0, "dk": 4.0, "dv": 4.0}
FLOOR = 2e-3  # relative to the reference's largest magnitude


def tensors(M, arrays, dtype, transposed):
    out = []
    for a in arrays:  # (B, H, n, D) float32
        if transposed:
            b = np.ascontiguousarray(a.transpose(0, 2, 1, 3))
            t = M.tensor(b, device="cuda").to(dtype).transpose(1, 2)
        else:
            t = M.tensor(a, device="cuda").to(dtype)
        out.append(t)
    return out


def run(M, arrays, dtype, transposed, causal, scale):
    q, k, v, do = tensors(M, arrays, dtype, transposed)
    q, k, v = (t.detach().requires_grad_() for t in (q, k, v))
    y = M.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=causal, scale=scale)
    name = type(y.grad_fn).__name__ if M is torch else y.grad_fn.name()
    y.backward(do)
    res = [t.detach().double().cpu().numpy() for t in (y, q.grad, k.grad, v.grad)]
    return res, name


bad = 0
for i in range(opts.count):
    B, H = int(rng.integers(1, 4)), int(rng.integers(1, 5))
    L = int(rng.choice([1, 7, 64, 65, 127, 200, 333, 512]))
    S = L if rng.random() < 0.6 else int(rng.choice([1, 9, 64, 100, 257, 400]))
    D = int(rng.choice([32, 64, 96, 128]))
    causal = bool(rng.random() < 0.5)
    scale = float(rng.uniform(0.05, 0.3)) if rng.random() < 0.3 else None
    transposed = bool(rng.random() < 0.4) and L == S
    dtname = str(rng.choice(["bfloat16", "float16"]))
    arrays = [rng.standard_normal((B, H, n, D)).astype(np.float32) for n in (L, S, S, L)]
    case = f"#{i} B{B} H{H} L{L} S{S} D{D} {dtname} causal={causal} scale={scale} T={transposed}"
    with sdpa_kernel(SDPBackend.MATH):
        ref, _ = run(torch, arrays, torch.float64, False, causal, scale)
    # torch's flash kernel refuses is_causal with L != S: its memory-efficient one takes those
    with sdpa_kernel([SDPBackend.FLASH_ATTENTION, SDPBackend.EFFICIENT_ATTENTION]):
        tr, _ = run(torch, arrays, getattr(torch, dtname), transposed, causal, scale)
    cl, node = run(cudalite, arrays, getattr(cudalite, dtname), transposed, causal, scale)
    if node != "ScaledDotProductFlashAttentionBackward0":
        print(f"{case}: took {node}, not the fused kernel")
        bad += 1
        continue
    for name, c, t, r in zip(("out", "dq", "dk", "dv"), cl, tr, ref, strict=True):
        err_c, err_t = np.abs(c - r).max(), np.abs(t - r).max()
        allowed = FUDGE[name] * err_t + FLOOR * max(1.0, np.abs(r).max())
        if not np.isfinite(c).all() or err_c > allowed:
            print(f"{case} {name}: error {err_c:.3g}, torch's {err_t:.3g} (allowed {allowed:.3g})")
            bad += 1
print(f"{opts.count} cases, seed {opts.seed}: {bad} failures")
sys.exit(1 if bad else 0)
