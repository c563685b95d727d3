"""torch's bounds checks of random_, randint and uniform_ for every dtype
(python/cudalite/_random_bounds.py, csrc/ops/random.cpp), with torch 2.11's messages."""

from __future__ import annotations

import re
import warnings

import numpy as np
import pytest

import cudalite as C
from conftest import to_np

I64_MIN, I64_MAX = -(2**63), 2**63 - 1


def err(exc, msg):
    return pytest.raises(exc, match="^" + re.escape(msg) + "$")


def precision_warning(what, digits, cpp):
    return (
        f"{what} is out of bounds [-(2^{digits}), 2^{digits}]. Due to precision limitations "
        f"{cpp} can support discrete uniform distribution only within this range. This warning "
        "will become an error in version 1.7 release, please fix the code in advance"
    )


@pytest.mark.parametrize(
    "dtype, lo, hi, msg",
    [
        (C.float16, 0, 70000, "to - 1 is out of bounds for c10::Half"),
        (C.float16, -70000, -65505, "from is out of bounds for c10::Half"),
        (C.float16, 2**62, I64_MAX, "from is out of bounds for c10::Half"),
        (C.float16, I64_MIN, 0, "from is out of bounds for c10::Half"),
        # 4097 is not a float16: from moves up to 4100, past to
        (C.float16, 4097, 4099, "random_ expects 'from' casted to dtype to be less than 'to' "
         "casted to dtype, but got from=4100 >= to=4099"),
        (C.float32, 5, 5, "random_ expects 'from' to be less than 'to', but got from=5 >= to=5"),
    ],
)  # fmt: skip
def test_random_from_to_floating_errors(device, dtype, lo, hi, msg):
    t = C.zeros(3, dtype=dtype, device=device)
    with err(RuntimeError, msg):
        t.random_(lo, hi)
    with err(RuntimeError, msg):
        C.randint(lo, hi, (3,), dtype=dtype, device=device)
    with err(RuntimeError, msg):  # checked before the empty tensor returns
        C.zeros(0, dtype=dtype, device=device).random_(lo, hi)
    np.testing.assert_array_equal(to_np(t), [0, 0, 0])  # untouched


@pytest.mark.parametrize(
    "dtype, lo, hi, digits, cpp, warned",
    [
        (C.float16, 0, 5000, 11, "c10::Half", ["to - 1"]),
        (C.float16, -5000, 0, 11, "c10::Half", ["from"]),
        (C.float32, 2**24 + 1, 2**24 + 3, 24, "float", ["from", "to - 1"]),
        (C.bfloat16, 300, 400, 8, "c10::BFloat16", ["from", "to - 1"]),
        (C.float64, -(2**60), 2**60, 53, "double", ["from", "to - 1"]),
        (C.float16, 0, 2048, 11, "c10::Half", []),
    ],
)
def test_random_precision_warnings(device, dtype, lo, hi, digits, cpp, warned):
    expected = [precision_warning(w, digits, cpp) for w in warned]
    for call in (
        lambda: C.zeros(64, dtype=dtype, device=device).random_(lo, hi),
        lambda: C.randint(lo, hi, (64,), dtype=dtype, device=device),
        lambda: C.randint_like(C.zeros(64, dtype=dtype, device=device), lo, hi),
    ):
        with warnings.catch_warnings(record=True) as record:
            warnings.simplefilter("always")
            out = call()
        assert [str(w.message) for w in record] == expected
        assert all(w.category is UserWarning for w in record)
        assert [w.filename for w in record] == [__file__] * len(record)
        v = to_np(out.double())
        assert v.min() >= lo - 2 ** max(abs(lo).bit_length() - digits, 0)
        assert v.max() <= hi


def test_random_bounds_move_to_the_dtypes_values(device):
    # float16 holds multiples of 4 between 4096 and 8192: from=4097 moves up to 4100 (4098
    # rounds down to 4096), and [4100, 4102) always gives 4100.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        t = C.zeros(1000, dtype=C.float16, device=device).random_(4097, 4102)
        assert set(to_np(t.float()).tolist()) == {4100.0}
        # float32 above 2^24: 2^24 + 1 rounds to 2^24 (ties to even)
        f = C.zeros(1000, device=device).random_(2**24 + 1, 2**24 + 3)
        assert set(to_np(f.double()).tolist()) == {2**24, 2**24 + 2}
        # bfloat16 between 256 and 512: even integers; 257 rounds to 256 (ties to even)
        b = C.zeros(1000, dtype=C.bfloat16, device=device).random_(257, 259)
        assert set(to_np(b.float()).tolist()) == {256.0, 258.0}
    h = C.zeros(4000, dtype=C.float16, device=device).random_(-5, 5)
    assert set(to_np(h.float()).tolist()) == set(range(-5, 5))


@pytest.mark.parametrize("dtype", [C.int64, C.float64, C.float32, C.bfloat16])
def test_random_full_int64_range(device, dtype):
    v = to_np(C.zeros(2000, dtype=dtype, device=device).random_(I64_MIN, None).double())
    assert v.min() < -(2**61) and v.max() > 2**61  # both signs, the whole range


def test_random_full_range_refused(device):
    kernel = f"random_full_64_bits_range_kernel_{device.split(':')[0]}"
    for dtype in (C.int32, C.uint8, C.int16):
        with err(RuntimeError, f"{kernel} handles only int64, double, float and bfloat16"):
            C.zeros(2, dtype=dtype, device=device).random_(I64_MIN, None)
    with err(NotImplementedError, f"\"{kernel}\" not implemented for 'Bool'"):
        C.zeros(2, dtype=C.bool, device=device).random_(I64_MIN, None)
    half = C.zeros(2, dtype=C.float16, device=device)
    if device == "cpu":
        with err(NotImplementedError, f"\"{kernel}\" not implemented for 'Half'"):
            half.random_(I64_MIN, None)
    else:
        with err(RuntimeError, f"{kernel} handles only int64, double, float and bfloat16"):
            half.random_(I64_MIN, None)


def test_random_from_none_floating(device):
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        v = to_np(C.zeros(4000, dtype=C.float16, device=device).random_(-5000, None).float())
    assert [str(w.message) for w in record] == [precision_warning("from", 11, "c10::Half")]
    assert v.min() >= -5000 and v.max() <= 2048
    with err(
        RuntimeError,
        "random_ expects 'from' casted to dtype to be less than or equal to 'to_inc' casted "
        "to dtype, but got from=5000 > to_inc=2048",
    ):
        C.zeros(2, dtype=C.float16, device=device).random_(5000, None)
    with err(RuntimeError, "from is out of bounds for c10::Half"):
        C.zeros(2, dtype=C.float16, device=device).random_(70000, None)


@pytest.mark.parametrize(
    "dtype, lo, hi, msg",
    [
        (C.float16, -7e4, 7e4, "from is out of bounds for c10::Half"),
        (C.float16, 0, 7e4, "to is out of bounds for c10::Half"),
        (C.bfloat16, 0, 1e39, "to is out of bounds for c10::BFloat16"),
        (C.float32, 0, 1e300, "to is out of bounds for float"),
        (C.float32, float("nan"), 1, "from is out of bounds for float"),
        (C.float32, 0, float("inf"), "to is out of bounds for float"),
        (C.float64, float("-inf"), 0, "from is out of bounds for double"),
        (C.float32, 3, 2, "uniform_ expects to return a [from, to) range, but found from=3 > to=2"),
        (C.float32, -3e38, 3e38, "uniform_ expects to-from <= std::numeric_limits<Float>::max(), "
         "but found to=3e+38 and from=-3e+38 which result in to-from to exceed the limit"),
        (C.float64, -1e308, 1e308, "uniform_ expects to-from <= "
         "std::numeric_limits<Double>::max(), but found to=1e+308 and from=-1e+308 which "
         "result in to-from to exceed the limit"),
        (C.float16, -4e4, 4e4, "uniform_ expects to-from <= std::numeric_limits<Half>::max(), "
         "but found to=40000 and from=-40000 which result in to-from to exceed the limit"),
    ],
)  # fmt: skip
def test_uniform_bounds(device, dtype, lo, hi, msg):
    t = C.zeros(3, dtype=dtype, device=device)
    with err(RuntimeError, msg):
        t.uniform_(lo, hi)
    np.testing.assert_array_equal(to_np(t.double()), [0, 0, 0])  # untouched


def test_uniform_at_the_dtypes_limits(device):
    h = to_np(C.empty(1000, dtype=C.float16, device=device).uniform_(-3e4, 3e4).float())
    assert np.isfinite(h).all() and h.min() >= -3e4 and h.max() <= 3e4
    f = to_np(C.empty(1000, device=device).uniform_(0, 3e38))
    assert np.isfinite(f).all() and f.max() > 1e38
    assert (to_np(C.empty(10, device=device).uniform_(1, 1)) == 1).all()
