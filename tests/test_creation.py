"""Creation: tensor() inference and errors, as_tensor and the factories (the legacy
constructors are in test_legacy.py).

Expected dtypes and messages are what PyTorch 2.11 gives for the same calls.
"""

from __future__ import annotations

import inspect
import re

import numpy as np
import pytest

import cudalite
from conftest import to_np

C = cudalite

# torch's argument-parser errors for sizes.
_NOT = "argument 'size' (position {}) must be tuple of ints, not {}"
_ELEMENT = (
    "argument 'size' (position 1) must be tuple of ints, but found element of type {} at pos 0"
)
_UNPACK = (
    "argument 'size' failed to unpack the object at pos 2 with error "
    '"type must be tuple of ints,but got {}"'
)


# ---- tensor(): dtype inference ----


@pytest.mark.parametrize(
    "data, dtype, shape",
    [
        (True, "bool", ()),
        (3, "int64", ()),
        (3.5, "float32", ()),
        ([True, False], "bool", (2,)),
        ([1, 2], "int64", (2,)),
        ([1, 2.0], "float32", (2,)),
        ([True, 2], "int64", (2,)),
        ([True, 2.5], "float32", (2,)),
        ([[1, 2], [3, 4]], "int64", (2, 2)),
        ([[[1.0], [2.0]]], "float32", (1, 2, 1)),
        ((1, 2), "int64", (2,)),
        (range(3), "int64", (3,)),
        ([], "float32", (0,)),
        ([[]], "float32", (1, 0)),
        ([[[]]], "float32", (1, 1, 0)),
        (float("nan"), "float32", ()),
    ],
)
def test_tensor_inference(data, dtype, shape, device):
    t = C.tensor(data, device=device)
    assert t.dtype is getattr(C, dtype)
    assert tuple(t.shape) == shape
    assert t.device.type == device
    np.testing.assert_array_equal(to_np(t), np.array(data, dtype=to_np(t).dtype))


@pytest.mark.parametrize(
    "data, dtype",
    [
        (np.float32(1.5), "float32"),
        (np.float64(1.5), "float64"),
        (np.float16(1.5), "float16"),
        (np.int32(4), "int32"),
        (np.int16(4), "int16"),
        (np.int8(-4), "int8"),
        (np.uint8(200), "uint8"),
        (np.bool_(True), "bool"),
        (np.array(2.5), "float64"),
        (np.array([1, 2], dtype=np.int16), "int16"),
        (np.array([[1, 2]], dtype=np.uint8), "uint8"),
        ([np.float32(1), 2], "float32"),
        ([np.float64(1), np.float32(2.0)], "float64"),
        ([np.float64(1), 2.0], "float64"),
        ([np.int32(1), np.int32(2)], "int32"),
        ([np.int32(1), 2], "int64"),
        ([np.float16(1), 1.0], "float32"),
        ([[np.int16(1)]], "int16"),
        ([np.array([1, 2], dtype=np.int32), np.array([3, 4], dtype=np.int8)], "int32"),
        ([np.array([1, 2], dtype=np.float32), [3, 4]], "float32"),
        ([C.tensor(1.5), C.tensor(2.5)], "float32"),
        ([C.tensor(1, dtype=C.int8), C.tensor(2, dtype=C.int8)], "int8"),
    ],
)
def test_tensor_from_numpy_values(data, dtype):
    t = C.tensor(data)
    assert t.dtype is getattr(C, dtype)
    expected = np.array([np.asarray(x) for x in data]) if isinstance(data, list) else data
    np.testing.assert_array_equal(to_np(t), np.asarray(expected, dtype=to_np(t).dtype))


def test_tensor_numpy_array_is_copied():
    a = np.arange(4, dtype=np.float32)
    t = C.tensor(a)
    a[0] = 9
    assert t[0].item() == 0.0
    # Non-contiguous arrays copy correctly, keeping their memory order like torch.
    b = np.arange(12, dtype=np.int32).reshape(3, 4)[:, ::2]
    np.testing.assert_array_equal(to_np(C.tensor(b)), b)
    assert C.tensor(b).stride() == (2, 1)
    assert C.tensor(np.arange(12).reshape(3, 4).T).stride() == (1, 4)
    assert C.tensor(np.array(2.5)).shape == ()


@pytest.mark.parametrize("make", [C.tensor, C.as_tensor, C.from_numpy])
def test_numpy_arrays_torch_refuses(make):
    with pytest.raises(ValueError, match="^given numpy array has byte order different from the "):
        make(np.arange(3, dtype=">f8"))
    with pytest.raises(ValueError, match="^At least one stride in the given numpy array is neg"):
        make(np.arange(4)[::-1])


def test_zero_size_ragged_data_is_not_checked():
    # torch stores nothing when a dimension is 0, so the second row is never looked at.
    t = C.tensor([[], [1]])
    assert t.shape == (2, 0) and t.dtype is C.float32


def test_tensor_explicit_dtype(device):
    t = C.tensor([1.7, -2.2], dtype=C.int32, device=device)
    np.testing.assert_array_equal(to_np(t), np.array([1.7, -2.2]).astype(np.int32))
    assert C.tensor([1, 2], dtype=C.bool).tolist() == [True, True]
    assert C.tensor(-1, dtype=C.uint8).item() == np.array(-1).astype(np.uint8)
    assert C.tensor(1e39, dtype=C.float32).item() == np.float32(np.inf)
    assert C.tensor([2**63], dtype=C.float32).item() == np.float32(2.0**63)
    assert C.tensor(2**31 - 1, dtype=C.int32).item() == 2**31 - 1
    assert C.tensor(-(2**63)).item() == -(2**63)


def test_tensor_from_tensor_warns_and_copies():
    a = C.tensor([1.0, 2.0])
    with pytest.warns(UserWarning, match="To copy construct from a tensor"):
        b = C.tensor(a)
    b[0] = 5
    assert a[0].item() == 1.0


# ---- tensor(): errors ----


@pytest.mark.parametrize(
    "data, n, dim, got",
    [
        ([[1, 2], [3]], 2, 1, 1),
        ([[1, 2], [3, 4, 5]], 2, 1, 3),
        ([[1], [2, 3]], 1, 1, 2),
        ([[[1, 2]], [[3]]], 2, 2, 1),
        ([[1, 2], []], 2, 1, 0),
    ],
)
def test_ragged_value_error(data, n, dim, got):
    with pytest.raises(
        ValueError, match=rf"^expected sequence of length {n} at dim {dim} \(got {got}\)$"
    ):
        C.tensor(data)


@pytest.mark.parametrize(
    "data, kwargs, exc, msg",
    [
        ("abc", {}, TypeError, "new(): invalid data type 'str'"),
        (b"ab", {}, TypeError, "new(): invalid data type 'bytes'"),
        (["a"], {}, ValueError, "too many dimensions 'str'"),
        (None, {}, RuntimeError, "Could not infer dtype of NoneType"),
        ([1, None], {}, RuntimeError, "Could not infer dtype of NoneType"),
        ([object()], {}, RuntimeError, "Could not infer dtype of object"),
        ([[1, 2], 3], {}, TypeError, "not a sequence"),
        ([[1], C.tensor(2)], {}, TypeError, "not a sequence"),
        ([1, [2, 3]], {}, TypeError, "'list' object cannot be interpreted as an integer"),
        ([1, (1,)], {}, TypeError, "'tuple' object cannot be interpreted as an integer"),
        ([1.0, [2, 3]], {}, TypeError, "must be real number, not list"),
        ([1, [1]], {"dtype": C.float16}, TypeError, "must be real number, not list"),
        ([C.tensor([1, 2]), C.tensor([3, 4])], {}, TypeError,
         "only integer tensors of a single element can be converted to an index"),
        ([C.tensor([1.0, 2]), C.tensor([3.0, 4])], {}, ValueError,
         "only one element tensors can be converted to Python scalars"),
        (2**63, {}, ValueError, "Overflow when unpacking long long"),
        ([1, -(2**63) - 1], {}, ValueError, "Overflow when unpacking long long"),
    ],
)  # fmt: skip
def test_tensor_errors(data, kwargs, exc, msg):
    with pytest.raises(exc, match=f"^{re.escape(msg)}$"):
        C.tensor(data, **kwargs)


@pytest.mark.parametrize(
    "value, dtype",
    [
        (300, "uint8"), (-256, "uint8"), (-1.0, "uint8"), (1e19, "uint8"), (128, "int8"),
        (-129, "int8"), (70000, "int16"), (2**31, "int32"), (float("inf"), "int32"),
        (float("nan"), "int32"), (float("inf"), "int64"),
    ],
)  # fmt: skip
def test_tensor_value_overflow(value, dtype):
    msg = f"value cannot be converted to type {dtype} without overflow"
    with pytest.raises(RuntimeError, match=f"^{msg}$"):
        C.tensor([value], dtype=getattr(C, dtype))


@pytest.mark.parametrize(
    "value, dtype, cname",
    [
        (300, "uint8", "uint8_t"), (-1.0, "uint8", "uint8_t"), (128, "int8", "int8_t"),
        (2**40, "int32", "int"), (2**40, "int16", "int16_t"), (float("nan"), "int64", "int64_t"),
        (1e39, "float32", "float"),
    ],
)  # fmt: skip
def test_fill_value_overflow(value, dtype, cname):
    msg = f"^value cannot be converted to type {cname} without overflow$"
    with pytest.raises(RuntimeError, match=msg):
        C.full((2,), value, dtype=getattr(C, dtype))
    x = C.zeros(2, dtype=getattr(C, dtype))
    with pytest.raises(RuntimeError, match=msg):
        x.fill_(value)
    with pytest.raises(RuntimeError, match=msg):
        x[0] = value


def test_fill_values_that_fit_or_overflow():
    # Negative ints wrap into uint8; floats are truncated into ints; a finite number beyond a
    # floating dtype's range is an error in fills, inf is not (torch 2.11's rules).
    assert C.full((1,), -1, dtype=C.uint8).item() == np.array(-1).astype(np.uint8)
    assert C.full((1,), 2.5, dtype=C.int32).item() == int(np.int32(2.5))
    assert C.full((1,), float("inf"), dtype=C.float16).item() == float("inf")
    assert C.full((1,), 65504.0, dtype=C.float16).item() == 65504.0
    for dt, big, name in [
        (C.float16, 65519.0, "c10::Half"),
        (C.bfloat16, 1e39, "c10::BFloat16"),
        (C.float32, 1e39, "float"),
    ]:
        msg = f"^value cannot be converted to type {name} without overflow$"
        with pytest.raises(RuntimeError, match=msg):
            C.full((1,), big, dtype=dt)
        with pytest.raises(RuntimeError, match=msg):
            C.zeros(2, dtype=dt).fill_(-big)
        with pytest.raises(RuntimeError, match=msg):
            C.zeros(2, dtype=dt).masked_fill(C.tensor([True, False]), big)
    # An index assignment or a where() operand saturates 16-bit floats instead.
    x = C.zeros(2, dtype=C.float16)
    x[0] = 1e10
    x[C.tensor([1])] = -1e10
    assert x.tolist() == [float("inf"), float("-inf")]
    assert C.where(C.tensor([False]), x[:1], 1e10).item() == float("inf")


def test_python_int_out_of_range_for_scalars():
    with pytest.raises(OverflowError, match="^int too big to convert$"):
        C.full((1,), 2**64)
    with pytest.raises(OverflowError, match="^int too big to convert$"):
        C.tensor([1]) + 2**64


# ---- as_tensor ----


def test_as_tensor_shares_numpy_memory():
    a = np.array([1, 2, 3])
    t = C.as_tensor(a)
    a[0] = 100
    assert t[0].item() == 100
    t[1] = 50
    assert a[1] == 50


def test_as_tensor_copies_when_dtype_changes():
    a = np.array([1, 2, 3])
    t = C.as_tensor(a, dtype=C.float32)
    a[0] = 100
    np.testing.assert_array_equal(to_np(t), np.array([1, 2, 3], dtype=np.float32))


def test_as_tensor_of_tensor():
    y = C.tensor([1.0, 2.0])
    assert C.as_tensor(y) is y
    z = C.as_tensor(y, dtype=C.float64)
    assert z is not y and z.dtype is C.float64
    assert C.as_tensor([1, 2]).dtype is C.int64
    assert C.as_tensor(3.5).dtype is C.float32


# ---- factories ----

SIZE_FORMS = [((2, 3),), ([2, 3],), (C.Size([2, 3]),), (2, 3)]


@pytest.mark.parametrize("args", SIZE_FORMS)
@pytest.mark.parametrize("fn", ["empty", "zeros", "ones", "rand", "randn"])
def test_size_forms(fn, args, device):
    t = getattr(C, fn)(*args, device=device)
    assert t.shape == (2, 3)
    assert isinstance(t.shape, C.Size)
    assert t.dtype is C.float32


def test_size_scalars_and_zero_dim():
    assert C.empty(()).shape == ()
    assert C.zeros([]).shape == ()
    assert C.empty(0).shape == (0,)
    assert C.zeros(C.tensor(2)).shape == (2,)
    assert C.zeros((C.tensor(2), 3)).shape == (2, 3)
    assert C.zeros(np.int64(2)).shape == (2,)


@pytest.mark.parametrize("fn", ["empty", "zeros", "ones", "rand", "randn"])
def test_no_size(fn):
    with pytest.raises(TypeError, match=re.escape(f"{fn}() received an invalid combination")):
        getattr(C, fn)()


@pytest.mark.parametrize("fn", ["new_empty", "new_zeros", "new_ones"])
def test_new_no_size(fn):
    with pytest.raises(
        TypeError, match=f'^{fn}\\(\\) missing 1 required positional arguments: "size"'
    ):
        getattr(C.zeros(2), fn)()


# empty() takes its common calls in C (Note [empty in one call]) and hands every other call,
# with the same arguments, to the general path: both give the same results and errors.
def test_empty_entry_point(device):
    assert C.empty.__name__ == "empty" and C.empty.__doc__.startswith("An uninitialised")
    assert "dtype" in inspect.signature(C.empty).parameters
    dev = C.device(device)
    kw_dtype = "".join(["dt", "ype"])  # a keyword name that is not interned
    cases = [
        (C.empty(2, 3, device=device), (2, 3), C.float32),
        (C.empty([4], dtype=C.int16, device=dev), (4,), C.int16),
        (C.empty((), device=device, requires_grad=False, out=None), (), C.float32),
        (C.empty(2, device=device, **{kw_dtype: C.float64}), (2,), C.float64),
        (C.empty(np.int64(3), device=device), (3,), C.float32),  # the general path
        (C.empty(2, dtype=float, device=f"{device}:0"), (2,), C.float64),
        (C.empty(C.Size([1, 2]), device=device, pin_memory=False), (1, 2), C.float32),
    ]
    for t, shape, dtype in cases:
        assert t.shape == shape and t.dtype is dtype and t.device.type == device
    t = C.empty(2, device=device, requires_grad=True)
    assert t.requires_grad and t.is_leaf
    out = C.zeros(1, device=device)
    assert C.empty(3, device=device, out=out) is out and out.shape == (3,)
    with pytest.raises(
        TypeError,
        match=re.escape(
            "empty() received an invalid combination of arguments - got (int, foo=int, "
            "device=str), but expected one of:\n * (tuple of ints size, *, tuple of names names"
        ),
    ):
        C.empty(2, device=device, foo=1)
    with pytest.raises(TypeError, match=re.escape("got (int, device=str, dtype=int), but exp")):
        C.empty(2, dtype=3, device=device)
    with pytest.raises(RuntimeError, match="Invalid device string: 'cuda:x'"):
        C.empty(2, device="cuda:x")
    with pytest.raises(RuntimeError, match="^Trying to create tensor with negative dimension"):
        C.empty(2, -1, device=device)
    with pytest.raises(TypeError, match=re.escape("empty() received an invalid combination of ")):
        C.empty(2.0, device=device)


@pytest.mark.parametrize("fn", ["empty", "ones", "rand", "randn"])
def test_negative_size(fn):
    with pytest.raises(RuntimeError, match=re.escape("negative dimension -1: [2, -1]")):
        getattr(C, fn)(2, -1)
    with pytest.raises(RuntimeError, match="^Trying to create tensor with negative dimension -3"):
        getattr(C, fn)((-3,))


def test_negative_size_zeros_and_full():
    with pytest.raises(RuntimeError, match="^zeros: Dimension size must be non-negative.$"):
        C.zeros(2, -1)
    with pytest.raises(RuntimeError, match="^zeros: Dimension size must be non-negative.$"):
        C.zeros((-1,))
    with pytest.raises(RuntimeError, match=re.escape("negative dimension -1: [-1]")):
        C.full((-1,), 1)
    with pytest.raises(RuntimeError, match=re.escape("negative dimension -1: [-1]")):
        C.zeros(1).new_zeros(-1)


@pytest.mark.parametrize(
    "fn, args, tail",
    [
        ("empty", (2.5,), _NOT.format(1, "float")),
        ("zeros", (None,), _NOT.format(1, "NoneType")),
        ("empty", (True,), _NOT.format(1, "bool")),
        ("zeros", (C.tensor([2, 3]),), _NOT.format(1, "Tensor")),
        ("full", (2, 1), _NOT.format(1, "int")),
        ("full", ("a", 1), _NOT.format(1, "str")),
        ("randint", (5, 3), _NOT.format(2, "int")),
        ("rand", (2.5,), _NOT.format(1, "float")),
        ("zeros", ([2.5],), _ELEMENT.format("float")),
        ("zeros", ((True, 2),), _ELEMENT.format("bool")),
        ("zeros", (2, 2.5), _UNPACK.format("float")),
        ("ones", ([2, [3]],), _UNPACK.format("list")),
    ],
)  # fmt: skip
def test_size_type_errors(fn, args, tail):
    with pytest.raises(TypeError, match=f"^{re.escape(f'{fn}(): {tail}')}$"):
        getattr(C, fn)(*args)


def test_size_invalid_combination():
    msg = "zeros() received an invalid combination of arguments - got (float, int), but expected"
    with pytest.raises(TypeError, match=f"^{re.escape(msg)}"):
        C.zeros(2.5, 2)


@pytest.mark.parametrize(
    "value, dtype", [(1.5, "float32"), (1, "int64"), (True, "bool"), (np.float32(1.5), "float32")]
)
def test_full_dtype_from_value(value, dtype, device):
    t = C.full((2, 2), value, device=device)
    assert t.dtype is getattr(C, dtype)
    np.testing.assert_array_equal(to_np(t), np.full((2, 2), value, dtype=to_np(t).dtype))


def test_full_explicit_dtype_and_tensor_value(device):
    assert C.full((2,), 1, dtype=C.float16, device=device).dtype is C.float16
    assert C.full([], 3.0).shape == ()
    np.testing.assert_array_equal(to_np(C.full((2,), C.tensor(1.5))), np.full(2, 1.5, np.float32))


@pytest.mark.parametrize("name", ["bool", "uint8", "int32", "int64", "float16", "float32"])
def test_zeros_ones_dtype(name, device):
    dt = getattr(C, name)
    np.testing.assert_array_equal(to_np(C.zeros(2, 3, dtype=dt, device=device)), np.zeros((2, 3)))
    np.testing.assert_array_equal(to_np(C.ones(2, 3, dtype=dt, device=device)), np.ones((2, 3)))
    assert C.ones(2, dtype=dt).dtype is dt


@pytest.mark.parametrize(
    "args, kwargs",
    [
        ((5,), {}), ((1, 4), {}), ((0, 1, 0.25), {}), ((1.0, 4), {}), ((10, 0, -3), {}),
        ((0.1, 0.4, 0.1), {}), ((5,), {"dtype": "float32"}), ((0, 5, 2), {"dtype": "uint8"}),
        ((-3, 3), {"dtype": "float64"}), ((0,), {}),
    ],
)  # fmt: skip
def test_arange_vs_numpy(args, kwargs, device):
    kw = {k: getattr(C, v) for k, v in kwargs.items()}
    t = C.arange(*args, device=device, **kw)
    floaty = any(isinstance(a, float) for a in args)
    want_dtype = kwargs.get("dtype", "float32" if floaty else "int64")
    assert t.dtype is getattr(C, want_dtype)
    np.testing.assert_allclose(to_np(t), np.arange(*args).astype(to_np(t).dtype), rtol=1e-6)


def test_arange_tensor_and_numpy_bounds():
    assert C.arange(C.tensor(3)).tolist() == np.arange(3).tolist()
    assert C.arange(np.int64(3)).tolist() == np.arange(3).tolist()


def test_arange_errors():
    with pytest.raises(RuntimeError, match="^step must be nonzero$"):
        C.arange(0, 1, 0)
    with pytest.raises(
        RuntimeError, match="^upper bound and lower bound inconsistent with step sign$"
    ):
        C.arange(0, 10, -1)


@pytest.mark.parametrize(
    "start, end, steps, dtype",
    [(0, 1, 5, None), (0, 1, 1, None), (0, 1, 0, None), (-1, 1, 4, "float64"), (0, 10, 5, "int64"),
     (2.5, -2.5, 7, "float32")],
)  # fmt: skip
def test_linspace_vs_numpy(start, end, steps, dtype, device):
    dt = getattr(C, dtype) if dtype else None
    t = C.linspace(start, end, steps, dtype=dt, device=device)
    assert t.dtype is (dt or C.float32)
    expected = np.linspace(start, end, steps).astype(to_np(t).dtype)
    np.testing.assert_allclose(to_np(t), expected, rtol=1e-6, atol=1e-7)


# torch 2.11's values (CPU), as float.hex: linspace rounds per element in the result's type
# (Note [linspace's rounding] in csrc/ops/factory.cpp), so the middle of linspace(-1, 1, 15)
# is -2**-25 in float32 and 2**-54 in float64, not 0.
F16 = ["-0x1.25p-2", "-0x1.25p-3", "0x0.0p+0", "0x1.25p-3", "0x1.25p-2"]
BF16 = ["-0x1.28p-2", "-0x1.28p-3", "0x0.0p+0", "0x1.28p-3", "0x1.28p-2"]
LINSPACE_TORCH = [
    ((-1, 1, 15, "float32"), slice(5, 10),
     ["-0x1.249248p-2", "-0x1.249244p-3", "-0x1.8p-25", "0x1.249244p-3", "0x1.249248p-2"]),
    ((-1, 1, 15, "float64"), slice(5, 10),
     ["-0x1.2492492492493p-2", "-0x1.2492492492494p-3", "0x1.0p-54", "0x1.2492492492494p-3",
      "0x1.2492492492493p-2"]),
    ((-1, 1, 15, "float16"), slice(5, 10), F16),
    ((-1, 1, 15, "bfloat16"), slice(5, 10), BF16),
    ((0.1, 0.7, 7, "float64"), slice(0, 7),
     ["0x1.999999999999ap-4", "0x1.999999999999ap-3", "0x1.3333333333333p-2",
      "0x1.9999999999999p-2", "0x1.0p-1", "0x1.3333333333333p-1", "0x1.6666666666666p-1"]),
    ((-3.3, 7.1, 9, "float32"), slice(0, 9),
     ["-0x1.a66666p+1", "-0x1.0p+1", "-0x1.666668p-1", "0x1.33333p-1", "0x1.e66668p+0",
      "0x1.99999ap+1", "0x1.2p+2", "0x1.733334p+2", "0x1.c66666p+2"]),
    ((-69.96005418590963, 63.26762076381513, 2005, "int64"), slice(1502, 1505),
     ["0x1.dp+4", "0x1.dp+4", "0x1.ep+4"]),
]  # fmt: skip


@pytest.mark.parametrize("args, where, want", LINSPACE_TORCH, ids=lambda v: str(v)[:40])
def test_linspace_rounds_as_torch(args, where, want, device):
    start, end, steps, dtype = args
    t = C.linspace(start, end, steps, dtype=getattr(C, dtype), device=device)
    got = (
        [float(v).hex() for v in t[where].float().tolist()]
        if dtype == "bfloat16"
        else [float(v).hex() for v in t[where].tolist()]
    )
    assert got == [float.fromhex(w).hex() for w in want]


def test_linspace_negative_steps():
    with pytest.raises(RuntimeError, match="^number of steps must be non-negative$"):
        C.linspace(0, 1, -1)


@pytest.mark.parametrize("n, m", [(3, None), (2, 3), (3, 2), (0, None), (1, 1)])
def test_eye_vs_numpy(n, m, device):
    t = C.eye(n, device=device) if m is None else C.eye(n, m, device=device)
    assert t.dtype is C.float32
    np.testing.assert_array_equal(to_np(t), np.eye(n, m))
    b = C.eye(n, dtype=C.bool) if m is None else C.eye(n, m, dtype=C.bool)
    np.testing.assert_array_equal(to_np(b), np.eye(n, m, dtype=bool))


def test_eye_negative():
    with pytest.raises(RuntimeError, match="^n must be greater or equal to 0, got -1$"):
        C.eye(-1)


def test_scalar_tensor():
    assert C.scalar_tensor(3).dtype is C.float32
    assert C.scalar_tensor(3).item() == 3.0


# ---- requires_grad ----


@pytest.mark.parametrize(
    "make",
    [
        lambda rg: C.tensor([1.0, 2.0], requires_grad=rg),
        lambda rg: C.zeros(2, requires_grad=rg),
        lambda rg: C.ones(2, requires_grad=rg),
        lambda rg: C.full((2,), 1.5, requires_grad=rg),
        lambda rg: C.rand(2, requires_grad=rg),
        lambda rg: C.arange(0.0, 2.0, requires_grad=rg),
        lambda rg: C.eye(2, requires_grad=rg),
        lambda rg: C.linspace(0, 1, 2, requires_grad=rg),
    ],
)
def test_requires_grad_factories(make):
    t = make(True)
    assert t.requires_grad is True
    assert t.is_leaf
    assert repr(t).endswith("requires_grad=True)")
    assert make(False).requires_grad is False


@pytest.mark.parametrize(
    "make",
    [
        lambda: C.tensor([1], requires_grad=True),
        lambda: C.zeros(2, dtype=C.int64, requires_grad=True),
        lambda: C.arange(3, requires_grad=True),
        lambda: C.full((2,), 1, requires_grad=True),
        lambda: C.empty(2, dtype=C.bool, requires_grad=True),
        lambda: C.randint(3, (2,), requires_grad=True),
        lambda: C.zeros(1, dtype=C.int8).new_zeros(2, requires_grad=True),
    ],
)
def test_requires_grad_factories_reject_integers(make):
    msg = "^Only Tensors of floating point and complex dtype can require gradients$"
    with pytest.raises(RuntimeError, match=msg):
        make()


def test_strings_in_data():
    """A string where the shape is read is torch's endless sequence (ValueError); one
    elsewhere is an invalid data type (TypeError)."""
    with pytest.raises(ValueError, match="^too many dimensions 'str'$"):
        C.tensor(["a"])
    with pytest.raises(ValueError, match="^too many dimensions 'str'$"):
        C.tensor([["a"]])
    with pytest.raises(TypeError, match="^new\\(\\): invalid data type 'str'$"):
        C.tensor([1, "a"])
    with pytest.raises(TypeError, match="^new\\(\\): invalid data type 'str'$"):
        C.tensor([[1], ["a"]])
    with pytest.raises(TypeError, match="^new\\(\\): invalid data type 'bytes'$"):
        C.tensor([1.0, b"a"])


# Deep or self-referential data: torch's errors, where the scan overflowed the C stack.
def _nested(depth, leaf=1, kind=list):
    x = leaf
    for _ in range(depth):
        x = kind([x])
    return x


def _self_first():
    x = []
    x.append(x)
    return x


def _self_later():
    x = [1]
    x.append(x)
    return x


def _self_row():
    x = [[1], [2]]
    x[1] = x
    return x


def _self_inside_leaf():
    y = (1, [2])
    y[1].append(y)
    return y


_DATA_FNS = {
    "tensor": lambda d: C.tensor(d),
    "as_tensor": lambda d: C.as_tensor(d),
    "asarray": lambda d: C.asarray(d),
    "new_tensor": lambda d: C.ones(1).new_tensor(d),
    "Tensor": lambda d: C.Tensor(d),
    "LongTensor": lambda d: C.LongTensor(d),
    "index": lambda d: C.ones(2)[d],
}


@pytest.mark.parametrize("fn", list(_DATA_FNS))
@pytest.mark.parametrize(
    "make, kind",
    [
        (_self_first, "list"),
        (lambda: _nested(100_000), "list"),
        (lambda: _nested(100_000, kind=tuple), "tuple"),
        (lambda: _nested(129), "list"),
    ],
)
def test_data_too_many_dimensions(fn, make, kind):
    with pytest.raises(ValueError, match=f"^too many dimensions '{kind}'$"):
        _DATA_FNS[fn](make())
    assert C.tensor([[1, 2]]).sum().item() == 3  # the process goes on


@pytest.mark.parametrize("fn", list(_DATA_FNS))
@pytest.mark.parametrize("make", [_self_later, _self_row])
def test_data_self_referential(fn, make):
    with pytest.raises(TypeError, match="^new\\(\\): self-referential lists are incompatible$"):
        _DATA_FNS[fn](make())


@pytest.mark.parametrize("fn", ["tensor", "as_tensor", "asarray"])
def test_data_self_reference_below_the_shape(fn):
    # torch itself overflows its stack on this one; the shape is (2,), so [2, y] is a
    # sequence where a number belongs.
    with pytest.raises(TypeError, match="^'list' object cannot be interpreted as an integer$"):
        getattr(C, fn)(_self_inside_leaf())


def test_data_at_the_dimension_cap():
    t = C.tensor(_nested(128, leaf=2.5))
    assert t.dim() == 128 and t.shape == (1,) * 128 and t.dtype == C.float32
    assert C.tensor(_nested(127, leaf=[])).shape == (1,) * 127 + (0,)


def test_data_deep_beside_the_shape():
    # Elements nested deeper than the first element's path fail where they are stored.
    with pytest.raises(TypeError, match="^'list' object cannot be interpreted as an integer$"):
        C.tensor([1, _nested(100_000)])
    with pytest.raises(TypeError, match="^must be real number, not list$"):
        C.tensor([1.5, _nested(100_000)])


def test_data_sequences_of_tensors():
    t = C.tensor([C.tensor(1.0), C.tensor(2.0)])
    assert t.tolist() == [1.0, 2.0]
    with pytest.raises(ValueError, match="^only one element tensors can be converted"):
        C.tensor([C.ones(2)] * 3)
    with pytest.raises(ValueError, match="^only one element tensors can be converted"):
        C.tensor(_nested(100, leaf=C.ones(2)))


@pytest.mark.parametrize("nbytes", [1, 63, 64, 65, 4096, (4 << 20) + 4, 16 << 20])
def test_cpu_tensors_are_64_byte_aligned_and_hold_their_bytes(nbytes):
    # Host memory is malloc'd and aligned by hand (Note [Host memory from malloc]).
    ts = [cudalite.empty(nbytes, dtype=cudalite.uint8) for _ in range(3)]
    for i, t in enumerate(ts):
        assert t.data_ptr() % 64 == 0
        t.fill_(i + 1)
    for i, t in enumerate(ts):  # no tensor wrote over another
        assert int(t.min()) == int(t.max()) == i + 1
