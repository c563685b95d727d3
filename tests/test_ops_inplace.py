"""In-place ops and out=: results, aliasing, the fast method path and their errors (what
PyTorch 2.11 returns and raises)."""

from __future__ import annotations

import re

import numpy as np
import pytest

import cudalite as C
from conftest import exact, to_np


def test_inplace_ops(device):
    a = np.array([[1.0, 2.0], [3.0, 4.0]], dtype=np.float32)
    t = C.tensor(a, device=device)
    ptr = t.data_ptr()
    t += 1
    t *= C.tensor([2.0, 3.0], device=device)
    t -= 0.5
    t /= 2
    t.add_(C.ones(2, device=device), alpha=2).sub_(1).mul_(3).div_(2)
    t.exp_().log_().sqrt_().neg_().abs_()
    want = np.sqrt((((((a + 1) * [2.0, 3.0]) - 0.5) / 2) + 2 - 1) * 3 / 2)
    np.testing.assert_allclose(to_np(t), want, rtol=1e-5)
    assert t.data_ptr() == ptr
    i = C.tensor([1, 2], dtype=C.int32, device=device)
    i += 2
    i *= 3
    i //= 2
    i %= 4
    assert i.dtype is C.int32
    np.testing.assert_array_equal(to_np(i), (((np.array([1, 2], np.int32) + 2) * 3) // 2) % 4)
    f = C.tensor([1.5, 2.5], device=device)
    f += C.tensor([1.0], dtype=C.float64, device=device)  # float64 -> float32 is allowed
    assert f.dtype is C.float32 and f.tolist() == [2.5, 3.5]


def test_inplace_methods_fast_path_and_fallbacks(device):
    """add_/sub_/mul_/div_ are one C++ call with default keywords; alpha, rounding_mode, a
    bool alpha and bad operands take the full path, with torch's results and errors."""
    t = C.tensor([4.0, 7.0], device=device)
    assert t.add_(1) is t and t.sub_(C.ones(2, device=device)) is t
    assert t.mul_(2) is t and t.div_(4) is t
    assert t.tolist() == [2.0, 3.5]
    t.add_(C.ones(2, device=device), alpha=3)
    t.sub_(1, alpha=2.0)
    t.div_(2, rounding_mode="floor")
    assert t.tolist() == [1.0, 2.0]
    with pytest.raises(RuntimeError, match="Boolean alpha only supported for Boolean results"):
        t.add_(1, alpha=True)  # not the int 1 of the fast path: torch's check applies
    assert t.tolist() == [1.0, 2.0]
    for call in (lambda: t.add_("x"), lambda: t.mul_(None), lambda: t.div_([1])):
        with pytest.raises(TypeError, match="must be Tensor"):
            call()
    i = C.tensor([5, 7], device=device)
    with pytest.raises(RuntimeError, match="result type Float can't be cast"):
        i.div_(2)
    assert i.tolist() == [5, 7]


def test_arithmetic_entry_points_argument_errors(device):
    """The dunders and add_/sub_/mul_/div_ are CPython methods (bind_arith.cpp): wrong
    argument counts, missing arguments and foreign `self` raise TypeError, and C++ errors
    keep their Python types; a Parameter (a Tensor subclass) takes the same path."""
    t = C.tensor([1.0, 2.0], device=device)
    with pytest.raises(
        TypeError,
        match="add_\\(\\) received an invalid combination of arguments - got \\(\\), but expected",
    ):
        t.add_()
    with pytest.raises(TypeError, match="positional argument"):
        t.mul_(1, 2)
    with pytest.raises(TypeError, match="unexpected keyword argument 'beta'"):
        t.sub_(1, beta=2)
    with pytest.raises(TypeError, match="expected 1 argument, got 2"):
        C.Tensor.__add__(t, 1, 2)
    with pytest.raises(TypeError, match="'__add__' .*'Tensor' objects doesn't apply to a 'int'"):
        C.Tensor.__add__(1, t)
    with pytest.raises(TypeError, match="unsupported operand"):
        t + "x"
    assert C.Tensor.__add__(t, "x") is NotImplemented
    with pytest.raises(RuntimeError, match="must match the size of tensor b"):
        t.add_(C.ones(3, device=device))
    if device == "cpu":  # torch's text for integer division by zero, as a RuntimeError
        with pytest.raises(RuntimeError, match="ZeroDivisionError"):
            C.tensor([1], device=device) // 0
    with pytest.raises(NotImplementedError, match='"bitwise_and_.*" not implemented for'):
        t & t  # a C++ NotImplementedError keeps its Python type
    assert t.tolist() == [1.0, 2.0]
    p = C.nn.Parameter(C.tensor([1.0, 2.0], device=device), requires_grad=False)
    assert (p + 1).tolist() == [2.0, 3.0] and (-p).tolist() == [-1.0, -2.0]
    assert p.add_(1) is p and p.tolist() == [2.0, 3.0]
    assert (t == None) is False and (t != None) is True  # noqa: E711


def test_inplace_view_writes_base(device):
    x = C.zeros(3, 4, device=device)
    x[:, 1].add_(5)
    x.t()[2].mul_(0).add_(1)
    a = np.zeros((3, 4), dtype=np.float32)
    a[:, 1] += 5
    a.T[2] = 1
    np.testing.assert_array_equal(to_np(x), a)


@pytest.mark.parametrize(
    "dtype, call, result",
    [
        ("int32", lambda t: t.add_(1.5), "Float"),
        ("int32", lambda t: t.__iadd__(1.5), "Float"),
        ("int32", lambda t: t.__itruediv__(2), "Float"),
        ("int32", lambda t: t.mul_(C.tensor([1.5])), "Float"),
        ("int32", lambda t: t.sqrt_(), "Float"),
        ("int64", lambda t: t.exp_(), "Float"),
        ("bool", lambda t: t.add_(1), "Long"),
        ("float32", lambda t: t.add_(C.tensor([1.0], dtype=C.float64).expand(2)), None),
    ],
)
def test_inplace_cast_errors(dtype, call, result):
    t = C.tensor([1, 2], dtype=getattr(C, dtype))
    if result is None:
        call(t)
        return
    short = {"int32": "Int", "int64": "Long", "bool": "Bool"}[dtype]
    msg = f"result type {result} can't be cast to the desired output type {short}"
    with pytest.raises(RuntimeError, match=f"^{msg}$"):
        call(t)


def test_inplace_broadcast_error(device):
    y = C.zeros(3, 1, device=device)
    msg = "output with shape [3, 1] doesn't match the broadcast shape [3, 4]"
    with pytest.raises(RuntimeError, match=exact(msg)):
        y.add_(C.ones(3, 4, device=device))
    y.add_(C.ones(1, device=device))
    assert y.tolist() == [[1.0], [1.0], [1.0]]


def test_out_argument(device):
    a = C.tensor([1.0, 2.0], device=device)
    o = C.empty(2, device=device)
    assert C.add(a, 1, out=o) is o
    assert o.tolist() == [2.0, 3.0]
    o64 = C.empty(2, dtype=C.float64, device=device)
    C.add(C.tensor([1, 2], device=device), 1, out=o64)
    assert o64.dtype is C.float64 and o64.tolist() == [2.0, 3.0]
    ob = C.empty(2, dtype=C.float32, device=device)
    C.eq(C.tensor([1, 2], device=device), 1, out=ob)
    assert ob.tolist() == [1.0, 0.0]
    e = C.empty(0, device=device)
    assert C.exp(a, out=e) is e and e.shape == (2,)
    with pytest.warns(
        UserWarning,
        match=re.escape("An output with one or more elements was resized since it had shape [3]"),
    ):
        C.add(a, 1, out=C.empty(3, device=device))
    msg = "result type Float can't be cast to the desired output type Long"
    with pytest.raises(RuntimeError, match=f"^{msg}$"):
        C.add(a, 1, out=C.empty(2, dtype=C.int64, device=device))
    with pytest.raises(RuntimeError, match=f"^{msg}$"):
        C.exp(C.tensor([1, 2], device=device), out=C.empty(2, dtype=C.int64, device=device))


# ---- memory overlap (torch's checks: a result must not depend on the loop's order) ----

_PARTIAL = (
    "unsupported operation: some elements of the input tensor and the written-to tensor refer "
    "to a single memory location. Please clone() the tensor before performing the operation."
)
_INTERNAL = (
    "unsupported operation: more than one element of the written-to tensor refers to a single "
    "memory location. Please clone() the tensor before performing the operation."
)


@pytest.mark.parametrize(
    "call, msg",
    [
        (lambda x: x[1:].add_(x[:-1]), _PARTIAL),
        (lambda x: x[:-1].mul_(x[1:]), _PARTIAL),
        (lambda x: C.add(x[:3], x[3:], out=x[1:4]), _PARTIAL),
        (lambda x: C.neg(x[:2], out=x[1:3]), _PARTIAL),
        (lambda x: x.view(2, 3).t().add_(x.view(3, 2)), _PARTIAL),
        (lambda x: x[1:].copy_(x[:-1]), _PARTIAL),
        (lambda x: x[:1].expand(3).add_(1), _INTERNAL),
        (lambda x: x[:3].expand(2, 3).copy_(x[3:].expand(2, 3).clone()), _INTERNAL),
        (lambda x: x[:1].expand(2, 2).clamp_(0, 1), _INTERNAL),
        (lambda x: C.cat([x[:2], x[2:4]], out=x[:4]), _PARTIAL),
        (lambda x: C.cat([x[:2], x[2:4]], out=x[:2]), _PARTIAL),
    ],
)
def test_overlapping_writes_raise_and_change_nothing(call, msg, device):
    x = C.arange(6.0, device=device)
    with pytest.raises(RuntimeError, match=exact(msg)):
        call(x)
    assert x.tolist() == [0.0, 1.0, 2.0, 3.0, 4.0, 5.0]


def test_writes_that_overlap_exactly_or_not_at_all_are_allowed(device):
    x = C.arange(6.0, device=device)
    assert x.add_(x).tolist() == [0.0, 2.0, 4.0, 6.0, 8.0, 10.0]
    x[:3].add_(x[3:])
    assert x.tolist() == [6.0, 10.0, 14.0, 6.0, 8.0, 10.0]
    x[:2].copy_(x[:2])
    C.mul(x[::2], 2, out=x[::2])  # the same elements, strided
    assert x.tolist() == [12.0, 10.0, 28.0, 6.0, 16.0, 10.0]
    x[:1].expand(3).fill_(1)  # fills may write one element several times, as in torch
    assert x[0].item() == 1.0


def test_copy_size_errors_are_torchs(device):
    # copy_ broadcasts the source: torch's broadcast message, then the output's
    x = C.zeros(2, 3, device=device)
    with pytest.raises(
        RuntimeError,
        match=r"^The size of tensor a \(2\) must match the size of tensor b \(4\) at "
        r"non-singleton dimension 0$",
    ):
        x.copy_(C.zeros(4, 3, device=device))
    with pytest.raises(
        RuntimeError, match=r"^output with shape \[3\] doesn't match the broadcast shape \[2, 3\]$"
    ):
        C.zeros(3, device=device).copy_(C.zeros(2, 3, device=device))
    x.copy_(C.ones(3, device=device))  # broadcasting is fine
    assert x.sum().item() == 6.0
