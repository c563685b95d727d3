"""tensor_split / hsplit / vsplit / dsplit / split_with_sizes / unsafe_*, tile, ravel, rot90,
fliplr / flipud, narrow_copy, resize, set_ / is_set_to / as_strided_, index_copy,
index_fill, index_put, masked_select / masked_scatter, take / put, take_along_dim,
fill_diagonal_, argwhere, nonzero_static, scatter_reduce, index_reduce, the *_scatter
embeddings, unique / unique_consecutive and the predicates against torch's outcomes
(data/shape_ops_expected.json, generated from shape_ops_cases.py by
gen_shape_ops_expected.py), and their gradients."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import cudalite as C
from cudalite.autograd import gradcheck
from shape_ops_cases import CASES, inputs, outcome

EXPECTED = json.loads((Path(__file__).parent / "data" / "shape_ops_expected.json").read_text())


def _normalized(out):
    if out[0] == "err":  # cudalite's own types print as cudalite.X where torch's print torch.X
        out = (*out[:2], out[2].replace("cudalite.", "torch."))
    return json.loads(json.dumps(out))  # (as the expectations were stored)


@pytest.mark.parametrize("expr", CASES)
def test_outcome_matches_torch(expr, device):
    assert _normalized(outcome(C, inputs(C, device), expr)) == EXPECTED[expr]


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
@pytest.mark.filterwarnings("ignore:index_reduce:UserWarning")
def test_gradcheck_source(name, device):
    x, s = _x(2, 3, device=device), _x(2, 2, device=device, seed=1)
    assert gradcheck(lambda a, b: SOURCE[name](a, b, device), (x, s))
