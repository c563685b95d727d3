"""Random numbers: seeding and state, distributions' ranges and moments, dtypes, errors."""

from __future__ import annotations

import re

import numpy as np
import pytest

import cudalite as C
from conftest import exact, requires_cuda, to_np

N = 100_000


@pytest.fixture(autouse=True)
def _restore_seed():
    yield
    C.manual_seed(0)


def err(exc, msg):
    return pytest.raises(exc, match=exact(msg))


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


def _with_position(state, left, next_):
    """A CPU state (torch's layout) with mt19937's `left` and `next` fields replaced."""
    raw = bytearray(bytes(state.tolist()))
    raw[8:12] = left.to_bytes(4, "little", signed=True)
    raw[16:24] = next_.to_bytes(8, "little")
    return C.tensor(list(raw), dtype=C.uint8)


@pytest.mark.parametrize(
    "draw",
    [
        lambda g: C.rand(1000, generator=g),
        lambda g: C.randn(1000, generator=g, dtype=C.float64),
        lambda g: C.randint(0, 1000, (1000,), generator=g),
    ],
)
def test_state_positioned_past_its_words_regenerates(draw):
    """torch's checks accept a state with next = 624 and left > 1, which no draw leaves: its
    next word would lie beyond the 624 state words. It draws as the same words regenerated
    (left = 1, next = 0), never reading past them."""
    g = C.Generator().manual_seed(11)
    C.rand(100, generator=g)
    state = g.get_state()
    g.set_state(_with_position(state, 624, 624))
    past = to_np(draw(g))
    g.set_state(_with_position(state, 1, 0))
    np.testing.assert_array_equal(past, to_np(draw(g)))


def test_state_position_draws_the_same_by_chunks_and_one_at_a_time():
    """rand fills draw the generator's words a chunk at a time, randint one at a time: from
    any position of the state, both leave it where the other does."""
    for skip in (0, 1, 623, 624, 625, 2047, 2049):
        g1, g2 = C.Generator().manual_seed(5), C.Generator().manual_seed(5)
        C.randint(0, 10, (skip,), generator=g1)  # one word each
        C.rand(skip, generator=g2)  # the same words, by chunks
        assert g1.get_state().tolist() == g2.get_state().tolist()
        np.testing.assert_array_equal(
            to_np(C.rand(3000, generator=g1)), to_np(C.rand(3000, generator=g2))
        )


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16"])
def test_randn_values_do_not_depend_on_the_thread_count(dtype):
    """With several host threads randn shares its Box-Muller blocks out; the values, and
    where the generator ends, are the same as with one."""
    dt = getattr(C, dtype)
    old = C.get_num_threads()
    try:
        for n in (16, 17, 40000, 65536 + 7, 2**20 + 3):
            draws = []
            for threads in (1, 3):
                C.set_num_threads(threads)
                g = C.Generator().manual_seed(n)
                x = C.randn(n, dtype=dt, generator=g)
                y = C.empty(n, dtype=dt).normal_(2.0, 0.5, generator=g)
                draws.append((to_np(x.float()), to_np(y.float()), g.get_state().tolist()))
            for a, b in zip(*draws, strict=True):
                np.testing.assert_array_equal(a, b)
    finally:
        C.set_num_threads(old)


@requires_cuda
def test_seeded_cuda_streams_repeat_and_are_not_the_cpus():
    """torch's streams: CUDA draws come from curand's Philox (docs/random.md), so after the
    same seed they repeat on CUDA but are not the CPU's mt19937 numbers."""
    for make in (
        lambda d: C.rand(1000, device=d),
        lambda d: C.randn(1000, device=d),
        lambda d: C.randint(-5, 5, (100,), device=d),
    ):
        C.manual_seed(99)
        first = to_np(make("cuda"))
        C.manual_seed(99)
        np.testing.assert_array_equal(to_np(make("cuda")), first)
        C.manual_seed(99)
        assert not np.array_equal(to_np(make("cpu")), first)


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


def test_normal_with_tensors_broadcasts_and_checks_std(device):
    m = C.arange(3, dtype=C.float32, device=device).reshape(3, 1)
    s = C.full((1, 4), 0.5, device=device)
    assert C.normal(m, s).shape == (3, 4)
    C.manual_seed(5)
    got = C.normal(m, s)
    C.manual_seed(5)
    z = C.randn(3, 4, device=device)
    # torch's order: N(0, 1) of the broadcast shape, times std, plus mean
    np.testing.assert_array_equal(to_np(got), to_np(z * s + m))
    assert C.normal(C.zeros(2, dtype=C.float16, device=device), C.ones(2, device=device)).dtype is (
        C.float16
    )
    assert C.normal(1.0, C.ones(2, dtype=C.float64, device=device)).dtype is C.float64
    with pytest.raises(RuntimeError, match=r"^normal expects all elements of std >= 0.0$"):
        C.normal(C.zeros(2, device=device), C.tensor([1.0, -1.0], device=device))
    with pytest.raises(RuntimeError, match=r"normal expects std >= 0.0, but found std -1e-07"):
        C.normal(C.zeros(2, device=device), -1e-7)
    with pytest.raises(RuntimeError, match="must match the size of tensor b"):
        C.normal(C.zeros(2, device=device), C.ones(3, device=device))


def test_normal_with_tensors_has_zero_gradients(device):
    """As torch's: the draw is not reparameterised."""
    m = C.zeros(3, device=device, requires_grad=True)
    s = C.ones(3, device=device, requires_grad=True)
    out = C.normal(m, s)
    assert out.requires_grad and type(out.grad_fn).__name__ == "NormalBackward"
    out.sum().backward()
    assert m.grad.tolist() == [0.0] * 3 and s.grad.tolist() == [0.0] * 3
    m.grad = None
    C.normal(m, 2.0).sum().backward()
    assert m.grad.tolist() == [0.0] * 3


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


def test_random_in_place_bounds(device):
    z = lambda dt, n=1000: C.zeros(n, dtype=dt, device=device)  # noqa: E731
    big = to_np(z(C.int64).random_())  # torch: [0, 2^63 - 1]
    assert big.min() >= 0 and big.max() > 2**62
    f16 = to_np(z(C.float16, N).random_())
    assert f16.min() >= 0 and f16.max() == 2048  # [0, 2^11] for float16
    assert to_np(z(C.int32).random_(to=3)).max() == 2
    s = to_np(z(C.int8, N).random_(2, None))  # [2, 127]: from, up to the default maximum
    assert s.min() == 2 and s.max() == 127
    s = to_np(z(C.int8, N).random_(-3, None))
    assert s.min() == -3 and s.max() == 127
    assert to_np(z(C.bool).random_(1, None)).all()
    assert (to_np(z(C.int64, 3).random_(2**63 - 1, None)) == 2**63 - 1).all()
    full = to_np(z(C.int64).random_(-(2**63), None))  # the whole int64 range
    assert full.min() < -(2**61) and full.max() > 2**61
    wide = to_np(z(C.int64).random_(-(2**63), 2**63 - 1))
    assert wide.min() < -(2**61) and wide.max() > 2**61
    f = to_np(z(C.float32).random_(-1, None))
    assert f.min() >= -1 and f.max() <= 2**24 and f.max() > 2**23
    g = C.Generator(device=device).manual_seed(5)
    a = to_np(z(C.int64, 8).random_(generator=g))
    g.manual_seed(5)
    np.testing.assert_array_equal(to_np(z(C.int64, 8).random_(generator=g)), a)


@pytest.mark.parametrize(
    "call, exc, msg",
    [
        (lambda: C.zeros(2, dtype=C.int64).random_(0), RuntimeError,
         "random_ expects 'from' to be less than 'to', but got from=0 >= to=0"),
        (lambda: C.zeros(2).random_(-3), RuntimeError,
         "random_ expects 'from' to be less than 'to', but got from=0 >= to=-3"),
        (lambda: C.zeros(2, dtype=C.int8).random_(200, None), RuntimeError,
         "from is out of bounds for signed char"),
        (lambda: C.zeros(2, dtype=C.uint8).random_(-1, None), RuntimeError,
         "from is out of bounds for unsigned char"),
        (lambda: C.zeros(2).random_(2**24, None), RuntimeError,
         "random_ expects 'from' casted to dtype to be less than or equal to 'to_inc' casted "
         "to dtype, but got from=16777216 > to_inc=16777216"),
        (lambda: C.zeros(2, dtype=C.float16).random_(2**24, None), RuntimeError,
         "from is out of bounds for c10::Half"),
        (lambda: C.zeros(2).random_(None), TypeError,
         "random_() received an invalid combination of arguments - got (NoneType), but "
         "expected one of:"),
        (lambda: C.zeros(2).random_(1.5), TypeError,
         "random_() received an invalid combination of arguments - got (float), but "
         "expected one of:"),
    ],
)  # fmt: skip
def test_random_in_place_errors(call, exc, msg):
    with err(exc, msg):
        call()


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


# ---- out= of the factories (random and not: torch takes out= for all of these) ----


@pytest.mark.parametrize(
    "make, expected",
    [
        (lambda o: C.zeros(2, 2, out=o), [[0, 0], [0, 0]]),
        (lambda o: C.ones(3, out=o), [1, 1, 1]),
        (lambda o: C.full((2,), 7, out=o), [7, 7]),
        (lambda o: C.arange(3, out=o), [0, 1, 2]),
        (lambda o: C.linspace(0, 4, 3, out=o), [0, 2, 4]),
        (lambda o: C.eye(2, 3, out=o), [[1, 0, 0], [0, 1, 0]]),
    ],
)
@pytest.mark.parametrize("size, dtype", [(3, C.float32), (0, C.int64), (5, C.float64)])
def test_factories_out(make, expected, size, dtype, device):
    out = C.full((size,), 9, dtype=dtype, device=device)
    with_warning = size == 5 and expected == [0, 1, 2]  # only arange warns when resizing
    if with_warning:
        with pytest.warns(UserWarning, match="^The number of elements in the out tensor of "):
            r = make(out)
    else:
        r = make(out)
    assert r is out and out.dtype is dtype and out.device.type == device
    assert out.tolist() == expected


def test_factories_out_errors_and_empty(device):
    o = C.empty(3, dtype=C.int64, device=device)
    msg = "dtype Float does not match dtype of out parameter (Long)"
    for call in (
        lambda: C.zeros(3, out=o, dtype=C.float32),
        lambda: C.ones(3, out=o, dtype=C.float32),
        lambda: C.empty(3, out=o, dtype=C.float32),
        lambda: C.full((3,), 1, out=o, dtype=C.float32),
        lambda: C.arange(3, out=o, dtype=C.float32),
        lambda: C.linspace(0, 1, 3, out=o, dtype=C.float32),
        lambda: C.eye(3, out=o, dtype=C.float32),
    ):
        with pytest.raises(RuntimeError, match=exact(msg)):
            call()
    assert C.zeros(3, out=o, dtype=C.int64) is o
    assert C.empty(2, 2, out=o) is o and o.shape == (2, 2) and o.dtype is C.int64
    with pytest.raises(TypeError, match=re.escape("zeros() received an invalid combination")):
        C.zeros(2, out=[1])
    a = C.ones(3, 2, device=device)
    assert C.arange(6, out=a).tolist() == [[0, 1], [2, 3], [4, 5]]  # arange keeps the shape
    b = C.ones(4, device=device)
    C.zeros(2, out=b[::2])  # an out of the right size is written in place
    assert b.tolist() == [0, 1, 0, 1]
    c = C.ones(3, device=device)
    assert C.zeros(3, out=c, requires_grad=True).requires_grad
    msg = (
        "aten::zeros(): functions with out=... arguments don't support automatic "
        "differentiation, but one of the arguments requires grad."
    )
    with pytest.raises(RuntimeError, match=exact(msg)):
        C.zeros(3, out=C.ones(3, requires_grad=True))
    with C.no_grad():
        C.zeros(3, out=C.ones(3, requires_grad=True))


def test_random_factories_out(device):
    o = C.full((5,), 9.0, device=device)
    assert C.rand(2, 2, out=o) is o and o.shape == (2, 2)
    assert 0 <= to_np(o).min() and to_np(o).max() < 1
    assert C.randn(3, out=o) is o and o.shape == (3,)
    i = C.empty(0, dtype=C.int16, device=device)
    assert C.randint(2, 5, (4,), out=i) is i and i.dtype is C.int16 and i.shape == (4,)
    assert 2 <= to_np(i).min() and to_np(i).max() < 5
    assert C.randperm(4, out=i) is i and sorted(i.tolist()) == [0, 1, 2, 3]
    C.manual_seed(3)
    a = to_np(C.rand(4, device=device))
    C.manual_seed(3)
    np.testing.assert_array_equal(to_np(C.rand(4, out=C.empty(4, device=device))), a)
    msg = "dtype Float does not match dtype of out parameter (Long)"
    for fn in (
        lambda o: C.rand(3, out=o, dtype=C.float32),
        lambda o: C.randn(3, out=o, dtype=C.float32),
        lambda o: C.randint(5, (3,), out=o, dtype=C.float32),
    ):
        with err(RuntimeError, msg):
            fn(C.empty(3, dtype=C.int64, device=device))
    with err(NotImplementedError, "\"check_uniform_bounds\" not implemented for 'Long'"):
        C.rand(2, out=C.empty(2, dtype=C.int64))
    with err(RuntimeError, "cannot resize variables that require grad"):
        C.randn(3, out=C.ones(3, requires_grad=True))


def test_int64_ranges_are_exact(device):
    # Integers are drawn in 64-bit integer arithmetic: ranges near 2^63 keep their low bits.
    C.manual_seed(3)
    lo = 2**62
    x = C.empty(4000, dtype=C.int64, device=device).random_(lo, lo + 3)
    assert set(x.tolist()) == {lo, lo + 1, lo + 2}
    top = C.empty(4000, dtype=C.int64, device=device).random_(2**63 - 2, None)
    assert set(top.tolist()) == {2**63 - 2, 2**63 - 1}  # to_inc is the int64 maximum
    full = C.empty(4000, dtype=C.int64, device=device).random_(-(2**63), None)
    v = full.tolist()
    assert min(v) < -(2**61) and max(v) > 2**61 and len(set(v)) == len(v)
    C.manual_seed(3)
    again = C.empty(4000, dtype=C.int64, device=device).random_(lo, lo + 3)
    assert again.tolist() == x.tolist()


# ---- bernoulli, exponential_, multinomial ----


def test_bernoulli_values_and_dtypes(device):
    p = C.tensor([0.0, 1.0, 0.0, 1.0], device=device)
    assert C.bernoulli(p).tolist() == [0.0, 1.0, 0.0, 1.0]
    assert p.bernoulli().dtype is C.float32
    assert C.zeros(5, dtype=C.int64, device=device).bernoulli_(1.0).tolist() == [1] * 5
    assert C.ones(5, dtype=C.bool, device=device).bernoulli_(0.0).tolist() == [False] * 5
    x = to_np(C.empty(N, device=device).bernoulli_(0.3))
    assert set(np.unique(x)) <= {0.0, 1.0} and abs(x.mean() - 0.3) < 0.01
    rows = C.empty(4, 3, device=device).bernoulli_(C.tensor([0.0, 1.0, 0.0], device=device))
    assert rows.tolist() == [[0.0, 1.0, 0.0]] * 4
    assert C.bernoulli(C.zeros(3, device=device), 1.0).tolist() == [1.0] * 3
    out = C.empty(3, device=device)
    assert C.bernoulli(C.ones(3, device=device), out=out) is out and out.tolist() == [1.0] * 3


def test_bernoulli_errors():
    with err(RuntimeError, "bernoulli_ expects p to be in [0, 1], but got p=1.5"):
        C.zeros(3).bernoulli_(1.5)
    with err(
        RuntimeError,
        "Expected p_in >= 0 && p_in <= 1 to be true, but got false.  (Could this error message "
        "be improved?  If so, please report an enhancement request to PyTorch.)",
    ):
        C.bernoulli(C.tensor([-0.5]))
    with err(NotImplementedError, "\"bernoulli_tensor_cpu_p_\" not implemented for 'Long'"):
        C.bernoulli(C.tensor([1, 0]))
    with pytest.raises(RuntimeError, match="^The expanded size of the tensor"):
        C.zeros(3).bernoulli_(C.tensor([0.5, 0.2]))


def test_exponential(device):
    x = to_np(C.empty(N, device=device).exponential_(2.0))
    assert x.min() >= 0 and abs(x.mean() - 0.5) < 0.01
    g = C.Generator(device).manual_seed(3)
    a = to_np(C.empty(9, device=device).exponential_(generator=g))
    g.manual_seed(3)
    np.testing.assert_array_equal(to_np(C.empty(9, device=device).exponential_(generator=g)), a)


def test_exponential_errors():
    with err(RuntimeError, "exponential_ expects lambda > 0.0, but found lambda=0"):
        C.zeros(3).exponential_(0)
    with err(RuntimeError, "exponential_ expects lambda > 0.0, but found lambda=-1"):
        C.zeros(3).exponential_(-1)
    with err(
        RuntimeError,
        "Exponential distribution is a continuous probability distribution. dtype must be a "
        "floating point but you specified Long",
    ):
        C.zeros(3, dtype=C.int64).exponential_(1)


def test_multinomial(device):
    probs = C.tensor([[0.0, 1.0, 0.0], [0.0, 0.0, 5.0]], device=device)
    assert C.multinomial(probs, 4, replacement=True).tolist() == [[1] * 4, [2] * 4]
    assert probs.multinomial(1).tolist() == [[1], [2]]
    w = C.tensor([1.0, 0.0, 2.0, 3.0], device=device)
    s = C.multinomial(w, 3)
    assert s.dtype is C.int64 and sorted(s.tolist()) == [0, 2, 3]
    counts = np.bincount(to_np(C.multinomial(w, N, True)), minlength=4) / N
    np.testing.assert_allclose(counts, [1 / 6, 0, 1 / 3, 1 / 2], atol=0.01)
    assert C.multinomial(C.ones(0, 3, device=device), 2).shape == (0, 2)
    out = C.empty(2, dtype=C.int64, device=device)
    assert C.multinomial(w, 2, out=out) is out
    assert C.multinomial(w.half(), 2, True).shape == (2,)


@pytest.mark.parametrize(
    "call, exc, msg",
    [
        (lambda: C.multinomial(C.tensor([1.0, 2]), 3), RuntimeError,
         "cannot sample n_sample > prob_dist.size(-1) samples without replacement"),
        (lambda: C.multinomial(C.tensor([1.0, 2]), 0), RuntimeError,
         "cannot sample n_sample <= 0 samples"),
        (lambda: C.multinomial(C.tensor([1, 2]), 1), RuntimeError,
         "multinomial only supports floating-point dtypes for input, got: Long"),
        (lambda: C.multinomial(C.tensor(1.0), 1), RuntimeError, "prob_dist must be 1 or 2 dim"),
        (lambda: C.multinomial(C.ones(2, 2, 2), 1), RuntimeError,
         "prob_dist must be 1 or 2 dim"),
        (lambda: C.multinomial(C.tensor([0.0, 0]), 1), RuntimeError,
         "invalid multinomial distribution (sum of probabilities <= 0)"),
        (lambda: C.multinomial(C.tensor([0.0, 0]), 2, True), RuntimeError,
         "invalid multinomial distribution (sum of probabilities <= 0)"),
        (lambda: C.multinomial(C.tensor([-1.0, 2]), 2, True), RuntimeError,
         "invalid multinomial distribution (encountering probability entry < 0)"),
        (lambda: C.multinomial(C.tensor([float("inf"), 2]), 2, True), RuntimeError,
         "invalid multinomial distribution (encountering probability entry = infinity or NaN)"),
        (lambda: C.multinomial(C.tensor([float("nan"), 2]), 1), RuntimeError,
         "probability tensor contains either `inf`, `nan` or element < 0"),
        (lambda: C.multinomial(C.tensor([1.0, 2]), 1, out=C.empty(1)), RuntimeError,
         "multinomial expects Long tensor out, got: Float"),
        (lambda: C.multinomial(C.tensor([[1.0, 2], [0, 0]]), 1), RuntimeError,
         "invalid multinomial distribution (sum of probabilities <= 0)"),
        (lambda: C.multinomial(C.ones(3, 0), 2), RuntimeError,
         "cannot sample n_sample > prob_dist.size(-1) samples without replacement"),
        (lambda: C.multinomial(C.tensor([1.0, 2]), 2.5), TypeError,
         "multinomial(): argument 'num_samples' (position 2) must be int, not float"),
    ],
)  # fmt: skip
def test_multinomial_errors(call, exc, msg):
    with err(exc, msg):
        call()


def test_dropout_is_a_scaled_bernoulli_mask():
    C.manual_seed(5)
    y = C.nn.functional.dropout(C.full((1000,), 2.0), 0.25)
    C.manual_seed(5)
    mask = C.empty(1000).bernoulli_(0.75)
    np.testing.assert_array_equal(to_np(y), to_np(C.full((1000,), 2.0) * mask.div_(0.75)))


def test_random_fills_record_in_place_writes():
    """As torch: the old values get a zero gradient through the fill's node."""
    for fill, node in [
        (lambda t: t.bernoulli_(0.5), "BernoulliBackward2"),
        (lambda t: t.bernoulli_(C.full((3,), 0.5)), "BernoulliBackward1"),
        (lambda t: t.exponential_(), "ExponentialBackward0"),
    ]:
        x = C.ones(3, requires_grad=True)
        y = fill(x.clone())
        assert type(y.grad_fn).__name__ == node
        (y * 2).sum().backward()
        assert x.grad.tolist() == [0.0, 0.0, 0.0]
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad"):
        C.ones(3, requires_grad=True).exponential_()
