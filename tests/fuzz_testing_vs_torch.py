"""Differential fuzzing of cudalite.testing.assert_close against PyTorch 2.11 (not a test).

    cd tests && PYTHONPATH=../python python fuzz_testing_vs_torch.py [--device cuda] [--seed N]

Random pairs of tensors (every dtype, empty / 0-dim / strided shapes, NaN and infinities,
differences just inside and just outside the tolerances, mismatched dtypes, shapes and strides),
Python scalars, NumPy arrays and nested lists / tuples / dicts of them, with random rtol / atol
(sometimes only one), equal_nan, check_dtype, check_stride and msg. Both libraries must pass
or fail alike, with the same exception type and the same message (torch's with "torch."
written "cudalite."). Prints the first mismatches and exits non-zero if any.
"""

from __future__ import annotations

import math
import sys
import traceback
import warnings

import numpy as np
import torch

import cudalite
import cudalite.testing
from fuzz_ops_vs_torch import DTYPES, FLOATS, INTS, _array, fuzz_args, report

TOLS = [0, 1e-7, 1e-5, 1e-3, 0.1, 1, 2.5]
DEFAULT_TOL = {"float16": (1e-3, 1e-5), "bfloat16": (1.6e-2, 1e-5), "float32": (1.3e-6, 1e-5)}


def _shape(rng):
    dims = int(rng.integers(0, 4))
    return tuple(int(rng.integers(0 if rng.random() < 0.1 else 1, 5)) for _ in range(dims))


def _perturbed(rng, base, dtype, kwargs):
    """A copy of base with a few elements moved around the tolerance boundary (or NaN / inf)."""
    out = np.array(base, copy=True)
    n = out.size
    if n == 0 or rng.random() < 0.2:
        return out
    flat = out.reshape(-1)
    idx = rng.integers(0, n, int(rng.integers(1, n + 1)))
    if dtype == "bool":
        flat[idx] = ~flat[idx]
    elif dtype in INTS:
        lo, hi = (0, 200) if dtype == "uint8" else (-100, 100)
        flat[idx] = np.clip(flat[idx] + rng.integers(-3, 4, idx.size), lo, hi)
    else:
        rtol, atol = kwargs.get("rtol"), kwargs.get("atol")
        if rtol is None or atol is None:
            rtol, atol = DEFAULT_TOL.get(dtype, (1e-7, 1e-7))
        scale = rng.choice([0.0, 0.5, 0.99, 1.0, 1.01, 2.0, 100.0], idx.size)
        sign = rng.choice([-1.0, 1.0], idx.size)
        with np.errstate(all="ignore"):
            flat[idx] = flat[idx] + sign * scale * (atol + rtol * np.abs(flat[idx]))
        if rng.random() < 0.2:
            flat[rng.integers(0, n)] = rng.choice([np.nan, np.inf, -np.inf, 0.0])
    return out


def _tensor_spec(rng, kwargs):
    """Data for one pair of tensors: (dtype, array) for actual and expected, and layout flags."""
    dtype = str(rng.choice(DTYPES))
    shape = _shape(rng)
    base = _array(rng, dtype, shape)
    other = _perturbed(rng, base, dtype, kwargs)
    other_dtype = dtype
    if rng.random() < 0.15:
        other_dtype = str(rng.choice(DTYPES))
        if other_dtype in INTS or other_dtype == "bool":
            other = np.nan_to_num(other).astype(np.int64) if other_dtype != "bool" else other != 0
            if other_dtype in INTS:
                other = np.clip(other, 0 if other_dtype == "uint8" else -100, 100)
    if rng.random() < 0.05 and len(shape):
        other = other[..., :-1] if shape[-1] else np.zeros((*shape, 1), other.dtype)
    flags = {
        "transpose": len(shape) >= 2 and rng.random() < 0.2,
        "grad": dtype in FLOATS and rng.random() < 0.2,
    }
    return ("tensor", dtype, base, other_dtype, other, flags)


def _scalar(rng):
    kind = rng.choice(["int", "float", "bool", "none", "complex", "nan", "inf"])
    if kind == "int":
        return int(rng.integers(-5, 6))
    if kind == "float":
        return float(rng.choice([0.0, 1.0, 1.0 + 1e-8, 1.0 + 1e-6, 2.5, -3.0, 1e-9]))
    if kind == "bool":
        return bool(rng.random() < 0.5)
    if kind == "complex":
        return complex(float(rng.integers(-2, 3)), float(rng.integers(-2, 3)))
    return {"none": None, "nan": float("nan"), "inf": float(rng.choice([np.inf, -np.inf]))}[kind]


def _leaf_spec(rng, kwargs):
    r = rng.random()
    if r < 0.6:
        return _tensor_spec(rng, kwargs)
    if r < 0.8:
        return ("scalar", _scalar(rng), _scalar(rng) if rng.random() < 0.5 else None)
    spec = _tensor_spec(rng, kwargs)
    if r < 0.97:
        return ("numpy", *spec[1:])
    return ("mixed", *spec[1:])  # a tensor against a NumPy array or a scalar: a TypeError


def _spec(rng, kwargs, depth=0):
    """A random (possibly nested) input structure."""
    r = rng.random()
    if depth < 2 and r < 0.25:
        items = [_spec(rng, kwargs, depth + 1) for _ in range(int(rng.integers(0, 4)))]
        cut = len(items) and rng.random() < 0.1
        return ("seq", str(rng.choice(["list", "tuple"])), items, cut)
    if depth < 2 and r < 0.4:
        keys = [str(k) for k in rng.choice(list("abcde"), int(rng.integers(0, 4)), replace=False)]
        items = {k: _spec(rng, kwargs, depth + 1) for k in keys}
        rename = len(keys) and rng.random() < 0.1
        return ("map", items, rename)
    return _leaf_spec(rng, kwargs)


def _tensor(M, dtype, array, device):
    """The array as a contiguous tensor (copied into new memory: tensor() of an empty NumPy
    array keeps or drops its strides differently in the two libraries)."""
    src = M.tensor(array, dtype=M.float32 if dtype == "bfloat16" else getattr(M, dtype))
    return M.empty(src.shape, dtype=getattr(M, dtype), device=device).copy_(src)


def _build(M, spec, device):
    """The (actual, expected) inputs of a spec, in library M."""
    kind = spec[0]
    if kind == "seq":
        _, seq_type, items, cut = spec
        pairs = [_build(M, s, device) for s in items]
        actual = [a for a, _ in pairs]
        expected = [e for _, e in pairs][: len(pairs) - 1 if cut else None]
        wrap = tuple if seq_type == "tuple" else list
        return wrap(actual), expected
    if kind == "map":
        _, items, rename = spec
        pairs = {k: _build(M, s, device) for k, s in items.items()}
        actual = {k: a for k, (a, _) in pairs.items()}
        expected = {k: e for k, (_, e) in pairs.items()}
        if rename:  # a key of expected that actual lacks (and the other way round)
            key = next(iter(expected))
            expected[key + "x"] = expected.pop(key)
        return actual, expected
    if kind == "scalar":
        _, a, e = spec
        return a, (a if e is None else e)
    _, dtype, base, other_dtype, other, flags = spec
    np_dtype = {"bfloat16": "float32"}.get(dtype, dtype)
    np_other = {"bfloat16": "float32"}.get(other_dtype, other_dtype)
    if kind == "numpy":
        return np.asarray(base).astype(np_dtype), np.asarray(other).astype(np_other)
    actual, expected = _tensor(M, dtype, base, device), _tensor(M, other_dtype, other, device)
    if kind == "mixed":
        return actual, np.asarray(other).astype(np_other) if flags["grad"] else 1.0
    if flags["transpose"]:
        actual = actual.transpose(-1, -2).contiguous().transpose(-1, -2)
    if flags["grad"]:
        actual.requires_grad_(True)
    return actual, expected


def _kwargs(rng):
    kwargs = {}
    r = rng.random()
    if r < 0.01:  # isclose rejects it: the "Comparing ..." RuntimeError (tensors only)
        kwargs["rtol"], kwargs["atol"] = -1.0, 0.0
    elif r < 0.45:
        kwargs["rtol"], kwargs["atol"] = float(rng.choice(TOLS)), float(rng.choice(TOLS))
    elif r < 0.5:
        kwargs[str(rng.choice(["rtol", "atol"]))] = float(rng.choice(TOLS))
    for flag, p in [("equal_nan", 0.3), ("check_dtype", 0.3), ("check_stride", 0.3)]:
        if rng.random() < p:
            kwargs[flag] = flag != "check_dtype"
    r = rng.random()
    if r < 0.1:
        kwargs["msg"] = "custom message"
    elif r < 0.2:
        kwargs["msg"] = "callable"
    return kwargs


def _outcome(M, spec, kwargs, device):
    actual, expected = _build(M, spec, device)
    kwargs = dict(kwargs)
    if kwargs.get("msg") == "callable":
        kwargs["msg"] = lambda m: f"<<{m}>>"
    try:
        M.testing.assert_close(actual, expected, **kwargs)
    except Exception as e:  # noqa: BLE001 - type and message are what is compared
        return type(e).__name__, str(e)
    return None


def _make_tensor_case(rng):
    """Random make_tensor arguments (shape first, then keywords; dtype as a name)."""
    dims = int(rng.integers(0, 4))
    shape = tuple(int(rng.integers(0, 5)) for _ in range(dims))
    bounds = [None, None, -9, 0, 1, 2, 2.5, 10, 300, -(2**70), 2**70, -1e6, 1e7, np.nan, np.inf]
    kwargs = {"dtype": str(rng.choice(DTYPES)), "device": "cpu"}
    for name in ("low", "high"):
        value = bounds[int(rng.integers(0, len(bounds)))]
        if value is not None:
            kwargs[name] = -value if name == "low" and value == np.inf else value
    for flag, p in [("requires_grad", 0.2), ("noncontiguous", 0.3), ("exclude_zero", 0.3)]:
        if rng.random() < p:
            kwargs[flag] = True
    if rng.random() < 0.15:
        kwargs["memory_format"] = "channels_last" if dims == 4 else "contiguous_format"
    return shape, kwargs


def _make_tensor_outcome(M, shape, kwargs, device):
    """make_tensor's error or warnings, and what can be compared of its result (not values)."""
    kwargs = dict(kwargs, dtype=getattr(M, kwargs["dtype"]), device=device)
    if "memory_format" in kwargs:
        kwargs["memory_format"] = getattr(M, kwargs["memory_format"])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            t = M.testing.make_tensor(shape, **kwargs)
        except Exception as e:  # noqa: BLE001 - type and message are what is compared
            return type(e).__name__, str(e)
    values = t.detach().double().cpu().numpy()
    low, high = kwargs.get("low", -math.inf), kwargs.get("high", math.inf)
    in_range = bool(((values >= float(low)) & (values <= float(high))).all())
    warned = [f"{w.category.__name__}: {w.message}" for w in caught]
    meta = (str(t.dtype), tuple(t.shape), t.stride(), t.requires_grad, str(t.device))
    return warned, meta, in_range, bool((t != 0).all()) if kwargs.get("exclude_zero") else None


def main():
    args, rng = fuzz_args(2000)
    torch_device = args.device if args.device == "cpu" or torch.cuda.is_available() else "cpu"
    failures = 0
    for i in range(args.count):
        kwargs = _kwargs(rng)
        spec = _spec(rng, kwargs)
        try:
            expected = _outcome(torch, spec, kwargs, torch_device)
            got = _outcome(cudalite, spec, kwargs, args.device)
        except Exception:  # noqa: BLE001 - building the inputs failed in one library
            print(f"case {i}: building inputs failed\n{traceback.format_exc()}")
            failures += 1
            continue
        if expected is not None:
            expected = (expected[0], expected[1].replace("torch.", "cudalite."))
        if expected and got and expected[1].startswith("Comparing"):
            # Tensor reprs inside: "cudalite." is longer than "torch.", so lines wrap elsewhere.
            expected, got = [(e[0], " ".join(e[1].split())) for e in (expected, got)]
        err = None if expected == got else f"{kwargs}\n  torch:    {expected}\n  cudalite: {got}"
        failures = report(i, err, failures)
    for i in range(args.count // 4):
        shape, kwargs = _make_tensor_case(rng)
        expected = repr(_make_tensor_outcome(torch, shape, kwargs, torch_device))
        got = repr(_make_tensor_outcome(cudalite, shape, kwargs, args.device))
        expected = expected.replace("torch.", "cudalite.").replace("cuda:0", "cuda")
        got = got.replace("cuda:0", "cuda")
        err = None if expected == got else f"make_tensor{shape, kwargs}\n  {expected}\n  {got}"
        failures = report(f"make_tensor {i}", err, failures)
    print(f"{args.count} cases on {args.device}, {failures} mismatches")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
