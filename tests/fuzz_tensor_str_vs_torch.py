"""Differential fuzzing of cudalite's printer against PyTorch 2.11 (not a test; needs torch).

Run by hand:  $TORCH_PYTHON tests/fuzz_tensor_str_vs_torch.py [seed] [count]

Random shapes, dtypes, value mixes (tiny, huge, integral, nan/inf/-0, rounding boundaries),
print options and suffixes; prints the first mismatches and exits non-zero if any.
"""

from __future__ import annotations

import math
import sys

import numpy as np
import torch

from gen_tensor_str_expected import HERE, _add_cudalite_suffixes, _fake_device, _load

DTYPES = ["float32", "float64", "float16", "bfloat16", "int64", "int32", "int16", "int8"]
DTYPES += ["uint8", "bool"]
TRICKY = [9.99995, 99.99995, 0.99995e-4, 1e-4, 9.9999e-5, 1e8, 1.0000001e8, 99999999.0, 1e300]
TRICKY += [-1e300, 5e-324, 1e-310, 0.5, 1.5, 2.5, -0.5, 1000.0, 0.001, 999.99995, 65504.0]
TRICKY += [3.4e38, -0.0, 0.0, math.nan, math.inf, -math.inf, 1e16, 123456789012.0]
OPTIONS = {
    "precision": [0, 1, 2, 3, 6, 8],
    "threshold": [0, 5, 20, 100],
    "edgeitems": [0, 1, 2, 4],
    "linewidth": [20, 40, 60, 100, 150],
    "sci_mode": [True, False],
    "profile": ["short", "full", "default"],
}


def _values(rng: np.random.Generator) -> np.ndarray:
    big = rng.random() < 0.15
    shape = tuple(
        int(rng.integers(0 if rng.random() < 0.05 else 1, 40 if big else 7))
        for _ in range(rng.integers(0, 5))
    )
    n = math.prod(shape)
    kind = rng.integers(0, 9)
    if kind == 0:
        v = rng.standard_normal(n)
    elif kind == 1:
        v = rng.standard_normal(n) * 10.0 ** rng.integers(-12, 12)
    elif kind == 2:
        v = np.round(rng.standard_normal(n) * 10.0 ** rng.integers(0, 6))
    elif kind == 3:
        v = 10.0 ** rng.uniform(-10, 10, n) * rng.choice([-1, 1], n)
    elif kind == 4:
        v = rng.integers(-1000, 1000, n).astype(np.float64)
    elif kind == 5:
        v = rng.standard_normal(n) * 1e4
    elif kind == 6:
        v = np.round(rng.standard_normal(n) * 100, int(rng.integers(0, 4)))
    else:
        v = np.array([TRICKY[i] for i in rng.integers(0, len(TRICKY), n)], dtype=np.float64)
    return v.reshape(shape)


def main(seed: int, count: int) -> int:
    ts = _load("_tensor_str", HERE.parent / "python" / "cudalite" / "_tensor_str.py")
    torch._tensor_str._add_suffixes = _add_cudalite_suffixes
    rng = np.random.default_rng(seed)
    bad = 0
    for _ in range(count):
        dtype = DTYPES[rng.integers(0, len(DTYPES))]
        v = _values(rng)
        opts = {}
        if rng.random() < 0.4:
            for name, choices in OPTIONS.items():
                if rng.random() < 0.3:
                    opts[name] = choices[rng.integers(0, len(choices))]
        kw = {}
        if rng.random() < 0.2:
            kw["device"] = f"cuda:{rng.integers(0, 3)}"
        if dtype.startswith(("float", "bfloat")) and rng.random() < 0.2:
            kw["requires_grad"] = True
        default = "float64" if rng.random() < 0.2 else "float32"
        with np.errstate(all="ignore"):
            if dtype in ("float32", "float16", "bfloat16"):
                inp = v.astype(np.float32)
            elif dtype == "float64":
                inp = v
            elif dtype == "bool":
                inp = v != 0
            else:
                inp = np.nan_to_num(v).astype(np.int64).astype(getattr(np, dtype))
        torch.set_default_dtype(getattr(torch, default))
        torch.set_printoptions(profile="default")
        torch.set_printoptions(**opts)
        t = torch.from_numpy(np.array(inp, copy=True)).to(getattr(torch, dtype))
        t.requires_grad_(kw.get("requires_grad", False))
        try:
            with _fake_device(kw.get("device")):
                want = repr(t)
        finally:
            torch.set_printoptions(profile="default")
            torch.set_default_dtype(torch.float32)
        # What the tensor class passes (exact values, bfloat16 widened to float32), and the
        # unrounded float32 input, must both print like torch.
        exact = t.detach().float().numpy() if dtype == "bfloat16" else t.detach().numpy()
        ts.set_printoptions(profile="default")
        ts.set_printoptions(**opts)
        got = [
            ts.tensor_repr(x, dtype_name=dtype, default_dtype_name=default, **kw)
            for x in (exact, inp)
        ]
        ts.set_printoptions(profile="default")
        if got != [want, want]:
            bad += 1
            if bad <= 5:
                print("MISMATCH", dtype, v.shape, opts, kw, default, want, *got, sep="\n")
    print(f"{count} cases, {bad} mismatches")
    return 1 if bad else 0


if __name__ == "__main__":
    args = [int(a) for a in sys.argv[1:3]]
    sys.exit(main(*(args + [0, 3000][len(args) :])))
