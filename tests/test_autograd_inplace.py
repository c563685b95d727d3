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


# ---- views made in no_grad / inference mode of tensors that require grad (torch 2.11) ----

_NOGRAD_TAIL = (
    " and is being modified inplace with grad mode enabled. Given that this use case is "
    "ambiguous and error-prone, it is forbidden. You can clarify your code by moving both the "
    "view and the inplace either both inside the no_grad block (if you don't want the inplace "
    "to be tracked) or both outside (if you want the inplace to be tracked)."
)
NOGRAD_MSG = "A view was created in no_grad mode" + _NOGRAD_TAIL
INFERENCE_MSG = (
    "A view was created in inference mode and is being modified inplace in normal mode. Given "
    "that this use case is ambiguous and error-prone, it is forbidden. You can clarify your "
    "code by moving both the view and the inplace either both inside the inference_mode block "
    "(if you don't want the inplace to be tracked) or both outside (if you want the inplace "
    "to be tracked)."
)


def _of_view(node, mode="no_grad mode"):
    tail = (
        _NOGRAD_TAIL
        if mode == "no_grad mode"
        else INFERENCE_MSG[len("A view was created in inference mode") :]
    )
    return f"Output 0 of {node} is a view of a view which was created in {mode}" + tail


def _raises(fn, msg):
    with pytest.raises(RuntimeError) as e:
        fn()
    assert str(e.value) == msg


NOGRAD_VIEWS = {
    "index": lambda t: t[1:],
    "select": lambda t: t[0],
    "none": lambda t: t[None],
    "ellipsis": lambda t: t[...],
    "view": lambda t: t.view(12),
    "reshape": lambda t: t.reshape(12),
    "t": lambda t: t.t(),
    "transpose": lambda t: t.transpose(0, 1),
    "swapaxes": lambda t: t.swapaxes(0, 1),
    "permute": lambda t: t.permute(1, 0),
    "expand": lambda t: t[None].expand(2, 3, 4),
    "narrow": lambda t: t.narrow(0, 0, 2),
    "squeeze": lambda t: t[None].squeeze(0),
    "unsqueeze": lambda t: t.unsqueeze(0),
    "flatten": lambda t: t.flatten(),
    "as_strided": lambda t: t.as_strided((2,), (1,)),
    "split": lambda t: t.split(2)[0],
    "split_sizes": lambda t: t.split([1, 2])[1],
    "chunk": lambda t: t.chunk(2)[1],
    "unbind": lambda t: t.unbind()[0],
    "diagonal": lambda t: t.diagonal(1),
    "diagonal_fn": lambda t: cudalite.diagonal(t, -1, 1, 0),
    "movedim": lambda t: t.movedim(0, 1),
    "moveaxis": lambda t: t.moveaxis((1, 0), (0, 1)),
    "movedim_fn": lambda t: cudalite.movedim(t, 1, 0),
    "unfold": lambda t: t.unfold(1, 2, 2),
    "as_strided_fn": lambda t: cudalite.as_strided(t, (2, 2), (1, 4), 1),
}


@pytest.mark.parametrize("leaf", [True, False], ids=["leaf", "nonleaf"])
@pytest.mark.parametrize("name", NOGRAD_VIEWS)
def test_nograd_view_requires_grad_and_refuses_inplace(device, name, leaf):
    x = cudalite.ones(3, 4, device=device, requires_grad=True)
    base = x if leaf else x * 2
    with cudalite.no_grad():
        v = NOGRAD_VIEWS[name](base)
    assert v.requires_grad and v.is_leaf and v.grad_fn is None
    _raises(lambda: v.mul_(2), NOGRAD_MSG)
    if name != "expand":  # (an expanded view cannot be written to)
        with cudalite.no_grad():
            v.mul_(3)  # allowed: both in no_grad mode
        assert to_np(base.detach()).max() == (3.0 if leaf else 6.0)


@pytest.mark.parametrize(
    "make",
    [
        lambda t: t.detach(),
        lambda t: t[[0, 1]],
        lambda t: t.t().reshape(12),
        lambda t: t.contiguous(),
    ],
    ids=["detach", "advanced_index", "reshape_copy", "contiguous"],
)
def test_nograd_non_views_do_not_require_grad(device, make):
    x = cudalite.ones(3, 4, device=device, requires_grad=True)
    with cudalite.no_grad():
        v = make(x)
    assert v.requires_grad is (v is x)


def test_nograd_view_of_tensor_not_requiring_grad(device):
    z = cudalite.ones(3, device=device)
    with cudalite.no_grad():
        w = z[1:]
    assert not w.requires_grad
    w.mul_(2)
    assert to_np(z).tolist() == [1.0, 2.0, 2.0]


def test_nograd_view_inplace_ops(device):
    x = cudalite.ones(3, device=device, requires_grad=True)
    with cudalite.no_grad():
        v = x[1:]
    for op in (
        lambda: v.add_(1),
        lambda: v.zero_(),
        lambda: v.fill_(1),
        lambda: v.copy_(cudalite.zeros(2, device=device)),
        lambda: v.uniform_(),
        lambda: v.exp_(),
        lambda: v.t_(),
        lambda: v.unsqueeze_(0),
        lambda: v.index_put_(
            (cudalite.tensor([0], device=device),), cudalite.ones(1, device=device)
        ),
    ):
        _raises(op, NOGRAD_MSG)
    with cudalite.no_grad(), cudalite.enable_grad():
        _raises(lambda: v.mul_(2), NOGRAD_MSG)
    _raises(lambda: v.resize_(1), "cannot resize variables that require grad")
    assert to_np(x.detach()).tolist() == [1.0, 1.0, 1.0]


@pytest.mark.parametrize(
    "idx,node",
    [
        (0, "SelectBackward0"),
        (slice(0, 1), "SliceBackward0"),
        (slice(None), None),
        (Ellipsis, None),
        (None, "UnsqueezeBackward0"),
        ([0], None),
        ((0, slice(1, None)), "SliceBackward0"),
        ((slice(1, None), 0), "SelectBackward0"),
        ((0, [1]), "SelectBackward0"),
        ((None, 0), "SelectBackward0"),
        ((0, None), "UnsqueezeBackward0"),
        ((slice(None), slice(None)), None),
        ((slice(None), slice(0, 2)), "SliceBackward0"),
        ((Ellipsis, 0), "SelectBackward0"),
        ((slice(0, 2), None), "UnsqueezeBackward0"),
        ((slice(None, None, 2),), "SliceBackward0"),
        ("bool", None),
        ("int0d", "SelectBackward0"),
    ],
)
def test_nograd_view_setitem(device, idx, node):
    x = cudalite.ones(3, 4, device=device, requires_grad=True)
    with cudalite.no_grad():
        v = x[1:]
    if idx == "bool":
        idx = cudalite.tensor([True, False], device=device)
    elif idx == "int0d":
        idx = cudalite.tensor(0, device=device)

    def assign():
        v[idx] = 2.0

    _raises(assign, NOGRAD_MSG if node is None else _of_view(node))


def test_nograd_view_views_in_grad_mode(device):
    x = cudalite.ones(3, 4, device=device, requires_grad=True)
    with cudalite.no_grad():
        v = x[1:]
    v2 = v[0]
    assert v2.requires_grad and not v2.is_leaf and type(v2.grad_fn).__name__ == "SelectBackward0"
    _raises(lambda: v2.mul_(2), _of_view("SelectBackward0"))
    _raises(lambda: v2[1:].mul_(2), _of_view("SliceBackward0"))
    _raises(lambda: v.t().mul_(2), _of_view("TBackward0"))
    _raises(lambda: v.view(8).mul_(2), _of_view("ViewBackward0"))

    def assign():
        v2[[0]] = 1.0

    _raises(assign, _of_view("SelectBackward0"))
    # the outputs of split/unbind give their own error first
    with pytest.raises(RuntimeError, match="^Output 1 of SplitBackward0 is a view and is being"):
        v.split(1)[1].mul_(2)
    with cudalite.no_grad():
        w = v.unbind()[1]  # a no_grad view of a no_grad view
    assert w.requires_grad and w.is_leaf
    _raises(lambda: w.mul_(2), NOGRAD_MSG)


def test_nograd_view_takes_no_gradient(device):
    x = cudalite.ones(3, device=device, requires_grad=True)
    with cudalite.no_grad():
        v = x[1:]
    out = (v * cudalite.tensor([2.0, 3.0], device=device)).sum()
    assert out.requires_grad and type(out.grad_fn).__name__ == "SumBackward0"
    assert out.grad_fn.next_functions[0][0].next_functions == ((None, 0), (None, 0))
    out.backward()
    assert v.grad is None and x.grad is None
    with pytest.raises(RuntimeError, match="^One of the differentiated Tensors appears to not"):
        cudalite.autograd.grad((v * 1).sum(), v)
    assert (
        cudalite.autograd.grad((v * 1).sum() + (x * 1).sum(), [v, x], allow_unused=True)[0] is None
    )


def test_nograd_view_requires_grad_stays(device):
    x = cudalite.ones(3, device=device, requires_grad=True)
    with cudalite.no_grad():
        v = x[1:]
    v.requires_grad = False
    assert v.requires_grad
    assert v.requires_grad_(False) is v and v.requires_grad
    _raises(lambda: v.mul_(2), NOGRAD_MSG)
    with pytest.raises(RuntimeError, match="^Can't detach views in-place"):
        v.detach_()
    d = v.detach()
    assert not d.requires_grad
    d.mul_(2)  # allowed: detach() is not a view for autograd
    assert to_np(x.detach()).tolist() == [1.0, 2.0, 2.0]


def test_inference_mode_view(device):
    x = cudalite.ones(3, 4, device=device, requires_grad=True)
    with cudalite.inference_mode():
        w = x[1:]
        with cudalite.no_grad():
            w3 = x[2:]
    with cudalite.no_grad(), cudalite.inference_mode():
        w4 = x[2:]
    assert w.requires_grad and w.is_leaf
    _raises(lambda: w.mul_(2), INFERENCE_MSG)
    _raises(lambda: w3.mul_(2), INFERENCE_MSG)
    _raises(lambda: w4.mul_(2), INFERENCE_MSG)
    _raises(lambda: w[0].mul_(2), _of_view("SelectBackward0", "inference mode"))

    def assign():
        w[0] = 1.0

    _raises(assign, _of_view("SelectBackward0", "inference mode"))
    with cudalite.inference_mode(False):
        v = x[1:]
    assert not v.is_leaf
    with cudalite.no_grad():
        v = x[1:]
    _raises(lambda: v.mul_(2), NOGRAD_MSG)


def test_inplace_fast_methods_are_the_same_objects_before_and_after_arming():
    """add_/sub_/mul_/div_ stay the C++ methods when autograd is armed (Note [Arming]): they
    record through the arithmetic hook and hand keywords to their (recording) slow method."""
    import ast
    import subprocess
    import sys

    code = (
        "import cudalite as torch\n"
        "before = [torch.Tensor.__dict__[n] for n in ('add_', 'sub_', 'mul_', 'div_')]\n"
        "x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)\n"
        "y = x * 1\n"
        "y.mul_(x).add_(x, alpha=2).sub_(2.0, alpha=3).div_(x + 1).div_(2.0)\n"
        "y.sum().backward()\n"
        "after = [torch.Tensor.__dict__[n] for n in ('add_', 'sub_', 'mul_', 'div_')]\n"
        "print(all(a is b for a, b in zip(before, after)), x.grad.tolist())\n"
    )
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    same, grad = r.stdout.split(" ", 1)
    assert same == "True"
    # torch 2.11's gradients of the same chain
    expected = [1.375, 0.888888955116272, 0.71875]
    assert [round(g, 6) for g in ast.literal_eval(grad)] == [round(g, 6) for g in expected]
