"""Reductions against NumPy: over all, one and several dims, keepdim, negative dims; dtype
rules, NaN propagation, empty inputs and torch's errors; hypothesis properties."""

from __future__ import annotations

import math
import re
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import array_shapes

import cudalite as C
from conftest import to_np

DIMS = [None, 0, 1, -1, 2, (0, 2), (-1, 0), (0, 1, 2)]


def data(device, dtype=C.float64, shape=(2, 3, 4), seed=0):
    rng = np.random.default_rng(seed)
    a = rng.permutation(int(np.prod(shape))).reshape(shape) - 10  # distinct values: no ties
    a = a.astype(np.float64) / 2 if dtype.is_floating_point else a
    return C.tensor(a, dtype=dtype, device=device), a


def close(t, want, rtol=1e-7):
    assert t.shape == np.shape(want)
    np.testing.assert_allclose(to_np(t), want, rtol=rtol, atol=1e-6)


def axis(dim):
    return tuple(dim) if isinstance(dim, tuple) else dim


@pytest.mark.parametrize("keepdim", [False, True])
@pytest.mark.parametrize("dim", DIMS)
def test_sum_mean_prod(dim, keepdim, device):
    t, a = data(device)
    kw = {} if dim is None else {"dim": dim, "keepdim": keepdim}
    nkw = {"axis": axis(dim), "keepdims": keepdim and dim is not None}
    close(t.sum(**kw), a.sum(**nkw))
    close(C.sum(t, **kw), a.sum(**nkw))
    close(t.mean(**kw), a.mean(**nkw))
    close(C.mean(t, **kw), a.mean(**nkw))
    if dim is None or isinstance(dim, int):
        close(t.prod(**kw), a.prod(**nkw), rtol=1e-6)


@pytest.mark.parametrize("keepdim", [False, True])
@pytest.mark.parametrize("dim", DIMS)
def test_amax_amin_all_any(dim, keepdim, device):
    t, a = data(device)
    kw = {} if dim is None else {"dim": dim, "keepdim": keepdim}
    nkw = {"axis": axis(dim), "keepdims": keepdim and dim is not None}
    close(t.amax(**kw), a.max(**nkw))
    close(C.amin(t, **kw), a.min(**nkw))
    b = a > 0
    tb = C.tensor(b, device=device)
    np.testing.assert_array_equal(to_np(tb.all(**kw)), b.all(**nkw))
    np.testing.assert_array_equal(to_np(C.any(tb, **kw)), b.any(**nkw))
    np.testing.assert_array_equal(to_np(t.all(**kw)), a.all(**nkw))
    np.testing.assert_array_equal(to_np(t.any(**kw)), a.any(**nkw))


@pytest.mark.parametrize("keepdim", [False, True])
@pytest.mark.parametrize("dim", [0, 1, 2, -1, -3])
@pytest.mark.parametrize("dtype", [C.float64, C.float32, C.int64, C.int16, C.uint8])
def test_max_min_with_dim(dim, keepdim, dtype, device):
    t, a = data(device, dtype)
    if dtype == C.uint8:
        t, a = C.tensor(a + 10, dtype=dtype, device=device), a + 10
    for fn, ref, arg in ((C.max, np.max, np.argmax), (C.min, np.min, np.argmin)):
        r = fn(t, dim, keepdim)
        values, indices = r
        assert r.values is values and r.indices is indices
        assert values.dtype is dtype and indices.dtype is C.int64
        want_i = arg(a, axis=dim)
        if keepdim:
            want_i = np.expand_dims(want_i, dim)
        np.testing.assert_array_equal(to_np(values), ref(a, axis=dim, keepdims=keepdim))
        np.testing.assert_array_equal(to_np(indices), want_i)
        np.testing.assert_array_equal(
            to_np(getattr(t, fn.__name__)(dim=dim, keepdim=keepdim)[0]),
            ref(a, axis=dim, keepdims=keepdim),
        )


@pytest.mark.parametrize("keepdim", [False, True])
@pytest.mark.parametrize("dim", [None, 0, 1, 2, -1])
def test_argmax_argmin(dim, keepdim, device):
    t, a = data(device)
    for fn, ref in ((C.argmax, np.argmax), (C.argmin, np.argmin)):
        got = fn(t, dim, keepdim)
        want = ref(a, axis=dim, keepdims=keepdim)
        assert got.dtype is C.int64
        np.testing.assert_array_equal(to_np(got), want)
        np.testing.assert_array_equal(to_np(getattr(t, fn.__name__)(dim, keepdim)), want)


def test_ties_give_the_first_index(device):
    t = C.tensor([[1, 3, 3, 0], [0, 0, 2, 2]], device=device)
    a = np.array([[1, 3, 3, 0], [0, 0, 2, 2]])
    np.testing.assert_array_equal(to_np(t.argmax(1)), a.argmax(1))
    np.testing.assert_array_equal(to_np(t.argmin(1)), a.argmin(1))
    np.testing.assert_array_equal(to_np(t.max(1).indices), a.argmax(1))
    assert t.argmax().item() == a.argmax()


def test_max_return_type():
    r = C.arange(12).reshape(3, 4).max(0)
    assert type(r).__name__ == "max" and type(r).__module__ == "cudalite.return_types"
    assert type(r) is C.return_types.max
    assert isinstance(r, tuple) and len(r) == 2 and r.n_fields == 2
    assert repr(r) == (
        "cudalite.return_types.max(\nvalues=tensor([ 8,  9, 10, 11]),\n"
        "indices=tensor([2, 2, 2, 2]))"
    )
    assert type(C.min(C.ones(2, 2), 1)).__name__ == "min"
    v = C.max(C.tensor(5.0), 0)
    assert v.values.shape == () and v.indices.item() == 0


@pytest.mark.parametrize("correction", [None, 0, 1, 2])
@pytest.mark.parametrize("dim", [None, 1, -1, (0, 2)])
def test_std_var(dim, correction, device):
    t, a = data(device)
    ddof = 1 if correction is None else correction
    kw = {"dim": dim} if correction is None else {"dim": dim, "correction": correction}
    close(t.var(**kw), a.var(axis=axis(dim), ddof=ddof))
    close(C.std(t, **kw), a.std(axis=axis(dim), ddof=ddof))
    close(
        t.var(dim, keepdim=True, correction=ddof), a.var(axis=axis(dim), ddof=ddof, keepdims=True)
    )
    close(t.var(dim, unbiased=False), a.var(axis=axis(dim)))
    close(t.std(dim, True), a.std(axis=axis(dim), ddof=1))


def test_std_var_mean_pairs(device):
    t, a = data(device)
    s, m = C.std_mean(t, 1)
    close(s, a.std(axis=1, ddof=1))
    close(m, a.mean(axis=1))
    v, m = C.var_mean(t)
    close(v, a.var(ddof=1))
    close(m, a.mean())


def test_degrees_of_freedom_warning():
    with pytest.warns(
        UserWarning, match=r"^var\(\): degrees of freedom is <= 0\. Correction should"
    ):
        r = C.tensor([1.0, 2.0]).var(correction=3)
    assert math.isinf(r.item())  # torch divides by max(0, N - correction)
    with pytest.warns(UserWarning, match=r"^std\(\): degrees of freedom is <= 0"):
        assert math.isnan(C.tensor([1.0]).std().item())


@pytest.mark.parametrize("p", [2, 1, float("inf"), -float("inf"), "fro", 3, 0, -1, 0.5])
@pytest.mark.parametrize("dim", [None, 1, (0, 2), -1])
def test_norm(p, dim, device):
    t, a = data(device)
    x = np.abs(a)
    with np.errstate(divide="ignore"):
        if p in (2, "fro"):
            want = np.sqrt((x**2).sum(axis=axis(dim)))
        elif p == float("inf"):
            want = x.max(axis=axis(dim))
        elif p == -float("inf"):
            want = x.min(axis=axis(dim))
        elif p == 0:
            want = (x != 0).sum(axis=axis(dim)).astype(np.float64)
        else:
            want = (x**p).sum(axis=axis(dim)) ** (1 / p)
    close(t.norm(p, dim), want, rtol=1e-6)
    keep_shape = np.sum(a, axis=axis(dim), keepdims=True).shape
    close(C.norm(t, p=p, dim=dim, keepdim=True), np.reshape(want, keep_shape), rtol=1e-6)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_half_std_var_norm_accumulate_in_float(dtype, device):
    # Squares of values above 256 overflow float16: torch computes in float32 and casts the
    # result back, so std and norm are finite even where the variance itself is not.
    dt = getattr(C, dtype)
    v = [300.0, -400.0, 1000.0]
    t = C.tensor(v, dtype=dt, device=device)
    a = np.array(v)
    for r, want in [
        (t.std(), a.std(ddof=1)),
        (C.std(t, 0, keepdim=True), [a.std(ddof=1)]),
        (t.norm(), np.sqrt((a**2).sum())),
        (t.norm(3), (np.abs(a) ** 3).sum() ** (1 / 3)),
        (C.std_mean(t)[0], a.std(ddof=1)),
    ]:
        assert r.dtype is dt
        np.testing.assert_allclose(to_np(r.float()), want, rtol=1e-2)
    var = t.var()
    assert var.dtype is dt
    assert math.isinf(var.item()) if dtype == "float16" else var.item() > 2.9e5


def test_norm_dtype_and_matrix_norm_dims(device):
    t = C.tensor([[3.0, 4.0]], dtype=C.float16, device=device)
    r = C.norm(t, dtype=C.float64)
    assert r.dtype is C.float64 and r.item() == 5.0
    with pytest.raises(
        RuntimeError, match=r"^linalg.matrix_norm: dim must be a 2-tuple. Got 0 1 2$"
    ):
        C.norm(C.ones(2, 2, 2, device=device), dim=(0, 1, 2))
    # Other p are vector norms over any number of dims.
    assert C.norm(C.ones(2, 2, 2, device=device), p=2, dim=(0, 1, 2)).item() == pytest.approx(
        8**0.5
    )


# ---- dtype rules ----


@pytest.mark.parametrize("dtype", ["bool", "uint8", "int8", "int16", "int32", "int64"])
def test_integer_sum_and_prod_are_int64(dtype, device):
    t = C.tensor([1, 0, 1], dtype=getattr(C, dtype), device=device)
    assert t.sum().dtype is C.int64 and t.sum().item() == 2
    assert t.prod().dtype is C.int64
    assert t.sum(0).dtype is C.int64
    assert C.tensor([100, 100], dtype=C.int8).sum().item() == 200
    assert t.sum(dtype=C.float32).dtype is C.float32


def test_float_and_explicit_dtypes(device):
    for dt in (C.float16, C.bfloat16, C.float32, C.float64):
        t = C.tensor([1.0, 2.0], dtype=dt, device=device)
        assert t.sum().dtype is dt and t.mean().dtype is dt and t.std().dtype is dt
        assert t.amax().dtype is dt
    assert C.tensor([1.5, 2.5]).sum(dtype=C.int32).item() == int(
        np.sum(np.array([1.5, 2.5]).astype(np.int32))
    )
    assert C.tensor([2, 3], dtype=C.int8).sum(dtype=C.int8).dtype is C.int8
    m = C.tensor([1, 2]).mean(dtype=C.float64)
    assert m.dtype is C.float64 and m.item() == np.mean([1, 2])
    assert C.tensor([1, 2], dtype=C.int32).amax().dtype is C.int32
    u = C.tensor([1, 2], dtype=C.uint8)
    assert u.all().dtype is C.uint8 and u.any(0).dtype is C.uint8  # torch keeps uint8 here
    assert C.tensor([1, 2], dtype=C.int8).any().dtype is C.bool
    assert C.count_nonzero(C.tensor([0, 1, 2])).item() == np.count_nonzero([0, 1, 2])


def test_all_any_over_no_dims_are_elementwise():
    x = C.arange(6).reshape(2, 3)
    np.testing.assert_array_equal(to_np(x.all(dim=[])), np.arange(6).reshape(2, 3) != 0)
    np.testing.assert_array_equal(to_np(x.any(dim=())), np.arange(6).reshape(2, 3) != 0)
    assert x.sum(dim=[]).item() == 15  # sum over no dims reduces everything


# ---- NaN ----


def test_nan_propagation(device):
    a = np.array([[1.0, np.nan, 3.0], [4.0, 5.0, 6.0]])
    t = C.tensor(a, device=device)
    assert math.isnan(t.max().item()) and math.isnan(t.min().item())
    np.testing.assert_array_equal(to_np(t.amax(1)), np.max(a, axis=1))
    np.testing.assert_array_equal(to_np(t.max(1).values), np.max(a, axis=1))
    np.testing.assert_array_equal(to_np(t.max(1).indices), [1, 2])  # the NaN's index
    np.testing.assert_array_equal(to_np(t.min(0).values), np.min(a, axis=0))
    assert t.argmax().item() == 1 and t.argmin().item() == 1  # NaN counts as the extreme
    assert C.tensor([np.inf, np.nan]).argmax().item() == 1
    np.testing.assert_array_equal(to_np(t.sum(1)), a.sum(1))
    np.testing.assert_array_equal(to_np(t.mean(0)), a.mean(0))


# ---- sizes and layouts that exercise the GPU loops' vector, tail and split paths ----

# Rows: a block per row (split or not), a thread per row (3000, 20), and teams of 4 to 32
# lanes per row (2200 rows of 37 to 700; misaligned starts leave up to 7 head elements).
# Along dim 0, columns: narrow ones get several lanes of rows per block (3 to 130 columns, odd
# lane counts), and long ones are split, with lanes over the splits in the second pass.
LAYOUT_SHAPES = [
    (1, 5000),
    (3, 4099),
    (1000, 37),
    (40, 4),
    (7, 33, 66),
    (3000, 20),
    (2200, 37),
    (2200, 113),
    (2200, 700),
    (20000, 16),
    (6000, 3),
    (3001, 130),
]


@pytest.mark.parametrize("shape", LAYOUT_SHAPES)
@pytest.mark.parametrize("offset", [0, 1, 3])
@pytest.mark.parametrize("dtype", [C.float32, C.float16, C.int32, C.int64, C.uint8])
def test_layouts_against_numpy(shape, offset, dtype, device):
    rng = np.random.default_rng(sum(shape) + offset)
    n = int(np.prod(shape))
    # small integers: ties everywhere, so argmax/argmin must find the first extreme
    base = rng.integers(0, 4 if dtype == C.float16 else 50, size=n + offset)  # no half overflow
    t = C.tensor(base, dtype=dtype, device=device)[offset:].reshape(shape)  # misaligned start
    a = to_np(t)
    for dim in [None, 0, len(shape) - 1]:
        ax = dim
        np.testing.assert_array_equal(to_np(t.amax(dim) if dim is not None else t.max()), a.max(ax))
        np.testing.assert_array_equal(to_np(t.amin(dim) if dim is not None else t.min()), a.min(ax))
        np.testing.assert_array_equal(to_np(t.argmax(dim)), a.argmax(ax))
        np.testing.assert_array_equal(to_np(t.argmin(dim)), a.argmin(ax))
        np.testing.assert_array_equal(to_np(t.any(dim) if dim is not None else t.any()), a.any(ax))
        np.testing.assert_array_equal(to_np(t.all(dim) if dim is not None else t.all()), a.all(ax))
        want = a.astype(np.float64).sum(ax)
        if dtype == C.float16 and np.abs(want).max() > 6e4:
            continue  # beyond half's range: inf, as in torch
        got = t.sum(dim) if dim is not None else t.sum()
        rtol = 1e-2 if dtype == C.float16 else 1e-5
        np.testing.assert_allclose(to_np(got).astype(np.float64), want, rtol=rtol)


@pytest.mark.parametrize("shape", [(1, 9000), (2, 4097), (300, 64), (5000, 12)])
@pytest.mark.parametrize("dim", [None, 0, 1])
def test_nan_and_inf_in_long_rows(shape, dim, device):
    rng = np.random.default_rng(7)
    a = rng.standard_normal(shape).astype(np.float32)
    a[:, -1] = -np.inf
    a.flat[a.size // 3] = np.nan
    a.flat[a.size // 3 + 17] = np.nan
    a.flat[a.size - 2] = np.inf
    t = C.tensor(a, device=device)
    if dim is None:
        assert t.argmax().item() == a.size // 3 and t.argmin().item() == a.size // 3
        assert math.isnan(t.max().item()) and math.isnan(t.min().item())
        return
    np.testing.assert_array_equal(to_np(t.amax(dim)), a.max(dim))
    np.testing.assert_array_equal(to_np(t.amin(dim)), a.min(dim))
    # NumPy's argmax also takes the first NaN
    np.testing.assert_array_equal(to_np(t.argmax(dim)), a.argmax(dim))
    np.testing.assert_array_equal(to_np(t.argmin(dim)), a.argmin(dim))
    b = np.full(shape, -np.inf, dtype=np.float32)
    tb = C.tensor(b, device=device)
    np.testing.assert_array_equal(to_np(tb.argmax(dim)), b.argmax(dim))
    np.testing.assert_array_equal(to_np(tb.amax(dim)), b.max(dim))


# ---- empty inputs ----


def test_empty_reductions(device):
    e = C.zeros(0, device=device)
    assert e.sum().item() == np.sum([]) and e.prod().item() == np.prod([])
    assert e.all().item() is True and e.any().item() is False
    assert e.norm().item() == 0.0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert math.isnan(e.mean().item()) and math.isnan(e.var().item())
    z = C.zeros(0, 3, device=device)
    np.testing.assert_array_equal(to_np(z.sum(0)), np.zeros((0, 3)).sum(0))
    np.testing.assert_array_equal(to_np(z.prod(0)), np.zeros((0, 3)).prod(0))
    np.testing.assert_array_equal(to_np(z.all(0)), np.zeros((0, 3)).all(0))
    assert z.max(1).values.shape == (0,) and z.argmax(1).shape == (0,)
    assert z.amax(1).shape == (0,)


def err(exc, msg):
    return pytest.raises(exc, match=f"^{re.escape(msg)}$")


def test_empty_reduction_errors():
    spec = " Specify the reduction dim with the 'dim' argument."
    for name in ("max", "min", "amax", "amin"):
        with err(
            RuntimeError,
            f"{name}(): Expected reduction dim to be specified for input.numel() == 0.{spec}",
        ):
            getattr(C.zeros(0), name)()
    for name in ("argmax", "argmin"):
        with err(
            IndexError, f"{name}(): Expected reduction dim to be specified for input.numel() == 0."
        ):
            getattr(C.zeros(0), name)()
    z = C.zeros(2, 0)
    for name, dim, shown in [("max", -1, 1), ("min", 1, 1), ("argmax", -1, 1), ("argmin", 1, 1),
                             ("amax", -1, -1), ("amin", 1, 1)]:  # fmt: skip
        with err(IndexError, f"{name}(): Expected reduction dim {shown} to have non-zero size."):
            getattr(z, name)(dim)


def test_reduction_errors():
    x = C.arange(12).reshape(3, 4)
    mean_msg = (
        "mean(): could not infer output dtype. {} dtype must be either a floating point or "
        "complex dtype. Got: {}"
    )
    with err(RuntimeError, mean_msg.format("Input", "Long")):
        x.mean()
    with err(RuntimeError, mean_msg.format("Input", "Bool")):
        C.tensor([True]).mean()
    with err(RuntimeError, mean_msg.format("Optional", "Int")):
        x.float().mean(dtype=C.int32)
    for call in (x.std, x.var, C.tensor([True]).std):
        with err(RuntimeError, "std and var only support floating point and complex dtypes"):
            call()
    with err(
        RuntimeError,
        "linalg.vector_norm: Expected a floating point or complex tensor as input. Got Long",
    ):
        x.norm()
    with err(RuntimeError, "argmax(): does not support bool input"):
        C.tensor([True, False]).argmax()
    with err(IndexError, "Dimension out of range (expected to be in range of [-2, 1], but got 2)"):
        x.sum(2)
    with err(IndexError, "Dimension out of range (expected to be in range of [-2, 1], but got 2)"):
        x.max(2)
    with err(RuntimeError, "dim 0 appears multiple times in the list of dims"):
        x.sum((0, 0))
    with err(RuntimeError, "dim 1 appears multiple times in the list of dims"):
        x.sum((1, -1))
    with err(TypeError, "argmin(): argument 'dim' (position 1) must be int, not tuple"):
        x.argmin((0, 1))
    with pytest.raises(
        TypeError, match=re.escape("prod() received an invalid combination of arguments")
    ):
        x.prod((0,))
    with pytest.raises(
        TypeError, match=re.escape("max() received an invalid combination of arguments")
    ):
        x.max((0,))


def test_zero_dim_inputs(device):
    s = C.tensor(5.0, device=device)
    for t in (s.sum(), s.sum(0), s.mean(-1), s.amax(0), s.max(0).values, s.prod(0)):
        assert t.shape == () and t.item() == 5.0
    assert s.argmax(0).item() == 0 and s.argmax().item() == 0


# ---- properties ----


@settings(max_examples=60, deadline=None)
@given(
    shape=array_shapes(min_dims=1, max_dims=4, min_side=1, max_side=5),
    data_=st.data(),
    op=st.sampled_from(["sum", "amax", "amin", "mean", "prod", "all", "any"]),
    keepdim=st.booleans(),
)
def test_property_reductions(shape, data_, op, keepdim):
    nd = len(shape)
    dims = data_.draw(st.lists(st.integers(-nd, nd - 1), unique_by=lambda d: d % nd, max_size=nd))
    a = data_.draw(
        st.integers(0, 2**16).map(lambda s: np.random.default_rng(s).integers(-4, 5, shape))
    )
    t = C.tensor(a, dtype=C.float64)
    ref = {"sum": np.sum, "amax": np.max, "amin": np.min, "mean": np.mean, "prod": np.prod,
           "all": np.all, "any": np.any}[op]  # fmt: skip
    if op == "prod":
        dims = dims[:1]  # prod takes one dim
    ax = tuple(dims) if dims else None
    kw = {"dim": tuple(dims)} if dims else {}
    if op == "prod":
        kw = {"dim": dims[0]} if dims else {}
    got = getattr(t, op)(**kw, keepdim=keepdim) if kw else getattr(t, op)()
    want = ref(a.astype(np.float64), axis=ax, keepdims=keepdim and bool(dims))
    np.testing.assert_allclose(to_np(got), want, rtol=1e-9)


@settings(max_examples=40, deadline=None)
@given(
    shape=array_shapes(min_dims=1, max_dims=3, min_side=1, max_side=6),
    seed=st.integers(0, 2**16),
    dim=st.integers(-3, 2),
)
def test_property_argmax_var(shape, seed, dim):
    dim = dim % len(shape)
    a = np.random.default_rng(seed).standard_normal(shape)
    t = C.tensor(a)
    np.testing.assert_array_equal(to_np(t.argmax(dim)), a.argmax(dim))
    np.testing.assert_array_equal(to_np(t.min(dim).indices), a.argmin(dim))
    if shape[dim] > 1:
        np.testing.assert_allclose(
            to_np(t.var(dim)), a.var(axis=dim, ddof=1), rtol=1e-9, atol=1e-12
        )


def test_norm_dtype_must_widen_a_floating_input(device):
    x = C.tensor([3.0, 4.0], device=device)
    assert C.norm(x, dtype=C.float64).dtype == C.float64
    assert C.norm(x.half(), dim=0, dtype=C.float32).item() == 5.0
    for t, dt, msg in [
        (
            x.double(),
            C.float32,
            "the dtype of the input (Double) should be convertible without "
            "narrowing to the specified dtype (Float)",
        ),
        (
            x.bfloat16(),
            C.float16,
            "the dtype of the input (BFloat16) should be convertible "
            "without narrowing to the specified dtype (Half)",
        ),
        (x, C.int64, "dtype should be floating point or complex, but got Long"),
        (x.long(), C.float32, "Expected a floating point or complex tensor as input. Got Long"),
    ]:
        with pytest.raises(RuntimeError, match=f"^{re.escape('linalg.vector_norm: ' + msg)}$"):
            C.norm(t, dtype=dt)


def test_reductions_write_into_out_as_torch(device):
    x = C.tensor([[1.5, 2.0], [3.0, 4.0]], device=device)
    v, i = C.zeros(2, device=device), C.zeros(2, dtype=C.int64, device=device)
    r = C.max(x, 1, out=(v, i))
    assert r.values is v and r.indices is i and type(r).__name__ == "max_out"
    assert v.tolist() == [2.0, 4.0] and i.tolist() == [1, 1]
    whole = C.zeros((), dtype=C.float64, device=device)
    assert C.min(x, out=whole) is whole and whole.item() == 1.5  # cast, as torch
    rows = C.zeros(2, 2, device=device)
    C.sum(x, 1, out=rows[0])  # into a view: its base sees the result
    assert rows.tolist() == [[3.5, 7.0], [0.0, 0.0]]
    ints = C.zeros(1, dtype=C.int64, device=device)
    C.sum(C.tensor([[1.5, 1.5]], device=device), 1, out=ints)  # computed in out's dtype
    assert ints.tolist() == [2]
    with err(RuntimeError, "Expected out tensor to have dtype long int, but got float instead"):
        C.min(x, 0, out=(C.zeros(2, device=device), C.zeros(2, device=device)))
    with err(RuntimeError, "Expected out tensor to have dtype double, but got float instead"):
        C.sum(x, 1, dtype=C.float64, out=C.zeros(2, device=device))
    with err(RuntimeError, "result type Float can't be cast to the desired output type Long"):
        C.mean(x, 1, out=C.zeros(2, dtype=C.int64, device=device))
    with pytest.raises(TypeError):
        C.sum(x, out=C.zeros((), device=device))  # torch has no out= without dim
    with pytest.raises(TypeError):
        C.max(x, 1, out=C.zeros(2, device=device))  # with dim, out is (values, indices)
    g = C.tensor([[1.5, 2.0]], device=device, requires_grad=True)
    with err(
        RuntimeError,
        "max(): functions with out=... arguments don't support automatic "
        "differentiation, but one of the arguments requires grad.",
    ):
        C.max(g, 1, out=(C.zeros(1, device=device), C.zeros(1, dtype=C.int64, device=device)))


def test_more_reductions_write_into_out(device):
    x = C.tensor([[1.5, 2.0], [3.0, 5.0]], device=device)

    def out(dt=C.float32):
        return C.zeros(0, dtype=dt, device=device)

    for name, kw in [("std", {}), ("var", {"dim": 1}), ("norm", {}), ("amax", {"dim": 0})]:
        o = out()
        assert getattr(C, name)(x, **kw, out=o) is o
        assert o.tolist() == getattr(C, name)(x, **kw).tolist()
    i = out(C.int64)
    assert C.argmax(x, 1, out=i) is i and i.tolist() == [1, 1]
    b = out(C.uint8)
    assert C.all(x, 1, out=b) is b and b.tolist() == [1, 1]
    assert C.var(x, 1, out=out(C.float64)).dtype == C.float64  # castable is enough
    for call, msg in [
        (
            lambda: C.std(x, out=out(C.int64)),
            "result type Float can't be cast to the desired output type Long",
        ),
        (
            lambda: C.norm(x, out=out(C.float64)),
            "Expected out tensor to have dtype float, but got double instead",
        ),
        (
            lambda: C.amin(x, out=out(C.float64)),
            "Expected the dtype for input and out to match, "
            "but got Float for input's dtype and Double for out's dtype.",
        ),
        (
            lambda: C.argmin(x, out=out()),
            "Expected out tensor to have dtype long int, but got float instead",
        ),
        (lambda: C.any(x, out=out()), "any only supports bool tensor for result, got: Float"),
    ]:
        with err(RuntimeError, msg):
            call()
    g = x.clone().requires_grad_()
    with err(
        RuntimeError,
        "std(): functions with out=... arguments don't support automatic "
        "differentiation, but one of the arguments requires grad.",
    ):
        C.std(g, out=out())


# ---- logsumexp ----


@pytest.mark.parametrize("keepdim", [False, True])
@pytest.mark.parametrize("dim", [0, -1, (0, 2), [1, -1], (0, 1, 2)])
def test_logsumexp(dim, keepdim, device):
    t, a = data(device)
    want = np.log(
        np.exp(a).sum(axis=axis(tuple(dim) if isinstance(dim, list) else dim), keepdims=keepdim)
    )
    close(C.logsumexp(t, dim, keepdim), want)
    close(t.logsumexp(dim, keepdim=keepdim), want)
    # large values: computed around the maximum, no overflow
    close(C.logsumexp(t + 1000, dim, keepdim), want + 1000)


@pytest.mark.parametrize(
    "dtype,want", [(C.float16, C.float16), (C.bfloat16, C.bfloat16), (C.int64, C.float32)]
)
def test_logsumexp_dtypes(device, dtype, want):
    t = C.tensor([[1, 2, 3], [0, 1, 2]], dtype=dtype, device=device)
    r = C.logsumexp(t, 1)
    assert r.dtype == want
    expected = np.log(np.exp([[1.0, 2, 3], [0, 1, 2]]).sum(1))
    np.testing.assert_allclose(to_np(r).astype(np.float64), expected, rtol=1e-2)
    assert C.logsumexp(t.bool(), 0).dtype == C.float32


def test_logsumexp_infinities_and_empty(device):
    inf, nan = math.inf, math.nan
    cases = [([inf, inf], inf), ([-inf, -inf], -inf), ([inf, -inf], inf), ([1.0, inf], inf)]
    for values, want in cases:
        assert C.logsumexp(C.tensor(values, device=device), 0).item() == want
    for values in ([nan, inf], [nan, -inf]):
        assert math.isnan(C.logsumexp(C.tensor(values, device=device), 0).item())
    assert C.logsumexp(C.zeros(0, device=device), 0).item() == -inf
    assert C.logsumexp(C.zeros(2, 0, device=device), 1).tolist() == [-inf, -inf]
    assert C.logsumexp(C.zeros(2, 0, device=device), 0).shape == (0,)
    x = C.tensor(1.5, device=device)
    assert C.logsumexp(x, 0).item() == 1.5 and C.logsumexp(x, ()).item() == 1.5
    assert C.logsumexp(C.ones(2, 3, device=device), (), keepdim=True).shape == (1, 1)


def test_logsumexp_out_and_errors(device):
    t = C.tensor([[3.0, 1, 2], [0, 5, 4]], device=device)
    o = C.empty(0, dtype=C.float64, device=device)
    assert C.logsumexp(t, 1, out=o) is o and o.dtype == C.float64
    close(o, np.log(np.exp(to_np(t).astype(np.float64)).sum(1)), rtol=1e-6)
    with pytest.raises(
        RuntimeError,
        match="^logsumexp\\(\\): Expected floating point type for result tensor, but got: Long$",
    ):
        C.logsumexp(t, 1, out=C.empty(0, dtype=C.int64, device=device))
    # torch reduces over everything for dim=() but then fails to write the result
    with pytest.raises(RuntimeError, match=re.escape("doesn't match the broadcast shape [1, 1]")):
        C.logsumexp(t, ())
    with pytest.raises(IndexError, match="Dimension out of range"):
        C.logsumexp(t, 2)
    with pytest.raises(TypeError):
        C.logsumexp(t)


def test_logsumexp_gradient(device):
    inf, nan = math.inf, math.nan
    x = C.randn(3, 4, dtype=C.float64, device=device, requires_grad=True)
    assert C.autograd.gradcheck(lambda t: C.logsumexp(t, 1), (x,))
    assert C.autograd.gradcheck(lambda t: t.logsumexp((0, 1), keepdim=True), (x,))
    assert C.autograd.gradgradcheck(lambda t: C.logsumexp(t, 1), (x,))
    assert type(C.logsumexp(x, 0).grad_fn).__name__ == "LogsumexpBackward0"
    # as torch: exp(x - result), so nan where the result is infinite
    for values, want in (([-inf, -inf, 1.0], [0, 0, 1]), ([-inf, -inf], [nan, nan])):
        y = C.tensor(values, device=device, requires_grad=True)
        C.logsumexp(y, 0).backward()
        np.testing.assert_array_equal(to_np(y.grad), want)
    y = C.tensor([inf, 1.0], device=device, requires_grad=True)
    y.logsumexp(0).backward()
    np.testing.assert_array_equal(to_np(y.grad), [nan, 0.0])


def test_logsumexp_dim_names(device):
    x = C.ones(2, 3, device=device)
    with pytest.raises(RuntimeError, match=re.escape("Name 'a' not found in Tensor[None, None].")):
        x.logsumexp("a")
    with pytest.raises(RuntimeError, match="^dim 0 appears multiple times in the list of dims$"):
        C.logsumexp(x, [0, 0])


# ---- the core's rows (csrc/ops/reductions.def): each name's number, dtype rule and empty rule --

ROW_REFS = {
    "sum": (np.sum, None),
    "prod": (np.prod, None),
    "max": (np.max, None),
    "min": (np.min, None),
    "argmax": (np.argmax, C.int64),
    "argmin": (np.argmin, C.int64),
    "all": (np.all, C.bool),
    "any": (np.any, C.bool),
}


def test_reduce_rows(device):
    from cudalite import _C

    assert sorted(_C._reduce_ops) == sorted(ROW_REFS)
    assert len(set(_C._reduce_ops.values())) == len(ROW_REFS)
    x, a = data(device, C.int32)
    for name, code in _C._reduce_ops.items():
        ref, dtype = ROW_REFS[name]
        r = _C._reduce(code, x, None, False, None)
        # Promote rows reduce integers in int64; Same keeps the dtype
        want_dtype = dtype or (C.int64 if name in ("sum", "prod") else C.int32)
        assert r.dtype == want_dtype and r.shape == ()
        assert r.item() == ref(a.astype(np.int64).ravel())
        empty = C.empty(0, 3, device=device)
        if name in ("max", "min", "argmax", "argmin"):
            with pytest.raises(IndexError, match=rf"^{name}\(\): Expected reduction dim to be "):
                _C._reduce(code, empty, None, False, None)
        else:
            assert _C._reduce(code, empty, None, False, None).item() == ref(np.empty((0, 3)))


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_half_mean_accumulates_in_float32(device, dtype):
    """The sum of 500,000 hundreds overflows float16; torch's mean does not (it sums and
    divides in float32, then rounds once), and neither does cudalite's."""
    dt = getattr(C, dtype)
    x = C.full((1000, 500), 100.0, dtype=dt, device=device)
    for r in (x.mean(), x.mean(0), x.mean(1), C.mean(x, (0, 1), keepdim=True)):
        assert r.dtype is dt
        assert (r.float() == 100.0).all().item()
    # the sum itself rounds as torch's (5e7 is out of float16's range)
    assert x.sum().float().item() == (float("inf") if dtype == "float16" else 50069504.0)
