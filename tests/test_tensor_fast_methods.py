"""Tensor.sum / item / cuda / cpu: the argument-free call runs in C++ (Note [Fast methods],
csrc/bindings/bind_methods.cpp), every other call in the full Python method. Autograd, once
armed, replaces these methods on the class, so the C++ ones are called here through
``_tensor._methods``, which keeps them, as well as through the class."""

from __future__ import annotations

import pytest

import cudalite as C
from conftest import HAS_CUDA
from cudalite import _tensor

FAST = {name: _tensor._methods[name] for name in ("sum", "item", "cuda", "cpu")}


def test_fast_methods_are_the_cpp_descriptors():
    for name, f in FAST.items():
        assert type(f).__name__ == "method_descriptor", name
        assert f.__doc__.startswith(name + "("), name


@pytest.mark.parametrize("call", ["class", "fast"])
def test_sum_and_item(device, call):
    m = (lambda n: getattr(C.Tensor, n)) if call == "class" else FAST.get
    t = C.tensor([[1.0, 2.0], [3.0, 4.0]], device=device)
    s = m("sum")(t)
    assert s.dim() == 0 and s.device == t.device and s.dtype == C.float32
    assert m("item")(s) == 10.0 and isinstance(m("item")(s), float)
    # Arguments take the Python method, with its results.
    assert m("sum")(t, 0).tolist() == [4.0, 6.0]
    assert m("sum")(t, dim=1, keepdim=True).tolist() == [[3.0], [7.0]]
    assert m("sum")(t, dtype=C.float64).dtype == C.float64
    # Integer and bool sums widen to int64, as in torch.
    b = m("sum")(C.tensor([True, True, False], device=device))
    assert b.dtype == C.int64 and m("item")(b) == 2 and isinstance(m("item")(b), int)
    assert m("item")(C.tensor(True, device=device)) is True
    assert m("item")(C.tensor([-3], dtype=C.int8, device=device)) == -3
    assert m("item")(m("sum")(C.empty(0, device=device))) == 0.0
    assert m("item")(m("sum")(C.tensor(2.5, dtype=C.float16, device=device))) == 2.5


def test_errors(device):
    t = C.tensor([1.0, 2.0], device=device)
    with pytest.raises(IndexError, match=r"Dimension out of range \(expected to be in range of"):
        FAST["sum"](t, 5)
    with pytest.raises(
        TypeError, match=r"^sum\(\) received an invalid combination .* \(foo=int, \)"
    ):
        FAST["sum"](t, foo=0)
    assert FAST["sum"](t, axis=0).item() == 3.0  # NumPy's name for dim, as torch takes it
    with pytest.raises(RuntimeError, match="with 2 elements cannot be converted to Scalar"):
        FAST["item"](t)
    with pytest.raises(TypeError, match="takes 1 positional argument but 2 were given"):
        FAST["item"](t, 1)
    with pytest.raises(TypeError, match="'sum' for 'Tensor' objects doesn't apply to a 'int'"):
        FAST["sum"](3)
    with pytest.raises(TypeError, match="'item' for 'Tensor' objects doesn't apply to a 'list'"):
        FAST["item"]([1.0])
    with pytest.raises(RuntimeError, match="Invalid device, must be cuda device"):
        FAST["cuda"](t, "cpu")
    assert t.tolist() == [1.0, 2.0]


def test_cpu_and_cuda(device):
    t = C.tensor([1.5, -2.0], device=device)
    c = FAST["cpu"](t)
    assert c.device == C.device("cpu") and c.tolist() == [1.5, -2.0]
    assert (c is t) == (device == "cpu")  # self when nothing changes, as torch
    if not HAS_CUDA:
        with pytest.raises((RuntimeError, AssertionError)):
            FAST["cuda"](t)
        return
    g = FAST["cuda"](t)
    assert g.device == C.device("cuda:0") and g.dtype == t.dtype and g.tolist() == [1.5, -2.0]
    assert (g is t) == (device == "cuda")
    assert FAST["cuda"](t, 0).device == C.device("cuda:0")
    h = FAST["cuda"](c, non_blocking=True)
    C.cuda.synchronize()
    assert h.tolist() == [1.5, -2.0]


def test_subclass_and_autograd(device):
    """A Parameter takes the same path. Like every entry of ``_methods``, the C++ methods are
    the foundation's, which don't record; once autograd is armed, the class's methods record."""
    p = C.nn.Parameter(C.tensor([1.0, 2.0], device=device), requires_grad=False)
    assert FAST["sum"](p).item() == 3.0 and FAST["item"](FAST["sum"](p)) == 3.0
    w = C.tensor([1.0, 2.0], device=device, requires_grad=True)  # arms autograd
    assert FAST["sum"](w).item() == 3.0 and FAST["cpu"](w).tolist() == [1.0, 2.0]
    s = w.sum()
    assert s.requires_grad and s.grad_fn is not None
    s.backward()
    assert w.grad.tolist() == [1.0, 1.0]
    moved = (w * 2).cpu()
    assert moved.requires_grad and moved.grad_fn is not None
