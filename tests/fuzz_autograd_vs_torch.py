"""Differential fuzzing of cudalite's autograd against PyTorch 2.11 (not a test; needs torch).

    python tests/fuzz_autograd_vs_torch.py [--device cuda] [--seed N] [--count N]

Random chains of differentiable ops (elementwise, reductions, views (diagonal, movedim,
unfold, as_strided and sum_to_size among them), indexing, matmul,
softmax, where, clamp, the ops along a dim (gather, scatter, scatter_add, index_add, cumsum,
cumprod, tril/triu, roll, repeat_interleave), in-place updates of non-leaf tensors) on
float64 leaves that require grad; the same numbers go to both libraries. Forward values, the
gradients of every leaf after backward() of a random weighted sum, and whether an exception is
raised (and its type) must agree. Exits non-zero on any mismatch.
"""

from __future__ import annotations

import re
import sys
import traceback

import numpy as np
import torch

import cudalite
from fuzz_ops_vs_torch import fuzz_args, raised_alike, report

UNARY = ["exp", "tanh", "sigmoid", "relu", "neg", "abs", "sin", "cos", "square", "reciprocal"]
POSITIVE = ["log", "sqrt", "rsqrt", "log1p", "log2", "log10"]
BINARY = ["add", "sub", "mul", "div", "maximum", "minimum", "pow", "atan2"]


def _step(rng, x, shape):
    """One random op applied to x (a function of the library module M and the tensor)."""
    nd = len(shape)
    kind = rng.choice(
        [
            "unary",
            "positive",
            "binary",
            "scalar",
            "reduce",
            "view",
            "index",
            "softmax",
            "where",
            "clamp",
            "matmul",
            "inplace",
            "modified",
            "join",
            "more",
        ]
    )
    d = int(rng.integers(-nd, nd)) if nd else 0
    if kind == "unary":
        op = str(rng.choice(UNARY))
        return op, lambda M, t: getattr(M, op)(t), shape
    if kind == "positive":
        op = str(rng.choice(POSITIVE))
        return op, lambda M, t: getattr(M, op)(t.abs() + 0.5), shape
    if kind == "binary":
        op = str(rng.choice(BINARY))
        other = (
            rng.standard_normal(shape)
            if rng.random() < 0.7
            else rng.standard_normal(shape[-1:] if shape else ())
        )

        def f(M, t):
            o = M.tensor(other, dtype=M.float64, device=t.device)
            if op == "pow":
                return M.pow(t.abs() + 0.5, o)
            if op == "div":
                return M.div(t, o.abs() + 0.5)
            return getattr(M, op)(t, o)

        return op, f, shape
    if kind == "scalar":
        s = float(rng.choice([2.0, -0.5, 3.0, 0.25]))
        op = str(rng.choice(["add", "mul", "sub", "div", "pow", "rsub", "rdiv"]))

        def f(M, t):
            return {
                "add": lambda: t + s,
                "mul": lambda: t * s,
                "sub": lambda: t - s,
                "div": lambda: t / s,
                "pow": lambda: (t.abs() + 0.5) ** s,
                "rsub": lambda: s - t,
                "rdiv": lambda: s / (t.abs() + 0.5),
            }[op]()

        return f"{op} {s}", f, shape
    if kind == "reduce" and nd:
        op = str(rng.choice(["sum", "mean", "amax", "prod", "std", "var", "norm", "max"]))
        keep = bool(rng.random() < 0.5)
        new = (
            tuple(1 if i == d % nd else n for i, n in enumerate(shape))
            if keep
            else tuple(n for i, n in enumerate(shape) if i != d % nd)
        )

        def f(M, t):
            if op == "max":
                return t.max(dim=d, keepdim=keep).values
            if op == "norm":
                return t.norm(dim=d, keepdim=keep)
            return getattr(t, op)(dim=d, keepdim=keep)

        return f"{op}(dim={d}, keepdim={keep})", f, new
    if kind == "view" and nd >= 2:
        op = str(
            rng.choice(
                [
                    *("t", "transpose", "reshape", "flatten", "unsqueeze", "permute", "expand"),
                    *("diagonal", "movedim", "unfold", "sum_to_size", "as_strided"),
                ]
            )
        )
        if op == "t":
            return (
                "transpose(0,1)",
                lambda M, t: t.transpose(0, 1),
                (shape[1], shape[0]) + shape[2:],
            )
        if op == "transpose":
            return (
                "transpose(-1,0)",
                lambda M, t: t.transpose(-1, 0),
                (shape[-1],) + shape[1:-1] + (shape[0],),
            )
        if op == "reshape":
            return "reshape(-1)", lambda M, t: t.reshape(-1), (int(np.prod(shape)),)
        if op == "flatten":
            return "flatten", lambda M, t: t.flatten(), (int(np.prod(shape)),)
        if op == "unsqueeze":
            return "unsqueeze(0)", lambda M, t: t.unsqueeze(0), (1,) + shape
        if op == "permute":
            perm = [int(i) for i in rng.permutation(nd)]
            return f"permute{perm}", lambda M, t: t.permute(*perm), tuple(shape[i] for i in perm)
        if op == "diagonal":
            off = int(rng.integers(-1, 2))
            n = max(min(shape[0] + min(off, 0), shape[1] - max(off, 0)), 0)
            return f"diagonal({off})", lambda M, t: t.diagonal(off), shape[2:] + (n,)
        if op == "movedim":
            src, dst = int(rng.integers(0, nd)), int(rng.integers(-nd, nd))
            order = [i for i in range(nd) if i != src]
            order.insert(dst % nd, src)
            new = tuple(shape[i] for i in order)
            return f"movedim({src}, {dst})", lambda M, t: t.movedim(src, dst), new
        if op == "unfold":
            size, step = int(rng.integers(1, shape[-1] + 1)), int(rng.integers(1, 3))
            new = shape[:-1] + ((shape[-1] - size) // step + 1, size)
            return f"unfold(-1, {size}, {step})", lambda M, t: t.unfold(-1, size, step), new
        if op == "sum_to_size":
            new = (1,) + shape[2:] if rng.random() < 0.5 else shape[1:]
            return f"sum_to_size{new}", lambda M, t: t.sum_to_size(new), new
        if op == "as_strided":  # overlapping windows of a contiguous copy
            n = int(np.prod(shape))
            new = (max(n - 2, 1), min(n, 3))
            return (
                f"as_strided{new}",
                lambda M, t: M.as_strided(t.contiguous(), new, (1, 1)),
                new,
            )
        return "expand", lambda M, t: t.unsqueeze(0).expand(2, *shape), (2,) + shape
    if kind == "index" and nd and shape[0] > 1:
        idx = [int(i) for i in rng.integers(0, shape[0], 3)]
        if rng.random() < 0.5:
            return f"[{idx}]", lambda M, t: t[M.tensor(idx, device=t.device)], (3,) + shape[1:]
        return "[1:]", lambda M, t: t[1:], (shape[0] - 1,) + shape[1:]
    if kind == "softmax" and nd:
        op = str(rng.choice(["softmax", "log_softmax"]))
        return f"{op}({d})", lambda M, t: getattr(M, op)(t, d), shape
    if kind == "where":
        mask = rng.random(shape) < 0.5
        return "where", lambda M, t: M.where(M.tensor(mask, device=t.device), t, t * 2), shape
    if kind == "clamp":
        return "clamp(-0.5, 0.7)", lambda M, t: t.clamp(-0.5, 0.7), shape
    if kind == "matmul" and nd == 2:
        w = rng.standard_normal((shape[1], 3))
        return (
            "matmul",
            lambda M, t: t @ M.tensor(w, dtype=M.float64, device=t.device),
            (shape[0], 3),
        )
    if kind == "inplace":
        op = str(rng.choice(["mul_", "add_", "clamp_", "relu_", "sigmoid_"]))

        def f(M, t):
            u = t * 1.0  # a non-leaf to update in place
            {
                "mul_": lambda: u.mul_(1.5),
                "add_": lambda: u.add_(u),
                "clamp_": lambda: u.clamp_(-1, 1),
                "relu_": lambda: u.relu_(),
                "sigmoid_": lambda: u.sigmoid_(),
            }[op]()
            return u

        return op, f, shape
    if kind == "modified":
        return _modified(rng, shape)
    if kind == "join" and nd:
        op = str(rng.choice(["cat", "stack"]))
        if op == "cat":
            return (
                f"cat(t, 2t, {d})",
                lambda M, t: M.cat([t, t * 2], d),
                tuple(n * 2 if i == d % nd else n for i, n in enumerate(shape)),
            )
        return "stack(t, t.exp())", lambda M, t: M.stack([t, t.exp()]), (2,) + shape
    if kind == "more" and nd:
        op = str(
            rng.choice(
                [
                    "masked_fill",
                    "lerp",
                    "index_select",
                    "narrow",
                    "flip",
                    "repeat",
                    "prod_zero",
                    "sum_all",
                    "max_all",
                    "norm1",
                    "split",
                    "mean_dims",
                    "amin_dims",
                    "squeeze",
                    # ops along a dim
                    "gather",
                    "scatter",
                    "scatter_add",
                    "index_add",
                    "cumsum",
                    "cumprod_zero",
                    "tril",
                    "roll",
                    "repeat_interleave",
                ]
            )
        )
        mask = rng.random(shape) < 0.4
        if op == "masked_fill":
            return op, lambda M, t: t.masked_fill(M.tensor(mask, device=t.device), 0.5), shape
        if op == "lerp":
            return op, lambda M, t: M.lerp(t, t.exp(), 0.3), shape
        if op == "index_select":
            return (
                op,
                lambda M, t: t.index_select(0, M.tensor([0, 0], device=t.device)),
                (2,) + shape[1:],
            )
        if op == "narrow" and shape[0] > 1:
            return op, lambda M, t: t.narrow(0, 1, shape[0] - 1), (shape[0] - 1,) + shape[1:]
        if op == "flip":
            return op, lambda M, t: t.flip(0), shape
        if op == "repeat":
            return op, lambda M, t: t.repeat(*([2] + [1] * (nd - 1))), (2 * shape[0],) + shape[1:]
        if op == "prod_zero":  # zeros in a product: torch's gradient has its own formula

            def f(M, t):
                z = M.tensor(mask, device=t.device)
                return M.where(z, t * 0, t).prod(dim=d)

            return op, f, tuple(n for i, n in enumerate(shape) if i != d % nd)
        if op == "sum_all":
            return op, lambda M, t: t.sum().reshape(1), (1,)
        if op == "max_all":
            return op, lambda M, t: t.max().reshape(1), (1,)
        if op == "norm1":
            return op, lambda M, t: t.norm(p=1).reshape(1), (1,)
        if op == "split" and shape[0] > 1:
            return op, lambda M, t: t.split(1)[-1], (1,) + shape[1:]
        if op == "mean_dims" and nd >= 2:
            return op, lambda M, t: t.mean(dim=(0, -1)), shape[1:-1]
        if op == "amin_dims" and nd >= 2:
            return op, lambda M, t: t.amin(dim=(0, 1), keepdim=True), (1, 1) + shape[2:]
        if op == "squeeze":
            return op, lambda M, t: t.unsqueeze(0).squeeze(0), shape
        return _dim_op(rng, op, shape, d, mask)
    return "identity", lambda M, t: t, shape


def _dim_op(rng, op, shape, d, mask):
    """gather/scatter/index_add, the scans, tril, roll and repeat_interleave along dim d."""
    nd = len(shape)
    n = shape[d]
    idx = rng.integers(0, n, shape).tolist() if n else np.zeros(shape, np.int64).tolist()
    if op == "gather":
        return op, lambda M, t: t.gather(d, M.tensor(idx, device=t.device)), shape
    if op in ("scatter", "scatter_add"):
        # distinct positions along d for scatter (an assignment to one element twice is
        # unspecified on CUDA); any for scatter_add
        if op == "scatter" and n:
            perm = np.argsort(rng.random(shape), axis=d).tolist()
        else:
            perm = idx
        name = op
        return (
            op,
            lambda M, t: getattr(t * 0.5, name)(d, M.tensor(perm, device=t.device), t.exp()),
            shape,
        )
    if op == "index_add":
        sel = rng.integers(0, max(n, 1), n).tolist() if n else []
        return (
            op,
            lambda M, t: t.index_add(d, M.tensor(sel, device=t.device, dtype=M.int64), t, alpha=2),
            shape,
        )
    if op == "cumsum":
        return op, lambda M, t: t.cumsum(d), shape
    if op == "cumprod_zero":

        def f(M, t):
            z = M.tensor(mask, device=t.device)
            return M.where(z, t * 0, t).cumprod(d)

        return op, f, shape
    if op == "tril" and nd >= 2:
        k = int(rng.integers(-2, 3))
        return op, lambda M, t: t.tril(k) if k % 2 else t.triu(k), shape
    if op == "roll":
        s = int(rng.integers(-5, 6))
        return op, lambda M, t: t.roll(s, d), shape
    if op == "repeat_interleave":
        r = int(rng.integers(0, 3))
        new = tuple(k * r if i == d % nd else k for i, k in enumerate(shape))
        return op, lambda M, t: t.repeat_interleave(r, dim=d), new
    return "identity", lambda M, t: t, shape


# ops that save their input (sin, mul, div, pow), their output (exp, sigmoid, tanh, sqrt,
# relu) or nothing (add, neg)
SAVING = {
    "sin": lambda M, u, w: u.sin(),
    "mul": lambda M, u, w: u * w,
    "div": lambda M, u, w: u / (w.abs() + 0.5),
    "pow": lambda M, u, w: (u.abs() + 0.5) ** w,
    "exp": lambda M, u, w: u.exp(),
    "sigmoid": lambda M, u, w: u.sigmoid(),
    "tanh": lambda M, u, w: M.tanh(u),
    "sqrt": lambda M, u, w: (u * u + 1).sqrt(),
    "relu": lambda M, u, w: u.relu(),
    "add": lambda M, u, w: u + w,
    "neg": lambda M, u, w: -u,
    "cumprod": lambda M, u, w: u.cumprod(0),
}
WRITES = {
    "add_": lambda M, x: x.add_(1),
    "mul_": lambda M, x: x.mul_(2),
    "zero_": lambda M, x: x.zero_(),
    "setitem": lambda M, x: x.__setitem__(0, 0.5),
    "copy_": lambda M, x: x.copy_(x.detach() * 3),
    "clamp_": lambda M, x: x.clamp_(-0.5, 0.5),
    "exp_": lambda M, x: x.exp_(),
    "cumsum_": lambda M, x: x.cumsum_(0),
}


def _modified(rng, shape):
    """An op that may save its input or output, then an in-place write into the input, the
    output, the other operand, a view or the base of one, their .data or detach(), in grad mode
    or not: torch's version check raises or not, and cudalite must agree."""
    op = str(rng.choice(list(SAVING)))
    target = str(rng.choice(["input", "output", "other", "view", "base", "data", "detach"]))
    write = str(rng.choice(list(WRITES)))
    nograd = bool(rng.random() < 0.25)
    other = rng.standard_normal(shape)

    def f(M, t):
        u = t * 1.0
        w = t * 0 + M.tensor(other, dtype=M.float64, device=t.device)
        src = u.view(-1).view(shape) if target == "base" else u
        r = SAVING[op](M, src, w)
        x = {
            "input": u,
            "output": r,
            "other": w,
            "view": u.view(-1)[:1],
            "base": u,
            "data": u.data,
            "detach": r.detach(),
        }[target]
        if nograd:
            with M.no_grad():
                WRITES[write](M, x)
        else:
            WRITES[write](M, x)
        return r

    return f"{op}, {write} on {target}{' (no_grad)' if nograd else ''}", f, shape


def _same_message(what, et, ec):
    """The version check's message must be torch's (with cudalite's type names)."""
    if et is None or ec is None or "modified by an inplace operation" not in str(et):
        return None
    want = re.sub(r"torch\.((cuda\.)?[A-Za-z]+Tensor)", r"cudalite.\1", str(et))
    if str(ec) != want:
        return f"{what}: messages differ\n  torch    {want}\n  cudalite {ec}"
    return None


def _case(rng):
    shape = tuple(int(n) for n in rng.integers(1, 5, int(rng.integers(1, 4))))
    base = rng.standard_normal(shape)
    steps, cur = [], shape
    for _ in range(int(rng.integers(1, 5))):
        name, f, cur = _step(rng, None, cur)
        steps.append((name, f))
    weights = None
    return base, steps, weights


def _run(M, base, steps, device, rng_w):
    x = M.tensor(base, dtype=M.float64, device=device, requires_grad=True)
    y = x
    for _, f in steps:
        y = f(M, y)
    w = M.tensor(rng_w(tuple(y.shape)), dtype=M.float64, device=device)
    (y * w).sum().backward()
    return y.detach().cpu().numpy(), x.grad.cpu().numpy()


def main():
    args, rng = fuzz_args(1000)
    failures = 0
    for i in range(args.count):
        base, steps, _ = _case(rng)
        wseed = int(rng.integers(0, 2**31))
        what = " -> ".join(n for n, _ in steps) + f" on {list(base.shape)}"
        res = []
        for M in (torch, cudalite):
            wr = np.random.default_rng(wseed)
            try:
                res.append((_run(M, base, steps, args.device, wr.standard_normal), None))
            except Exception as e:  # noqa: BLE001 - the type is compared
                res.append((None, e))
        (rt, et), (rc, ec) = res
        err = raised_alike(what, et, ec) or _same_message(what, et, ec)
        if ec and not et:
            err += "\n" + "".join(traceback.format_exception(ec))[-800:]
        if not (et or ec):
            for name, a, b in (("value", rt[0], rc[0]), ("grad", rt[1], rc[1])):
                if a.shape != b.shape or not np.allclose(
                    a, b, rtol=1e-9, atol=1e-9, equal_nan=True
                ):
                    err = f"{what}: {name} differs\n  torch    {a.ravel()[:6]}"
                    err += f"\n  cudalite {b.ravel()[:6]}"
                    break
        failures = report(i, err, failures, shown=30)
    print(f"{args.count} cases on {args.device}, {failures} mismatches")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
