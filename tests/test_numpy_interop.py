"""NumPy interop: shared memory both ways, __array__ with NumPy 2's keywords, dtype mapping,
ufuncs, and torch's errors."""

from __future__ import annotations

import gc
import re
import subprocess
import sys

import numpy as np
import pytest

import cudalite as C
from conftest import requires_cuda, to_np

PAIRS = [
    (np.bool_, C.bool), (np.uint8, C.uint8), (np.int8, C.int8), (np.int16, C.int16),
    (np.int32, C.int32), (np.int64, C.int64), (np.float16, C.float16),
    (np.float32, C.float32), (np.float64, C.float64),
]  # fmt: skip


def err(exc, msg):
    return pytest.raises(exc, match=f"^{re.escape(msg)}$")


@pytest.mark.parametrize("np_dtype, dtype", PAIRS)
def test_dtype_mapping_both_ways(np_dtype, dtype):
    a = np.arange(6).reshape(2, 3).astype(np_dtype)
    t = C.from_numpy(a)
    assert t.dtype is dtype
    assert t.numpy().dtype == np.dtype(np_dtype)
    assert np.asarray(t).dtype == np.dtype(np_dtype)
    np.testing.assert_array_equal(t.numpy(), a)


def test_from_numpy_shares_memory_both_ways():
    a = np.arange(6.0).reshape(2, 3)
    t = C.from_numpy(a)
    a[0, 0] = 100
    assert t[0, 0].item() == 100
    t[1, 1] = -5
    assert a[1, 1] == -5
    t.add_(1)
    np.testing.assert_array_equal(a, [[101, 2, 3], [4, -4, 6]])
    assert t.data_ptr() == a.ctypes.data


def test_from_numpy_keeps_array_alive():
    t = C.from_numpy(np.arange(5, dtype=np.int32))
    gc.collect()
    assert t.tolist() == list(range(5))


def test_from_numpy_strides_and_shapes():
    a = np.arange(24.0).reshape(4, 6)
    assert C.from_numpy(a[:, ::2]).stride() == tuple(s // 8 for s in a[:, ::2].strides)
    assert C.from_numpy(a.T).stride() == (1, 6)
    np.testing.assert_array_equal(to_np(C.from_numpy(a.T)), a.T)
    assert C.from_numpy(np.zeros((2, 0))).shape == (2, 0)
    assert C.from_numpy(np.array(3.5)).shape == ()
    v = C.from_numpy(a[1:, 2:])
    a[1, 2] = -1
    assert v[0, 0].item() == -1


def test_numpy_shares_memory():
    t = C.arange(6.0).reshape(2, 3)
    n = t.numpy()
    n[0, 1] = 7
    assert t[0, 1].item() == 7
    t[1, 2] = -3
    assert n[1, 2] == -3
    assert n.flags.writeable
    assert np.shares_memory(n, t.t().numpy())
    assert t.t().numpy().strides == (4, 12)
    assert t[:, ::2].numpy().strides == (12, 8)
    assert C.tensor(3.0).numpy().shape == ()
    assert t.detach().numpy().base is not None


def test_array_protocol_keywords():
    x = C.arange(4.0)
    assert np.asarray(x).dtype == np.float32
    y = np.array(x, copy=False)  # NumPy 2: shares memory
    y[0] = 9
    assert x[0].item() == 9
    z = np.array(x, copy=True)
    z[1] = -1
    assert x[1].item() == 1
    assert np.asarray(x, dtype=np.float64).dtype == np.float64
    np.testing.assert_array_equal(np.array(x, dtype=np.int32), np.array([9, 1, 2, 3], np.int32))
    assert x.__array__().dtype == np.float32
    assert x.__array__(np.float64).dtype == np.float64
    with err(ValueError, "Unable to avoid copy while creating an array as requested."):
        np.array(C.arange(4), dtype=np.float32, copy=False)
    with err(ValueError, "Unable to avoid copy while creating an array as requested."):
        x.__array__(np.float64, copy=False)


def test_ufuncs_return_tensors():
    x = C.arange(4.0)
    r = np.sin(x)
    assert isinstance(r, C.Tensor) and r.dtype is C.float32
    np.testing.assert_allclose(to_np(r), np.sin(np.arange(4.0, dtype=np.float32)))
    g = np.greater(x, 1)
    assert g.dtype is C.uint8 and g.tolist() == [0, 0, 1, 1]  # torch's bool -> uint8 quirk
    assert np.multiply(C.tensor(2.0), 3).shape == ()
    assert isinstance(np.float64(2.0) * x, C.Tensor)


def test_numpy_scalars_as_operands():
    x = C.tensor([1, 2], dtype=C.int32)
    assert (x + np.int64(2)).dtype is C.int32
    assert (x + np.float64(1.5)).dtype is C.float32
    assert C.tensor(np.float32(2.5)).dtype is C.float32


def test_bfloat16_has_no_numpy():
    b = C.ones(2, dtype=C.bfloat16)
    with err(TypeError, "Got unsupported ScalarType BFloat16"):
        b.numpy()
    with err(TypeError, "Got unsupported ScalarType BFloat16"):
        np.asarray(b)
    np.testing.assert_array_equal(b.float().numpy(), np.ones(2, np.float32))


def test_requires_grad_numpy():
    t = C.ones(2, requires_grad=True)
    msg = "Can't call numpy() on Tensor that requires grad. Use tensor.detach().numpy() instead."
    with err(RuntimeError, msg):
        t.numpy()
    with err(RuntimeError, msg):
        np.asarray(t)
    np.testing.assert_array_equal(t.numpy(force=True), np.ones(2, np.float32))
    np.testing.assert_array_equal(t.detach().numpy(), np.ones(2, np.float32))


@requires_cuda
def test_cuda_tensor_numpy_error():
    t = C.ones(2, device="cuda")
    msg = (
        "can't convert cuda:0 device type tensor to numpy. Use Tensor.cpu() to copy the tensor "
        "to host memory first."
    )
    with err(TypeError, msg):
        t.numpy()
    np.testing.assert_array_equal(t.cpu().numpy(), np.ones(2, np.float32))
    with err(ValueError, "Unable to avoid copy while creating an array as requested."):
        np.array(t, copy=False)
    np.testing.assert_array_equal(np.asarray(t), np.ones(2, np.float32))


SUPPORTED = "float64, float32, float16, int64, int32, int16, int8, uint8, and bool."


# cudalite has no uint16/32/64 or complex dtypes, so its list is shorter than torch's.
@pytest.mark.parametrize(
    "arr, name",
    [
        (np.zeros(2, dtype=np.uint16), "uint16"),
        (np.zeros(2, dtype=np.uint64), "uint64"),
        (np.zeros(2, dtype=np.complex64), "complex64"),
        (np.zeros(2, dtype=object), "object_"),
        (np.zeros(2, dtype="U3"), "str_"),
    ],
)
def test_unsupported_numpy_dtype(arr, name):
    msg = (
        f"can't convert np.ndarray of type numpy.{name}. The only supported types are: {SUPPORTED}"
    )
    for fn in (C.from_numpy, C.tensor, C.as_tensor):
        with err(TypeError, msg):
            fn(arr)


def test_negative_strides_and_byte_order():
    msg = (
        "At least one stride in the given numpy array is negative, and tensors with negative "
        "strides are not currently supported. (You can probably work around this by making a "
        "copy of your array  with array.copy().) "
    )
    for fn in (C.from_numpy, C.tensor, C.as_tensor):
        with err(ValueError, msg):
            fn(np.arange(4)[::-1])
        with pytest.raises(ValueError, match="^given numpy array has byte order different"):
            fn(np.arange(3, dtype=">f8"))
    np.testing.assert_array_equal(to_np(C.from_numpy(np.arange(4)[::-1].copy())), [3, 2, 1, 0])


def test_from_numpy_argument_type():
    with err(TypeError, "expected np.ndarray (got list)"):
        C.from_numpy([1, 2])
    with err(TypeError, "expected np.ndarray (got numpy.float32)"):
        C.from_numpy(np.float32(1.0))


_READ_ONLY = (
    "import warnings, numpy as np, cudalite as C\n"
    "warnings.simplefilter('always')\n"
    "a = np.arange(3.0)\n"
    "a.flags.writeable = False\n"
)


@pytest.mark.parametrize(
    "call, warns",
    [
        ("C.from_numpy(a); C.from_numpy(a)", True),  # once per process
        ("C.as_tensor(a)", True),
        ("C.asarray(a)", True),
        ("C.tensor(a)", False),  # copies
        ("C.asarray(a, dtype=C.float32)", False),  # copies
        ("C.asarray(a, copy=True)", False),
    ],
)
def test_read_only_arrays_warn_once(call, warns):
    # In a fresh interpreter: the warning is given once per process.
    r = subprocess.run(
        [sys.executable, "-c", _READ_ONLY + call], capture_output=True, text=True, check=True
    )
    msg = "UserWarning: The given NumPy array is not writable, and cudalite does not support"
    assert r.stderr.count(msg) == (1 if warns else 0), r.stderr
    if warns:
        assert r.stderr.startswith("<string>:5: UserWarning")  # the caller's line
