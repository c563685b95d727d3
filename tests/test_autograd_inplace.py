"""In-place ops on views of tensors that require grad: the base's history is rewritten
(torch's CopySlices), so gradients match torch's (values generated with torch 2.11)."""

from __future__ import annotations

import numpy as np
import pytest

import cudalite
from conftest import to_np

EXPECTED = {
    "row_mul": ([[1.0, -4.0, 12.0], [8.0, 10.0, 12.0]], [2.0, 8.0, 18.0]),
    "col_add": ([[2.0, 4.0, 6.0], [8.0, 10.0, 12.0]], [2.0, 5.0, 0.0]),
    "t_exp": (
        [
            [14.778112411499023, 218.39259338378906, 2420.57275390625],
            [23847.6640625, 220264.65625, 1953057.5],
        ],
        None,
    ),
    "view_relu": ([[2.0, 4.0, 6.0], [8.0, 10.0, 12.0]], None),
    "row_copy": ([[2.0, 4.0, 6.0], [0.0, 0.0, 0.0]], [4.0, 5.0, 6.0]),
    "row_fill": ([[2.0, 4.0, 6.0], [0.0, 0.0, 0.0]], None),
    "nested": ([[2.0, 4.0, 6.0], [8.0, -10.0, 24.0]], [0.0, 50.0, 72.0]),
    "setitem_on_view": ([[2.0, 4.0, 6.0], [0.0, 0.0, 12.0]], [4.0, 5.0, 0.0]),
}

CASES = {
    "row_mul": lambda y, w: y[0].mul_(w),
    "col_add": lambda y, w: y[:, 1].add_(w[:2]),
    "t_exp": lambda y, w: y.t().exp_(),
    "view_relu": lambda y, w: y.view(6).relu_(),
    "row_copy": lambda y, w: y[1].copy_(w),
    "row_fill": lambda y, w: y[1].fill_(3.0),
    "nested": lambda y, w: y[1][1:].mul_(w[1:]),
    "setitem_on_view": lambda y, w: y[1].__setitem__(slice(0, 2), w[:2]),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_inplace_on_view_of_nonleaf(name, device):
    x = cudalite.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], device=device, requires_grad=True)
    w = cudalite.tensor([0.5, -1.0, 2.0], device=device, requires_grad=True)
    y = x * 2
    CASES[name](y, w)
    assert type(y.grad_fn).__name__ == "CopySlices"
    weights = cudalite.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], device=device)
    (y * weights).sum().backward()
    gx, gw = EXPECTED[name]
    np.testing.assert_allclose(to_np(x.grad), gx, rtol=1e-5)
    if gw is None:
        assert w.grad is None
    else:
        np.testing.assert_allclose(to_np(w.grad), gw, rtol=1e-5)


def test_inplace_on_multi_output_view_errors():
    y = cudalite.ones(2, 3, requires_grad=True) * 2
    with pytest.raises(RuntimeError) as e:
        y.unbind(0)[1].mul_(2)
    assert str(e.value).startswith(
        "Output 1 of UnbindBackward0 is a view and is being modified inplace. This view is the "
        "output of a function that returns multiple views."
    )
    with cudalite.no_grad():
        y.split(1)[0].mul_(2)


def test_view_keeps_working_after_base_rewrite():
    x = cudalite.tensor([1.0, 2.0, 3.0, 4.0], requires_grad=True)
    y = x * 1
    v = y[1:3]
    v.mul_(10)
    (v * 2).sum().backward()  # v's new history goes through the base
    np.testing.assert_allclose(to_np(x.grad), [0.0, 20.0, 20.0, 0.0])


def test_custom_function():
    from cudalite.autograd import Function, gradcheck

    class ScaledExp(Function):
        @staticmethod
        def forward(ctx, x, scale):
            y = x.exp() * scale
            ctx.save_for_backward(y)
            ctx.scale = scale
            return y

        @staticmethod
        def backward(ctx, grad):
            (y,) = ctx.saved_tensors
            return grad * y, None

    x = cudalite.tensor([0.0, 1.0, -1.0], dtype=cudalite.float64, requires_grad=True)
    y = ScaledExp.apply(x, 3.0)
    assert type(y.grad_fn).__name__ == "ScaledExpBackward" and y.requires_grad
    assert gradcheck(lambda x: ScaledExp.apply(x, 3.0), (x,))
    y.sum().backward()
    np.testing.assert_allclose(to_np(x.grad), 3 * np.exp([0.0, 1.0, -1.0]))
    with pytest.raises(RuntimeError, match="backward through the graph a second time"):
        y.sum().backward()
    assert ScaledExp.apply(cudalite.ones(2), 2.0).grad_fn is None


@pytest.mark.parametrize(
    "op",
    [
        lambda x: x.exp(),
        lambda x: x.sigmoid().tanh(),
        lambda x: x.softmax(0),
        lambda x: x.relu().sqrt(),
        lambda x: x.norm(),
        lambda x: x**x,
    ],
)
def test_outputs_free_without_cyclic_gc(op):
    """Nodes keep detached aliases of the outputs they need (Note [Saved outputs]), so a graph
    is freed by reference counting alone, as soon as its output goes."""
    import gc
    import weakref

    x = cudalite.tensor([0.5, 1.0, 2.0], requires_grad=True)
    gc.disable()
    try:
        y = op(x)
        ref, node = weakref.ref(y), weakref.ref(y.grad_fn)
        del y
        assert ref() is None and node() is None
    finally:
        gc.enable()
