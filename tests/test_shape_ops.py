"""tensor_split / hsplit / vsplit / dsplit / split_with_sizes / unsafe_*, tile, ravel, rot90,
fliplr / flipud, narrow_copy, resize, set_ / is_set_to / as_strided_, index_copy,
index_fill, index_put, masked_select / masked_scatter, take / put, take_along_dim,
fill_diagonal_, argwhere, nonzero_static, scatter_reduce, index_reduce, the *_scatter
embeddings, unique / unique_consecutive and the predicates against torch's outcomes
(data/shape_ops_expected.json, generated from shape_ops_cases.py by
gen_shape_ops_expected.py), and their gradients."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest

import cudalite as C
from conftest import to_np
from cudalite.autograd import gradcheck
from shape_ops_cases import CASES, inputs, outcome

EXPECTED = json.loads((Path(__file__).parent / "data" / "shape_ops_expected.json").read_text())


def _normalized(out):
    if out[0] == "err":  # cudalite's own types print as cudalite.X where torch's print torch.X
        out = (*out[:2], out[2].replace("cudalite.", "torch."))
    return json.loads(json.dumps(out))  # (as the expectations were stored)


def _on_cuda(expr, want):
    """torch's outcome on CUDA from the one recorded on the CPU: its messages name the CUDA
    types and kernels, and apply_ / map_ / map2_ take CPU tensors only (as checked on an
    H100 against cudalite, whose messages are torch's)."""
    for name in ("map2_", "map_", "apply_"):
        if f".{name}(" in expr:
            return ["err", "TypeError", f"{name} is only implemented on CPU tensors"]
    if want[0] != "err":
        return want
    msg = re.sub(r"\bCPU(\w*Type)\b", r"CUDA\1", want[2]).replace("_cpu_", "_cuda_")
    return [want[0], want[1], msg]


@pytest.mark.parametrize("expr", CASES)
def test_outcome_matches_torch(expr, device):
    want = EXPECTED[expr] if device == "cpu" else _on_cuda(expr, EXPECTED[expr])
    assert _normalized(outcome(C, inputs(C, device), expr)) == want


# ---- gradients (float64, against finite differences) ----

F64 = C.float64


def _x(*shape, device, seed=0):
    g = C.Generator(device).manual_seed(seed)
    return C.randn(*shape, dtype=F64, device=device, generator=g).requires_grad_()


def _i(values, device):
    return C.tensor(values, device=device)


UNARY = {
    "tensor_split": lambda x, d: x.tensor_split(2, 1)[1] * 2,
    "tensor_split_indices": lambda x, d: C.cat(x.tensor_split([1, 2], 1)[::2], 1),
    "hsplit": lambda x, d: x.hsplit(3)[2],
    "vsplit": lambda x, d: x.vsplit([1])[1],
    "split_with_sizes": lambda x, d: x.split_with_sizes([1, 2], 1)[1],
    "unsafe_split": lambda x, d: x.unsafe_split(2, 1)[0],
    "unsafe_chunk": lambda x, d: x.unsafe_chunk(2, 0)[1],
    "unsafe_split_with_sizes": lambda x, d: x.unsafe_split_with_sizes([2, 1], 1)[0],
    "tile": lambda x, d: x.tile(2, 1, 2),
    "ravel": lambda x, d: x.t().ravel(),
    "rot90": lambda x, d: x.rot90(1, [0, 1]),
    "rot90_3": lambda x, d: x.rot90(3),
    "fliplr": lambda x, d: x.fliplr(),
    "flipud": lambda x, d: x.t().flipud(),
    "narrow_copy": lambda x, d: x.narrow_copy(1, 1, 2),
    "index_copy_self": lambda x, d: x.index_copy(
        1, _i([2, 0], d), C.ones(2, 2, dtype=F64, device=d)
    ),
    "index_fill": lambda x, d: x.index_fill(1, _i([-1], d), 3.0),
    "index_put": lambda x, d: x.index_put((_i([1, 1], d),), x[0, 0] * 2, accumulate=True),
    "masked_select": lambda x, d: x.masked_select(_i([True, False, True], d)),
    "masked_scatter_self": lambda x, d: x.masked_scatter(
        _i([True, False, True], d), C.ones(9, dtype=F64, device=d)
    ),
    "take": lambda x, d: x.take(_i([[5, 0], [-1, 5]], d)),
    "take_t": lambda x, d: x.t().take(_i([1, 2], d)),
    "put": lambda x, d: x.put(_i([1, 1], d), C.ones(2, dtype=F64, device=d), accumulate=True),
    "take_along_dim": lambda x, d: x.take_along_dim(_i([[2, 0], [1, 1]], d), 1),
    "take_along_dim_flat": lambda x, d: x.take_along_dim(_i([4, 0, 4], d)),
    "fill_diagonal_": lambda x, d: (x * 1).fill_diagonal_(2.0),
    "slice_scatter_self": lambda x, d: x.slice_scatter(C.ones(2, 1, dtype=F64, device=d), 1, 1, 2),
    "select_scatter_self": lambda x, d: x.select_scatter(C.ones(3, dtype=F64, device=d), 0, 1),
    "diagonal_scatter_self": lambda x, d: x.diagonal_scatter(C.ones(2, dtype=F64, device=d)),
    "as_strided_scatter_self": lambda x, d: x.as_strided_scatter(
        C.ones(2, dtype=F64, device=d), (2,), (2,)
    ),
    "resize": lambda x, d: x.resize(3, 2),
    "diag": lambda x, d: x.diag(1),
    "diag_vector": lambda x, d: x[0].diag(-1),
    "diag_embed": lambda x, d: x.diag_embed(1, 0, 2),
    "diagflat": lambda x, d: x.diagflat(),
    "H": lambda x, d: x.H,
    "scatter_reduce_sum": lambda x, d: x.scatter_reduce(
        1, _i([[0, 0], [2, 0]], d), x[:, 1:] * 3, "sum"
    ),
    "scatter_reduce_mean": lambda x, d: x.scatter_reduce(
        1, _i([[0, 0], [2, 0]], d), x[:, 1:] * 3, "mean", include_self=False
    ),
    "scatter_reduce_amax": lambda x, d: x.scatter_reduce(
        1, _i([[0, 0], [2, 0]], d), x[:, 1:] * 3, "amax"
    ),
    "scatter_reduce_amin": lambda x, d: x.scatter_reduce(
        1, _i([[0, 0], [2, 0]], d), x[:, 1:] * 3, "amin", include_self=False
    ),
    "scatter_reduce_prod": lambda x, d: x.scatter_reduce(
        1, _i([[0, 0], [2, 0]], d), x[:, 1:] * 3, "prod"
    ),
    "scatter_reduce_prod_excl": lambda x, d: x.scatter_reduce(
        1, _i([[0, 0], [2, 0]], d), x[:, 1:] * 3, "prod", include_self=False
    ),
    "index_reduce_prod": lambda x, d: x.index_reduce(1, _i([0, 0], d), x[:, 1:] * 3, "prod"),
    "index_reduce_mean": lambda x, d: x.index_reduce(1, _i([2, 0], d), x[:, 1:] * 3, "mean"),
    "index_reduce_amax": lambda x, d: x.index_reduce(
        0, _i([1, 1], d), x.flip(0) * 3, "amax", include_self=False
    ),
}


@pytest.mark.parametrize("name", sorted(UNARY))
@pytest.mark.filterwarnings("ignore:index_reduce:UserWarning", "ignore:non-inplace")
def test_gradcheck(name, device):
    x = _x(2, 3, device=device)
    assert gradcheck(lambda t: UNARY[name](t, device), (x,))


SOURCE = {
    "index_copy": lambda x, s, d: x.index_copy(1, _i([2, 0], d), s),
    "masked_scatter": lambda x, s, d: x.masked_scatter(_i([[True], [False]], d), s),
    "put": lambda x, s, d: x.put(_i([4, 0], d), s[0]),
    "slice_scatter": lambda x, s, d: x.slice_scatter(s, 1, 0, 3, 2),
    "select_scatter": lambda x, s, d: x.select_scatter(s[:, 0], 1, 2),
    "diagonal_scatter": lambda x, s, d: x.diagonal_scatter(s[0], 1),
    "as_strided_scatter": lambda x, s, d: x.as_strided_scatter(s, (2, 2), (1, 2), 1),
    "index_fill_value": lambda x, s, d: x.index_fill(0, _i([1], d), s[0, 0]),
    "scatter_reduce_sum": lambda x, s, d: x.scatter_reduce(1, _i([[0, 2], [2, 2]], d), s, "sum"),
    "scatter_reduce_mean": lambda x, s, d: x.scatter_reduce(1, _i([[0, 2], [2, 2]], d), s, "mean"),
    "scatter_reduce_amax": lambda x, s, d: x.scatter_reduce(
        1, _i([[0, 2], [2, 2]], d), s, "amax", include_self=False
    ),
    "scatter_reduce_amin": lambda x, s, d: x.scatter_reduce(1, _i([[0, 2], [2, 2]], d), s, "amin"),
    "scatter_reduce_prod": lambda x, s, d: x.scatter_reduce(1, _i([[0, 2], [2, 2]], d), s, "prod"),
    "index_reduce_prod": lambda x, s, d: x.index_reduce(
        1, _i([2, 2], d), s, "prod", include_self=False
    ),
    "index_reduce_amin": lambda x, s, d: x.index_reduce(1, _i([2, 0], d), s, "amin"),
}


@pytest.mark.parametrize("name", sorted(SOURCE))
@pytest.mark.parametrize("self_grad", [True, False])
@pytest.mark.filterwarnings("ignore:index_reduce:UserWarning")
def test_gradcheck_source(name, self_grad, device):
    x, s = _x(2, 3, device=device), _x(2, 2, device=device, seed=1)
    x.requires_grad_(self_grad)  # (the source's gradient also when self needs none)
    assert gradcheck(lambda a, b: SOURCE[name](a, b, device), (x, s))


# ---- values against NumPy, every dtype ----

DTYPES = [
    "bool",
    "uint8",
    "int8",
    "int16",
    "int32",
    "int64",
    "float16",
    "bfloat16",
    "float32",
    "float64",
]


def _rand(shape, dtype, seed):
    rng = np.random.default_rng(seed)
    if dtype == "bool":
        return rng.integers(0, 2, shape).astype(bool)
    if dtype.startswith(("int", "uint")):
        return rng.integers(0, 5, shape).astype(dtype)
    return rng.integers(-4, 5, shape).astype(np.float32 if dtype == "bfloat16" else dtype)


def _t(a, dtype, device):
    return C.tensor(a.tolist(), dtype=getattr(C, dtype), device=device)


@pytest.mark.parametrize("dtype", DTYPES)
def test_unique_matches_numpy(dtype, device):
    a = _rand((5, 4), dtype, 0)
    t = _t(a, dtype, device)
    u, inv, cnt = t.unique(return_inverse=True, return_counts=True)
    eu, einv, ecnt = np.unique(a, return_inverse=True, return_counts=True)
    np.testing.assert_array_equal(to_np(u), eu)
    np.testing.assert_array_equal(to_np(inv), einv.reshape(a.shape))
    np.testing.assert_array_equal(to_np(cnt), ecnt)
    rows = _t(a[[0, 1, 0, 2, 1]], dtype, device)
    u, inv, cnt = rows.unique(dim=0, return_inverse=True, return_counts=True)
    eu, einv, ecnt = np.unique(a[[0, 1, 0, 2, 1]], axis=0, return_inverse=True, return_counts=True)
    np.testing.assert_array_equal(to_np(u), eu)
    np.testing.assert_array_equal(to_np(inv), einv.reshape(-1))
    np.testing.assert_array_equal(to_np(cnt), ecnt)


@pytest.mark.parametrize("dtype", DTYPES)
def test_unique_consecutive_matches_run_lengths(dtype, device):
    a = np.repeat(_rand((6,), dtype, 1), [1, 3, 2, 1, 2, 1])
    u, inv, cnt = _t(a, dtype, device).unique_consecutive(return_inverse=True, return_counts=True)
    starts = np.r_[True, a[1:] != a[:-1]]
    np.testing.assert_array_equal(to_np(u), a[starts])
    np.testing.assert_array_equal(to_np(inv), np.cumsum(starts) - 1)
    np.testing.assert_array_equal(to_np(cnt), np.diff(np.r_[np.flatnonzero(starts), a.size]))


def _scatter_reduce_np(a, dim, idx, src, reduce, include_self):
    """The reference loop: every element of idx reduces src's into a's position."""
    out = a.astype(np.float64).copy()
    hit = np.zeros(a.shape, bool)
    groups = {}
    for pos in np.ndindex(*idx.shape):
        dst = list(pos)
        dst[dim] = idx[pos]
        groups.setdefault(tuple(dst), []).append(float(src[pos]))
        hit[tuple(dst)] = True
    for dst, vals in groups.items():
        vals = ([float(a[dst])] if include_self else []) + vals
        if reduce == "sum":
            out[dst] = sum(vals)
        elif reduce == "prod":
            out[dst] = np.prod(vals)
        elif reduce == "mean":
            m = sum(vals) / len(vals)
            out[dst] = m if a.dtype.kind == "f" else np.floor(m)
        elif reduce == "amax":
            out[dst] = max(vals)
        else:
            out[dst] = min(vals)
    return out


@pytest.mark.parametrize("dtype", DTYPES[1:])
@pytest.mark.parametrize("reduce", ["sum", "prod", "mean", "amax", "amin"])
@pytest.mark.parametrize("include_self", [True, False])
def test_scatter_reduce_matches_loop(dtype, reduce, include_self, device):
    a, src = _rand((3, 4), dtype, 2), _rand((3, 3), dtype, 3)
    idx = np.random.default_rng(4).integers(0, 4, (2, 3))
    got = _t(a, dtype, device).scatter_reduce(
        1,
        C.tensor(idx.tolist(), device=device),
        _t(src, dtype, device),
        reduce,
        include_self=include_self,
    )
    want = _scatter_reduce_np(a, 1, idx, src, reduce, include_self)
    if dtype.startswith(("int", "uint")):  # integers wrap as the dtype does
        want = want.astype(np.int64).astype(dtype)
    np.testing.assert_allclose(to_np(got).astype(np.float64), want.astype(np.float64), rtol=1e-2)
    # index_reduce: the index repeated over every slice of the source
    if reduce != "sum":
        iidx = np.array([3, 0, 3])
        with pytest.warns(UserWarning, match="index_reduce"):
            got = _t(a, dtype, device).index_reduce(
                1,
                C.tensor(iidx.tolist(), device=device),
                _t(src, dtype, device),
                reduce,
                include_self=include_self,
            )
        want = _scatter_reduce_np(a, 1, np.tile(iidx, (3, 1)), src, reduce, include_self)
        if dtype.startswith(("int", "uint")):
            want = want.astype(np.int64).astype(dtype)
        np.testing.assert_allclose(
            to_np(got).astype(np.float64), want.astype(np.float64), rtol=1e-2
        )


@pytest.mark.parametrize("dtype", DTYPES)
def test_take_put_take_along_dim_tile_rot90_match_numpy(dtype, device):
    a = _rand((3, 4), dtype, 5)
    t = _t(a, dtype, device)
    ix = np.array([[0, -1], [11, 5]])
    np.testing.assert_array_equal(
        to_np(t.take(C.tensor(ix.tolist(), device=device))), np.take(a, ix)
    )
    np.testing.assert_array_equal(
        to_np(t.t().take(C.tensor(ix.tolist(), device=device))), np.take(a.T, ix)
    )
    b = a.copy()
    np.put(b, [1, 7], a.reshape(-1)[:2])
    got = t.put(C.tensor([1, 7], device=device), t.reshape(-1)[:2].clone())
    np.testing.assert_array_equal(to_np(got), b)
    idx = np.random.default_rng(6).integers(0, 4, (3, 5))
    got = t.take_along_dim(C.tensor(idx.tolist(), device=device), 1)
    np.testing.assert_array_equal(to_np(got), np.take_along_axis(a, idx, 1))
    np.testing.assert_array_equal(to_np(t.tile(2, 1, 3)), np.tile(a, (2, 1, 3)))
    for k in range(-2, 4):
        np.testing.assert_array_equal(to_np(t.rot90(k)), np.rot90(a, k))
    np.testing.assert_array_equal(to_np(t.masked_select(t != 0)), a[a != 0])
    np.testing.assert_array_equal(to_np(t.argwhere()), np.argwhere(a))
    for piece, want in zip(t.tensor_split(3, 1), np.array_split(a, 3, 1), strict=True):
        np.testing.assert_array_equal(to_np(piece), want)


# ---- memory: views, aliases, in-place ----


def test_set_shares_memory_and_counts_a_write(device):
    src = C.arange(6.0, device=device)
    t = C.zeros(2, device=device)
    v = t._version
    t.set_(src.untyped_storage(), 1, (2, 2), (1, 2))
    assert t._version > v and t.is_set_to(src.as_strided((2, 2), (1, 2), 1))
    src[1] = 100.0
    assert t[0, 0].item() == 100.0
    t.set_(src)
    assert t.is_set_to(src) and t.data_ptr() == src.data_ptr()
    t.set_()
    assert t.shape == (0,) and not t._is_same_storage(src)


def test_as_strided_in_place_keeps_storage(device):
    b = C.arange(6.0, device=device)
    ptr = b.data_ptr()
    assert b.as_strided_((2, 2), (1, 2), 1) is b
    assert b.shape == (2, 2) and b.stride() == (1, 2) and b.storage_offset() == 1
    assert b.data_ptr() == ptr + 4 and b.tolist() == [[1.0, 3.0], [2.0, 4.0]]


def test_unsafe_splits_are_aliases_not_views(device):
    x = C.arange(6.0, device=device).view(2, 3)
    for pieces in (
        x.unsafe_split(2, 1),
        x.unsafe_chunk(2, 1),
        x.unsafe_split_with_sizes([1, 2], 1),
    ):
        assert all(p._base is None for p in pieces)
        assert pieces[0].data_ptr() == x.data_ptr()
    assert all(p._base is x._base for p in x.tensor_split(2, 1))


def test_in_place_forms_write_into_self(device):
    x = C.zeros(2, 3, device=device)
    assert x.index_copy_(1, C.tensor([2], device=device), C.ones(2, 1, device=device)) is x
    assert x.index_fill_(0, C.tensor([1], device=device), 5) is x
    assert (
        x.masked_scatter_(
            C.tensor([True, False, False], device=device), C.tensor([7.0, 8.0], device=device)
        )
        is x
    )
    assert x.put_(C.tensor([1], device=device), C.tensor([9.0], device=device)) is x
    assert (
        x.scatter_reduce_(
            1, C.tensor([[1, 1]], device=device), C.tensor([[2.0, 3.0]], device=device), "amax"
        )
        is x
    )
    assert x.fill_diagonal_(-1) is x
    assert x.tolist() == [[-1.0, 9.0, 1.0], [8.0, -1.0, 5.0]]


def test_in_place_on_a_leaf_that_requires_grad_raises(device):
    x = C.zeros(3, dtype=F64, device=device, requires_grad=True)
    msg = "a leaf Variable that requires grad is being used in an in-place operation."
    for f in (
        lambda: x.index_fill_(0, C.tensor([1], device=device), 1),
        lambda: x.put_(C.tensor([1], device=device), C.ones(1, dtype=F64, device=device)),
        lambda: x.scatter_reduce_(
            0, C.tensor([1], device=device), C.ones(1, dtype=F64, device=device), "prod"
        ),
        lambda: x.set_(C.ones(2, dtype=F64, device=device)),
    ):
        with pytest.raises(RuntimeError, match=msg):
            f()


def test_unique_and_argwhere_do_not_require_grad(device):
    x = C.tensor([1.0, 1.0, 2.0], dtype=F64, device=device, requires_grad=True)
    assert not x.unique().requires_grad and not x.argwhere().requires_grad


@pytest.mark.parametrize("reduce", ["amax", "amin"])
def test_scatter_reduce_extreme_shares_the_gradient_among_ties(reduce, device):
    # every value equal to the result gets an equal share (torch's formula), self's included
    v = 5.0 if reduce == "amax" else -5.0
    x = C.tensor([1.0, v, 2.0], dtype=F64, device=device, requires_grad=True)
    s = C.tensor([v, 0.0, v], dtype=F64, device=device, requires_grad=True)
    idx = C.tensor([1, 1, 1], device=device)
    x.scatter_reduce(0, idx, s, reduce).sum().backward()
    assert x.grad.tolist() == [1.0, 1 / 3, 1.0] and s.grad.tolist() == [1 / 3, 0.0, 1 / 3]
    x.grad = s.grad = None
    x.scatter_reduce(0, idx, s, reduce, include_self=False).sum().backward()
    assert x.grad.tolist() == [1.0, 0.0, 1.0] and s.grad.tolist() == [1 / 3, 0.0, 1 / 3]
