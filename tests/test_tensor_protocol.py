"""The Python protocol of tensors: conversions to numbers and lists, len/iter/bool/index,
pickling and copying, ``in``, hashing, metadata queries and the autograd slots."""

from __future__ import annotations

import copy
import operator
import pickle
import re

import numpy as np
import pytest

import cudalite as C
from conftest import to_np

ALL = ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16", "float32",
       "float64"]  # fmt: skip


def err(exc, msg):
    return pytest.raises(exc, match=f"^{re.escape(msg)}$")


@pytest.mark.parametrize("name", ALL)
def test_item_and_tolist(name, device):
    dt = getattr(C, name)
    vals = [[1, 0], [3, 1]] if name == "bool" else [[1, 2], [3, 4]]
    t = C.tensor(vals, dtype=dt, device=device)
    py = float if dt.is_floating_point else bool if name == "bool" else int
    want = np.array(vals).astype(np.float32 if name == "bfloat16" else name).tolist()
    assert t.tolist() == want
    assert all(type(v) is py for row in t.tolist() for v in row)
    assert t[1, 0].item() == want[1][0] and type(t[1, 0].item()) is py
    assert t[0].tolist() == want[0]
    assert t[0, 0].tolist() == want[0][0]  # a 0-dim tensor gives a number
    assert C.tensor([7], dtype=dt, device=device).item() == np.array(7).astype(
        np.float32 if name == "bfloat16" else name).item()  # fmt: skip


def test_item_values_vs_numpy():
    assert C.tensor(3.5).item() == 3.5
    assert C.tensor(0.1, dtype=C.float64).item() == 0.1
    assert C.tensor(0.1).item() == float(np.float32(0.1))
    assert C.tensor(0.1, dtype=C.float16).item() == float(np.float16(0.1))
    assert C.tensor(1.5, dtype=C.bfloat16).item() == 1.5
    assert C.zeros(2, 0).tolist() == [[], []]
    assert C.tensor(2**62).item() == 2**62


def test_item_errors():
    with err(RuntimeError, "a Tensor with 4 elements cannot be converted to Scalar"):
        C.zeros(2, 2).item()
    with err(RuntimeError, "a Tensor with 0 elements cannot be converted to Scalar"):
        C.zeros(0).item()


def test_len_and_iter(device):
    x = C.tensor([[1, 2], [3, 4], [5, 6]], device=device)
    assert len(x) == 3
    assert len(C.zeros(0, 3)) == 0
    rows = list(x)
    assert len(rows) == 3 and [r.tolist() for r in rows] == [[1, 2], [3, 4], [5, 6]]
    rows[0][1] = 9  # rows are views
    assert x[0, 1].item() == 9
    assert list(C.zeros(0)) == []
    with err(TypeError, "len() of a 0-d tensor"):
        len(C.tensor(3))
    with err(TypeError, "iteration over a 0-d tensor"):
        iter(C.tensor(3))


def test_number_conversions():
    assert bool(C.tensor([1])) is True and bool(C.tensor(0.0)) is False
    assert bool(C.tensor(float("nan"))) is True
    assert float(C.tensor([2])) == 2.0
    assert int(C.tensor(2.7)) == int(2.7) and int(C.tensor([-2.7])) == int(-2.7)
    assert complex(C.tensor(2.0)) == complex(2.0)
    assert f"{C.tensor(2.5):.2f}" == "2.50"
    assert f"{C.tensor([2.5])}" == "tensor([2.5000])"
    multi = "only one element tensors can be converted to Python scalars"
    for fn in (float, int, complex):
        with err(ValueError, multi):
            fn(C.zeros(2, 2))
        with err(ValueError, multi):
            fn(C.zeros(0))
    with err(RuntimeError, "Boolean value of Tensor with more than one value is ambiguous"):
        bool(C.zeros(2))
    with err(RuntimeError, "Boolean value of Tensor with no values is ambiguous"):
        bool(C.zeros(0))
    with pytest.raises(TypeError, match="unsupported format string passed to Tensor.__format__"):
        f"{C.zeros(2):>5}"


def test_index_protocol():
    items = [10, 20, 30]
    assert items[C.tensor(1)] == 20
    assert items[C.tensor([2])] == 30
    assert items[C.tensor(True)] == 20
    assert operator.index(C.tensor(2, dtype=C.uint8)) == 2
    msg = "only integer tensors of a single element can be converted to an index"
    for bad in (C.tensor(1.0), C.tensor([1, 2])):
        with err(TypeError, msg):
            items[bad]


def test_contains(device):
    x = C.tensor([[1, 2], [3, 4]], device=device)
    assert 3 in x and 5 not in x
    assert 2.0 in x and True in x
    assert C.tensor([1, 2], device=device) in x
    for bad, tp in (("a", "str"), ([1, 2], "list")):
        msg = (
            "Tensor.__contains__ only supports Tensor or scalar, but you passed in a "
            f"<class '{tp}'>."
        )
        with err(RuntimeError, msg):
            bad in x  # noqa: B015


def test_hash_is_identity():
    x = C.tensor([1, 2])
    y = C.tensor([1, 2])
    assert hash(x) == hash(x) and hash(x) != hash(y)
    d = {x: "x", y: "y"}
    assert d[x] == "x" and d[y] == "y"
    assert x in {x} and y not in {x}


@pytest.mark.parametrize(
    "make",
    [
        lambda: C.arange(6.0).reshape(2, 3),
        lambda: C.arange(6.0).reshape(2, 3).t(),
        lambda: C.tensor(3),
        lambda: C.zeros(0, 2),
        lambda: C.ones(2, dtype=C.bfloat16),
        lambda: C.tensor([True, False]),
        lambda: C.tensor([1.0, 2.0], requires_grad=True),
    ],
)
def test_pickle_and_deepcopy(make):
    t = make()
    for back in (pickle.loads(pickle.dumps(t)), copy.deepcopy(t)):
        assert back.dtype is t.dtype and back.shape == t.shape and back.device == t.device
        assert back.requires_grad == t.requires_grad and back.is_leaf
        np.testing.assert_array_equal(to_np(back.detach()), to_np(t.detach()))
        if t.numel():
            assert back.data_ptr() != t.data_ptr()


def test_pickle_keeps_strides_and_attributes():
    t = C.arange(6.0).reshape(2, 3).t()
    assert pickle.loads(pickle.dumps(t)).stride() == t.stride()
    x = C.arange(3.0)
    x.foo = 3
    assert copy.deepcopy(x).foo == 3
    assert pickle.loads(pickle.dumps(C.Size([2, 3]))) == C.Size([2, 3])


def test_shallow_copy_shares_storage():
    x = C.arange(6.0)
    c = copy.copy(x)
    assert c is not x and c.data_ptr() == x.data_ptr()
    c[0] = 5
    assert x[0].item() == 5


# ---- metadata ----


def test_metadata_queries(device):
    x = C.zeros(2, 3, dtype=C.int64, device=device)
    assert x.dim() == x.ndim == 2
    assert x.numel() == x.nelement() == 6
    assert x.size() == (2, 3) and isinstance(x.size(), C.Size)
    assert x.size(1) == 3 and x.size(-1) == 3
    assert x.shape[0] == 2
    assert x.element_size() == 8 and x.itemsize == 8 and x.nbytes == 48
    assert x.is_contiguous() and x.data_ptr() > 0
    assert x.type() == ("cudalite.cuda.LongTensor" if device == "cuda" else "cudalite.LongTensor")
    assert x.is_floating_point() is False
    with err(IndexError, "Dimension out of range (expected to be in range of [-2, 1], but got 2)"):
        x.size(2)


def test_size_type():
    s = C.Size([2, 3])
    assert repr(s) == str(s) == "cudalite.Size([2, 3])"
    assert repr(C.Size([])) == "cudalite.Size([])"
    assert s == (2, 3) and isinstance(s, tuple)
    assert s.numel() == 6 and C.Size([]).numel() == 1
    assert isinstance(s[1:], C.Size) and s[1:] == (3,)
    assert isinstance(s + (4,), C.Size) and s + (4,) == (2, 3, 4)
    assert isinstance((1,) + s, C.Size) and (1,) + s == (1, 2, 3)


# ---- autograd slots ----


def test_requires_grad_slots():
    x = C.tensor([[1, 2]])
    assert x.requires_grad is False and x.is_leaf and x.grad is None and x.grad_fn is None
    with err(RuntimeError, "only Tensors of floating point dtype can require gradients"):
        x.requires_grad_()
    with err(
        RuntimeError, "only Tensors of floating point and complex dtype can require gradients"
    ):
        x.requires_grad = True
    f = C.tensor([1.0])
    assert f.requires_grad_() is f and f.requires_grad
    assert repr(f) == "tensor([1.], requires_grad=True)"
    assert f.requires_grad_(False).requires_grad is False
    f.requires_grad = True
    assert f.requires_grad


def test_detach():
    y = C.tensor([1.0, 2.0], requires_grad=True)
    d = y.detach()
    assert d.requires_grad is False and d.is_leaf
    assert d.data_ptr() == y.data_ptr()
    d[0] = 5  # detach shares storage
    assert y[0].item() == 5
    assert C.detach(y).requires_grad is False
    assert y.data.requires_grad is False and y.data.data_ptr() == y.data_ptr()
    assert y.is_leaf
    assert y.detach_() is y and y.requires_grad is False


def test_data_setter():
    y = C.tensor([1.0, 2.0])
    y.data = C.tensor([3.0, 4.0, 5.0])
    assert y.tolist() == [3.0, 4.0, 5.0]
    with err(TypeError, "Variable data has to be a tensor, but got int"):
        y.data = 5
    with err(TypeError, "copy_(): argument 'other' (position 1) must be Tensor, not list"):
        y.copy_([1])


# ---- casts ----


@pytest.mark.parametrize(
    "method, name",
    [("float", "float32"), ("double", "float64"), ("half", "float16"), ("long", "int64"),
     ("int", "int32"), ("short", "int16"), ("char", "int8"), ("byte", "uint8"), ("bool", "bool")],
)  # fmt: skip
def test_cast_methods_vs_numpy(method, name, device):
    a = np.array([1.7, -2.2, 0.0, 100.5])
    if name == "uint8":
        a = np.abs(a)
    t = C.tensor(a, dtype=C.float64, device=device)
    r = getattr(t, method)()
    assert r.dtype is getattr(C, name)
    np.testing.assert_array_equal(to_np(r), a.astype(name))
    np.testing.assert_array_equal(to_np(t.to(getattr(C, name))), a.astype(name))
    np.testing.assert_array_equal(to_np(t.type(getattr(C, name))), a.astype(name))


def test_to_returns_self_or_copies(device):
    x = C.tensor([1.5, 2.5], device=device)
    assert x.float() is x and x.to(C.float32) is x and x.to(device) is x
    c = x.to(C.float32, copy=True)
    assert c is not x and c.data_ptr() != x.data_ptr()
    assert x.to(C.zeros(1, dtype=C.int8)).dtype is C.int8
    assert x.to(dtype=C.float16).dtype is C.float16
    assert x.to(device, C.float64).dtype is C.float64
    assert x.bfloat16().float().tolist() == [1.5, 2.5]
    assert x.cpu().device.type == "cpu"


def test_attributes_read_in_c(device):
    # Note [Tensor attributes in C]: plain getters, the same objects as before.
    x = C.zeros(2, 3, dtype=C.float64, device=device)
    assert (
        type(x.shape) is C.Size and x.shape == (2, 3) and repr(x.shape) == "cudalite.Size([2, 3])"
    )
    assert x.shape[1:] == C.Size([3]) and type(x.shape[1:]) is C.Size
    assert pickle.loads(pickle.dumps(x.shape)) == x.shape
    assert x.dtype is C.float64 and x.ndim == 2 and x.is_cuda == (device == "cuda")
    assert x.device == C.device(device, 0) if device == "cuda" else x.device == C.device("cpu")
    assert x.device is x.device  # cached, immutable
    assert str(C.zeros(1).device) == "cpu" and len(x) == 2
    C.empty(1, 2, 3, device=device, dtype=C.float64, out=x)  # metadata changed in place
    assert x.shape == (1, 2, 3) and x.ndim == 3 and len(x) == 1
    with pytest.raises(AttributeError):
        x.shape = (6,)
    with pytest.raises(TypeError, match="doesn't apply to a 'object' object"):
        C.Tensor.shape.__get__(object())
