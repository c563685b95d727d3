"""Gradients of gather, scatter, scatter_add, index_add, cumsum, cumprod, tril/triu, roll and
repeat_interleave (cudalite.autograd.functions.index_ops) against finite differences in float64,
with torch's node names, on the CPU and on CUDA where a GPU is visible."""

from __future__ import annotations

import pytest

import cudalite as C
from cudalite.autograd import gradcheck, gradgradcheck


def _x(*shape, device, seed=0):
    g = C.Generator().manual_seed(seed)
    return C.randn(*shape, dtype=C.float64, generator=g).to(device).requires_grad_()


def _i(v, device):
    return C.tensor(v, device=device)


CASES = {
    "gather": (lambda x, s, i: x.gather(1, i), "GatherBackward0"),
    "scatter_src": (lambda x, s, i: x.scatter(1, i, s), "ScatterBackward0"),
    "scatter_value": (lambda x, s, i: x.scatter(1, i, 2.5), "ScatterBackward1"),
    "scatter_": (lambda x, s, i: (x * 1).scatter_(1, i, s), "ScatterBackward0"),
    "scatter_add": (lambda x, s, i: x.scatter_add(1, i, s), "ScatterAddBackward0"),
    "scatter_add_": (lambda x, s, i: (x * 1).scatter_add_(1, i, s), "ScatterAddBackward0"),
    "index_add": (
        lambda x, s, i: x.index_add(1, i[0], s.repeat(2, 1)[:3], alpha=2),
        "IndexAddBackward0",
    ),
    "index_add_": (
        lambda x, s, i: (x * 1).index_add_(1, i[1], s.repeat(2, 1)[:3]),
        "IndexAddBackward0",
    ),
    "cumsum": (lambda x, s, i: x.cumsum(1), "CumsumBackward0"),
    "cumsum_function": (lambda x, s, i: C.cumsum(x, 0), "CumsumBackward0"),
    "cumsum_": (lambda x, s, i: (x * 1).cumsum_(0), "CumsumBackward0"),
    "cumprod": (lambda x, s, i: x.cumprod(1), "CumprodBackward0"),
    "cumprod_": (lambda x, s, i: (x * 1).cumprod_(0), "CumprodBackward0"),
    "tril": (lambda x, s, i: x.tril(1), "TrilBackward0"),
    "triu": (lambda x, s, i: C.triu(x, -1), "TriuBackward0"),
    "tril_": (lambda x, s, i: (x * 1).tril_(), "TrilBackward0"),
    "triu_": (lambda x, s, i: (x * 1).triu_(1), "TriuBackward0"),
    "roll": (lambda x, s, i: x.roll((1, -2), (0, 1)), "RollBackward0"),
    "roll_flat": (lambda x, s, i: C.roll(x, 5), "RollBackward0"),
    "repeat_interleave": (lambda x, s, i: x.repeat_interleave(2, dim=1), "ViewBackward0"),
    "repeat_interleave_tensor": (
        lambda x, s, i: x.repeat_interleave(_i([2, 0, 1], x.device), dim=0),
        "IndexSelectBackward0",
    ),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_gradients(device, name):
    f, node = CASES[name]
    x = _x(3, 4, device=device)
    s = _x(2, 3, device=device, seed=1)
    i = _i([[0, 3, 1], [2, 1, 3]], device)  # distinct positions in each row and column
    assert type(f(x, s, i).grad_fn).__name__ == node
    assert gradcheck(lambda x, s: f(x, s, i), (x, s))


@pytest.mark.parametrize("name", ["gather", "cumsum", "cumprod", "scatter_add", "roll"])
def test_second_order(device, name):
    f, _ = CASES[name]
    x = _x(3, 4, device=device)
    s = _x(2, 3, device=device, seed=1)
    i = _i([[0, 3, 1], [2, 1, 3]], device)
    assert gradgradcheck(lambda x, s: f(x, s, i), (x, s))


def test_gather_duplicates_accumulate(device):
    x = _x(2, 3, device=device)
    x.gather(1, _i([[0, 0, 0], [2, 1, 2]], device)).sum().backward()
    assert x.grad.tolist() == [[3.0, 0.0, 0.0], [0.0, 1.0, 2.0]]


def test_cumprod_with_zeros(device):
    v = [
        [1.0, 0.0, 2.0, 3.0, 0.0, 4.0],
        [2.0, 3.0, 1.0, 0.5, 2.0, 1.0],
        [0.0, 2.0, 0.0, 1.5, 3.0, 2.0],
    ]
    x = C.tensor(v, dtype=C.float64, device=device, requires_grad=True)
    assert gradcheck(lambda x: x.cumprod(1), (x,))
    assert gradcheck(lambda x: x.cumprod(0), (x,))


def test_scan_dtype_gradient(device):
    x = _x(3, 4, device=device)
    x.cumsum(1, dtype=C.float32).sum().backward()
    assert x.grad.dtype == C.float64
    assert x.grad.tolist() == [[4.0, 3.0, 2.0, 1.0]] * 3


def test_scatter_reduce_has_no_derivative(device):
    x = _x(3, 4, device=device)
    y = x.scatter(1, _i([[0]], device), 2.0, reduce="add")
    assert type(y.grad_fn).__name__ == "NotImplemented"
    with pytest.raises(RuntimeError, match="^derivative for aten::scatter is not implemented$"):
        y.sum().backward()


def test_inplace_on_leaf(device):
    x = _x(3, 4, device=device)
    for f in (
        lambda: x.cumsum_(0),
        lambda: x.tril_(),
        lambda: x.scatter_(1, _i([[0]], device), 1.0),
        lambda: x.index_add_(0, _i([0], device), C.ones(1, 4, dtype=C.float64, device=device)),
    ):
        with pytest.raises(
            RuntimeError,
            match="^a leaf Variable that requires grad is being used in an in-place operation.$",
        ):
            f()


def test_out_refuses_inputs_that_require_grad(device):
    x = _x(3, 4, device=device)
    i = _i([[0]], device)
    calls = {
        "gather": lambda o: C.gather(x, 0, i, out=o),
        "scatter": lambda o: C.scatter(x, 0, i, 1.0, out=o),
        "scatter_add": lambda o: C.scatter_add(x, 0, i, x, out=o),
        "index_add": lambda o: C.index_add(x, 0, i[0], x[:1], out=o),
        "cumsum": lambda o: C.cumsum(x, 0, out=o),
        "cumprod": lambda o: C.cumprod(x, 0, out=o),
        "tril": lambda o: C.tril(x, out=o),
        "triu": lambda o: C.triu(x, out=o),
    }
    for name, f in calls.items():
        out = C.empty(0, dtype=C.float64, device=device)
        msg = (
            f"^{name}\\(\\): functions with out=... arguments don't support automatic "
            "differentiation, but one of the arguments requires grad.$"
        )
        with pytest.raises(RuntimeError, match=msg):
            f(out)
        with C.no_grad():
            assert f(out) is out
