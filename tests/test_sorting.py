"""sort, argsort, msort, topk and kthvalue against a stable reference sort (Python's sorted,
ordered as torch orders: NaN above inf, -0.0 equal to 0.0, ties in input order) on every
dtype; 0-d, empty, non-contiguous and long inputs; out=; torch's errors; gradients."""

from __future__ import annotations

import math
import re

import numpy as np
import pytest

import cudalite as C
from conftest import to_np

FLOATS = [C.float32, C.float64, C.float16, C.bfloat16]
INTS = [C.uint8, C.int8, C.int16, C.int32, C.int64]
ALL = FLOATS + INTS + [C.bool]
nan, inf = math.nan, math.inf


def _key(v, descending):
    """Python sort key for one value: NaN largest; descending by negation (stable either way)."""
    if isinstance(v, float) and math.isnan(v):
        return (0, 0.0) if descending else (1, 0.0)
    return (1, -v) if descending else (0, v)


def ref_sort(a, dim, descending):
    """(values, indices) of a stable sort of NumPy array ``a`` along ``dim``."""
    if a.ndim == 0:
        return a.copy(), np.zeros((), np.int64)
    m = np.moveaxis(a, dim, -1)
    rows = m.reshape(-1, m.shape[-1]) if m.size else np.zeros((0, m.shape[-1]), a.dtype)
    idx = np.array(
        [sorted(range(len(r)), key=lambda i, r=r: _key(r[i].item(), descending)) for r in rows],
        dtype=np.int64,
    ).reshape(m.shape)
    vals = np.take_along_axis(m, idx, -1)
    return np.moveaxis(vals, -1, dim), np.moveaxis(idx, -1, dim)


def sample(dtype, shape, seed=0, ties=True):
    """Values with ties (and NaN, infinities and signed zeros for floats)."""
    rng = np.random.default_rng(seed)
    n = int(np.prod(shape))
    if dtype == C.bool:
        a = rng.integers(0, 2, n).astype(bool)
    elif dtype.is_floating_point:
        pool = [nan, inf, -inf, 0.0, -0.0, 1.5, -2.0, 3.0, 0.25] if ties else []
        a = rng.standard_normal(n) * 4
        if ties:
            a = np.where(rng.random(n) < 0.4, rng.choice(pool, n), a)
    else:
        info = np.iinfo(np.dtype(str(dtype).split(".")[1]))
        lo, hi = max(info.min, -1000), min(info.max, 1000)
        a = rng.integers(lo, hi, n) if not ties else rng.integers(lo, hi, n) % 7 + lo
        if ties:
            a[: min(2, n)] = [info.min, info.max][: min(2, n)]
    t = C.tensor(a.reshape(shape).tolist() if shape else a.reshape(()).item(), dtype=dtype)
    return t


def check(got, want_vals, want_idx):
    v, i = got
    assert i.dtype == C.int64
    assert tuple(v.shape) == want_vals.shape == tuple(i.shape)
    np.testing.assert_array_equal(to_np(i), want_idx)
    gv = to_np(v).astype(np.float64)
    np.testing.assert_array_equal(gv, want_vals.astype(np.float64))
    # signed zeros come out as they went in (values are gathered by index)
    np.testing.assert_array_equal(np.signbit(gv), np.signbit(want_vals.astype(np.float64)))


@pytest.mark.parametrize("dtype", ALL, ids=str)
@pytest.mark.parametrize("descending", [False, True])
@pytest.mark.parametrize("shape,dim", [((7,), 0), ((3, 5), -1), ((3, 5), 0), ((2, 3, 4), 1)])
def test_sort_is_stable_with_torchs_order(device, dtype, descending, shape, dim):
    t = sample(dtype, shape).to(device)
    a = to_np(t.cpu())
    if dtype == C.bfloat16:
        a = a.astype(np.float32)
    want_v, want_i = ref_sort(a, dim, descending)
    check(C.sort(t, dim=dim, descending=descending, stable=True), want_v, want_i)
    check(t.sort(dim=dim, descending=descending), want_v, want_i)
    np.testing.assert_array_equal(to_np(C.argsort(t, dim, descending)), want_i)
    got = t.argsort(dim=dim, descending=descending, stable=True)
    np.testing.assert_array_equal(to_np(got), want_i)
    r = t.sort(dim, descending)
    assert r.values.is_contiguous() and r.indices.is_contiguous()
    assert r.values.dtype == dtype and r.values.device.type == device


def test_nan_and_signed_zero_order_as_torch(device):
    x = C.tensor([nan, 1, -inf, -0.0, 0.0, nan, inf, -nan], device=device)
    r = C.sort(x, stable=True)
    # recorded from torch 2.11
    assert r.indices.tolist() == [2, 3, 4, 1, 6, 0, 5, 7]
    assert str(r.values.tolist()) == "[-inf, -0.0, 0.0, 1.0, inf, nan, nan, nan]"
    r = C.sort(x[:7], stable=True, descending=True)
    assert r.indices.tolist() == [0, 5, 6, 1, 3, 4, 2]
    assert C.topk(x[:7], 3, largest=False).indices.tolist() == [2, 3, 4]
    assert C.kthvalue(x, 6).values.isnan().item()


def np_order(a, descending):
    """NumPy's stable argsort along the last axis (NaN last, -0.0 equal to 0.0, as torch);
    descending: the ascending order of the reversed rows, reversed (ties stay in order)."""
    if not descending:
        return np.argsort(a, axis=-1, kind="stable")
    n = a.shape[-1]
    return (n - 1 - np.argsort(a[..., ::-1], axis=-1, kind="stable"))[..., ::-1]


@pytest.mark.parametrize("dtype", [C.float32, C.int64, C.float16, C.int8, C.bool], ids=str)
@pytest.mark.parametrize("rows,n", [(1, 70000), (3, 5000), (300, 9)])
def test_long_rows(device, dtype, rows, n):
    """Long rows (the radix passes; one CUDA row and segmented rows) with many ties."""
    t = sample(dtype, (rows, n), seed=rows).to(device)
    a = to_np(t.cpu())
    a = a.astype(np.float32) if dtype == C.float16 else a
    for descending in (False, True):
        order = np_order(a, descending)
        r = t.sort(-1, descending)
        np.testing.assert_array_equal(to_np(r.indices), order)
        k = min(n, 5)
        top = C.topk(t, k, largest=descending) if dtype != C.bool else None
        if top is not None:
            np.testing.assert_array_equal(to_np(top.indices), order[:, :k])


@pytest.mark.parametrize("dtype", [C.float32, C.int32], ids=str)
def test_non_contiguous_inputs(device, dtype):
    base = sample(dtype, (6, 8), ties=False).to(device)
    for t in (base.t(), base[::2, 1::3], base.unsqueeze(1).expand(6, 3, 8)):
        a = to_np(t.contiguous().cpu())
        for dim in range(-t.dim(), t.dim()):
            want_v, want_i = ref_sort(a, dim, True)
            check(t.sort(dim, True), want_v, want_i)
            kth = t.kthvalue(1, dim)
            np.testing.assert_array_equal(to_np(kth.values), np.moveaxis(a, dim, -1).min(-1))


def test_zero_dim_and_empty(device):
    x = C.tensor(3.5, device=device)
    for dim in (0, -1):
        r = C.sort(x, dim)
        assert r.values.shape == () and r.values.item() == 3.5 and r.indices.item() == 0
        assert C.topk(x, 1, dim).values.item() == 3.5 and C.topk(x, 0).values.shape == ()
        kv = C.kthvalue(x, 1, dim)
        assert kv.values.shape == () and kv.indices.item() == 0
    assert C.msort(x).shape == () and C.argsort(x).item() == 0
    e = C.ones(0, 3, device=device)
    for dim in (0, 1):
        r = e.sort(dim)
        assert r.values.shape == (0, 3) and r.indices.shape == (0, 3)
    assert C.topk(e, 0, 0).values.shape == (0, 3)
    assert C.topk(C.ones(2, 3, device=device), 0).indices.shape == (2, 0)
    assert C.kthvalue(e, 2).values.shape == (0,)


@pytest.mark.parametrize("dtype", FLOATS + INTS, ids=str)
@pytest.mark.parametrize("largest", [True, False])
def test_topk(device, dtype, largest):
    t = sample(dtype, (4, 9), seed=3, ties=False).to(device)
    a = to_np(t.cpu()).astype(np.float64)
    for dim, k in ((-1, 3), (0, 2), (1, 9), (0, 4)):
        want_v, want_i = ref_sort(a, dim, largest)
        want_v, want_i = (np.take(x, range(k), axis=dim) for x in (want_v, want_i))
        check(C.topk(t, k, dim, largest), want_v, want_i)
        r = t.topk(k, dim=dim, largest=largest, sorted=False)  # the same set
        np.testing.assert_array_equal(np.sort(to_np(r.indices), dim), np.sort(want_i, dim))
        assert type(r).__name__ == "topk"


@pytest.mark.parametrize("dtype", FLOATS + INTS, ids=str)
@pytest.mark.parametrize("keepdim", [False, True])
def test_kthvalue(device, dtype, keepdim):
    t = sample(dtype, (4, 9), seed=4, ties=False).to(device)
    a = to_np(t.cpu()).astype(np.float64)
    for dim, k in ((-1, 1), (1, 5), (0, 4), (-2, 2)):
        want_v, want_i = ref_sort(a, dim, False)
        want_v, want_i = (np.take(x, [k - 1], axis=dim) for x in (want_v, want_i))
        if not keepdim:
            want_v, want_i = want_v.squeeze(dim), want_i.squeeze(dim)
        r = C.kthvalue(t, k, dim, keepdim)
        check(r, want_v, want_i)
        check(t.kthvalue(k, dim=dim, keepdim=keepdim), want_v, want_i)
        assert type(r).__name__ == "kthvalue"


def test_msort(device):
    t = sample(C.float32, (5, 3), ties=False).to(device)
    want_v, _ = ref_sort(to_np(t.cpu()), 0, False)
    np.testing.assert_array_equal(to_np(C.msort(t)), want_v)
    np.testing.assert_array_equal(to_np(t.msort()), want_v)


def test_out_forms(device):
    x = C.tensor([[3.0, 1, 2], [0, 5, 4]], device=device)
    v, i = C.empty(0, device=device), C.empty(0, dtype=C.int64, device=device)
    r = C.sort(x, out=(v, i))
    assert type(r).__name__ == "sort_out" and r.values is v and r.indices is i
    assert v.tolist() == [[1, 2, 3], [0, 4, 5]] and i.tolist() == [[1, 2, 0], [0, 2, 1]]
    v, i = C.empty(0, device=device), C.empty(0, dtype=C.int64, device=device)
    r = C.topk(x, 2, out=(v, i))
    assert type(r).__name__ == "topk_out" and v.tolist() == [[3, 2], [5, 4]]
    v, i = C.empty(0, device=device), C.empty(0, dtype=C.int64, device=device)
    r = C.kthvalue(x, 2, out=(v, i))
    assert type(r).__name__ == "kthvalue_out" and v.tolist() == [2, 4] and i.tolist() == [2, 2]
    o = C.empty(0, dtype=C.int64, device=device)
    assert C.argsort(x, stable=True, out=o) is o and o.tolist() == [[1, 2, 0], [0, 2, 1]]
    o = C.empty(0, device=device)
    assert C.msort(x, out=o) is o and o.tolist() == [[0, 1, 2], [3, 5, 4]]


def test_out_dtype_errors(device):
    x = C.tensor([[3.0, 1, 2], [0, 5, 4]], device=device)
    i64, f32, i32 = (C.empty(0, dtype=d, device=device) for d in (C.int64, C.float32, C.int32))
    with pytest.raises(RuntimeError, match="^Expected out tensor to have dtype float, but got int"):
        C.sort(x, out=(i32, i64))
    with pytest.raises(RuntimeError, match="^Expected out tensor to have dtype long int, but got "):
        C.sort(x, out=(f32, C.empty(0, device=device)))
    with pytest.raises(RuntimeError, match="^Expected out tensor to have dtype long int, but got "):
        C.topk(x, 1, out=(f32, i32))
    with pytest.raises(RuntimeError, match="^output values must be of same type as input$"):
        C.kthvalue(x, 1, out=(i32, i64))
    with pytest.raises(RuntimeError, match="^output indices must be of scalar type Long$"):
        C.kthvalue(x, 1, out=(C.empty(0, device=device), i32))


def test_errors(device):
    x = C.ones(3, 4, device=device)
    with pytest.raises(IndexError, match=r"expected to be in range of \[-2, 1\], but got 2\)"):
        C.sort(x, 2)
    with pytest.raises(IndexError, match=r"range of \[-2, 1\], but got 3\)"):
        C.topk(x, 2, 3)
    with pytest.raises(IndexError, match=r"range of \[-1, 0\], but got 1\)"):
        C.sort(C.tensor(3.0, device=device), 1)
    with pytest.raises(RuntimeError, match="^sort: You passed a dimname"):
        C.sort(x, "a")
    for k in (5, -1):
        with pytest.raises(RuntimeError, match="^selected index k out of range$"):
            C.topk(x, k)
    with pytest.raises(RuntimeError, match="^selected index k out of range$"):
        C.topk(C.tensor(3.0, device=device), 2)
    for k in (5, 0):
        with pytest.raises(
            RuntimeError, match="^kthvalue\\(\\): selected number k out of range for dimension 1$"
        ):
            C.kthvalue(x, k)
    with pytest.raises(IndexError, match=r"^kthvalue\(\): Expected reduction dim 0 to have "):
        C.kthvalue(C.zeros(0, device=device), 1)
    b = C.tensor([True, False], device=device)
    if device == "cpu":
        with pytest.raises(RuntimeError, match="^topk does not support bool dtypes on CPU$"):
            C.topk(b, 1)
    else:
        with pytest.raises(NotImplementedError, match="topk_out_cuda"):
            C.topk(b, 1)
    with pytest.raises(
        NotImplementedError, match=f"kthvalue_{device}\" not implemented for 'Bool'"
    ):
        C.kthvalue(b, 1)
    with pytest.raises(TypeError):
        C.topk(x, 2.0)
    with pytest.raises(TypeError):
        C.sort(x, dim=1.5)


def test_gradients(device):
    x = C.tensor([[3.0, 1, 2, 7], [0, 5, 4, -1]], dtype=C.float64, device=device)
    x.requires_grad_()
    assert C.autograd.gradcheck(lambda t: C.sort(t, 0).values, (x,))
    assert C.autograd.gradcheck(lambda t: t.sort(-1, True).values, (x,))
    assert C.autograd.gradcheck(lambda t: C.topk(t, 2).values, (x,))
    assert C.autograd.gradcheck(lambda t: t.topk(1, 0, largest=False).values, (x,))
    assert C.autograd.gradcheck(lambda t: C.kthvalue(t, 3).values, (x,))
    assert C.autograd.gradcheck(lambda t: t.kthvalue(2, 0, keepdim=True).values, (x,))
    assert C.autograd.gradcheck(C.msort, (x,))
    assert C.autograd.gradgradcheck(lambda t: C.topk(t, 2).values, (x,))
    names = [
        type(f(x).grad_fn).__name__
        for f in (
            lambda t: t.sort().values,
            lambda t: C.topk(t, 1).values,
            lambda t: t.kthvalue(1).values,
            C.msort,
        )
    ]
    assert names == ["SortBackward0", "TopkBackward0", "KthvalueBackward0", "SortBackward0"]
    assert C.sort(x).indices.grad_fn is None
    with pytest.raises(RuntimeError, match="^sort\\(\\): functions with out=... arguments don't"):
        C.sort(x, out=(C.empty(0, dtype=C.float64), C.empty(0, dtype=C.int64)))
    s = C.tensor(2.0, dtype=C.float64, device=device, requires_grad=True)
    C.sort(s).values.backward()
    assert s.grad.item() == 1.0


def test_dim_names(device):
    x = C.ones(2, 3, device=device)
    msg = "You passed a dimname \\(string\\) to this op in place of a dimension index"
    for f in (lambda: C.sort(x, "a"), lambda: x.sort(None), lambda: C.argsort(x, None)):
        with pytest.raises(RuntimeError, match=msg):
            f()
    with pytest.raises(RuntimeError, match="^Please look up dimensions by name, got: name = None"):
        C.kthvalue(x, 1, None)
    with pytest.raises(RuntimeError, match=re.escape("Name 'a' not found in Tensor[None, None].")):
        x.kthvalue(1, "a")


def test_argument_type_errors_are_torchs(device):
    x = C.ones(2, 3, device=device)
    with pytest.raises(TypeError, match="^sort\\(\\) received an invalid combination of arguments"):
        C.sort(x, dim=1.5)
    with pytest.raises(TypeError, match="^topk\\(\\): argument 'k' \\(position 2\\) must be int"):
        C.topk(x, 2.0)
    with pytest.raises(TypeError, match="^argsort\\(\\) received an invalid combination"):
        C.argsort(x, out=C.empty(0, dtype=C.int64, device=device))
    with pytest.raises(TypeError, match="^logit\\(\\): argument 'eps' must be float, not str$"):
        C.logit(x, eps="a")
    with pytest.raises(TypeError, match="^logsumexp\\(\\) received an invalid combination"):
        C.logsumexp(x)
