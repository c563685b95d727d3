"""einsum against NumPy's: explicit and implicit outputs, ellipsis (broadcast), repeated
subscripts, the operand-list and sublist forms, empty and 0-d operands; torch's errors;
gradients through the composition."""

from __future__ import annotations

import numpy as np
import pytest

import cudalite as C
from conftest import to_np

CASES = [
    ("ij,jk->ik", [(2, 3), (3, 4)]),
    ("ij,jk", [(2, 3), (3, 4)]),
    ("bij,bjk->bik", [(2, 3, 4), (2, 4, 5)]),
    ("bhqd,bhkd->bhqk", [(2, 3, 4, 5), (2, 3, 6, 5)]),
    ("ii->i", [(3, 3)]),
    ("ii", [(3, 3)]),
    ("iij->j", [(3, 3, 2)]),
    ("ijj->ij", [(2, 3, 3)]),
    ("i,i", [(3,), (3,)]),
    ("i,j->ij", [(3,), (4,)]),
    ("ij->ji", [(2, 3)]),
    ("ij->", [(2, 3)]),
    ("...ij,...jk", [(5, 2, 3), (3, 4)]),
    ("...i,...i->...", [(2, 1, 3), (4, 3)]),
    ("...i->i", [(2, 5, 3)], "abi->i"),  # NumPy sums no ellipsis dims
    ("i...->...", [(2, 5, 3)]),
    ("ijk,ikl,lm->jm", [(2, 3, 4), (2, 4, 5), (5, 6)]),
    ("ab,ab,ab->a", [(2, 3), (2, 3), (2, 3)]),
    ("Ab,bA", [(2, 3), (3, 2)]),
    ("ij,kl->", [(2, 3), (4, 5)]),
    ("ij,ij->j", [(0, 3), (0, 3)]),
    ("ij,jk->ik", [(2, 0), (0, 4)]),
    (",->", [(), ()]),
    ("i,->i", [(3,), ()]),
]


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_matches_numpy(device, case):
    eq, shapes, np_eq = (*case, case[0])[:3]
    rng = np.random.default_rng(0)
    arrs = [rng.standard_normal(s) for s in shapes]
    got = C.einsum(eq, *[C.tensor(a, device=device) for a in arrs])
    want = np.einsum(np_eq, *arrs)
    assert got.shape == want.shape and got.dtype == C.float64
    np.testing.assert_allclose(to_np(got), want, rtol=1e-12, atol=1e-12)


def test_forms_and_dtypes(device):
    # integer einsum: the CPU's (torch has no integer matmul kernel on CUDA either)
    dt = C.int64 if device == "cpu" else C.float64
    a = C.arange(6, device=device, dtype=dt).reshape(2, 3)
    b = C.arange(12, device=device, dtype=dt).reshape(3, 4)
    want = to_np(a) @ to_np(b)
    for r in (
        C.einsum("ij,jk->ik", a, b),
        C.einsum("ij,jk->ik", [a, b]),
        C.einsum("ij,jk->ik", (a, b)),
        C.einsum(" i j , j k -> i k ", a, b),
        C.einsum(a, [0, 1], b, [1, 2], [0, 2]),
        C.einsum(a, [0, 1], b, [1, 2]),
        C.einsum(a, [Ellipsis, 1], b, [1, 2], [Ellipsis, 2]),
    ):
        assert r.dtype == dt
        np.testing.assert_array_equal(to_np(r), want)
    h = C.einsum("ij,jk", a.half(), b.half())
    assert h.dtype == C.float16
    np.testing.assert_allclose(to_np(h), want)
    # broadcasting size-1 subscripts
    r = C.einsum("i,i", C.ones(3, device=device), C.full((1,), 2.0, device=device))
    assert r.item() == 6.0
    r = C.einsum("bij,bjk->bik", C.ones(2, 3, 4, device=device), C.ones(1, 4, 5, device=device))
    assert r.shape == (2, 3, 5) and r.sum().item() == 2 * 3 * 5 * 4
    # ellipsis in the output with no ellipsis dims
    assert C.einsum("ij,jk->...ik", a, b).shape == (2, 4)
    x = C.einsum("->", C.tensor(3.0, device=device))
    assert x.shape == () and x.item() == 3.0


ERRORS = [
    (
        "ij,jk->ik",
        [(2, 3)],
        "einsum(): fewer operands were provided than specified in the equation",
    ),
    (
        "ij->ij",
        [(2, 3), (3, 4)],
        "einsum(): more operands were provided than specified in the equation",
    ),
    (
        "i1,jk->ik",
        [(2, 3), (3, 4)],
        "einsum(): invalid subscript given at index 1 in the equation string, subscripts must "
        "be in [a-zA-Z]",
    ),
    (
        "ij,jk->ik->",
        [(2, 3), (3, 4)],
        "einsum(): invalid subscript given at index 9 in the equation string, subscripts must "
        "be in [a-zA-Z]",
    ),
    (
        "ij,jk->il",
        [(2, 3), (3, 4)],
        "einsum(): output subscript l does not appear in the equation for any input operand",
    ),
    (
        "ij,jk->ii",
        [(2, 3), (3, 4)],
        "einsum(): output subscript i appears more than once in the output",
    ),
    (
        "ijk,jk->i",
        [(2, 3), (3, 4)],
        "einsum(): the number of subscripts in the equation (3) does not match the number of "
        "dimensions (2) for operand 0 and no ellipsis was given",
    ),
    (
        "i",
        [()],
        "einsum(): the number of subscripts in the equation (1) does not match the number of "
        "dimensions (0) for operand 0 and no ellipsis was given",
    ),
    (
        "ij,ik->i",
        [(2, 3), (3, 4)],
        "einsum(): subscript i has size 3 for operand 1 which does not broadcast with "
        "previously seen size 2",
    ),
    (
        "..ij,jk->ik",
        [(2, 3), (3, 4)],
        "einsum(): found '.' for operand 0 that is not part of any ellipsis",
    ),
    (
        "i.j,jk->ik",
        [(2, 3), (3, 4)],
        "einsum(): found '.' for operand 0 that is not part of any ellipsis",
    ),
    (
        "ij,jk->i.k",
        [(2, 3), (3, 4)],
        "einsum(): found '.' for output that is not part of any ellipsis (...)",
    ),
    (
        "ii",
        [(3, 4)],
        "einsum(): subscript i is repeated for operand 0 but the sizes don't match, 4 != 3",
    ),
]


@pytest.mark.parametrize("eq,shapes,msg", ERRORS, ids=[e[0] for e in ERRORS])
def test_errors(device, eq, shapes, msg):
    ops = [C.ones(s, device=device) for s in shapes]
    with pytest.raises(RuntimeError) as e:
        C.einsum(eq, *ops)
    assert str(e.value) == msg


def test_argument_errors(device):
    a = C.ones(2, 3, device=device)
    with pytest.raises(RuntimeError, match="^expected scalar type Float but found Double$"):
        C.einsum("ij,jk", a, C.ones(3, 4, dtype=C.float64, device=device))
    with pytest.raises(NotImplementedError, match="\"bmm\" not implemented for 'Bool'"):
        C.einsum("ij,jk", a.bool(), C.ones(3, 4, device=device).bool())
    with pytest.raises(ValueError, match="^einsum\\(\\): must specify the equation string"):
        C.einsum("ij,jk->ik")
    with pytest.raises(TypeError, match="must be str, not int"):
        C.einsum(3, a)
    with pytest.raises(
        TypeError, match="^expected Tensor as element 0 in argument 1, but got int$"
    ):
        C.einsum("ij", 3)


def test_gradients(device):
    kw = {"dtype": C.float64, "device": device, "requires_grad": True}
    x, y, z = C.randn(2, 3, **kw), C.randn(3, 4, **kw), C.randn(3, 3, **kw)
    g = C.autograd.gradcheck
    assert g(lambda a, b: C.einsum("ij,jk->ik", a, b), (x, y))
    assert g(lambda a, b: C.einsum("ij,ij,jk", a, a, b), (x, y))
    assert g(lambda a: C.einsum("ii->i", a), (z,))
    assert C.autograd.gradgradcheck(lambda a, b: C.einsum("ij,jk->ik", a, b), (x, y))
    assert g(lambda a: C.einsum("ij->", a), (x,))
    assert g(lambda a, b: C.einsum("...i,ij->...j", a, b), (C.randn(2, 2, 3, **kw), y))
