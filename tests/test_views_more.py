"""diagonal, movedim / moveaxis, unfold, as_strided, empty_strided / new_empty_strided,
type_as and sum_to_size against torch's outcomes (views_more_expected.json, generated from
views_more_cases.py by gen_views_more_expected.py), and their gradients and in-place
behaviour."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest

import cudalite as C
from conftest import to_np
from cudalite.autograd import gradcheck, gradgradcheck
from views_more_cases import CASES, inputs, outcome

EXPECTED = json.loads((Path(__file__).parent / "views_more_expected.json").read_text())


def _normalized(out):
    if out[0] == "err":  # cudalite's own types print as cudalite.X where torch's print torch.X
        out = (*out[:2], out[2].replace("cudalite.", "torch."))
    return json.loads(json.dumps(out))  # (as the expectations were stored)


# An in-place op through overlapping windows updates some elements twice; the result
# depends on the device's order of updates (torch's CPU one is recorded), so it is compared
# on the CPU only.
OVERLAPPING = {"v.clone().unfold(0, 2, 1).add_(1)"}


@pytest.mark.parametrize("expr", CASES)
def test_outcome_matches_torch(expr, device):
    if device != "cpu" and expr in OVERLAPPING:
        pytest.skip("the result of overlapping in-place updates depends on the device")
    assert _normalized(outcome(C, inputs(C, device), expr)) == EXPECTED[expr]


# ---- autograd ----

F64 = C.float64


def _x(*shape, device, seed=0):
    g = C.Generator(device).manual_seed(seed)
    return C.randn(*shape, dtype=F64, device=device, generator=g).requires_grad_()


GRADS = {
    "diagonal": lambda x: x.diagonal(),
    "diagonal_offset": lambda x: x.diagonal(1, 0, 2),
    "diagonal_negative": lambda x: x.diagonal(-2, 2, 1),
    "diagonal_empty": lambda x: x.diagonal(7, 1, 2),
    "diagonal_fn": lambda x: C.diagonal(x, offset=-1, dim1=1, dim2=2),
    "diagonal_transposed": lambda x: x.transpose(0, 2).diagonal(1),
    "movedim": lambda x: x.movedim(0, 2),
    "movedim_seq": lambda x: x.movedim((0, 2), (1, 0)),
    "moveaxis": lambda x: x.moveaxis(-1, 0),
    "movedim_fn": lambda x: C.movedim(x, [1], [2]),
    "movedim_0d": lambda x: x[0, 0, 0].movedim(0, 0) * 3,
    "unfold": lambda x: x.unfold(2, 2, 2),
    "unfold_overlap": lambda x: x.unfold(2, 3, 1),
    "unfold_gaps": lambda x: x.unfold(2, 1, 3),
    "unfold_twice": lambda x: x.unfold(1, 2, 1).unfold(2, 2, 1),
    "unfold_0d": lambda x: x[1, 2, 3].unfold(0, 1, 2),
    "unfold_empty": lambda x: x.unfold(2, 0, 1),
    "unfold_transposed": lambda x: x.transpose(0, 2).unfold(0, 2, 1),
    "as_strided_fn": lambda x: C.as_strided(x, (3, 3), (2, 1), 1),
    "as_strided_overlap": lambda x: C.as_strided(x, (3, 3), (1, 1)),
    "sum_to_size": lambda x: x.sum_to_size(3, 1),
    "sum_to_size_lead": lambda x: x.sum_to_size(4),
    "sum_to_size_all": lambda x: x.sum_to_size(()),
    "sum_to_size_same": lambda x: x.sum_to_size(2, 3, 4) * 2,
    "type_as_same": lambda x: x.type_as(x) * 2,
}


@pytest.mark.parametrize("name", sorted(GRADS))
def test_gradients(name, device):
    assert gradcheck(GRADS[name], (_x(2, 3, 4, device=device),))


@pytest.mark.parametrize(
    "name", ["diagonal_offset", "diagonal_fn", "movedim_seq", "unfold_overlap", "unfold_twice"]
)
def test_second_order_gradients(name, device):
    assert gradgradcheck(GRADS[name], (_x(2, 3, 4, device=device),))


# torch 2.11's nodes (x a leaf of shape (2, 3, 4), s a 0-dim leaf); None: the input itself
NODES = [
    ("x.diagonal()", "DiagonalBackward0"),
    ("C.diagonal(x, 1, 1, 2)", "DiagonalBackward0"),
    ("x.diagonal(9)", "DiagonalBackward0"),
    ("x.movedim(0, 2)", "PermuteBackward0"),
    ("x.moveaxis((0, 1), (1, 0))", "PermuteBackward0"),
    ("C.movedim(x, 0, 0)", "PermuteBackward0"),
    ("C.moveaxis(x, 1, 0)", "PermuteBackward0"),
    ("s.movedim(0, 0)", "AliasBackward0"),
    ("s.moveaxis((), ())", "AliasBackward0"),
    ("x.unfold(2, 2, 1)", "UnfoldBackward0"),
    ("s.unfold(0, 1, 1)", "UnfoldBackward0"),
    ("C.as_strided(x, (2, 2), (1, 2), 1)", "AsStridedBackward0"),
    ("x.as_strided((3,), (2,))", "AsStridedBackward0"),
    ("x.sum_to_size(3, 4)", "ViewBackward0"),
    ("x.sum_to_size(1, 4)", "ViewBackward0"),
    ("x.sum_to_size(())", "SumBackward0"),
    ("x.sum_to_size(2, 1, 4)", "SumBackward1"),
    ("x.sum_to_size(2, 3, 4)", None),
    ("x.type_as(C.zeros(1, device=x.device))", "ToCopyBackward0"),
    ("x.type_as(C.zeros(1, dtype=F64, device=x.device))", None),
]


@pytest.mark.parametrize("expr, node", NODES)
def test_nodes_named_as_torch(expr, node, device):
    x = C.arange(24.0, dtype=F64, device=device).reshape(2, 3, 4).requires_grad_()
    s = C.tensor(2.0, dtype=F64, device=device, requires_grad=True)
    r = eval(expr, {"C": C, "x": x, "s": s, "F64": F64})  # noqa: S307 - the table above
    if node is None:
        assert r is x
    else:
        assert type(r.grad_fn).__name__ == node
        assert r.requires_grad and not r.is_leaf


def test_type_as_gradient_is_converted_back(device):
    x = _x(2, 3, device=device)
    y = x.type_as(C.zeros(1, device=device))
    assert y.dtype == C.float32
    (y * C.arange(6.0, device=device).view(2, 3)).sum().backward()
    assert x.grad.dtype == F64 and to_np(x.grad).tolist() == [[0, 1, 2], [3, 4, 5]]


def test_type_as_integer_does_not_require_grad(device):
    x = _x(2, 3, device=device)
    r = x.type_as(C.zeros(1, dtype=C.int64, device=device))
    assert r.dtype == C.int64 and not r.requires_grad and r.grad_fn is None


def test_unfold_gradient_sums_overlapping_windows(device):
    x = C.zeros(5, dtype=F64, device=device, requires_grad=True)
    x.unfold(0, 3, 1).sum().backward()  # element i lies in min(i + 1, 3, 5 - i) windows
    assert to_np(x.grad).tolist() == [1.0, 2.0, 3.0, 2.0, 1.0]
    y = C.zeros(2, 5, dtype=F64, device=device, requires_grad=True)
    w = C.arange(12.0, dtype=F64, device=device).reshape(2, 2, 3)
    (y.unfold(1, 3, 2) * w).sum().backward()
    want = np.zeros((2, 5))
    for i in range(2):
        for k in range(3):
            want[:, 2 * i + k] += np.arange(12.0).reshape(2, 2, 3)[:, i, k]
    np.testing.assert_array_equal(to_np(y.grad), want)


def test_diagonal_gradient_lands_on_the_diagonal(device):
    x = C.zeros(3, 4, dtype=F64, device=device, requires_grad=True)
    x.diagonal(1).backward(C.tensor([1.0, 2.0, 3.0], dtype=F64, device=device))
    want = np.zeros((3, 4))
    want[[0, 1, 2], [1, 2, 3]] = [1, 2, 3]
    np.testing.assert_array_equal(to_np(x.grad), want)


INPLACE_ON_VIEWS = {
    # (a view of w, a non-leaf of shape (3, 4); the NumPy index of the region it covers)
    "diagonal": (lambda w: w.diagonal(1), ([0, 1, 2], [1, 2, 3])),
    "movedim": (lambda w: w.movedim(0, 1)[1], (slice(None), 1)),
    "unfold": (lambda w: w.unfold(1, 2, 2), ...),
    "as_strided_fn": (lambda w: C.as_strided(w, (2, 2), (4, 1), 1), (slice(0, 2), slice(1, 3))),
}


@pytest.mark.parametrize("name", sorted(INPLACE_ON_VIEWS))
def test_inplace_on_view_rewrites_base_history(name, device):
    view, region = INPLACE_ON_VIEWS[name]
    x = C.ones(3, 4, dtype=F64, device=device, requires_grad=True)
    w = x * 1
    v = view(w)
    v.mul_(3)
    assert type(w.grad_fn).__name__ == "CopySlices"
    assert type(v.grad_fn).__name__ == "AsStridedBackward0"
    w.sum().backward()
    want = np.ones((3, 4))
    want[region] = 3
    np.testing.assert_array_equal(to_np(x.grad), want)


@pytest.mark.parametrize(
    "make",
    [lambda t: t.diagonal(), lambda t: t.movedim(1, 0), lambda t: t.unfold(0, 2, 1)],
    ids=["diagonal", "movedim", "unfold"],
)
def test_view_of_leaf_refuses_inplace(make, device):
    x = C.ones(3, 4, device=device, requires_grad=True)
    with pytest.raises(RuntimeError, match="^a view of a leaf Variable that requires grad"):
        make(x).mul_(2)


# ---- empty_strided, layout ----


def test_empty_strided_is_a_plain_writable_tensor(device):
    t = C.empty_strided((2, 3), (1, 2), device=device)
    assert not t._is_view() and t._base is None and t.is_leaf
    assert t.device.type == device and t.layout is C.strided
    t.copy_(C.arange(6.0, device=device).view(2, 3))
    assert to_np(t).tolist() == [[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]]
    assert not t.is_contiguous() and t.t().is_contiguous()
    g = C.empty_strided((2, 3), (3, 1), device=device, dtype=F64, requires_grad=True)
    assert g.requires_grad and g.is_leaf and g.dtype == F64


def test_new_empty_strided_takes_self_dtype_and_device(device):
    x = C.ones(2, dtype=C.int16, device=device)
    t = x.new_empty_strided((2, 2), (1, 2))
    assert t.dtype == C.int16 and t.device == x.device and t.stride() == (1, 2)
    assert x.new_empty_strided((3,), (1,), dtype=F64).dtype == F64


def test_layout():
    import pickle

    assert repr(C.strided) == "cudalite.strided" and isinstance(C.strided, C.layout)
    assert C.zeros(1).layout is C.strided
    assert pickle.loads(pickle.dumps(C.strided)) is C.strided


def test_as_strided_checks_bounds_on_views():
    v = C.arange(6.0)[2:]  # 4 elements from offset 2 of a storage of 6
    assert v.as_strided((2,), (1,), 4).tolist() == [4.0, 5.0]
    with pytest.raises(RuntimeError, match="^setStorage: sizes \\[2\\], strides \\[1\\], "):
        v.as_strided((2,), (1,), 5)


def _err(exc, msg):
    return pytest.raises(exc, match="^" + re.escape(msg) + "$")


def test_unflatten(device):
    x = C.arange(12.0, device=device).reshape(2, 6)
    y = x.unflatten(1, (2, 3))
    assert y.shape == (2, 2, 3) and y.tolist() == x.reshape(2, 2, 3).tolist()
    assert y._base is x._base  # a view (of the arange, as x is)
    assert x.unflatten(-1, (3, -1)).shape == (2, 3, 2)
    assert C.unflatten(x, 0, [1, 2]).shape == (1, 2, 6)
    t = x.t().unflatten(0, (2, 3))  # a view of strided memory
    assert t.shape == (2, 3, 2) and not t.is_contiguous()
    assert t.tolist() == np.arange(12.0).reshape(2, 6).T.reshape(2, 3, 2).tolist()
    with _err(
        RuntimeError,
        "unflatten: Provided sizes [4, 2] don't multiply up to the size of dim 1 (6) in the "
        "input tensor",
    ):
        x.unflatten(1, (4, 2))
    with _err(RuntimeError, "unflatten: sizes must be non-empty"):
        x.unflatten(1, ())
    with _err(RuntimeError, "only one dimension can be inferred"):
        x.unflatten(1, (-1, -1))
    with _err(IndexError, "Dimension out of range (expected to be in range of [-2, 1], but got 5)"):
        x.unflatten(5, (2, 3))
    with _err(
        TypeError, "unflatten(): argument 'sizes' (position 2) must be tuple of ints, not int"
    ):
        x.unflatten(1, 6)
    w = C.ones(2, 6, device=device, requires_grad=True)
    w.unflatten(1, (2, 3)).sum().backward()
    assert w.grad.tolist() == [[1.0] * 6] * 2


def _dtype_err(msg):
    return pytest.raises(RuntimeError, match="^" + re.escape(msg) + "$")


def test_view_dtype_of_another_element_size(device):
    """x.view(dtype) reads the same bytes as a dtype of another size: the last dimension (of
    stride 1) scales, the other strides and the offset follow; torch's checks and values."""
    x = C.arange(12, dtype=C.float32, device=device).reshape(3, 4)
    assert x.view(C.uint8).shape == (3, 16) and x.view(C.uint8).stride() == (16, 1)
    assert x.view(C.int16)[0].tolist() == [0, 0, 0, 16256, 0, 16384, 0, 16448]
    d = x.view(C.float64)
    assert d.shape == (3, 2) and d.stride() == (2, 1) and d.dtype is C.float64
    assert d[0].tolist() == [0.0078125, 32.00000762939453]
    assert x.view(C.int8).view(C.float32).equal(x)
    s = x[:, 1:].view(C.int16)
    assert s.shape == (3, 6) and s.stride() == (8, 1) and s.storage_offset() == 2
    b = C.arange(24, dtype=C.int8, device=device).reshape(2, 3, 4)
    u = b[:, 1:, :].view(C.int32)
    assert (u.shape, u.stride(), u.storage_offset()) == ((2, 2, 1), (3, 1, 1), 1)
    assert u.flatten().tolist() == [117835012, 185207048, 319951120, 387323156]
    u = b[:, ::2, :].view(C.int32)
    assert (u.shape, u.stride()) == ((2, 2, 1), (3, 2, 1))
    assert u.flatten().tolist() == [50462976, 185207048, 252579084, 387323156]
    one = [False] * 6 + [True] * 2  # 1.0's bytes, little-endian
    assert C.ones(2, dtype=C.float64, device=device).view(C.bool).tolist() == one * 2
    e = C.ones(2, 4, dtype=C.int16, device=device)[:, :0].view(C.int64)
    assert e.shape == (2, 0) and e.stride() == (1, 1)
    # The same memory, the same version counter; not an autograd view.
    y = C.arange(4, dtype=C.int32, device=device)
    z = y.view(C.int8)
    z[0] = 7
    assert y.tolist() == [7, 1, 2, 3] and y._version == z._version == 1
    w = C.ones(2, 4, device=device, requires_grad=True).view(C.float16)
    assert not w.requires_grad and w.grad_fn is None and w._base is None and not w._is_view()


def test_view_dtype_errors(device):
    x = C.arange(12, dtype=C.float32, device=device).reshape(3, 4)
    sizes = "(different element sizes)"
    with _dtype_err(
        f"self.size(-1) must be divisible by 2 to view Float as Double {sizes}, but got 3"
    ):
        x[:, :3].view(C.float64)
    with _dtype_err(f"self.stride(-1) must be 1 to view Float as Short {sizes}, but got 4"):
        x.t().view(C.int16)
    with _dtype_err(f"self.dim() cannot be 0 to view Float as Half {sizes}"):
        C.tensor(1.0, device=device).view(C.float16)
    b = C.arange(6, dtype=C.int8, device=device)
    with _dtype_err(
        f"self.storage_offset() must be divisible by 4 to view Char as Int {sizes}, but got 1"
    ):
        b[1:5].view(C.int32)
    with _dtype_err(
        f"self.stride(0) must be divisible by 2 to view Char as Short {sizes}, but got 3"
    ):
        b.as_strided((2, 2), (3, 1)).view(C.int16)
    with _dtype_err(f"self.stride(-1) must be 1 to view Int as Long {sizes}, but got 2"):
        C.ones(4, 2, dtype=C.int32, device=device).t().view(C.int64)
    with _dtype_err(f"self.size(-1) must be divisible by 2 to view Int as Long {sizes}, but got 1"):
        C.ones(3, 1, dtype=C.int32, device=device)[::2].view(C.int64)
    assert x.tolist() == C.arange(12.0).reshape(3, 4).tolist()
