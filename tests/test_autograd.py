"""Autograd semantics: graph recording, backward / grad, accumulation, hooks, grad mode,
torch's node names and errors, printing. Gradient values per op are in test_autograd_ops.py."""

from __future__ import annotations

import gc
import weakref

import numpy as np
import pytest

import cudalite
from conftest import to_np
from cudalite import autograd


def leaf(values, device="cpu", dtype=cudalite.float32):
    return cudalite.tensor(values, dtype=dtype, device=device, requires_grad=True)


# ---- recording ----


def test_leaf_and_nonleaf(device):
    x = leaf([1.0, 2.0, 3.0], device)
    assert x.is_leaf and x.requires_grad and x.grad_fn is None and x.grad is None
    y = x * 2
    assert not y.is_leaf and y.requires_grad
    assert type(y.grad_fn).__name__ == "MulBackward0"
    z = cudalite.ones(3, device=device) * 2
    assert z.is_leaf and not z.requires_grad and z.grad_fn is None


def test_next_functions_like_torch():
    x = leaf([1.0, 2.0])
    y = (x * 2 + 1).sum()
    assert y.grad_fn.name() == "SumBackward0"
    ((add, _),) = y.grad_fn.next_functions
    assert type(add).__name__ == "AddBackward0"
    (mul, _), (none, nr) = add.next_functions
    assert type(mul).__name__ == "MulBackward0" and none is None and nr == 0
    (acc, _), (none, _) = mul.next_functions
    assert type(acc).__name__ == "AccumulateGrad" and acc.variable is x and none is None
    assert repr(acc).startswith("<AccumulateGrad object at 0x")


def test_same_leaf_shares_accumulate_grad():
    x = leaf([1.0, 2.0])
    a, b = x * 2, x * 3
    assert a.grad_fn.next_functions[0][0] is b.grad_fn.next_functions[0][0]


@pytest.mark.parametrize(
    "expr, name",
    [
        (lambda x, y: x + y, "AddBackward0"),
        (lambda x, y: x - 1, "SubBackward0"),
        (lambda x, y: 1 - x, "RsubBackward1"),
        (lambda x, y: 2 / x, "MulBackward0"),
        (lambda x, y: x**2, "PowBackward0"),
        (lambda x, y: x**y, "PowBackward1"),
        (lambda x, y: 2**x, "PowBackward2"),
        (lambda x, y: x @ y.t(), "MmBackward0"),
        (lambda x, y: cudalite.addmm(y[0], x, y.t()), "AddmmBackward0"),
        (lambda x, y: x.sum(1), "SumBackward1"),
        (lambda x, y: x.mean(), "MeanBackward0"),
        (lambda x, y: x.max(1)[0], "MaxBackward0"),
        (lambda x, y: x.t().reshape(-1), "UnsafeViewBackward0"),
        (lambda x, y: x[0], "SelectBackward0"),
        (lambda x, y: x[:, 1:], "SliceBackward0"),
        (lambda x, y: x[cudalite.tensor([0, 1])], "IndexBackward0"),
        (lambda x, y: cudalite.cat([x, y]), "CatBackward0"),
        (lambda x, y: x.unbind()[0], "UnbindBackward0"),
        (lambda x, y: x.double(), "ToCopyBackward0"),
        (lambda x, y: x.clamp(0, 1), "ClampBackward1"),
        (lambda x, y: cudalite.where(x > 0, x, y), "WhereBackward0"),
        (lambda x, y: x.softmax(1), "SoftmaxBackward0"),
        (lambda x, y: x.norm(), "LinalgVectorNormBackward0"),
        (lambda x, y: x.floor_divide(y), "NotImplemented"),
    ],
)
def test_node_names(expr, name):
    x = leaf([[1.0, -2.0], [3.0, 4.0]])
    y = leaf([[0.5, 1.0], [2.0, -1.0]])
    assert type(expr(x, y).grad_fn).__name__ == name


def test_nondifferentiable_outputs():
    x = leaf([1.0, 2.0, 3.0])
    for out in (x > 1, x.argmax(), x.long(), x.max(0).indices, x == x):
        assert not out.requires_grad and out.grad_fn is None
    assert x.to(cudalite.float32) is x and x.float() is x


def test_repr_suffixes():
    x = leaf([1.0, 2.0])
    assert repr(x) == "tensor([1., 2.], requires_grad=True)"
    assert repr(x * 2) == "tensor([2., 4.], grad_fn=<MulBackward0>)"
    assert repr((x * 2).sum()) == "tensor(6., grad_fn=<SumBackward0>)"
    assert repr(x.detach()) == "tensor([1., 2.])"
    assert str(x + 1) == "tensor([2., 3.], grad_fn=<AddBackward0>)"


# ---- backward ----


def test_backward_accumulates(device):
    x = leaf([1.0, 2.0, 3.0], device)
    for _ in range(3):
        (x * x).sum().backward()
    np.testing.assert_allclose(to_np(x.grad), [6.0, 12.0, 18.0])
    assert x.grad.device == x.device and not x.grad.requires_grad


def test_backward_with_gradient_and_broadcast(device):
    w = leaf([[1.0, 2.0]], device)
    b = leaf([0.5], device)
    y = w * cudalite.ones(3, 1, device=device) + b
    y.backward(cudalite.full((3, 2), 2.0, device=device))
    np.testing.assert_allclose(to_np(w.grad), [[6.0, 6.0]])
    np.testing.assert_allclose(to_np(b.grad), [12.0])


def test_gradients_do_not_alias():
    # a + b hands the same buffer to both leaves; each .grad must be its own memory
    a, b = leaf([1.0, 2.0]), leaf([3.0, 4.0])
    (a + b.view(2)).sum().backward()
    (a + b.view(2)).sum().backward()
    a.grad.zero_()
    np.testing.assert_allclose(to_np(b.grad), [2.0, 2.0])
    assert not a.grad._is_same_storage(b.grad)


def test_first_grad_is_stolen_when_private():
    w = leaf([1.0, 2.0])
    (w * 3).sum().backward()
    g = w.grad
    (w * 3).sum().backward()
    assert w.grad is g  # later gradients are added in place
    np.testing.assert_allclose(to_np(g), [6.0, 6.0])


def test_user_gradient_is_copied():
    x = leaf([1.0, 2.0])
    g = cudalite.tensor([1.0, 1.0])
    x.backward(g)
    x.grad.add_(1)
    np.testing.assert_allclose(to_np(g), [1.0, 1.0])


def test_nonscalar_needs_gradient():
    x = leaf([1.0, 2.0])
    with pytest.raises(RuntimeError, match="^grad can be implicitly created only for scalar"):
        (x * 2).backward()


def test_gradient_shape_mismatch():
    x = leaf([1.0, 2.0, 3.0])
    with pytest.raises(RuntimeError) as e:
        (x * 2).backward(cudalite.ones(4))
    assert str(e.value) == (
        "Mismatch in shape: grad_output[0] has a shape of cudalite.Size([4]) and output[0] has "
        "a shape of cudalite.Size([3])."
    )


def test_backward_twice():
    x = leaf([1.0, 2.0, 3.0])
    y = (x * x).sum()
    y.backward()
    with pytest.raises(RuntimeError) as e:
        y.backward()
    assert str(e.value).startswith(
        "Trying to backward through the graph a second time (or directly access saved tensors "
        "after they have already been freed). Saved intermediate values of the graph are freed "
        "when you call .backward() or autograd.grad(). Specify retain_graph=True"
    )
    # nodes that save nothing can run again (as in torch)
    z = (x + x).sum()
    z.backward()
    z.backward()


def test_retain_graph():
    x = leaf([1.0, 2.0])
    y = (x * x).sum()
    y.backward(retain_graph=True)
    y.backward()
    np.testing.assert_allclose(to_np(x.grad), [4.0, 8.0])


def test_saved_tensors_are_freed():
    x = leaf([1.0, 2.0])
    h = x.exp()
    ref = weakref.ref(h)
    y = (h * h).sum()
    del h
    gc.collect()
    assert ref() is not None  # saved by MulBackward0
    y.backward()
    gc.collect()
    assert ref() is None


def test_no_grad_on_tensor_errors():
    with pytest.raises(RuntimeError) as e:
        cudalite.randn(3).sum().backward()
    assert str(e.value) == (
        "element 0 of tensors does not require grad and does not have a grad_fn"
    )


def test_leaf_backward():
    x = leaf([1.0, 2.0])
    x.backward(cudalite.tensor([3.0, 4.0]))
    np.testing.assert_allclose(to_np(x.grad), [3.0, 4.0])


def test_backward_inputs_only():
    w, u = leaf([1.0, 2.0]), leaf([3.0, 4.0])
    (w * u).sum().backward(inputs=[u])
    assert w.grad is None
    np.testing.assert_allclose(to_np(u.grad), [1.0, 2.0])


def test_unused_multi_output_branch():
    w = leaf([1.0, 2.0, 3.0])
    a, _, c = w.unbind()
    (a * 2 + c).backward()
    np.testing.assert_allclose(to_np(w.grad), [2.0, 0.0, 1.0])


# ---- autograd.grad ----


def test_grad_function(device):
    x = leaf([1.0, 2.0], device)
    h = x * x
    gh, gx = autograd.grad(h.sum() * 3, [h, x])
    np.testing.assert_allclose(to_np(gh), [3.0, 3.0])
    np.testing.assert_allclose(to_np(gx), [6.0, 12.0])
    assert x.grad is None
    with pytest.warns(UserWarning, match="not a leaf Tensor"):
        assert h.grad is None


def test_grad_errors():
    x = leaf([1.0, 2.0])
    other = leaf([1.0])
    with pytest.raises(RuntimeError, match="appears to not have been used in the graph"):
        autograd.grad((x * 2).sum(), [x, other])
    gx, go = autograd.grad((x * 2).sum(), [x, other], allow_unused=True)
    assert go is None
    _, go = autograd.grad((x * 2).sum(), [x, other], materialize_grads=True)
    np.testing.assert_allclose(to_np(go), [0.0])
    with pytest.raises(RuntimeError, match="^One of the differentiated Tensors does not require"):
        autograd.grad((x * 2).sum(), [cudalite.ones(2)])


def test_higher_order():
    x = leaf([1.0, 2.0, 3.0])
    (g,) = autograd.grad((x**3).sum(), x, create_graph=True)
    assert g.requires_grad and type(g.grad_fn).__name__ == "MulBackward0"
    g.sum().backward()
    np.testing.assert_allclose(to_np(g.detach()), [3.0, 12.0, 27.0])
    np.testing.assert_allclose(to_np(x.grad), [6.0, 12.0, 18.0])


# ---- hooks, retain_grad ----


def test_hooks_and_retain_grad():
    x = leaf([1.0, 2.0])
    y = x * 2
    y.register_hook(lambda g: g * 10)
    handle = x.register_hook(lambda g: g + 1)
    y.retain_grad()
    assert y.retains_grad and not x.retains_grad
    (y * y).sum().backward()
    np.testing.assert_allclose(to_np(y.grad), [40.0, 80.0])  # retain_grad sees hooked grad
    np.testing.assert_allclose(to_np(x.grad), [81.0, 161.0])
    handle.remove()
    x.grad = None
    (x * 1).sum().backward()
    np.testing.assert_allclose(to_np(x.grad), [1.0, 1.0])


def test_hook_errors():
    with pytest.raises(RuntimeError, match="doesn't require gradient"):
        cudalite.ones(2).register_hook(lambda g: g)
    with pytest.raises(RuntimeError, match="requires_grad=False"):
        cudalite.ones(2).retain_grad()


def test_node_hooks():
    x = leaf([1.0, 2.0])
    y = x * 3
    seen = []
    y.grad_fn.register_hook(lambda gi, go: seen.append((gi[0].tolist(), go[0].tolist())))
    y.grad_fn.register_prehook(lambda go: (go[0] * 2,))
    y.sum().backward()
    assert seen == [([6.0, 6.0], [2.0, 2.0])]


# ---- in-place ----


def test_inplace_on_leaf_errors():
    x = leaf([1.0, 2.0])
    msg = "a leaf Variable that requires grad is being used in an in-place operation."
    for op in (lambda: x.add_(1), lambda: x.__iadd__(1), lambda: x.mul_(2), lambda: x.exp_()):
        with pytest.raises(RuntimeError) as e:
            op()
        assert str(e.value) == msg
    with pytest.raises(RuntimeError, match="^a view of a leaf Variable that requires grad"):
        x[0] = 1.0
    with pytest.raises(RuntimeError, match="^a view of a leaf Variable that requires grad"):
        x.view(2).add_(1)
    with cudalite.no_grad():
        x.add_(1)  # fine without grad mode
    np.testing.assert_allclose(to_np(x.detach()), [2.0, 3.0])


def test_inplace_on_nonleaf():
    a = leaf([1.0, 2.0, 3.0])
    b = a * 2
    b.add_(1)
    b *= 3
    b.relu_()  # saves its output: an in-place op after it would fail backward (as in torch)
    assert type(b.grad_fn).__name__ == "ReluBackward0" and not b.is_leaf
    (b * b).sum().backward()  # 9 (2a + 1)^2
    np.testing.assert_allclose(to_np(a.grad), [108.0, 180.0, 252.0])


def test_inplace_into_plain_tensor():
    a = cudalite.zeros(3)
    w = leaf([1.0, 2.0, 3.0])
    a += w * w
    a[0] = w[1] * 10
    assert a.requires_grad and not a.is_leaf and type(a.grad_fn).__name__ == "CopySlices"
    a.sum().backward()
    np.testing.assert_allclose(to_np(w.grad), [0.0, 14.0, 6.0])


def test_copy_fill_zero_on_nonleaf():
    w = leaf([1.0, 2.0])
    src = leaf([5.0, 6.0])
    a = w * 1
    a.copy_(src)
    assert type(a.grad_fn).__name__ == "CopyBackwards"
    (a * 2).sum().backward()
    np.testing.assert_allclose(to_np(w.grad), [0.0, 0.0])
    np.testing.assert_allclose(to_np(src.grad), [2.0, 2.0])
    b = w * 1
    b.fill_(3.0)
    assert type(b.grad_fn).__name__ == "FillBackward2"
    assert type((w * 1).zero_().grad_fn).__name__ == "ZeroBackward0"


def test_out_argument_rejected_with_grad():
    x = leaf([1.0])
    with pytest.raises(RuntimeError, match="don't support automatic differentiation"):
        cudalite.exp(x, out=cudalite.empty(1))


# ---- grad mode, detach, flags ----


def test_grad_modes():
    w = leaf([1.0, 2.0])
    with cudalite.no_grad():
        assert not (w * 2).requires_grad
        with cudalite.enable_grad():
            assert (w * 2).requires_grad
    assert cudalite.is_grad_enabled()

    @cudalite.no_grad()
    def f():
        return w * 3

    assert not f().requires_grad
    with cudalite.set_grad_enabled(False):
        assert not (w + 1).requires_grad
    assert cudalite.is_grad_enabled()


def test_detach():
    w = leaf([1.0, 2.0])
    d = (w * 2).detach()
    assert not d.requires_grad and d.is_leaf and d.grad_fn is None
    y = w * 2
    y.detach_()
    assert not y.requires_grad and y.grad_fn is None
    assert w.detach()._is_same_storage(w)


def test_requires_grad_flags():
    with pytest.raises(RuntimeError, match="only Tensors of floating point dtype"):
        cudalite.tensor([1, 2]).requires_grad_()
    with pytest.raises(RuntimeError, match="you can only change requires_grad flags of leaf"):
        (leaf([1.0]) * 2).requires_grad = False
    t = cudalite.ones(2)
    t.requires_grad = True
    assert (t * 1).requires_grad
    t.requires_grad_(False)
    assert not (t * 1).requires_grad


def test_numpy_of_requires_grad():
    with pytest.raises(RuntimeError, match=r"Use tensor\.detach\(\)\.numpy\(\) instead"):
        leaf([1.0]).numpy()


def test_variable_is_a_new_leaf():
    from cudalite.autograd import Variable

    t = cudalite.randn(3, 3)
    v = Variable(t)
    assert v is not t and v._is_same_storage(t) and isinstance(t, Variable)
    assert Variable(cudalite.ones(2), requires_grad=True).requires_grad  # more in _checks


def test_deepcopy_keeps_requires_grad():
    import copy

    w = leaf([1.0, 2.0])
    c = copy.deepcopy(w)
    assert c.requires_grad and c.is_leaf and not c._is_same_storage(w)
    with pytest.raises(RuntimeError, match="graph leaves"):
        copy.deepcopy(w * 2)


def test_no_grad_path_unchanged():
    a, b = cudalite.ones(2), cudalite.ones(2)
    for out in (a + b, a.exp(), a.view(2, 1), a.sum(), cudalite.matmul(a, b), a[0]):
        assert out.grad_fn is None and not out.requires_grad


def test_arming_and_import_cost():
    """Before any tensor requires grad, the backward formulas, nn, optim and NumPy are not
    even imported; arming fills the methods' recording slots and sets nothing on Tensor
    (Note [Arming]): every class attribute is the same object before and after."""
    import subprocess
    import sys

    code = (
        "import sys, cudalite\n"
        "from cudalite import _C, _tensor\n"
        "T = cudalite.Tensor\n"
        "before = dict(vars(T))\n"
        "mul_, exp = T.mul_, T.exp\n"
        "assert isinstance(vars(T)['exp'], _C._Checked) and vars(T)['exp']._recorder is None\n"
        "for m in ('cudalite.autograd.functions.pointwise', 'cudalite.nn', 'cudalite.optim',\n"
        "          'numpy'):\n"
        "    assert m not in sys.modules, m\n"
        "x = cudalite.ones(2)\n"
        "assert (x * 2).grad_fn is None\n"
        "w = cudalite.ones(2, requires_grad=True)\n"
        "assert vars(T)['exp']._recorder is not None\n"
        "assert _tensor._slow_methods['sum']._recorder is not None\n"
        "assert type(w.sum().grad_fn).__name__ == 'SumBackward0'\n"
        "assert type(w.exp().grad_fn).__name__ == 'ExpBackward0'\n"
        "assert x.exp().grad_fn is None and x.sum().grad_fn is None\n"
        "w.exp().sum().backward()\n"
        "changed = [n for n, v in vars(T).items() if before.get(n) is not v]\n"
        "assert not changed, changed\n"
        "assert T.mul_ is mul_ and T.exp is exp\n"
        "import cudalite.nn, cudalite.optim\n"
        "assert 'numpy' not in sys.modules\n"
    )
    import os

    pkg_root = os.path.dirname(os.path.dirname(cudalite.__file__))
    env = dict(os.environ, PYTHONPATH=pkg_root)
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)
    assert r.returncode == 0, r.stderr


def test_wrapper_tables_cover_the_recorders():
    from cudalite.autograd import _wrappers
    from cudalite.autograd.functions import pointwise

    assert set(_wrappers.UNARY_FUNCTIONS) == set(pointwise.UNARY_NODES) | {"square"}
    assert set(_wrappers.BINARY_FUNCTIONS.values()) <= set(pointwise.BINARY_RECORDERS)


def test_inference_mode_and_decorators():
    w = leaf([1.0])

    @cudalite.set_grad_enabled(False)
    def f():
        return w * 2

    with cudalite.inference_mode():
        assert not (w * 2).requires_grad
    with cudalite.inference_mode(False):
        assert (w * 2).requires_grad
    assert not f().requires_grad and cudalite.is_grad_enabled()


def test_type_name_of_a_tensor_that_requires_grad(device):
    """x.type() (no dtype: the type's name) on a recorded tensor passes the name through."""
    x = cudalite.ones(2, requires_grad=True, device=device)
    expected = "cudalite.FloatTensor" if device == "cpu" else "cudalite.cuda.FloatTensor"
    assert x.type() == expected
    y = x.type(cudalite.float64)
    assert y.dtype == cudalite.float64 and y.requires_grad
