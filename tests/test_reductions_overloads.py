"""Which overload a reduction call picks, as torch's argument parser decides: keepdim and out=
without dim, dim=None, and max/min's elementwise form with ``other=`` (messages checked
against torch 2.11)."""

from __future__ import annotations

import re

import numpy as np
import pytest

import cudalite as C
from conftest import to_np

BAD = "received an invalid combination of arguments - got "


def bad(name, got):
    return re.escape(f"{name}() {BAD}({got}), but expected one of:")


@pytest.fixture(params=[False, True], ids=["plain", "requires_grad"])
def x(request, device):
    t = C.arange(6.0, device=device).reshape(2, 3)
    return t.requires_grad_() if request.param else t


@pytest.mark.parametrize("name", ["sum", "mean", "prod", "max", "min"])
@pytest.mark.parametrize("keepdim", [True, False])
def test_keepdim_without_dim(name, keepdim, x):
    with pytest.raises(TypeError, match=bad(name, "Tensor, keepdim=bool")):
        getattr(C, name)(x, keepdim=keepdim)
    with pytest.raises(TypeError, match=bad(name, "keepdim=bool, ")):
        getattr(x, name)(keepdim=keepdim)


def test_keepdim_without_dim_other_keywords(x):
    with pytest.raises(TypeError, match=bad("sum", "Tensor, dtype=cudalite.dtype, keepdim=bool")):
        C.sum(x, keepdim=True, dtype=C.float64)
    with pytest.raises(TypeError, match=bad("sum", "dtype=cudalite.dtype, keepdim=bool, ")):
        x.sum(keepdim=True, dtype=C.float64)
    with pytest.raises(TypeError, match=bad("sum", "Tensor, keepdim=int")):
        C.sum(x, keepdim=1)
    with pytest.raises(TypeError, match=bad("mean", "Tensor, out=Tensor, keepdim=bool")):
        C.mean(x.detach(), keepdim=True, out=C.empty(()))


@pytest.mark.parametrize("name", ["sum", "prod"])
def test_out_without_dim(name, device):
    x = C.ones(2, 3, device=device)
    with pytest.raises(TypeError, match=bad(name, "Tensor, out=Tensor")):
        getattr(C, name)(x, out=C.empty((), device=device))


def test_mean_out_without_dim(device):
    x = C.arange(6.0, device=device)
    out = C.empty((), device=device)
    assert C.mean(x, out=out) is out and out.item() == 2.5


@pytest.mark.parametrize("name", ["nansum", "nanmean", "std", "var", "amax", "amin", "argmax"])
def test_keepdim_without_dim_accepted(name, device):
    x = C.arange(6.0, device=device).reshape(2, 3)
    r = getattr(x, name)(keepdim=True)
    assert r.shape == (1, 1)
    assert getattr(C, name)(x, keepdim=True).shape == (1, 1)
    assert x.all(keepdim=True).shape == (1, 1) and x.norm(keepdim=True).shape == (1, 1)


@pytest.mark.parametrize("name", ["sum", "mean"])
def test_dim_none_with_keepdim(name, x):
    for r in (getattr(x, name)(None, True), getattr(C, name)(x, dim=None, keepdim=True)):
        assert r.shape == (1, 1)
        assert r.item() == (15.0 if name == "sum" else 2.5)
    if x.requires_grad:  # torch records the dim form
        assert type(x.sum(None, True).grad_fn).__name__ == "SumBackward1"
        assert type(x.sum().grad_fn).__name__ == "SumBackward0"
        x.sum(None, True).backward()
        assert to_np(x.grad).tolist() == [[1.0] * 3] * 2


@pytest.mark.parametrize("name", ["prod", "max", "min"])
def test_dim_none_is_a_name(name, x):
    msg = "Please look up dimensions by name, got: name = None."
    with pytest.raises(RuntimeError, match=re.escape(msg)):
        getattr(x, name)(None)
    with pytest.raises(RuntimeError, match=re.escape(msg)):
        getattr(C, name)(x, dim=None, keepdim=True)


@pytest.mark.parametrize("is_max", [True, False])
def test_max_min_other_keyword(is_max, x):
    name = "max" if is_max else "min"
    b = C.full((2, 3), 2.5, device=x.device)
    want = np.maximum if is_max else np.minimum
    ref = want(np.arange(6.0).reshape(2, 3), 2.5)
    for r in (getattr(C, name)(x, other=b), getattr(x, name)(other=b), getattr(C, name)(x, b)):
        np.testing.assert_array_equal(to_np(r.detach()), ref)
    if x.requires_grad:
        getattr(x, name)(other=b).sum().backward()
        np.testing.assert_array_equal(to_np(x.grad), (ref == np.arange(6.0).reshape(2, 3)) * 1.0)
    out = C.empty((2, 3), device=x.device)
    if not x.requires_grad:
        assert getattr(C, name)(x, other=b, out=out) is out
        np.testing.assert_array_equal(to_np(out), ref)


@pytest.mark.parametrize(
    ("call", "got"),
    [
        (lambda x, b: C.max(x, other=b, keepdim=True), "Tensor, keepdim=bool, other=Tensor"),
        (lambda x, b: C.max(x, 0, other=b), "Tensor, int, other=Tensor"),
        (lambda x, b: C.max(x, other=1.0), "Tensor, other=float"),
        (lambda x, b: C.max(x, other=None), "Tensor, other=NoneType"),
        (lambda x, b: C.max(x, other=b, out=(b, b)), "Tensor, out=tuple, other=Tensor"),
        (lambda x, b: C.max(x, b, keepdim=True), "Tensor, Tensor, keepdim=bool"),
        (lambda x, b: C.max(x, 0, out=b), "Tensor, int, out=Tensor"),
        (lambda x, b: C.max(x, out=(b, b)), "Tensor, out=tuple"),
        (lambda x, b: x.max(other=1.0), "other=float, "),
        (lambda x, b: x.max(0, other=b), "int, other=Tensor"),
        (lambda x, b: x.max(other=b, keepdim=True), "keepdim=bool, other=Tensor, "),
        (lambda x, b: x.max(b, keepdim=True), "Tensor, keepdim=bool"),
    ],
)
def test_max_bad_combinations(call, got, x):
    b = C.ones(2, 3, device=x.device)
    with pytest.raises(TypeError, match=bad("max", got)):
        call(x, b)


def test_max_out_tuple_length(device):
    x = C.ones(2, 3, device=device)
    with pytest.raises(TypeError, match="expected tuple of 2 elements but got 1"):
        C.max(x, 0, out=(C.empty(0, device=device),))


def _err(exc, msg):
    return pytest.raises(exc, match="^" + re.escape(msg) + "$")


def test_python_types_as_dtypes(device):
    """dtype=float / int / bool, as torch reads them (float64, int64, bool)."""
    x = C.ones(2, device=device)
    assert x.mean(dtype=float).dtype == C.float64
    assert x.norm(dtype=float).dtype == C.float64
    assert x.sum(dtype=int).dtype == C.int64
    with _err(
        RuntimeError,
        "mean(): could not infer output dtype. Optional dtype must be either a floating point "
        "or complex dtype. Got: Long",
    ):
        x.mean(dtype=int)
    with _err(
        RuntimeError, "linalg.vector_norm: dtype should be floating point or complex, but got Long"
    ):
        x.norm(dtype=int)
