"""Differential fuzzing of cudalite's ops against PyTorch 2.11 (not a test; needs torch).

Run by hand, on the CPU or on the GPU machine, with cudalite installed (or PYTHONPATH=python
over an in-tree build):

    python tests/fuzz_ops_vs_torch.py [--device cuda] [--seed N] [--count N]

Random dtypes, shapes (empty, one-element, odd and large), layouts (contiguous, permuted,
sliced with steps or an offset), broadcast operands and values (with nan, inf and -0.0),
through every elementwise op of the core, in-place and out= forms, casts, the reductions
over all, one or several dims, where, clamp, cat, matmul, the optimizers' fused
multiply-add (`_C._fma`, against torch's addcmul), the sorts (sort, argsort, msort, topk,
kthvalue), logit, einsum, and the special functions, statistics, scans, composed pointwise
ops, products and diagonals of docs/math_ops.md. The same numbers go to both
libraries; the results must agree in whether an exception is raised (and its type), dtype,
shape and values (nan where nan). Prints the first mismatches and exits non-zero if any.
"""

from __future__ import annotations

import argparse
import math
import sys
import traceback
import warnings

import numpy as np
import torch

import cudalite

FLOATS = ["float32", "float64", "float16", "bfloat16"]
INTS = ["int64", "int32", "int16", "int8", "uint8"]
DTYPES = FLOATS + INTS + ["bool"]
TOL = {"float16": 2e-3, "bfloat16": 1.6e-2, "float32": 2e-5, "float64": 1e-10}


def _array(rng, dtype, shape):
    n = math.prod(shape)
    if dtype == "bool":
        return rng.random(n).reshape(shape) < 0.5
    if dtype in INTS:
        lo, hi = (0, 200) if dtype == "uint8" else (-100, 100)
        return rng.integers(lo, hi, n).reshape(shape)
    a = rng.standard_normal(n) * (10.0 ** rng.integers(-2, 3))
    if n and rng.random() < 0.3:
        a[rng.integers(0, n, max(1, n // 8))] = rng.choice([np.nan, np.inf, -np.inf, -0.0, 0.0])
    return a.reshape(shape)


def _shape(rng):
    if rng.random() < 0.1:  # large enough for the vectorised and tiled GPU loops
        return tuple(int(x) for x in rng.choice([1, 3, 64, 129, 1000], size=rng.integers(1, 3)))
    dims = int(rng.integers(0, 5))
    return tuple(int(rng.integers(0 if rng.random() < 0.05 else 1, 7)) for _ in range(dims))


class Pair:
    """The same tensor in both libraries: layout transforms are applied to both."""

    def __init__(self, rng, dtype, shape, device):
        base = _array(rng, dtype, shape)
        self.t = torch.tensor(base, dtype=getattr(torch, dtype), device=device)
        self.c = cudalite.tensor(base, dtype=getattr(cudalite, dtype), device=device)
        kind = rng.random()
        nd = len(shape)
        if nd >= 2 and kind < 0.25:
            perm = [int(x) for x in rng.permutation(nd)]
            self.t, self.c = self.t.permute(*perm), self.c.permute(*perm)
        elif nd >= 1 and kind < 0.45 and shape[-1] > 1:
            self.t, self.c = self.t[..., ::2], self.c[..., ::2]
        elif nd >= 1 and kind < 0.55 and shape[0] > 1:
            self.t, self.c = self.t[1:], self.c[1:]


def _np(x):
    if not hasattr(x, "cpu"):
        return np.asarray(x)
    if str(x.dtype).split(".")[-1] in ("float16", "bfloat16"):
        x = x.float()
    return np.asarray(x.cpu().numpy())


def _same(rt, rc, what, loose=False):
    if isinstance(rt, tuple):
        if not isinstance(rc, tuple) or len(rt) != len(rc):
            return f"{what}: tuple result {type(rc)}"
        for i, (a, b) in enumerate(zip(rt, rc, strict=True)):
            err = _same(a, b, f"{what}[{i}]", loose)
            if err:
                return err
        return None
    if isinstance(rt, torch.Tensor):
        if str(rt.dtype).split(".")[-1] != str(rc.dtype).split(".")[-1]:
            return f"{what}: dtype {rc.dtype}, torch {rt.dtype}"
        if tuple(rt.shape) != tuple(rc.shape):
            return f"{what}: shape {tuple(rc.shape)}, torch {tuple(rt.shape)}"
        dt = str(rt.dtype).split(".")[-1]
    else:
        dt = "float64" if isinstance(rt, float) else "int64"
    a, b = _np(rt), _np(rc)
    if a.dtype.kind == "f" or b.dtype.kind == "f":
        # An out= of a wider dtype holds what was computed in the operands' type.
        tol = 8 * TOL.get(dt, 1e-6) if "out=" not in what else 8 * TOL["float16"]
        a, b = a.astype(np.float64), b.astype(np.float64)
        fin = np.isfinite(a)
        if loose:  # overflow and underflow depend on the order of the products
            fin &= np.isfinite(b)
            b = np.where(fin, b, a)
        scale = max(1.0, np.abs(a[fin]).max()) if fin.any() else 1.0
        # nan where nan, the same infinities, finite values within the dtype's tolerance.
        ok = np.array_equal(a[~fin], b[~fin], equal_nan=True) and bool(np.isfinite(b[fin]).all())
        ok = ok and np.allclose(a[fin], b[fin], rtol=tol, atol=tol * scale)
    else:
        ok = np.array_equal(a, b)
    if not ok:
        return f"{what}: values differ\n  torch    {a.ravel()[:8]}\n  cudalite {b.ravel()[:8]}"
    return None


# Every op the core has (its names are torch's), and the reductions cudalite exports.
# (not the private rows, such as _zeta, which torch has under other names)
UNARY = [op for op in cudalite._C._unary_op_names if not op.startswith("_")]
BINARY = [op for op in cudalite._C._binary_op_names if not op.startswith("_")]
INPLACE = [op for op in BINARY if hasattr(torch.Tensor, op + "_")]
REDUCE = [op for op in cudalite._reductions.__all__ if not op.endswith("_mean")]


def _case(rng, device):
    """One random case: (description, its Pair operands, f(module, *tensors))."""
    kind = rng.choice(
        [
            "unary",
            "binary",
            "binary",
            "inplace",
            "reduce",
            "reduce",
            "cast",
            "where",
            "clamp",
            "cat",
            "matmul",
            "fma",
            "sorting",
            "sorting",
            "mathops",
            "mathops",
        ]
    )
    if kind == "sorting":
        return _sorting_case(rng, device)
    if kind == "mathops":
        return _mathops_case(rng, device)
    dt = str(rng.choice(DTYPES))
    shape = _shape(rng)
    a = Pair(rng, dt, shape, device)
    if kind == "unary":
        op = str(rng.choice(UNARY))
        return f"{op}({dt}{list(a.t.shape)})", [a], lambda M, x: getattr(M, op)(x)
    if kind in ("binary", "inplace"):
        op = str(rng.choice(BINARY if kind == "binary" else INPLACE))
        bshape = list(a.t.shape)
        if bshape and rng.random() < 0.4:  # broadcast one operand
            bshape[int(rng.integers(0, len(bshape)))] = 1
        if rng.random() < 0.2:
            bshape = bshape[1:]
        dt2 = str(rng.choice(DTYPES)) if rng.random() < 0.4 else dt
        if rng.random() < 0.2:  # a Python scalar
            s = [True, 3, -2, 2.5, -0.5][int(rng.integers(0, 5))]
            if kind == "inplace":
                return (
                    f"{dt}{list(a.t.shape)}.{op}_({s!r})",
                    [a],
                    lambda M, x: getattr(x.clone(), op + "_")(s),
                )
            return f"{op}({dt}{list(a.t.shape)}, {s!r})", [a], lambda M, x: getattr(M, op)(x, s)
        b = Pair(rng, dt2, tuple(bshape), device)
        if kind == "inplace":
            return (
                f"{dt}{list(a.t.shape)}.{op}_({dt2}{list(b.t.shape)})",
                [a, b],
                lambda M, x, y: getattr(x.clone(), op + "_")(y),
            )
        if rng.random() < 0.2:
            out_dt = str(rng.choice(DTYPES))
            return (
                f"{op}({dt}, {dt2}, out={out_dt})",
                [a, b],
                lambda M, x, y: getattr(M, op)(
                    x, y, out=M.empty(0, dtype=getattr(M, out_dt), device=x.device)
                ),
            )
        return (
            f"{op}({dt}{list(a.t.shape)}, {dt2}{list(b.t.shape)})",
            [a, b],
            lambda M, x, y: getattr(M, op)(x, y),
        )
    if kind == "reduce":
        op = str(rng.choice(REDUCE))
        nd = a.t.dim()
        form = rng.random()
        keep = bool(rng.random() < 0.3)
        if form < 0.35 or nd == 0:
            return f"{op}({dt}{list(a.t.shape)})", [a], lambda M, x: getattr(M, op)(x)
        if form < 0.8 or op in ("argmax", "argmin", "max", "min", "all", "any"):
            d = int(rng.integers(-nd, nd))
            return (
                f"{op}({dt}{list(a.t.shape)}, dim={d}, keepdim={keep})",
                [a],
                lambda M, x: getattr(M, op)(x, dim=d, keepdim=keep),
            )
        dims = tuple(
            int(x) for x in rng.choice(nd, size=int(rng.integers(1, nd + 1)), replace=False)
        )
        return (
            f"{op}({dt}{list(a.t.shape)}, dim={dims}, keepdim={keep})",
            [a],
            lambda M, x: getattr(M, op)(x, dim=dims, keepdim=keep),
        )
    if kind == "cast":  # floats only to floats: out-of-range float -> int is undefined
        to = str(rng.choice(FLOATS if dt in FLOATS else DTYPES))
        return f"{dt}{list(a.t.shape)}.to({to})", [a], lambda M, x: x.to(getattr(M, to))
    if kind == "where":
        c = Pair(rng, "bool", tuple(a.t.shape), device)
        b = Pair(rng, dt, tuple(a.t.shape), device)
        return f"where(bool, {dt}, {dt})", [c, a, b], lambda M, m, x, y: M.where(m, x, y)
    if kind == "fma":  # cudalite's private fused multiply-add against torch's addcmul
        fdt = str(rng.choice(["float32", "float64"]))
        x, y, z = (Pair(rng, fdt, tuple(a.t.shape), device) for _ in range(3))

        def fma(M, p, q, r):
            return M.addcmul(r, p, q) if M is torch else cudalite._C._fma(p, q, r)

        return f"_fma({fdt}{list(a.t.shape)} x3)", [x, y, z], fma
    if kind == "clamp":
        lo, hi = sorted(float(v) for v in rng.standard_normal(2))
        if dt in INTS:
            lo, hi = int(lo * 10), int(hi * 10)
        return f"clamp({dt}, {lo}, {hi})", [a], lambda M, x: M.clamp(x, lo, hi)
    if kind == "cat":
        b = Pair(rng, dt, tuple(a.t.shape), device)
        d = int(rng.integers(0, max(1, a.t.dim())))
        return f"cat({dt}{list(a.t.shape)} x2, {d})", [a, b], lambda M, x, y: M.cat([x, y], d)
    # matmul
    fdt = str(
        rng.choice(["float32", "float64"] + (["float16", "bfloat16"] if device == "cuda" else []))
    )
    m, k, n = (int(x) for x in rng.integers(1, 9, 3))
    x = Pair(rng, fdt, (m, k), device)
    y = Pair(rng, fdt, (k, n), device)
    for p in (x, y):  # finite values: matmul's summation order differs around inf and nan
        p.t = p.t.nan_to_num(0.0, 0.0, 0.0)
        p.c = cudalite.tensor(
            p.t.cpu().float().numpy().tolist(), dtype=getattr(cudalite, fdt), device=device
        )
        p.t = p.t.to(torch.float32).to(getattr(torch, fdt))
    return f"matmul({fdt}[{m},{k}], [{k},{n}])", [x, y], lambda M, p, q: M.matmul(p, q)


# ---- sorting, logsumexp, logit, einsum ----

_EINSUM = [
    ("ij,jk->ik", [(3, 4), (4, 5)]),
    ("bij,bjk->bik", [(2, 3, 4), (2, 4, 2)]),
    ("ii->i", [(4, 4)]),
    ("i,j->ij", [(3,), (5,)]),
    ("...ij,...jk", [(2, 3, 4), (4, 2)]),
    ("ijk,ikl,lm->jm", [(2, 3, 4), (2, 4, 5), (5, 3)]),
    ("bhqd,bhkd->bhqk", [(2, 2, 3, 4), (2, 2, 5, 4)]),
    ("ij->", [(3, 0)]),
    ("ab,ab->b", [(4, 3), (1, 3)]),
]


def _sorting_case(rng, device):
    """sort (stable: indices are defined), argsort, msort, topk and kthvalue (values only: the
    order of tied indices is unspecified), logsumexp, logit with eps, and einsum."""
    op = str(rng.choice(["sort", "argsort", "msort", "topk", "kthvalue", "logit", "einsum"]))
    dt = str(rng.choice(DTYPES))
    a = Pair(rng, dt, _shape(rng), device)
    nd = a.t.dim()
    d = int(rng.integers(-max(nd, 1), max(nd, 1)))
    desc = bool(rng.random() < 0.5)
    n = a.t.shape[d] if nd else 1
    k = int(rng.integers(0, n + 2)) if rng.random() < 0.9 else -1
    name = f"{dt}{list(a.t.shape)}"
    if op == "sort":
        return (
            f"sort({name}, dim={d}, descending={desc}, stable=True)",
            [a],
            lambda M, x: tuple(M.sort(x, dim=d, descending=desc, stable=True)),
        )
    if op == "argsort":
        return (
            f"argsort({name}, dim={d}, descending={desc}, stable=True)",
            [a],
            lambda M, x: x.argsort(dim=d, descending=desc, stable=True),
        )
    if op == "msort":
        return f"msort({name})", [a], lambda M, x: M.msort(x)
    if op == "topk":
        return (
            f"topk({name}, {k}, {d}, largest={desc})",
            [a],
            lambda M, x: M.topk(x, k, d, largest=desc).values,
        )
    if op == "kthvalue":
        return (
            f"kthvalue({name}, {k}, {d}, keepdim={desc})",
            [a],
            lambda M, x: x.kthvalue(k, d, desc).values,
        )
    if op == "logit":
        eps = [None, 0.0, 1e-6, 0.2, -0.1][int(rng.integers(0, 5))]
        return f"logit({name}, {eps})", [a], lambda M, x: M.logit(x, eps)
    eq, shapes = _EINSUM[int(rng.integers(0, len(_EINSUM)))]
    fdt = str(rng.choice(["float32", "float64"]))
    ps = [Pair(rng, fdt, s, device) for s in shapes]
    for p in ps:  # finite values: the summation order differs around inf and nan
        p.t = p.t.nan_to_num(0.0, 0.0, 0.0)
        p.c = cudalite.tensor(p.t.cpu().numpy(), dtype=getattr(cudalite, fdt), device=device)
    return f"einsum({eq!r}, {fdt})", ps, lambda M, *xs: M.einsum(eq, *xs)


# ---- statistics, scans, composed pointwise ops, products, diagonals ----

# name: (f(M, x, d, k, q) over one tensor x, a dim d, a count k and a probability q; whether
# the op's indices are compared: ties make them unspecified where torch's kernel doesn't
# define them)
_MATHOPS = {
    "median": lambda M, x, d, k, q: M.median(x),
    "median_dim": lambda M, x, d, k, q: M.median(x, d, keepdim=k % 2 == 0).values,
    "nanmedian_dim": lambda M, x, d, k, q: x.nanmedian(d).values,
    "mode": lambda M, x, d, k, q: M.mode(x, d).values,
    "quantile": lambda M, x, d, k, q: M.quantile(x, q, d),
    "nanquantile": lambda M, x, d, k, q: M.nanquantile(x, q, interpolation="midpoint"),
    "aminmax": lambda M, x, d, k, q: tuple(M.aminmax(x, dim=d)),
    "cummax": lambda M, x, d, k, q: M.cummax(x, d).values,
    "cummin": lambda M, x, d, k, q: tuple(x.cummin(d)),
    "logcumsumexp": lambda M, x, d, k, q: M.logcumsumexp(x, d),
    "histc": lambda M, x, d, k, q: M.histc(x, k + 1, -1, 1),
    "nan_to_num": lambda M, x, d, k, q: M.nan_to_num(x, 1.0, neginf=-2.0),
    "clamp_min": lambda M, x, d, k, q: M.clamp_min(x, q),
    "clamp_max": lambda M, x, d, k, q: x.clamp_max(-q),
    "addcmul": lambda M, x, d, k, q: M.addcmul(x, x, x.flip(-1) if x.dim() else x, value=k),
    "addcdiv": lambda M, x, d, k, q: x.addcdiv(x, x.abs() + 1, value=q),
    "frexp": lambda M, x, d, k, q: tuple(M.frexp(x)),
    "float_power": lambda M, x, d, k, q: M.float_power(x, k - 1),
    "ldexp": lambda M, x, d, k, q: M.ldexp(x, M.tensor([k - 2], device=x.device)),
    "polygamma": lambda M, x, d, k, q: M.polygamma(k % 4, x),
    "mvlgamma": lambda M, x, d, k, q: M.mvlgamma(x.abs() + k, k % 3 + 1),
    "digamma": lambda M, x, d, k, q: M.digamma(x),
    "lgamma": lambda M, x, d, k, q: x.lgamma(),
    "i0": lambda M, x, d, k, q: M.i0(x),
    "sinc": lambda M, x, d, k, q: M.sinc(x),
    "sgn": lambda M, x, d, k, q: M.sgn(x),
    "gcd": lambda M, x, d, k, q: M.gcd(x, x.flip(-1) if x.dim() else x),
    "lcm": lambda M, x, d, k, q: x.lcm(x.flip(-1) if x.dim() else x),
    "heaviside": lambda M, x, d, k, q: M.heaviside(x, x.flip(-1) if x.dim() else x),
    "nextafter": lambda M, x, d, k, q: M.nextafter(x, x.flip(-1) if x.dim() else x),
    "logaddexp2": lambda M, x, d, k, q: M.logaddexp2(x, x.flip(-1) if x.dim() else x),
    "trace": lambda M, x, d, k, q: M.trace(x),
    "diag": lambda M, x, d, k, q: M.diag(x, k - 2),
    "diagflat": lambda M, x, d, k, q: M.diagflat(x, k - 2),
    "diag_embed": lambda M, x, d, k, q: M.diag_embed(x, k - 2),
    "kron": lambda M, x, d, k, q: M.kron(x, x[..., :2] if x.dim() else x),
    "outer": lambda M, x, d, k, q: M.outer(x, x),
    "inner": lambda M, x, d, k, q: M.inner(x, x),
    "renorm": lambda M, x, d, k, q: M.renorm(x, k + 1, d, q),
    "dist": lambda M, x, d, k, q: M.dist(x, x.flip(-1) if x.dim() else x, k),
    "cov": lambda M, x, d, k, q: M.cov(x, correction=k % 2),
    "corrcoef": lambda M, x, d, k, q: M.corrcoef(x),
    "bincount": lambda M, x, d, k, q: M.bincount(x.reshape(-1).abs(), minlength=k),
    "igamma": lambda M, x, d, k, q: M.igamma(x.abs(), x.abs().flip(-1) if x.dim() else x),
    "igammac": lambda M, x, d, k, q: x.abs().igammac(x.abs() + q),
    "angle": lambda M, x, d, k, q: M.angle(x),
    "left_shift": lambda M, x, d, k, q: M.bitwise_left_shift(x, k),
    "right_shift": lambda M, x, d, k, q: x.bitwise_right_shift(x.flip(-1) if x.dim() else x),
    "diff": lambda M, x, d, k, q: M.diff(x, k % 3, d),
    "histogram": lambda M, x, d, k, q: tuple(M.histogram(x, k + 1, range=(-1.0, 1.0))),
    "matrix_power": lambda M, x, d, k, q: M.matrix_power(x[..., :2, :2] / 4, k),
}


def _mathops_case(rng, device):
    """One of the special functions, statistics, scans, composed pointwise ops, products or
    diagonals on a random tensor (values only, where ties leave the indices unspecified)."""
    op = str(rng.choice(list(_MATHOPS)))
    dt = str(rng.choice(DTYPES))
    a = Pair(rng, dt, _shape(rng), device)
    nd = a.t.dim()
    d = int(rng.integers(-max(nd, 1), max(nd, 1)))
    k = int(rng.integers(0, 5))
    q = float(rng.choice([0.0, 0.25, 0.5, 0.9, 1.0]))
    f = _MATHOPS[op]
    return (
        f"{op}({dt}{list(a.t.shape)}, d={d}, k={k}, q={q})",
        [a],
        lambda M, x: f(M, x, d, k, q),
    )


def raised_alike(what, et, ec):
    """None when neither library raised or both raised the same kind of exception, else the
    mismatch (the fuzzers compare exception types, not messages)."""
    if not (et or ec):
        return None
    if not (et and ec):
        return f"{what}: torch {et!r}, cudalite {ec!r}"
    if not isinstance(ec, type(et)) and not isinstance(et, type(ec)):
        return f"{what}: torch raised {type(et).__name__}: {et}, cudalite {type(ec).__name__}: {ec}"
    return None


def report(i, err, failures, shown=25):
    """Prints a mismatch (the first `shown` of them); returns the new count."""
    if not err:
        return failures
    if failures < shown:
        print(f"case {i}: {err}")
    return failures + 1


def _run(f, args):
    try:
        return f(*args), None
    except Exception as e:  # noqa: BLE001 - the type is what is compared
        return None, e


def fuzz_args(count):
    """The fuzzers' command line (--device, --seed, --count) and their random generator."""
    ap = argparse.ArgumentParser()
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--count", type=int, default=count)
    args = ap.parse_args()
    warnings.simplefilter("ignore")  # std of one element and the like warn in both
    return args, np.random.default_rng(args.seed)


def main():
    args, rng = fuzz_args(3000)
    failures = 0
    for i in range(args.count):
        try:
            what, pairs, f = _case(rng, args.device)
        except Exception:  # noqa: BLE001 - building the inputs failed in one library
            print(f"case {i}: building inputs failed\n{traceback.format_exc()}")
            failures += 1
            continue
        rt, et = _run(f, [torch] + [p.t for p in pairs])
        rc, ec = _run(f, [cudalite] + [p.c for p in pairs])
        err = raised_alike(what, et, ec)
        if et or ec:
            pass
        elif args.device == "cuda" and ("floor_divide" in what or "remainder" in what):
            pass  # integer division by zero is unspecified on CUDA: compare the errors only
        else:
            err = _same(rt, rc, what, loose=what.startswith("prod("))
        failures = report(i, err, failures)
    print(f"{args.count} cases on {args.device}, {failures} mismatches")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
