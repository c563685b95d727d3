"""The *_like and new_* factories: dtype and device of the model tensor, keywords, errors,
and new_tensor's copy of a tensor (with torch's warning). CPU and CUDA."""

from __future__ import annotations

import re

import numpy as np
import pytest

import cudalite
from conftest import to_np

C = cudalite


_COPY_WARNING = (
    "To copy construct from a tensor, it is recommended to use sourceTensor.detach().clone() "
    "or sourceTensor.detach().clone().requires_grad_(True), rather than "
    "tensor.new_tensor(sourceTensor)."
)


def test_like_factories(device):
    x = C.tensor([[1, 2], [3, 4]], dtype=C.int16, device=device)
    for t, fill in [(C.zeros_like(x), 0), (C.ones_like(x), 1), (C.full_like(x, 7), 7),
                    (C.full_like(x, 2.5), int(np.int16(2.5)))]:  # fmt: skip
        assert t.dtype is C.int16 and t.shape == (2, 2) and t.device == x.device
        np.testing.assert_array_equal(to_np(t), np.full((2, 2), fill, dtype=np.int16))
    assert C.empty_like(x).shape == (2, 2) and C.empty_like(x).dtype is C.int16
    assert C.ones_like(x, dtype=C.float32).dtype is C.float32
    f = x.float()
    r = C.rand_like(f)
    assert r.shape == (2, 2) and r.dtype is C.float32
    assert C.randn_like(f).shape == (2, 2)
    assert C.randint_like(x, 10).dtype is C.int16


def test_rand_like_integer_errors():
    x = C.tensor([1, 2], dtype=C.int16)
    with pytest.raises(
        NotImplementedError, match="^\"check_uniform_bounds\" not implemented for 'Short'$"
    ):
        C.rand_like(x)
    with pytest.raises(
        NotImplementedError, match="^\"normal_kernel_cpu\" not implemented for 'Short'$"
    ):
        C.randn_like(x)


def test_new_factories(device):
    x = C.tensor([[1, 2], [3, 4]], dtype=C.int16, device=device)
    assert x.new_zeros(3).dtype is C.int16 and x.new_zeros(3).tolist() == [0, 0, 0]
    assert x.new_zeros((2, 3)).shape == (2, 3)
    assert x.new_ones(2, dtype=C.float64).dtype is C.float64
    assert x.new_full((2,), 5).tolist() == [5, 5]
    assert x.new_full((2,), 5.5).tolist() == [int(np.int16(5.5))] * 2
    assert x.new_empty(2).dtype is C.int16
    assert x.new_tensor([1.5, 2]).dtype is C.int16
    assert x.new_tensor([1.5, 2], dtype=C.float32).tolist() == [1.5, 2.0]
    for t in (x.new_zeros(2), x.new_ones(2), x.new_full((2,), 1), x.new_tensor([1])):
        assert t.device == x.device
    assert x.new_zeros(size=(2, 3)).shape == x.new_empty(size=[2, 3]).shape == (2, 3)
    assert x.new_ones(size=(2,)).tolist() == [1, 1]
    assert x.new_full(size=(2,), fill_value=4).tolist() == [4, 4]
    with pytest.raises(TypeError, match="^new_ones\\(\\) got multiple values for argument 'size'$"):
        x.new_ones(2, size=(2,))
    with pytest.raises(TypeError, match='missing 1 required positional arguments: "fill_value"$'):
        x.new_full((2,))


_COPY_WARNING = (
    "To copy construct from a tensor, it is recommended to use sourceTensor.detach().clone() "
    "or sourceTensor.detach().clone().requires_grad_(True), rather than "
    "tensor.new_tensor(sourceTensor)."
)


def test_new_tensor_from_a_tensor(device):
    x = C.zeros(2, dtype=C.int16, device=device)
    with pytest.warns(UserWarning, match=f"^{re.escape(_COPY_WARNING)}$"):
        assert x.new_tensor(C.tensor([9, 8])).dtype is C.int16
    src = C.ones(2, requires_grad=True, device=device)
    with pytest.warns(UserWarning):
        t = src.new_tensor(src, requires_grad=True)
    assert t.requires_grad and t.is_leaf and t.grad_fn is None
    with pytest.warns(UserWarning):
        assert not src.new_tensor(src).requires_grad
    msg = "^Only Tensors of floating point and complex dtype can require gradients$"
    with pytest.warns(UserWarning), pytest.raises(RuntimeError, match=msg):
        x.new_tensor(x, requires_grad=True)
