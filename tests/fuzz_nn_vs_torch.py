"""Differential fuzzing of cudalite.nn.functional (losses, softmax, linear) against PyTorch
2.11, forward values and gradients (not a test; needs torch).

    python tests/fuzz_nn_vs_torch.py [--seed N] [--count N]

Random shapes, reductions, class weights, ignored targets (all of them, at times), label
smoothing and class-probability targets, in float64 on the CPU. Exits non-zero on any
mismatch.
"""

import argparse
import sys
import warnings

import numpy as np
import torch

import cudalite

warnings.simplefilter("ignore")
ap = argparse.ArgumentParser()
ap.add_argument("--seed", type=int, default=0)
ap.add_argument("--count", type=int, default=600)
opts = ap.parse_args()
rng = np.random.default_rng(opts.seed)
bad = 0


def run(M, fn, args, kw):
    F = M.nn.functional
    xs = []
    conv = []
    for a in args:
        if isinstance(a, np.ndarray):
            dt = M.float64 if a.dtype.kind == "f" else M.int64
            t = M.tensor(a, dtype=dt, requires_grad=(a.dtype.kind == "f"))
            xs.append(t)
            conv.append(t)
        else:
            conv.append(a)
    kw2 = {
        k: (M.tensor(v, dtype=M.float64) if isinstance(v, np.ndarray) else v) for k, v in kw.items()
    }
    y = getattr(F, fn)(*conv, **kw2)
    w = M.tensor(np.linspace(0.5, 1.5, y.numel()).reshape(tuple(y.shape)), dtype=M.float64)
    (y * w).sum().backward()
    return y.detach().numpy(), [x.grad.numpy() if x.grad is not None else None for x in xs]


cases = []
for _ in range(opts.count):
    fn = rng.choice(
        ["mse_loss", "l1_loss", "cross_entropy", "nll_loss", "log_softmax", "softmax", "linear"]
    )
    red = str(rng.choice(["mean", "sum", "none"]))
    if fn in ("mse_loss", "l1_loss"):
        sh = tuple(int(n) for n in rng.integers(1, 4, rng.integers(0, 3)))
        a = rng.standard_normal(sh)
        b = rng.standard_normal(sh)
        cases.append((fn, (a, b), {"reduction": red}))
    elif fn in ("cross_entropy", "nll_loss"):
        n, c = int(rng.integers(1, 4)), int(rng.integers(2, 5))
        extra = tuple(int(k) for k in rng.integers(1, 3, rng.integers(0, 2)))
        x = rng.standard_normal((n, c) + extra)
        tgt = rng.integers(0, c, (n,) + extra)
        kw = {"reduction": red}
        if rng.random() < 0.3:
            kw["ignore_index"] = int(tgt.flat[0])
        if rng.random() < 0.3:
            kw["weight"] = rng.random(c) + 0.5
        if fn == "cross_entropy" and rng.random() < 0.3:
            kw["label_smoothing"] = 0.1
        if rng.random() < 0.15:  # class-probability targets
            if fn == "cross_entropy":
                p = rng.random((n, c) + extra)
                tgt = p / p.sum(1, keepdims=True)
        cases.append((fn, (x, tgt), kw))
    elif fn in ("log_softmax", "softmax"):
        sh = tuple(int(n) for n in rng.integers(1, 4, rng.integers(1, 4)))
        cases.append(
            (fn, (rng.standard_normal(sh),), {"dim": int(rng.integers(-len(sh), len(sh)))})
        )
    else:
        i, o = int(rng.integers(1, 4)), int(rng.integers(1, 4))
        sh = tuple(int(n) for n in rng.integers(1, 3, rng.integers(0, 2))) + (i,)
        args = (rng.standard_normal(sh), rng.standard_normal((o, i)))
        if rng.random() < 0.5:
            args = args + (rng.standard_normal((o,)),)
        cases.append((fn, args, {}))
for fn, args, kw in cases:
    res = []
    for M in (torch, cudalite):
        try:
            res.append((run(M, fn, args, kw), None))
        except Exception as e:  # noqa: BLE001 - the type is compared
            res.append((None, e))
    (rt, et), (rc, ec) = res
    opts_shown = {k: "array" if isinstance(v, np.ndarray) else v for k, v in kw.items()}
    desc = f"{fn} {[getattr(a, 'shape', a) for a in args]} {opts_shown}"
    if et or ec:
        if not (et and ec) or type(et) is not type(ec):
            bad += 1
            print(desc, "|", repr(et)[:120], "|", repr(ec)[:120])
        continue
    ok = np.allclose(rt[0], rc[0], atol=1e-9, equal_nan=True) and rt[0].shape == rc[0].shape
    for gt, gc in zip(rt[1], rc[1], strict=True):
        ok = ok and (
            (gt is None and gc is None)
            or (
                gt is not None and gc is not None and np.allclose(gt, gc, atol=1e-9, equal_nan=True)
            )
        )
    if not ok:
        bad += 1
        print("DIFF", desc, rt[0].ravel()[:4], rc[0].ravel()[:4])
print(f"{len(cases)} cases, {bad} mismatches")
sys.exit(1 if bad else 0)
