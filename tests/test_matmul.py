"""Matrix products against NumPy, and the errors of each of torch's matmul paths."""

from __future__ import annotations

import re

import numpy as np
import pytest

import cudalite as C
from conftest import to_np


def rand(shape, dtype=np.float32, seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype(dtype)


def check(got, want, rtol=1e-5):
    assert tuple(got.shape) == want.shape
    np.testing.assert_allclose(to_np(got), want, rtol=rtol, atol=rtol)


SHAPES = [
    ((3,), (3,)),
    ((2, 3), (3,)),
    ((3,), (3, 4)),
    ((2, 3), (3, 4)),
    ((5, 2, 3), (3, 4)),
    ((5, 2, 3), (3,)),
    ((3,), (5, 3, 4)),
    ((2, 3), (5, 3, 4)),
    ((5, 2, 3), (5, 3, 4)),
    ((5, 1, 2, 3), (4, 3, 2)),
    ((1, 2, 3), (6, 3, 1)),
    ((0, 3), (3, 2)),
    ((2, 0), (0, 2)),
    ((4, 0, 3), (3, 5)),
]


@pytest.mark.parametrize("sa, sb", SHAPES)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_matmul_vs_numpy(sa, sb, dtype, device):
    a, b = rand(sa, dtype, 1), rand(sb, dtype, 2)
    ta, tb = C.tensor(a, device=device), C.tensor(b, device=device)
    rtol = 1e-5 if dtype == np.float32 else 1e-12 if device == "cpu" else 1e-10
    want = np.matmul(a, b)
    check(C.matmul(ta, tb), want, rtol)
    check(ta @ tb, want, rtol)
    check(ta.matmul(tb), want, rtol)


@pytest.mark.parametrize("dtype", ["int64", "int32", "int8", "uint8", "float16", "bfloat16"])
def test_matmul_other_dtypes(dtype):
    rng = np.random.default_rng(3)
    a, b = rng.integers(0, 4, (3, 4)), rng.integers(0, 4, (4, 2))
    ta = C.tensor(a, dtype=getattr(C, dtype))
    tb = C.tensor(b, dtype=getattr(C, dtype))
    r = ta @ tb
    assert r.dtype is getattr(C, dtype)
    np.testing.assert_array_equal(to_np(r), a @ b)


def test_non_contiguous_operands():
    a, b = rand((4, 3)), rand((5, 4))
    ta, tb = C.tensor(a), C.tensor(b)
    check(ta.t() @ tb.t(), a.T @ b.T)
    check(C.mm(ta[::2].t(), tb[:2]), a[::2].T @ b[:2])
    check(C.mv(ta.t(), tb[0]), a.T @ b[0])
    check(C.dot(ta[:, 0], tb[1:, 0]), np.dot(a[:, 0], b[1:, 0]))


def test_mm_mv_dot_bmm():
    a, b, v = rand((2, 3)), rand((3, 4)), rand((3,))
    check(C.mm(C.tensor(a), C.tensor(b)), a @ b)
    check(C.tensor(a).mm(C.tensor(b)), a @ b)
    check(C.mv(C.tensor(a), C.tensor(v)), a @ v)
    check(C.tensor(a).mv(C.tensor(v)), a @ v)
    check(C.dot(C.tensor(v), C.tensor(v)), np.dot(v, v))
    check(C.tensor(v).dot(C.tensor(v)), np.dot(v, v))
    x, y = rand((4, 2, 3)), rand((4, 3, 5))
    check(C.bmm(C.tensor(x), C.tensor(y)), x @ y)
    check(C.tensor(x).bmm(C.tensor(y)), x @ y)


@pytest.mark.parametrize("beta, alpha", [(1, 1), (0.5, 2), (0, 1), (2, 0)])
@pytest.mark.parametrize("bias_shape", [(2, 4), (4,), (1, 4), (2, 1), ()])
def test_addmm(beta, alpha, bias_shape):
    m, a, b = rand(bias_shape, seed=4), rand((2, 3), seed=5), rand((3, 4), seed=6)
    want = beta * m + alpha * (a @ b) if beta else alpha * (a @ b)
    got = C.addmm(C.tensor(m), C.tensor(a), C.tensor(b), beta=beta, alpha=alpha)
    check(got, np.broadcast_to(want, (2, 4)))
    got = C.tensor(m).addmm(C.tensor(a), C.tensor(b), beta=beta, alpha=alpha)
    check(got, np.broadcast_to(want, (2, 4)))


def test_addmm_ignores_input_when_beta_is_zero():
    m = C.full((2, 2), float("nan"))
    r = C.addmm(m, C.eye(2), C.eye(2), beta=0)
    np.testing.assert_array_equal(to_np(r), np.eye(2))


def test_addmm_integer_alpha_is_truncated():
    # torch converts alpha to the integer dtype: 0.5 -> 0.
    i = C.int32
    r = C.addmm(C.ones(2, 2, dtype=i), C.ones(2, 3, dtype=i), C.ones(3, 2, dtype=i), alpha=0.5)
    assert r.dtype is C.int32 and r.tolist() == np.ones((2, 2), np.int32).tolist()


def test_out_argument():
    a, b = rand((2, 3)), rand((3, 4))
    o = C.empty(0)
    assert C.mm(C.tensor(a), C.tensor(b), out=o) is o
    check(o, a @ b)
    o = C.empty(0)
    assert C.matmul(C.tensor(a), C.tensor(b), out=o) is o
    check(o, a @ b)
    o = C.empty(2, 4)
    C.addmm(C.ones(2, 4), C.tensor(a), C.tensor(b), out=o)
    check(o, 1 + a @ b)
    msg = "An output with one or more elements was resized since it had shape [3]"
    with pytest.warns(UserWarning, match=re.escape(msg)):
        C.mm(C.tensor(a), C.tensor(b), out=C.empty(3))


def err(msg, exc=RuntimeError):
    return pytest.raises(exc, match=f"^{re.escape(msg)}$")


F = C.ones


def test_shape_errors():
    a, v = F(2, 3), F(3)
    with err("mat1 and mat2 shapes cannot be multiplied (2x3 and 2x3)"):
        C.mm(a, a)
    with err("mat1 and mat2 shapes cannot be multiplied (2x3 and 2x4)"):
        a @ F(2, 4)
    with err("mat1 and mat2 shapes cannot be multiplied (1x3 and 4x2)"):
        v @ F(4, 2)
    with err("size mismatch, got input (2), mat (2x3), vec (2)"):
        C.mv(a, F(2))
    with err("size mismatch, got input (2), mat (2x4), vec (3)"):
        F(2, 4) @ v
    with err("size mismatch, got input (8), mat (8x4), vec (3)"):
        F(2, 4, 4) @ v
    msg = (
        "inconsistent tensor size, expected tensor [3] and src [4] to have the same number of "
        "elements, but got 3 and 4 elements respectively"
    )
    with err(msg):
        C.dot(v, F(4))
    with err(msg):
        C.matmul(v, F(4))
    batch2 = "Expected size for first two dimensions of batch2 tensor to be: [2, 3] but got: {}."
    with err(batch2.format("[2, 4]")):
        F(2, 5, 3) @ F(2, 4, 4)
    with err(batch2.format("[2, 4]")):
        v @ F(2, 4, 4)
    with err(batch2.format("[3, 3]")):
        C.bmm(F(2, 2, 3), F(3, 3, 4))
    msg = (
        "The size of tensor a (2) must match the size of tensor b (3) at non-singleton dimension 0"
    )
    with err(msg):
        C.matmul(F(2, 2, 3), F(3, 3, 4))
    with err("mat1 and mat2 shapes cannot be multiplied (2x3 and 2x3)"):
        C.addmm(F(2, 4), a, a)
    msg = (
        "The expanded size of the tensor (2) must match the existing size (3) at non-singleton "
        "dimension 0.  Target sizes: [2, 4].  Tensor sizes: [3, 4]"
    )
    with err(msg):
        C.addmm(F(3, 4), a, F(3, 4))


def test_rank_errors():
    a, v = F(2, 3), F(3)
    with err("self must be a matrix"):
        C.mm(v, a)
    with err("mat2 must be a matrix"):
        C.mm(a, v)
    with err("vector + matrix @ vector expected, got 1, 1, 1"):
        C.mv(v, v)
    with err("vector + matrix @ vector expected, got 1, 2, 2"):
        C.mv(a, F(3, 1))
    with err("1D tensors expected, but got 1D and 2D tensors"):
        C.dot(v, a)
    with err("1D tensors expected, but got 1D and 0D tensors"):
        C.dot(v, C.tensor(1.0))
    with err("batch1 must be a 3D tensor"):
        C.bmm(a, F(2, 3, 4))
    with err("batch2 must be a 3D tensor"):
        C.bmm(F(2, 2, 3), a)
    with err("both arguments to matmul need to be at least 1D, but they are 0D and 1D"):
        C.matmul(C.tensor(1.0), v)
    with err("mat1 must be a matrix, got 1-D tensor"):
        C.addmm(F(2, 4), v, F(3, 4))
    with err("unsupported operand type(s) for @: 'Tensor' and 'int'", TypeError):
        a @ 2


def test_dtype_errors():
    a, b, v = F(2, 3), F(3, 4), F(3)
    d = C.float64
    with err("expected m1 and m2 to have the same dtype, but got: float != double"):
        C.mm(a, b.to(d))
    with err("expected m1 and m2 to have the same dtype, but got: float != double"):
        a @ b.to(d)
    with err("expected m1 and m2 to have the same dtype, but got: double != float"):
        v.to(d) @ b
    with err("expected m1 and m2 to have the same dtype, but got: float != double"):
        F(5, 2, 3) @ b.to(d)
    with err("expected scalar type Float but found Double"):
        C.mv(a, v.to(d))
    with err("expected scalar type Double but found Float"):
        C.mv(a.to(d), v)
    with err("expected scalar type Float but found Double"):
        a @ F(5, 3, 4, dtype=d)
    with err("expected scalar type Float but found Double"):
        F(5, 2, 3) @ v.to(d)
    with err("dot : expected both vectors to have same dtype, but found Int and Float"):
        C.dot(v.int(), v)
    with err("mat1 and mat2 must have the same dtype, but got Double and Float"):
        C.addmm(F(2, 4), a.to(d), b)
    with err("self and mat2 must have the same dtype, but got Double and Float"):
        C.addmm(F(2, 4, dtype=d), a, b)
    with err("self and mat2 must have the same dtype, but got Float and Double"):
        C.addmm(F(2, 4), a.to(d), b.to(d))


def test_bool_not_implemented():
    b = C.bool
    for call, kernel in [
        (lambda: F(2, 3, dtype=b) @ F(3, 2, dtype=b), "addmm_impl_cpu_"),
        (lambda: F(3, dtype=b) @ F(3, 4, dtype=b), "addmm_impl_cpu_"),
        (lambda: F(2, 3, dtype=b) @ F(3, dtype=b), "addmv_impl_cpu"),
        (lambda: C.dot(F(2, dtype=b), F(2, dtype=b)), "dot"),
        (lambda: F(2, 2, 3, dtype=b) @ F(2, 3, 4, dtype=b), "bmm"),
    ]:
        with err(f"\"{kernel}\" not implemented for 'Bool'", NotImplementedError):
            call()
