"""Argument errors against torch: the same bad calls made on cudalite and torch, and how many
raise the same exception type with the same message.

Not collected by pytest (it needs torch). Run with the torch interpreter over an in-tree build
(the same Python version as the build's):

    PYTHONPATH=python CUDA_VISIBLE_DEVICES= $TORCH_PYTHON \
        tests/fuzz_argument_errors_vs_torch.py [-v]

Every Tensor method and ``cudalite`` function with torch signatures that take arguments
(the index of ``_signatures.json``) is called with each of a fixed set of wrong arguments
(a string, a float where an int goes, a list of floats, too many arguments, an unknown
keyword, a None, a wrong keyword type...).
The calls that torch refuses with a TypeError, ValueError or RuntimeError raised before it
computes anything (its argument parser's) are the bad calls; for each, cudalite's exception
type and message are compared with torch's ("cudalite." read as "torch."). Prints the counts,
and with -v every call that differs.
"""

from __future__ import annotations

import argparse
import os
import sys
import warnings

os.environ.setdefault("CUDA_VISIBLE_DEVICES", "")

# (positional arguments after self/input, keywords), with "X" standing for a tensor
PATTERNS = [
    (("a",), {}),
    ((1.5,), {}),
    (([1.5, 2.5],), {}),
    ((0, "a"), {}),
    ((0, 1, 2, 3, 4, 5, 6, 7), {}),
    ((), {"bogus": 1}),
    ((), {"dim": "a"}),
    ((), {"dim": 1.5}),
    ((None, None, None, None), {}),
    (("X", "a"), {}),
    (("X",), {"keepdim": 1}),
    (((1, "a"),), {}),
]

# Arguments that are not bad but slow or global (the names are still called with the others)
SKIP = {"set_num_threads", "manual_seed", "set_default_dtype"}


def _args(mod, pattern, tensor):
    args, kwargs = pattern
    return (
        tuple(tensor if a == "X" else a for a in args),
        {k: tensor if v == "X" else v for k, v in kwargs.items()},
    )


def _outcome(fn, args, kwargs):
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            fn(*args, **kwargs)
    except Exception as e:  # noqa: BLE001 (every exception is an outcome)
        return type(e).__name__, str(e).replace("cudalite.", "torch.")
    return None


def calls():
    from cudalite import _checked

    index = _checked.signature_index()
    for name in sorted(index["methods"]):
        if name not in SKIP:
            for i in range(len(PATTERNS)):
                yield "m", name, i
    for name in sorted(index["functions"]):
        if name not in SKIP:
            for i in range(len(PATTERNS)):
                yield "f", name, i
                yield "f0", name, i  # without the tensor first


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("-v", action="store_true", help="print every call that differs")
    opts = ap.parse_args()
    import torch

    import cudalite

    bad = same = 0
    for kind, name, i in calls():
        outcomes = []
        for mod in (torch, cudalite):
            x = mod.arange(6.0).reshape(2, 3)
            args, kwargs = _args(mod, PATTERNS[i], x)
            if kind == "m":
                fn = getattr(x, name, None)
            else:
                fn = getattr(mod, name, None)
                if kind == "f":
                    args = (x, *args)
            outcomes.append(None if fn is None else _outcome(fn, args, kwargs))
        t, c = outcomes
        if t is None or t[0] not in ("TypeError", "ValueError", "RuntimeError"):
            continue
        if t[0] == "RuntimeError" and "argument" not in t[1] and "Name '" not in t[1]:
            continue  # an op's own check, not the parser's
        bad += 1
        ok = c == t
        same += ok
        if not ok and opts.v:
            where = "x." if kind == "m" else "torch."
            first = " (x first)" if kind == "f" else ""
            call = f"{where}{name}{PATTERNS[i]}{first}"
            print(f"--- {call}\n  torch:    {t}\n  cudalite: {c}")
    print(f"bad calls: {bad}, identical: {same}, different: {bad - same}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
