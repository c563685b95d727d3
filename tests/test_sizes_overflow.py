"""Sizes whose element, byte or stride arithmetic overflows int64: torch's errors, never a
wrapped size (a small storage under a huge tensor), a crash or a corrupted result.

Expected messages are what PyTorch 2.11 gives for the same calls.
"""

from __future__ import annotations

import re

import pytest

import cudalite
from conftest import exact

C = cudalite
BIG = 2**62
STORAGE = "Storage size calculation overflowed with sizes=[4611686018427387904]"
NUMEL = "numel: integer multiplication overflow"
STRIDE = "Stride calculation overflowed"


def _unpack(fn, pos=1, name="size"):
    return (
        f"{fn}(): argument '{name}' failed to unpack the object at pos {pos} with error "
        '"Overflow when unpacking long long"'
    )


@pytest.fixture(autouse=True)
def _still_usable(device):
    """After every refused call, memory is intact and the process still computes."""
    keep = C.arange(1000, dtype=C.float32, device=device)
    yield
    assert keep.sum().item() == 499500.0
    assert (C.ones(3, device=device) + 1).tolist() == [2.0, 2.0, 2.0]


# empty(2**62) had a 0-byte storage, empty(2**62 + 16) a 64-byte one (writes went past it).
@pytest.mark.parametrize(
    "sizes",
    [(BIG,), (BIG + 16,), (2**63 - 1,), (2**32, 2**32), (2**31, 2**31), (BIG, BIG, 0)],
)
def test_empty_bytes_overflow(sizes, device):
    msg = f"Storage size calculation overflowed with sizes={list(sizes)}"
    with pytest.raises(RuntimeError, match=exact(msg)):
        C.empty(*sizes, device=device)


@pytest.mark.parametrize(
    "dtype", [C.float64, C.int64, C.complex64] if hasattr(C, "complex64") else [C.float64, C.int64]
)
def test_empty_bytes_overflow_by_itemsize(dtype, device):
    with pytest.raises(
        RuntimeError,
        match=exact("Storage size calculation overflowed with sizes=[2305843009213693952]"),
    ):
        C.empty(2**61, dtype=dtype, device=device)


def test_empty_zero_size_with_huge_dims(device):
    t = C.empty(BIG, 0, device=device)
    assert t.shape == (BIG, 0) and t.numel() == 0 and t.stride() == (1, 1)


@pytest.mark.parametrize("sizes", [(0, BIG, BIG), (0, BIG, 4), (0, 2**61, 4)])
def test_empty_stride_overflow(sizes, device):
    with pytest.raises(RuntimeError, match=exact(STRIDE)):
        C.empty(*sizes, device=device)


def test_empty_beyond_int64_is_torch_unpack_error():
    # was "Unable to cast Python instance of type <class 'int'> to C++ type '?'"
    with pytest.raises(TypeError, match=exact(_unpack("empty"))):
        C.empty(2**63)
    with pytest.raises(TypeError, match=exact(_unpack("empty", 2))):
        C.empty(0, 2**63)
    with pytest.raises(TypeError, match=exact(_unpack("empty"))):
        C.empty(-(2**63) - 1)
    with pytest.raises(TypeError, match=exact(_unpack("zeros"))):
        C.zeros(2**64)
    with pytest.raises(TypeError, match=exact(_unpack("full"))):
        C.full((2**63,), 1.0)
    with pytest.raises(TypeError, match=exact(_unpack("randn"))):
        C.randn(2**63)


def test_methods_beyond_int64_are_torch_unpack_errors():
    x = C.ones(4)
    with pytest.raises(TypeError, match=exact(_unpack("new_empty"))):
        x.new_empty(2**63)
    with pytest.raises(TypeError, match=exact(_unpack("expand"))):
        x.expand(2**63)
    with pytest.raises(TypeError, match=exact(_unpack("view"))):
        x.view(2**63)
    with pytest.raises(TypeError, match=exact(_unpack("reshape", name="shape"))):
        x.reshape(2**63)
    with pytest.raises(TypeError, match=exact(_unpack("resize_"))):
        x.resize_(2**63)
    with pytest.raises(TypeError, match=exact(_unpack("repeat", name="repeats"))):
        x.repeat(2**63)
    with pytest.raises(TypeError, match=exact(_unpack("as_strided"))):
        x.as_strided((2**63,), (1,))
    for call in (lambda: x.sum(2**63), lambda: C.eye(2**63), lambda: C.linspace(0, 1, 2**63)):
        with pytest.raises(ValueError, match=exact("Overflow when unpacking long long")):
            call()


# These segfaulted: the factories wrote through the wrapped (tiny) storage.
@pytest.mark.parametrize(
    "make",
    [
        lambda d: C.zeros(BIG, device=d),
        lambda d: C.ones(BIG, device=d),
        lambda d: C.full((BIG,), 1.0, device=d),
        lambda d: C.arange(BIG, device=d),
        lambda d: C.arange(0, BIG, 1.0, device=d),
        lambda d: C.linspace(0, 1, BIG, device=d),
        lambda d: C.randn(BIG, device=d),
        lambda d: C.rand(BIG, device=d),
        lambda d: C.randint(0, 5, (BIG,), device=d),
        lambda d: C.randperm(BIG, device=d),
        lambda d: C.ones(1, device=d).expand(BIG) + 1,
        lambda d: C.ones(1, device=d).expand(BIG) * C.ones(1, device=d),
        lambda d: C.ones(1, device=d).expand(BIG).clone(),
        lambda d: C.ones(2, device=d).new_empty(BIG),
        lambda d: C.ones(2, device=d).new_zeros(BIG),
        lambda d: C.ones(2, device=d).new_ones(BIG),
        lambda d: C.ones(2, device=d).new_full((BIG,), 1),
        lambda d: C.ones(2, device=d).resize_(BIG),
    ],
)
def test_factories_and_results_overflow(make, device):
    with pytest.raises(RuntimeError, match=exact(STORAGE)):
        make(device)


def test_contiguous_overflow_keeps_its_error_once_autograd_is_armed(device):
    C.ones(1, requires_grad=True)  # arms autograd: contiguous() is its wrapper from here on
    for x in (
        C.ones(1, device=device).expand(BIG),
        C.ones(1, device=device, requires_grad=True).expand(BIG),
    ):
        with pytest.raises(RuntimeError, match=exact(STORAGE)):
            x.contiguous()


def test_full_2d_overflow(device):
    with pytest.raises(RuntimeError, match=re.escape("sizes=[2147483648, 2147483648]")):
        C.full((2**31, 2**31), 1.0, device=device)


def test_eye_overflow(device):
    with pytest.raises(RuntimeError, match=exact(NUMEL)):
        C.eye(BIG, device=device)
    with pytest.raises(RuntimeError, match=exact(NUMEL)):
        C.eye(2**32, 2**32, device=device)
    with pytest.raises(RuntimeError, match=exact(f"{STORAGE[:-1]}, 1]")):
        C.eye(BIG, 1, device=device)
    assert C.eye(0, BIG, device=device).shape == (0, BIG)


def test_repeat_overflow_and_new_memory(device):
    with pytest.raises(RuntimeError, match=exact(STORAGE)):
        C.ones(2, device=device).repeat(2**61)
    with pytest.raises(RuntimeError, match=exact(STORAGE)):
        C.tensor([1.0], device=device).repeat(BIG)  # was an expanded view of the input
    x = C.tensor([1.0, 2.0], device=device)
    y = x.repeat(1)
    y[0] = 5.0
    assert x.tolist() == [1.0, 2.0]
    assert x.repeat(2, 2).tolist() == [[1.0, 2.0, 1.0, 2.0]] * 2


def test_arange_count_overflow(device):
    msg = "invalid size, possible overflow?"
    with pytest.raises(RuntimeError, match=exact(msg)):
        C.arange(-(2**63), 2**63 - 1, 1, device=device)
    with pytest.raises(RuntimeError, match=exact(msg)):
        C.arange(0.0, 1e30, 1.0, device=device)
    msg = "value cannot be converted to type int64_t without overflow"
    with pytest.raises(RuntimeError, match=exact(msg)):
        C.arange(2**63, device=device)
    with pytest.raises(RuntimeError, match=exact(msg)):
        C.arange(0, 10, 2**63, device=device)


def test_expand_numel_overflow(device):
    x = C.ones(1, device=device)
    with pytest.raises(RuntimeError, match=exact(NUMEL)):
        x.expand(BIG, 4)
    with pytest.raises(RuntimeError, match=exact(NUMEL)):
        x.expand(2**40, 2**40)
    with pytest.raises(RuntimeError, match=exact(NUMEL)):
        C.ones(2, 2, device=device).expand(BIG, 2, 2)
    # A view of 2**62 elements is fine: it needs one element of memory.
    v = x.expand(BIG)
    assert v.shape == (BIG,) and v.stride() == (0,) and v[BIG - 1].item() == 1.0
    assert v.unsqueeze(0).shape == (1, BIG)


def test_view_dtype_numel_overflow(device):
    y = C.ones(1, 1, dtype=C.float64, device=device).expand(BIG, 1)
    with pytest.raises(RuntimeError, match=exact(NUMEL)):
        y.view(C.uint8)


# reshape(2**63 - 1, -1, 4) of 16 elements returned a view with a negative dimension.
@pytest.mark.parametrize("op", ["reshape", "view"])
@pytest.mark.parametrize(
    "shape", [(2**63 - 1, -1, 4), (BIG, 4, 0), (2**32, 2**32), (2**63 - 1, 2**63 - 1)]
)
def test_reshape_size_overflow(op, shape, device):
    x = C.ones(16, device=device)
    msg = f"shape '{list(shape)}' is invalid for input of size 16"
    with pytest.raises(RuntimeError, match=exact(msg)):
        getattr(x, op)(*shape)


def test_reshape_of_empty_with_huge_sizes(device):
    x = C.ones(0, device=device)
    with pytest.raises(RuntimeError, match=exact(NUMEL)):
        x.reshape(BIG, BIG, 0)
    assert x.reshape(0, BIG, BIG).shape == (0, BIG, BIG)
    with pytest.raises(RuntimeError, match="cannot reshape tensor of 0 elements into shape"):
        x.reshape(BIG, 0, -1)
    assert x.reshape(BIG, -1).shape == (BIG, 0)


def test_unflatten_overflow(device):
    x = C.ones(2, device=device)
    with pytest.raises(RuntimeError, match="don't multiply up to the size of dim 0"):
        x.unflatten(0, (2**63 - 1, 2**63 - 1))


def test_as_strided_overflow(device):
    x = C.ones(2, device=device)
    msg = f"Storage size calculation overflowed with sizes=[{BIG}, {BIG}] and strides=[1, 1]"
    with pytest.raises(RuntimeError, match=exact(msg)):
        x.as_strided((BIG, BIG), (1, 1))
    msg = f"Storage size calculation overflowed with sizes=[2] and strides=[{BIG}]"
    with pytest.raises(RuntimeError, match=exact(msg)):
        x.as_strided((2,), (BIG,))
    msg = "Storage size calculation overflowed with sizes=[2] and strides=[1]"
    with pytest.raises(RuntimeError, match=exact(msg)):
        x.as_strided((2,), (1,), 2**63 - 1)
    assert x.as_strided((BIG,), (0,)).shape == (BIG,)


def test_empty_strided_overflow(device):
    for size, stride in [((BIG,), (1,)), ((2, 2), (BIG, 1)), ((2, 2), (2**63 - 1, 1))]:
        msg = f"{STORAGE.split('=')[0]}={list(size)} and strides={list(stride)}"
        with pytest.raises(RuntimeError, match=exact(msg)):
            C.empty_strided(size, stride, device=device)
        with pytest.raises(RuntimeError, match=exact(msg)):
            C.ones(1, device=device).new_empty_strided(size, stride)


def test_resize_overflow(device):
    x = C.ones(2, device=device)
    with pytest.raises(RuntimeError, match=exact(NUMEL)):
        x.resize_(2**32, 2**32)
    msg = "Storage size calculation overflowed with sizes=[9223372036854775807]"
    with pytest.raises(RuntimeError, match=exact(msg)):
        x.resize_(2**63 - 1)
    with pytest.raises(RuntimeError, match=exact(STRIDE)):
        x.resize_(0, BIG, BIG)
    assert x.shape == (2,) and x.tolist() == [1.0, 1.0]  # unchanged after the errors
    assert x.resize_(BIG, 0).shape == (BIG, 0)


def test_slice_with_huge_step(device):
    # Python's rule: a step past the end keeps the first element (its stride never moves).
    assert C.arange(4, device=device)[:: 2**63 - 1].tolist() == [0]
    assert C.arange(16, device=device).reshape(4, 4)[:: 2**63 - 1].tolist() == [[0, 1, 2, 3]]
    assert C.arange(4, device=device)[2**62 : 2**63 - 1].numel() == 0


def test_indices_at_the_edges(device):
    x = C.ones(2, device=device)
    for i in (BIG, 2**63 - 1, -(2**63)):
        with pytest.raises(IndexError, match=f"index {i} is out of bounds"):
            x[i]


def test_cat_sizes_overflow(device):
    x = C.ones(1, device=device).expand(BIG)
    msg = (
        "cat(): the sizes along dimension 0 add up to more than a tensor can hold "
        "(9223372036854775807 elements)"
    )
    for n in (2, 4):  # torch wraps around here: a negative size, or a (0,) result for 4
        with pytest.raises(RuntimeError, match=exact(msg)):
            C.cat([x] * n)
    msg = f"Storage size calculation overflowed with sizes=[{BIG + 1}]"
    with pytest.raises(RuntimeError, match=exact(msg)):
        C.cat([x, C.ones(1, device=device)])


def test_matmul_result_overflow(device):
    a = C.ones(1, 1, device=device)
    with pytest.raises(RuntimeError, match=exact(f"{STORAGE[:-1]}, 1]")):
        a.expand(BIG, 1) @ a
    with pytest.raises(RuntimeError, match=exact(f"{STORAGE[:-1]}, 1]")):
        a.expand(BIG, 1).mm(a)
    msg = "Storage size calculation overflowed with sizes=[1099511627776, 1099511627776]"
    with pytest.raises(RuntimeError, match=exact(msg)):
        a.expand(2**40, 1) @ a.expand(1, 2**40)


@pytest.mark.parametrize(
    "call",
    [
        lambda x: x.unsqueeze(2**63),
        lambda x: x.select(0, 2**64),
        lambda x: x.narrow(0, 2**63, 1),
        lambda x: x.transpose(0, 2**63),
        lambda x: x.movedim(2**63, 0),
        lambda x: x.flatten(2**63),
        lambda x: x.as_strided((1,), (1,), 2**63),
        lambda x: x.sum(-(2**63) - 1),
    ],
)
def test_int_arguments_beyond_int64(call, device):
    # was pybind11's "incompatible function arguments" TypeError
    with pytest.raises(ValueError, match=exact("Overflow when unpacking long long")):
        call(C.ones(4, device=device))
