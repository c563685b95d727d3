"""Random numbers: seeding and state, distributions' ranges and moments, dtypes, errors."""

from __future__ import annotations

import re

import numpy as np
import pytest

import cudalite as C
from conftest import requires_cuda, to_np

N = 100_000


@pytest.fixture(autouse=True)
def _restore_seed():
    yield
    C.manual_seed(0)


def err(exc, msg):
    return pytest.raises(exc, match=f"^{re.escape(msg)}$")


@pytest.mark.parametrize(
    "make",
    [
        lambda d: C.rand(5, 3, device=d),
        lambda d: C.randn(7, device=d),
        lambda d: C.randint(0, 100, (6,), device=d),
        lambda d: C.randperm(9, device=d),
        lambda d: C.empty(4, device=d).normal_(2.0, 3.0),
        lambda d: C.empty(4, device=d).uniform_(-1.0, 1.0),
        lambda d: C.rand(3, dtype=C.float64, device=d),
    ],
)
def test_manual_seed_reproducible(make, device):
    C.manual_seed(1234)
    a = to_np(make(device))
    b = to_np(make(device))
    C.manual_seed(1234)
    np.testing.assert_array_equal(to_np(make(device)), a)
    np.testing.assert_array_equal(to_np(make(device)), b)
    assert not np.array_equal(a, b) or a.size <= 1
    C.manual_seed(4321)
    assert not np.array_equal(to_np(make(device)), a)


def test_manual_seed_returns_generator_and_initial_seed():
    g = C.manual_seed(42)
    assert isinstance(g, C.Generator)
    assert repr(g).startswith("<cudalite._C.Generator object at 0x")
    assert C.initial_seed() == 42
    C.manual_seed(-1)  # torch wraps negative seeds into uint64
    assert C.initial_seed() == 2**64 - 1
    C.manual_seed(2**64 - 1)
    assert C.initial_seed() == 2**64 - 1
    s = C.seed()
    assert isinstance(s, int) and C.initial_seed() == s


@pytest.mark.parametrize("seed", [2**64, -(2**63) - 1])
def test_manual_seed_overflow(seed):
    with err(ValueError, "Overflow when unpacking long long"):
        C.manual_seed(seed)


def test_rng_state_round_trip():
    C.manual_seed(7)
    C.rand(10)
    state = C.get_rng_state()
    assert state.dtype is C.uint8 and state.dim() == 1
    a = to_np(C.rand(20))
    b = to_np(C.randn(5))
    C.set_rng_state(state)
    np.testing.assert_array_equal(to_np(C.rand(20)), a)
    np.testing.assert_array_equal(to_np(C.randn(5)), b)
    g = C.Generator()
    g.set_state(state)
    assert g.get_state().tolist() == state.tolist()


@requires_cuda
def test_same_numbers_on_cpu_and_cuda():
    for make in (
        lambda d: C.rand(1000, device=d),
        lambda d: C.randn(1000, device=d),
        lambda d: C.randint(-5, 5, (100,), device=d),
    ):
        C.manual_seed(99)
        cpu = to_np(make("cpu"))
        C.manual_seed(99)
        cuda = to_np(make("cuda"))
        np.testing.assert_allclose(cuda, cpu, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("dtype", [C.float32, C.float64, C.float16, C.bfloat16])
def test_rand_range_and_moments(dtype, device):
    C.manual_seed(0)
    x = to_np(C.rand(N, dtype=dtype, device=device)).astype(np.float64)
    assert C.rand(2, dtype=dtype).dtype is dtype
    assert x.min() >= 0.0 and x.max() < 1.0
    assert abs(x.mean() - 0.5) < 0.01  # uniform [0, 1): mean 1/2, variance 1/12
    assert abs(x.var() - 1 / 12) < 0.01


@pytest.mark.parametrize("dtype", [C.float32, C.float64])
def test_randn_moments(dtype, device):
    C.manual_seed(0)
    x = to_np(C.randn(N, dtype=dtype, device=device)).astype(np.float64)
    assert abs(x.mean()) < 0.02
    assert abs(x.std() - 1.0) < 0.02
    assert abs(((x - x.mean()) ** 3).mean()) < 0.05  # symmetric
    assert 0.6 < (np.abs(x) < 1).mean() < 0.76  # about 68% within one sigma


def test_normal_and_uniform_in_place(device):
    C.manual_seed(0)
    t = C.empty(N, device=device)
    ptr = t.data_ptr()
    assert t.normal_(2.0, 0.5) is t and t.data_ptr() == ptr
    x = to_np(t).astype(np.float64)
    assert abs(x.mean() - 2.0) < 0.02 and abs(x.std() - 0.5) < 0.02
    assert t.uniform_(-3.0, 5.0) is t
    x = to_np(t).astype(np.float64)
    assert x.min() >= -3.0 and x.max() < 5.0 and abs(x.mean() - 1.0) < 0.05
    v = C.zeros(4, 6, device=device)
    v[:, ::2].uniform_(1.0, 2.0)  # only the view is filled
    a = to_np(v)
    assert (a[:, 1::2] == 0).all() and ((a[:, ::2] >= 1) & (a[:, ::2] < 2)).all()


def test_normal_function(device):
    C.manual_seed(0)
    assert C.normal(0.0, 1.0, (2, 3), device=device).shape == (2, 3)
    m = C.normal(C.full((N,), 3.0, device=device), 2.0)
    x = to_np(m)
    assert abs(x.mean() - 3.0) < 0.05 and abs(x.std() - 2.0) < 0.05
    assert C.normal(0.0, C.ones(3, device=device)).shape == (3,)


@pytest.mark.parametrize(
    "args, dtype, lo, hi",
    [
        ((10, (N,)), None, 0, 10),
        ((-5, -1, (N,)), None, -5, -1),
        ((0, 256, (N,)), C.uint8, 0, 256),
        ((-128, 128, (N,)), C.int8, -128, 128),
        ((0, 2, (N,)), C.bool, 0, 2),
        ((3, 7, (N,)), C.int32, 3, 7),
        ((0, 5, (N,)), C.float32, 0, 5),
        ((0, 2**40, (1000,)), None, 0, 2**40),
    ],
)
def test_randint_range_and_dtype(args, dtype, lo, hi, device):
    C.manual_seed(0)
    t = C.randint(*args, dtype=dtype, device=device)
    assert t.dtype is (dtype or C.int64)
    x = to_np(t).astype(np.int64)
    assert x.min() >= lo and x.max() < hi
    if hi - lo <= 256:
        assert len(np.unique(x)) == hi - lo  # every value turns up in 1e5 draws
        assert abs(x.mean() - (lo + hi - 1) / 2) < (hi - lo) * 0.01


def test_randint_keywords_and_like():
    assert C.randint(high=5, size=(2,)).shape == (2,)
    assert C.randint(low=2, high=5, size=(3,)).min() >= 2
    r = C.randint_like(C.zeros(2, 3), 5)
    assert r.dtype is C.float32 and r.shape == (2, 3)
    assert C.randint(5, size=(2,)).shape == (2,)


@pytest.mark.parametrize("n", [0, 1, 5, 1000])
def test_randperm_is_a_permutation(n, device):
    p = C.randperm(n, device=device)
    assert p.dtype is C.int64 and p.shape == (n,)
    np.testing.assert_array_equal(np.sort(to_np(p)), np.arange(n))
    assert C.randperm(n, dtype=C.float32).dtype is C.float32


def test_random_in_place_defaults():
    assert C.zeros(3, dtype=C.bool).random_().dtype is C.bool
    u = to_np(C.zeros(N, dtype=C.uint8).random_())
    assert u.max() > 250  # the whole uint8 range
    i8 = to_np(C.zeros(N, dtype=C.int8).random_())
    assert i8.min() >= 0 and i8.max() > 120
    assert to_np(C.zeros(100, dtype=C.int64).random_(5)).max() < 5


def test_like_and_zero_size(device):
    x = C.zeros(2, 3, dtype=C.float64, device=device)
    assert C.rand_like(x).dtype is C.float64 and C.rand_like(x).shape == (2, 3)
    assert C.randn_like(x).shape == (2, 3)
    assert C.rand(()).shape == () and C.randn(0).shape == (0,)
    assert C.rand(2, 3, requires_grad=True).requires_grad


def test_random_errors():
    with err(RuntimeError, "random_ expects 'from' to be less than 'to', but got from=3 >= to=3"):
        C.randint(3, 3, (2,))
    with err(RuntimeError, "random_ expects 'from' to be less than 'to', but got from=5 >= to=3"):
        C.zeros(2, dtype=C.int8).random_(5, 3)
    for call, msg in [
        (lambda: C.randint(300, (2,), dtype=C.uint8), "to - 1 is out of bounds for unsigned char"),
        (lambda: C.randint(-1, 5, (2,), dtype=C.uint8), "from is out of bounds for unsigned char"),
        (lambda: C.randint(0, 129, (2,), dtype=C.int8), "to - 1 is out of bounds for signed char"),
        (lambda: C.randint(0, 2**16, (2,), dtype=C.int16), "to - 1 is out of bounds for short int"),
        (lambda: C.randint(0, 3, (2,), dtype=C.bool), "to - 1 is out of bounds for bool"),
        (lambda: C.zeros(2, dtype=C.uint8).random_(0, 300),
         "to - 1 is out of bounds for unsigned char"),
    ]:  # fmt: skip
        with err(RuntimeError, msg):
            call()
    with err(TypeError, "randint(): argument 'high' (position 1) must be int, not float"):
        C.randint(5.5, (2,))
    with err(TypeError, "randint(): argument 'size' (position 2) must be tuple of ints, not int"):
        C.randint(5, 3)
    with err(RuntimeError, "normal expects std >= 0.0, but found std -1"):
        C.zeros(3).normal_(0, -1)
    with err(
        RuntimeError, "uniform_ expects to return a [from, to) range, but found from=3 > to=2"
    ):
        C.zeros(3).uniform_(3, 2)
    for fn, kernel in [(C.rand, "check_uniform_bounds"), (C.randn, "normal_kernel_cpu")]:
        with err(NotImplementedError, f"\"{kernel}\" not implemented for 'Long'"):
            fn(2, dtype=C.int64)
    with err(NotImplementedError, "\"check_uniform_bounds\" not implemented for 'Long'"):
        C.zeros(3, dtype=C.int64).uniform_()
    with err(RuntimeError, "Trying to create tensor with negative dimension -1: [-1]"):
        C.randperm(-1)
