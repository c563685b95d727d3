"""The legacy constructors (cudalite.FloatTensor & co., Tensor(...)) against torch's behaviour
and messages (PyTorch 2.11)."""

from __future__ import annotations

import re

import numpy as np
import pytest

import cudalite
from conftest import to_np

C = cudalite


def test_legacy_tensor_constructor():
    assert C.Tensor().shape == (0,)
    assert C.Tensor().dtype is C.float32
    assert C.Tensor(2, 3).shape == (2, 3)
    assert C.Tensor(C.Size([2, 3])).shape == (2, 3)
    assert C.Tensor((2, 3)).tolist() == [2.0, 3.0]
    t = C.Tensor([True, False])
    assert t.dtype is C.float32 and t.tolist() == [1.0, 0.0]
    np.testing.assert_array_equal(to_np(C.Tensor(np.array([1, 2]))), np.array([1.0, 2.0]))
    # Tensor(t) aliases any tensor, whatever its dtype.
    src = C.tensor([1, 2])
    alias = C.Tensor(src)
    assert alias.dtype is C.int64
    alias[0] = 7
    assert src[0].item() == 7


@pytest.mark.parametrize(
    "name, dtype",
    [
        ("FloatTensor", "float32"), ("DoubleTensor", "float64"), ("HalfTensor", "float16"),
        ("BFloat16Tensor", "bfloat16"), ("ByteTensor", "uint8"), ("CharTensor", "int8"),
        ("ShortTensor", "int16"), ("IntTensor", "int32"), ("LongTensor", "int64"),
        ("BoolTensor", "bool"),
    ],
)  # fmt: skip
def test_typed_constructors(name, dtype):
    cls = getattr(C, name)
    dt = getattr(C, dtype)
    t = cls([1, 0])
    assert t.dtype is dt
    assert isinstance(t, cls)
    assert isinstance(t, C.Tensor)
    assert t.type() == f"cudalite.{name}"
    assert cls(3).shape == (3,) and cls(3).dtype is dt
    assert cls().shape == (0,)
    others = [n for n in ("FloatTensor", "LongTensor", "BoolTensor") if n != name]
    assert not any(isinstance(t, getattr(C, o)) for o in others)
    assert repr(cls) == f"<class 'cudalite.{name}'>"


def test_typed_constructor_values():
    assert C.LongTensor([1.5, 2]).tolist() == [1, 2]
    assert C.BoolTensor([1, 0]).tolist() == [True, False]
    t = C.FloatTensor([1.0])
    assert C.FloatTensor(t).data_ptr() == t.data_ptr()


def test_legacy_constructor_errors():
    with pytest.raises(TypeError, match=r"^expected TensorOptions\(dtype=float, device=cpu, "):
        C.FloatTensor(C.tensor([1]))
    with pytest.raises(TypeError, match=r"\(got TensorOptions\(dtype=c10::Half, device=cpu, "):
        C.FloatTensor(C.tensor([1], dtype=C.float16))
    msg = (
        "new(): argument 'size' failed to unpack the object at pos 2 with error "
        '"type must be tuple of ints,but got float"'
    )
    with pytest.raises(TypeError, match=f"^{re.escape(msg)}$"):
        C.Tensor(2, 3.5)
    with pytest.raises(TypeError, match=re.escape("new(): data must be a sequence (got float)")):
        C.Tensor(2.5)
    with pytest.raises(TypeError, match=re.escape("new(): data must be a sequence (got bool)")):
        C.Tensor(True)
    with pytest.raises(RuntimeError, match=re.escape("negative dimension -1: [-1]")):
        C.Tensor(-1)
    msg = "legacy constructor expects device type: cpu but device type: cuda was passed"
    with pytest.raises(RuntimeError, match=f"^{msg}$"):
        C.FloatTensor(2, device="cuda")
    with pytest.raises(ValueError, match=r"^expected sequence of length 2 at dim 1 \(got 1\)$"):
        C.Tensor([[1, 2], [3]])


def test_type_conversions():
    x = C.tensor([1.5, 2.5])
    assert x.type() == "cudalite.FloatTensor"
    assert x.type(C.IntTensor).dtype is C.int32
    assert x.type("cudalite.DoubleTensor").dtype is C.float64
    assert x.type(C.float16).dtype is C.float16
    with pytest.raises(ValueError, match="^invalid type: 'cudalite.Foo'$"):
        x.type("cudalite.Foo")
