"""Differential fuzzing of cudalite's indexing, views and shape ops against PyTorch 2.11 (not a
test; needs torch).

    python tests/fuzz_views_vs_torch.py [--device cuda] [--seed N] [--count N]

Random tensors (as in fuzz_ops_vs_torch.py) through indexing and index assignment (integers,
slices, None, Ellipsis, boolean masks, integer tensors and lists, and mixes of them), the view
and shape ops (view, reshape, permute, transpose, squeeze, unsqueeze, flatten, expand, narrow,
select, chunk, split, unbind, flip, repeat, index_select, masked_fill, nonzero, stack), the
ops along a dim (gather, scatter, scatter_add, index_add, cumsum, cumprod, tril, triu, roll,
repeat_interleave), the splits, shape, index, scatter and set ops (tensor_split, hsplit,
vsplit, dsplit, split_with_sizes, unsafe_split, tile, ravel, rot90, fliplr, flipud,
narrow_copy, index_copy, index_fill, masked_select, masked_scatter, take, put,
take_along_dim, scatter_reduce, index_reduce, slice/select/diagonal_scatter, fill_diagonal_,
argwhere, nonzero_static, unique, unique_consecutive, dim_order, is_nonzero) and the
factories with inferred dtypes. Results must agree in the
exception raised (its type), dtype, shape, strides and storage offset of views, and values.
On CUDA, whether torch raises is decided by the same case on the CPU (its CUDA kernels assert
on bad indices). Exits non-zero on any mismatch.
"""

from __future__ import annotations

import sys
import traceback

import numpy as np
import torch

import cudalite
from fuzz_ops_vs_torch import (
    DTYPES,
    Pair,
    _run,
    _same,
    _shape,
    fuzz_args,
    raised_alike,
    report,
)


def _on_cpu(index):
    """An index with its tensors copied to the CPU."""
    if isinstance(index, tuple):
        return tuple(_on_cpu(i) for i in index)
    return index.cpu() if isinstance(index, torch.Tensor) else index


def _index_item(rng, size, allow_tensor, device):
    """One entry of an index for a dim of `size`: (torch's, cudalite's, text)."""
    r = rng.random()
    if r < 0.3:
        i = int(rng.integers(-size - 1, size + 1)) if size else int(rng.integers(-1, 2))
        return i, i, str(i)
    if r < 0.6:
        lo = None if rng.random() < 0.3 else int(rng.integers(-size - 2, size + 2))
        hi = None if rng.random() < 0.3 else int(rng.integers(-size - 2, size + 2))
        st = None if rng.random() < 0.5 else int(rng.choice([1, 2, 3, -1, 0]))
        s = slice(lo, hi, st)
        return s, s, f"{lo}:{hi}:{st}"
    if r < 0.7:
        return None, None, "None"
    if r < 0.75:
        return Ellipsis, Ellipsis, "..."
    if not allow_tensor:
        return slice(None), slice(None), ":"
    if r < 0.85:
        n = int(rng.integers(0, 4))
        wide = rng.random() < 0.1
        idx = [int(x) for x in rng.integers(-size - 1 if wide else -size, max(size, 1), n)]
        if rng.random() < 0.5:
            return idx, idx, f"{idx}"
        t = torch.tensor(idx, dtype=torch.int64, device=device)
        c = cudalite.tensor(idx, dtype=cudalite.int64, device=device)
        return t, c, f"tensor({idx})"
    m = [bool(x) for x in rng.random(size) < 0.5]
    if rng.random() < 0.1 and size:  # a mask of the wrong length
        m = m[:-1]
    t = torch.tensor(m, dtype=torch.bool, device=device)
    c = cudalite.tensor(m, dtype=cudalite.bool, device=device)
    return t, c, f"mask({m})"


def _index(rng, shape, device):
    n = int(rng.integers(1, 4))
    ti, ci, text = [], [], []
    dims = list(shape) + [1] * 4
    for k in range(n):
        t, c, s = _index_item(rng, dims[k], True, device)
        ti.append(t)
        ci.append(c)
        text.append(s)
    if n == 1 and rng.random() < 0.5:
        return ti[0], ci[0], text[0]
    return tuple(ti), tuple(ci), ",".join(text)


def _view_case(rng, a, device):
    nd = a.t.dim()
    shape = list(a.t.shape)
    d = int(rng.integers(-nd, nd)) if nd else 0
    ops = {
        "view": lambda: (
            [int(x) for x in rng.permutation(shape)] + ([] if rng.random() < 0.7 else [1])
        ),
        "view-1": lambda: [-1] + shape[1:] if shape else [-1],
        "reshape": lambda: [int(np.prod(shape))] if rng.random() < 0.5 else shape[::-1],
        "transpose": lambda: (d, int(rng.integers(-nd, nd)) if nd else 0),
        "squeeze": lambda: (
            d if rng.random() < 0.6 else tuple({d, int(rng.integers(-nd, nd)) if nd else 0})
        ),
        "unsqueeze": lambda: int(rng.integers(-nd - 2, nd + 2)),
        "flatten": lambda: (int(rng.integers(-nd, nd)) if nd else 0, d),
        "expand": lambda: (
            [int(rng.choice([s, -1] if s != 1 else [1, 3, -1])) for s in shape]
            if rng.random() < 0.8
            else [2] + shape
        ),
        "narrow": lambda: (d, int(rng.integers(-3, 4)), int(rng.integers(0, 4))),
        "select": lambda: (d, int(rng.integers(-4, 4))),
        "chunk": lambda: (int(rng.integers(0, 4)), d),
        "split": lambda: (
            int(rng.integers(0, 3))
            if rng.random() < 0.6
            else [1, max(0, (shape[d] if nd else 1) - 1)],
            d,
        ),
        "unbind": lambda: (d,),
        "flip": lambda: (d,) if rng.random() < 0.7 else tuple(range(nd)),
        "repeat": lambda: [int(x) for x in rng.integers(0, 3, nd + int(rng.integers(0, 2)))],
        "permute": lambda: (
            [int(x) for x in rng.permutation(nd)] if rng.random() < 0.9 else [0] * nd
        ),
        "t": lambda: (),
        "movedim-swapaxes": lambda: (d, int(rng.integers(-nd, nd)) if nd else 0),
        "contiguous": lambda: (),
        "diagonal": lambda: (int(rng.integers(-4, 5)), d, int(rng.integers(-nd, nd)) if nd else 0),
        "movedim": lambda: _movedim_args(rng, nd),
        "moveaxis": lambda: _movedim_args(rng, nd),
        "unfold": lambda: (
            d,
            int(rng.integers(-1 if rng.random() < 0.05 else 0, 5)),
            int(rng.integers(0 if rng.random() < 0.1 else 1, 4)),
        ),
        "as_strided": lambda: _as_strided_args(rng, a.c),
        "sum_to_size": lambda: _sum_to_size_arg(rng, shape),
    }
    name = str(rng.choice(list(ops)))
    arg = ops[name]()
    method = {"view-1": "view", "movedim-swapaxes": "swapaxes"}.get(name, name)
    splat = name in (
        "transpose",
        "flatten",
        "narrow",
        "select",
        "chunk",
        "split",
        "unbind",
        "t",
        "movedim-swapaxes",
        "contiguous",
        "diagonal",
        "movedim",
        "moveaxis",
        "unfold",
        "as_strided",
    )
    if splat:
        args = tuple(arg)
    else:
        args = (arg,)
    return (
        f"x.{method}{args}",
        lambda M, x: getattr(x, method)(*args),
        method not in ("repeat", "flip", "sum_to_size"),
    )


def _movedim_args(rng, nd):
    """movedim's (source, destination): two ints, or two sequences of dims (sometimes
    repeated, of other lengths or out of range)."""

    def dim():
        return int(rng.integers(-nd - (rng.random() < 0.05), nd + (rng.random() < 0.05) or 1))

    if rng.random() < 0.4:
        return dim(), dim()
    k = int(rng.integers(0, nd + 1))
    src = [int(x) for x in rng.permutation(max(nd, 1))[:k]]
    dst = [int(x) for x in rng.permutation(max(nd, 1))[:k]]
    if rng.random() < 0.3:
        src = [s - nd if rng.random() < 0.5 else s for s in src]
    if rng.random() < 0.1:
        dst = dst + [dim()]
    elif rng.random() < 0.1 and src:
        src[-1] = src[0]
    return tuple(src), (list if rng.random() < 0.5 else tuple)(dst)


def _as_strided_args(rng, c):
    """Sizes, strides and an offset that mostly lie inside c's storage."""
    n = c._storage_nbytes() // c.element_size()
    k = int(rng.integers(0, 4))
    size = [int(rng.integers(0, 4)) for _ in range(k)]
    stride = [int(rng.integers(-1 if rng.random() < 0.05 else 0, 4)) for _ in range(k)]
    if rng.random() < 0.05 and size:
        stride = stride[:-1]
    off = None if rng.random() < 0.3 else int(rng.integers(-1 if rng.random() < 0.05 else 0, n + 2))
    return size, stride, off


def _sum_to_size_arg(rng, shape):
    """A size that ``shape`` expands from (dims dropped in front, some set to 1), or
    sometimes one that it does not."""
    lead = int(rng.integers(0, len(shape) + 1))
    size = [1 if rng.random() < 0.4 else s for s in shape[lead:]]
    if rng.random() < 0.1:
        size = [s + 1 for s in size] or [2]
    elif rng.random() < 0.1:
        size = [1] + list(shape)
    return size


def _case(rng, device):
    kind = rng.choice(
        ["get", "get", "set", "view", "view", "misc", "factory", "dim_op", "shape_op", "shape_op"]
    )
    dt = str(rng.choice(DTYPES))
    shape = _shape(rng)
    if kind == "factory":
        return _factory_case(rng, device)
    a = Pair(rng, dt, shape, device)
    desc = f"{dt}{list(a.t.shape)}"
    if kind == "dim_op":
        return _dim_op_case(rng, a, desc, device)
    if kind == "shape_op":
        return _shape_op_case(rng, a, desc, device)
    if kind == "get":
        ti, ci, text = _index(rng, tuple(a.t.shape), device)
        basic = "[" not in text  # no list, tensor or mask: the result is a view
        return (f"{desc}[{text}]", [a], lambda M, x: x[ti if M is torch else ci], basic)
    if kind == "set":
        ti, ci, text = _index(rng, tuple(a.t.shape), device)
        if rng.random() < 0.5:
            v = [7, -1.5, True][int(rng.integers(0, 3))]
            vt = vc = v
            vtext = repr(v)
        else:
            try:
                # (on the CPU: torch's CUDA kernels assert on a bad index, ending the context)
                vshape = tuple(a.t.cpu()[_on_cpu(ti)].shape)
            except Exception:  # noqa: BLE001 - a bad index: any value will do
                vshape = ()
            if vshape and rng.random() < 0.5:
                vshape = vshape[1:]
            vdt = dt if rng.random() < 0.7 else str(rng.choice(DTYPES))
            v = Pair(rng, vdt, vshape, device)
            vt, vc = v.t, v.c
            vtext = f"{vdt}{list(vshape)}"

        def f(M, x):
            y = x.clone()
            y[ti if M is torch else ci] = vt if M is torch else vc
            return y

        return f"{desc}[{text}] = {vtext}", [a], f, False
    if kind == "view":
        text, f, is_view = _view_case(rng, a, device)
        return f"{desc}: {text}", [a], f, is_view
    # misc: index_select, masked_fill, nonzero, stack, tolist/item, broadcast_to
    nd = a.t.dim()
    d = int(rng.integers(-nd, nd)) if nd else 0
    which = rng.choice(["index_select", "masked_fill", "nonzero", "stack", "tolist", "item"])
    if which == "index_select":
        size = a.t.shape[d] if nd else 1
        wide = 1 if rng.random() < 0.1 else 0
        idx = [int(x) for x in rng.integers(0, max(size, 1) + wide, int(rng.integers(0, 5)))]
        it = torch.tensor(idx, dtype=torch.int64, device=device)
        ic = cudalite.tensor(idx, dtype=cudalite.int64, device=device)
        return (
            f"{desc}.index_select({d}, {idx})",
            [a],
            lambda M, x: x.index_select(d, it if M is torch else ic),
            False,
        )
    if which == "masked_fill":
        mshape = list(a.t.shape)
        if mshape and rng.random() < 0.4:
            mshape[int(rng.integers(0, len(mshape)))] = 1
        m = Pair(rng, "bool", tuple(mshape), device)
        v = [0.5, 3, True, float("nan")][int(rng.integers(0, 4))]
        return (
            f"{desc}.masked_fill(bool{mshape}, {v})",
            [a, m],
            lambda M, x, mm: x.masked_fill(mm, v),
            False,
        )
    if which == "nonzero":
        tup = bool(rng.random() < 0.3)
        return f"{desc}.nonzero(as_tuple={tup})", [a], lambda M, x: x.nonzero(as_tuple=tup), False
    if which == "stack":
        b = Pair(rng, dt, tuple(a.t.shape), device)
        sd = int(rng.integers(-nd - 1, nd + 1))
        return f"stack({desc} x2, {sd})", [a, b], lambda M, x, y: M.stack([x, y], sd), False
    if which == "tolist":
        return f"{desc}.tolist()", [a], lambda M, x: _listed(x.tolist()), False
    return f"{desc}.item()", [a], lambda M, x: x.item(), False


# ---- ops along a dim: gather/scatter, scans, triangles, roll, repeat_interleave ----


def _index_pair(rng, shape, size, device, dtype="int64"):
    """An index tensor of ``shape`` with entries in [0, size) (now and then one outside)."""
    hi = max(size, 1) + (1 if rng.random() < 0.1 else 0)
    lo = -1 if rng.random() < 0.05 else 0
    v = rng.integers(lo, hi, size=shape) if shape else np.array(rng.integers(lo, hi))
    t = torch.tensor(v, dtype=getattr(torch, dtype), device=device)
    c = cudalite.tensor(v, dtype=getattr(cudalite, dtype), device=device)
    return t, c, f"{dtype}{v.tolist()}"


def _no_duplicates(rng, shape, size, dim, device):
    """An index along ``dim`` whose lines hold distinct positions (where each write lands
    is then the same in any order, as on CUDA)."""
    n = shape[dim] if shape else 1
    if n > size:
        return _index_pair(rng, shape, size, device)
    lines = [rng.permutation(size)[:n] for _ in range(int(np.prod(shape)) // max(n, 1))]
    v = np.stack(lines, -1) if lines else np.zeros((n, 0), dtype=np.int64)
    v = np.moveaxis(v.reshape([n] + [s for k, s in enumerate(shape) if k != dim]), 0, dim)
    v = v.reshape(shape)
    t = torch.tensor(v, dtype=torch.int64, device=device)
    c = cudalite.tensor(v, dtype=cudalite.int64, device=device)
    return t, c, f"int64{v.tolist()}"


def _dim_op_case(rng, a, desc, device):
    nd = a.t.dim()
    shape = tuple(a.t.shape)
    d = int(rng.integers(-nd, nd)) if nd else int(rng.integers(-1, 1))
    if rng.random() < 0.03:
        d = nd + 1  # out of range
    dw = d % max(nd, 1)
    size = shape[dw] if nd and dw < nd else 1
    which = rng.choice(
        ["gather", "scatter", "scatter_value", "scatter_add", "index_add", "cumsum", "cumprod"]
        + ["tril", "triu", "roll", "repeat_interleave"]
    )
    ishape = tuple(
        int(rng.integers(0, s + 1)) if k != dw else int(rng.integers(0, 4))
        for k, s in enumerate(shape)
    )
    if which == "gather":
        it, ic, text = _index_pair(rng, ishape, size, device, str(rng.choice(["int64", "int32"])))
        return (
            f"{desc}.gather({d}, {text})",
            [a],
            lambda M, x: x.gather(d, it if M is torch else ic),
            False,
        )
    if which in ("scatter", "scatter_add", "scatter_value"):
        if which == "scatter_add" or not nd or dw >= nd:
            it, ic, text = _index_pair(rng, ishape, size, device)
        else:
            # Assignments to one element from several positions land in no set order on
            # CUDA: lines of distinct positions (the same case on every device).
            ishape = tuple(min(n, size) if k == dw else n for k, n in enumerate(ishape))
            it, ic, text = _no_duplicates(rng, ishape, size, dw, device)
        sdt = desc.split("[")[0] if rng.random() < 0.9 else str(rng.choice(DTYPES))
        src = Pair(rng, sdt, tuple(s + int(rng.integers(0, 2)) for s in ishape), device)
        if which == "scatter_value":
            v = [2, -1.5, True][int(rng.integers(0, 3))]
            red = [None, "add", "multiply"][int(rng.integers(0, 3))]
            return (
                f"{desc}.scatter({d}, {text}, {v}, reduce={red})",
                [a],
                lambda M, x: (
                    x.scatter(d, it if M is torch else ic, v, reduce=red)
                    if red
                    else x.scatter(d, it if M is torch else ic, v)
                ),
                False,
            )
        name = which
        return (
            f"{desc}.{name}({d}, {text}, {sdt}{list(src.t.shape)})",
            [a, src],
            lambda M, x, s: getattr(x, name)(d, it if M is torch else ic, s),
            False,
        )
    if which == "index_add":
        n = int(rng.integers(0, 4))
        it, ic, text = _index_pair(rng, (n,), size, device)
        sshape = list(shape) if nd else []
        if nd:
            sshape[dw] = n
        sdt = desc.split("[")[0] if rng.random() < 0.9 else str(rng.choice(DTYPES))
        src = Pair(rng, sdt, tuple(sshape), device)
        alpha = [1, 2, -1][int(rng.integers(0, 3))]
        if sdt == "bool":
            alpha = 1
        return (
            f"{desc}.index_add({d}, {text}, {sdt}{sshape}, alpha={alpha})",
            [a, src],
            lambda M, x, s: x.index_add(d, it if M is torch else ic, s, alpha=alpha),
            False,
        )
    if which in ("cumsum", "cumprod"):
        dtype = None if rng.random() < 0.7 else str(rng.choice(DTYPES))
        name = which

        def f(M, x):
            return getattr(x, name)(d, dtype=getattr(M, dtype) if dtype else None)

        return f"{desc}.{name}({d}, dtype={dtype})", [a], f, False
    if which in ("tril", "triu"):
        k = int(rng.integers(-3, 4))
        name = which
        return f"{desc}.{name}({k})", [a], lambda M, x: getattr(x, name)(k), False
    if which == "roll":
        n = int(rng.integers(0, 3))
        shifts = [int(x) for x in rng.integers(-8, 9, size=n)]
        dims = [int(x) for x in rng.integers(-nd - 1, nd + 1, size=n)] if nd else []
        if rng.random() < 0.3:
            shifts, dims = (shifts[0] if shifts else 3), ()
        return f"{desc}.roll({shifts}, {dims})", [a], lambda M, x: x.roll(shifts, dims), False
    rdim = None if rng.random() < 0.3 else d
    if rng.random() < 0.5:
        r = int(rng.integers(0, 4))
        return (
            f"{desc}.repeat_interleave({r}, dim={rdim})",
            [a],
            lambda M, x: x.repeat_interleave(r, dim=rdim),
            False,
        )
    n = (size if rdim is not None else int(np.prod(shape))) if rng.random() < 0.9 else 2
    reps = [int(x) for x in rng.integers(0, 3, size=n)]
    rt = torch.tensor(reps, device=device)
    rc = cudalite.tensor(reps, device=device)
    return (
        f"{desc}.repeat_interleave({reps}, dim={rdim})",
        [a],
        lambda M, x: x.repeat_interleave(rt if M is torch else rc, dim=rdim),
        False,
    )


# ---- splits, shape, index / scatter and set ops ----

_SHAPE_OPS = ["tensor_split", "hsplit", "vsplit", "dsplit", "split_with_sizes", "unsafe_split"]
_SHAPE_OPS += ["tile", "ravel", "rot90", "fliplr", "flipud", "narrow_copy", "index_copy"]
_SHAPE_OPS += ["index_fill", "masked_select", "masked_scatter", "take", "put", "take_along_dim"]
_SHAPE_OPS += ["scatter_reduce", "index_reduce", "slice_scatter", "select_scatter"]
_SHAPE_OPS += ["diagonal_scatter", "fill_diagonal_", "argwhere", "nonzero_static", "unique"]
_SHAPE_OPS += ["unique_consecutive", "dim_order", "is_nonzero"]


def _shape_op_case(rng, a, desc, device):
    nd = a.t.dim()
    shape = tuple(a.t.shape)
    dt = desc.split("[")[0]
    d = int(rng.integers(-nd, nd)) if nd else int(rng.integers(-1, 1))
    dw = d % max(nd, 1)
    size = shape[dw] if nd and dw < nd else 1
    numel = int(np.prod(shape)) if shape else 1
    which = str(rng.choice(_SHAPE_OPS))

    def tensors(v, dtype="int64"):
        return (
            torch.tensor(v, dtype=getattr(torch, dtype), device=device),
            cudalite.tensor(v, dtype=getattr(cudalite, dtype), device=device),
        )

    def pick(M, t, c):
        return t if M is torch else c

    if which in ("tensor_split", "hsplit", "vsplit", "dsplit"):
        if rng.random() < 0.5:
            arg = int(rng.integers(-1, 4))
        else:
            arg = sorted(int(x) for x in rng.integers(-2, size + 2, int(rng.integers(0, 3))))
        if which != "tensor_split":
            return f"{desc}.{which}({arg})", [a], lambda M, x: getattr(x, which)(arg), True
        return f"{desc}.tensor_split({arg}, {d})", [a], lambda M, x: x.tensor_split(arg, d), True
    if which in ("split_with_sizes", "unsafe_split"):
        cut = int(rng.integers(0, size + 1))
        sizes = [cut, size - cut] if rng.random() < 0.9 else [cut, size]
        if which == "unsafe_split":
            k = int(rng.integers(1, 4))
            return f"{desc}.unsafe_split({k}, {d})", [a], lambda M, x: x.unsafe_split(k, d), False
        return (
            f"{desc}.split_with_sizes({sizes}, {d})",
            [a],
            lambda M, x: x.split_with_sizes(sizes, d),
            True,
        )
    if which == "tile":
        reps = [int(x) for x in rng.integers(0, 3, int(rng.integers(0, 4)))]
        return f"{desc}.tile({reps})", [a], lambda M, x: x.tile(reps), False
    if which == "ravel":
        return f"{desc}.ravel()", [a], lambda M, x: x.ravel(), True
    if which == "rot90":
        k = int(rng.integers(-5, 6))
        dims = [int(x) for x in rng.integers(-nd - 1, nd + 1, 2)] if nd else [0, 1]
        return f"{desc}.rot90({k}, {dims})", [a], lambda M, x: x.rot90(k, dims), False
    if which in ("fliplr", "flipud"):
        return f"{desc}.{which}()", [a], lambda M, x: getattr(x, which)(), False
    if which == "narrow_copy":
        start = int(rng.integers(-size, size + 1))
        n = int(rng.integers(0, size + 1))
        return (
            f"{desc}.narrow_copy({d}, {start}, {n})",
            [a],
            lambda M, x: x.narrow_copy(d, start, n),
            False,
        )
    if which == "index_copy":
        n = int(rng.integers(0, size + 1))
        idx = [int(x) for x in rng.permutation(size)[:n]]  # distinct: any write order
        if rng.random() < 0.05:
            idx = idx + [size]
        sshape = list(shape)
        if nd:
            sshape[dw] = len(idx)
        src = Pair(rng, dt, tuple(sshape), device)
        it, ic = tensors(idx)
        return (
            f"{desc}.index_copy({d}, {idx}, {sshape})",
            [a, src],
            lambda M, x, s: x.index_copy(d, pick(M, it, ic), s),
            False,
        )
    if which == "index_fill":
        idx = [int(x) for x in rng.integers(-size, max(size, 1) + (rng.random() < 0.05), 3)]
        v = [2, -1.5, True][int(rng.integers(0, 3))]
        it, ic = tensors(idx)
        return (
            f"{desc}.index_fill({d}, {idx}, {v})",
            [a],
            lambda M, x: x.index_fill(d, pick(M, it, ic), v),
            False,
        )
    if which in ("masked_select", "masked_scatter"):
        mshape = list(shape)
        if mshape and rng.random() < 0.4:
            mshape[int(rng.integers(0, len(mshape)))] = 1
        m = Pair(rng, "bool", tuple(mshape), device)
        if which == "masked_select":
            return (
                f"{desc}.masked_select(bool{mshape})",
                [a, m],
                lambda M, x, mm: x.masked_select(mm),
                False,
            )
        src = Pair(rng, dt, (max(numel + int(rng.integers(-1, 2)), 0),), device)
        return (
            f"{desc}.masked_scatter(bool{mshape}, src)",
            [a, m, src],
            lambda M, x, mm, s: x.masked_scatter(mm, s),
            False,
        )
    if which in ("take", "put"):
        n = int(rng.integers(0, 4))
        lo = -numel - (rng.random() < 0.05)
        idx = [int(x) for x in rng.integers(lo, max(numel, 1), n)] if numel else []
        it, ic = tensors(idx)
        if which == "take":
            return f"{desc}.take({idx})", [a], lambda M, x: x.take(pick(M, it, ic)), False
        acc = bool(rng.random() < 0.5)
        if not acc:  # distinct positions: any write order
            idx = sorted({i % max(numel, 1) for i in idx})
            it, ic = tensors(idx)
        src = Pair(rng, dt, (len(idx),), device)
        return (
            f"{desc}.put({idx}, src, accumulate={acc})",
            [a, src],
            lambda M, x, s: x.put(pick(M, it, ic), s, accumulate=acc),
            False,
        )
    if which == "take_along_dim":
        ishape = tuple(
            int(rng.choice([1, s])) if k != dw else int(rng.integers(0, 4))
            for k, s in enumerate(shape)
        )
        # In range: torch does not check the indices along a dim (it reads them modulo the
        # size, or past the tensor), where cudalite raises gather's error.
        v = rng.integers(0, max(size, 1), size=ishape) if ishape else np.array(0)
        it, ic = tensors(v.tolist())
        text = f"int64{v.tolist()}"
        dim = None if rng.random() < 0.2 else d
        return (
            f"{desc}.take_along_dim({text}, {dim})",
            [a],
            lambda M, x: x.take_along_dim(pick(M, it, ic), dim),
            False,
        )
    if which in ("scatter_reduce", "index_reduce"):
        red = str(rng.choice(["sum", "prod", "mean", "amax", "amin"]))
        inc = bool(rng.random() < 0.5)
        if which == "scatter_reduce":
            ishape = tuple(
                int(rng.integers(0, s + 1)) if k != dw else int(rng.integers(0, 4))
                for k, s in enumerate(shape)
            )
            it, ic, text = _index_pair(rng, ishape, size, device)
            src = Pair(rng, dt, ishape, device)
        else:
            # (not bool: torch's CPU kernel takes some bool cases along the last dim and
            # refuses the others; cudalite refuses them all)
            if dt == "bool":
                return f"{desc}.argwhere()", [a], lambda M, x: x.argwhere(), False
            red = str(rng.choice(["prod", "mean", "amax", "amin"]))
            n = int(rng.integers(0, 4))
            it, ic, text = _index_pair(rng, (n,), size, device)
            sshape = list(shape)
            if nd:
                sshape[dw] = n
            src = Pair(rng, dt, tuple(sshape), device)
        return (
            f"{desc}.{which}({d}, {text}, src, {red!r}, include_self={inc})",
            [a, src],
            lambda M, x, s: getattr(x, which)(d, pick(M, it, ic), s, red, include_self=inc),
            False,
        )
    if which == "slice_scatter":
        start, end = int(rng.integers(-size - 1, size + 1)), int(rng.integers(-size, size + 2))
        step = int(rng.integers(1, 3))
        view = a.t.cpu()[(slice(None),) * dw + (slice(start, end, step),)] if nd else a.t.cpu()
        src = Pair(rng, dt, tuple(view.shape), device)
        return (
            f"{desc}.slice_scatter(src, {d}, {start}, {end}, {step})",
            [a, src],
            lambda M, x, s: x.slice_scatter(s, d, start, end, step),
            False,
        )
    if which == "select_scatter":
        i = int(rng.integers(-size, size + (rng.random() < 0.05)))
        sshape = tuple(s for k, s in enumerate(shape) if k != dw)
        src = Pair(rng, dt, sshape, device)
        return (
            f"{desc}.select_scatter(src, {d}, {i})",
            [a, src],
            lambda M, x, s: x.select_scatter(s, d, i),
            False,
        )
    if which == "diagonal_scatter":
        off = int(rng.integers(-2, 3))
        try:
            dshape = tuple(a.t.cpu().diagonal(off).shape)
        except Exception:  # noqa: BLE001 - fewer than 2 dims: any source will do
            dshape = (1,)
        src = Pair(rng, dt, dshape, device)
        return (
            f"{desc}.diagonal_scatter(src, {off})",
            [a, src],
            lambda M, x, s: x.diagonal_scatter(s, off),
            False,
        )
    if which == "fill_diagonal_":
        v, wrap = [3, -1.5, True][int(rng.integers(0, 3))], bool(rng.random() < 0.5)
        return (
            f"{desc}.clone().fill_diagonal_({v}, {wrap})",
            [a],
            lambda M, x: x.clone().fill_diagonal_(v, wrap=wrap),
            False,
        )
    if which == "argwhere":
        return f"{desc}.argwhere()", [a], lambda M, x: x.argwhere(), False
    if which == "nonzero_static":
        k = int(rng.integers(0, numel + 3))
        return (
            f"{desc}.nonzero_static(size={k})",
            [a],
            lambda M, x: x.nonzero_static(size=k, fill_value=-3),
            False,
        )
    if which in ("unique", "unique_consecutive"):
        inv, cnt = bool(rng.random() < 0.5), bool(rng.random() < 0.5)
        dim = None if rng.random() < 0.5 else d
        if which == "unique":
            return (
                f"{desc}.unique(return_inverse={inv}, return_counts={cnt}, dim={dim})",
                [a],
                lambda M, x: x.unique(return_inverse=inv, return_counts=cnt, dim=dim),
                False,
            )
        return (
            f"{desc}.unique_consecutive(return_inverse={inv}, return_counts={cnt}, dim={dim})",
            [a],
            lambda M, x: x.unique_consecutive(return_inverse=inv, return_counts=cnt, dim=dim),
            False,
        )
    if which == "dim_order":
        return f"{desc}.dim_order()", [a], lambda M, x: list(x.dim_order()), False
    return f"{desc}.is_nonzero()", [a], lambda M, x: x.is_nonzero(), False


def _listed(v):
    return np.asarray(v, dtype=object).tolist() if isinstance(v, list) else v


def _factory_case(rng, device):
    which = rng.choice(["arange", "linspace", "full", "eye", "tensor"])
    if which == "arange":
        vals = [int(rng.integers(-5, 6)), float(rng.integers(-10, 10)) / 4]
        args = [vals[int(rng.integers(0, 2))] for _ in range(int(rng.integers(1, 4)))]
        return f"arange{tuple(args)}", [], lambda M: M.arange(*args, device=device), False
    if which == "linspace":
        s, e, n = float(rng.integers(-5, 5)), int(rng.integers(-5, 5)), int(rng.integers(-1, 6))
        return f"linspace({s}, {e}, {n})", [], lambda M: M.linspace(s, e, n, device=device), False
    if which == "full":
        v = [3, 2.5, True, -0.0][int(rng.integers(0, 4))]
        shp = [int(x) for x in rng.integers(0, 3, int(rng.integers(0, 3)))]
        return f"full({shp}, {v!r})", [], lambda M: M.full(shp, v, device=device), False
    if which == "eye":
        n, m = int(rng.integers(-1, 4)), int(rng.integers(0, 4))
        return f"eye({n}, {m})", [], lambda M: M.eye(n, m, device=device), False
    data = [
        [1, 2.5],
        [True, 2],
        [[1, 2], [3, 4]],
        [[1, 2], [3]],
        [],
        [[]],
        3,
        2.5,
        True,
        [1, False],
        [[1.0], [2]],
    ][int(rng.integers(0, 11))]
    return f"tensor({data!r})", [], lambda M: M.tensor(data, device=device), False


def _layout(rt, rc, what):
    if isinstance(rt, (tuple, list)):
        for i, (a, b) in enumerate(zip(rt, rc, strict=False)):
            err = _layout(a, b, f"{what}[{i}]")
            if err:
                return err
        return None
    if isinstance(rt, torch.Tensor) and rt.numel():
        # Strides of dims of size 1 mean nothing; an empty tensor has no layout.
        st = [s for s, n in zip(rt.stride(), rt.shape, strict=True) if n > 1]
        sc = [s for s, n in zip(rc.stride(), rc.shape, strict=True) if n > 1]
        if st != sc or rt.storage_offset() != rc.storage_offset():
            return (
                f"{what}: stride {rc.stride()} offset {rc.storage_offset()}, "
                f"torch {rt.stride()} offset {rt.storage_offset()}"
            )
    return None


def main():
    args, rng = fuzz_args(3000)
    failures = 0
    for i in range(args.count):
        try:
            et = None
            if args.device != "cpu":
                # torch's CUDA kernels assert on bad indices, which ends the process's CUDA
                # context: the same case on the CPU decides whether torch raises, and what.
                state = rng.bit_generator.state
                _, cpu_pairs, f_cpu, _ = _case(rng, "cpu")
                _, et = _run(f_cpu, [torch] + [p.t for p in cpu_pairs])
                rng.bit_generator.state = state
            what, pairs, f, is_view = _case(rng, args.device)
        except Exception:  # noqa: BLE001
            print(f"case {i}: building inputs failed\n{traceback.format_exc()}")
            failures += 1
            continue
        rt, et = (None, et) if et else _run(f, [torch] + [p.t for p in pairs])
        rc, ec = _run(f, [cudalite] + [p.c for p in pairs])
        err = raised_alike(what, et, ec)
        if et or ec:
            pass
        elif isinstance(rt, (list, int, float, bool)):
            if rt != rc and not (isinstance(rt, float) and rt != rt and rc != rc):
                if not (
                    isinstance(rt, list)
                    and np.array_equal(
                        np.array(rt, dtype=float), np.array(rc, dtype=float), equal_nan=True
                    )
                ):
                    err = f"{what}: {rc!r}, torch {rt!r}"
            elif type(rt) is not type(rc):
                err = f"{what}: type {type(rc)}, torch {type(rt)}"
        else:
            if isinstance(rt, (tuple, list)) and not isinstance(rt, torch.Tensor):
                rt, rc = tuple(rt), tuple(rc)
                if len(rt) != len(rc):
                    err = f"{what}: {len(rc)} results, torch {len(rt)}"
            # On CUDA, which of several values assigned to one element wins is unspecified
            # (x[[5, -1]] = v on 6 rows): compare the result's type and shape only.
            index = what.split("][", 1)[-1].split("] = ")[0] if "] = " in what else ""
            duplicates = args.device != "cpu" and "[" in index
            if not err and duplicates:
                rt, rc = rt.new_empty(rt.shape), rc.new_empty(rc.shape)
                rt.zero_(), rc.zero_()
            if not err:
                err = _same(rt, rc, what)
            if not err and is_view:
                err = _layout(rt, rc, what)
        failures = report(i, err, failures, shown=40)
    print(f"{args.count} cases on {args.device}, {failures} mismatches")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
