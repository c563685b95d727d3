"""cudalite.asarray and cudalite.frombuffer (python/cudalite/_asarray.py): aliasing and
copying as torch.asarray / torch.frombuffer 2.11 do, with their errors. CPU and CUDA."""

from __future__ import annotations

import array
import re
import warnings

import numpy as np
import pytest

import cudalite as C
from conftest import requires_cuda, to_np


def err(exc, msg):
    return pytest.raises(exc, match="^" + re.escape(msg) + "$")


def test_tensor_is_returned_or_copied(device):
    t = C.arange(4.0, device=device)
    assert C.asarray(t) is t
    assert C.asarray(t, copy=False) is t
    assert C.asarray(t, device=device, dtype=C.float32) is t
    c = C.asarray(t, copy=True)
    assert c is not t and c.data_ptr() != t.data_ptr()
    np.testing.assert_array_equal(to_np(c), [0, 1, 2, 3])
    d = C.asarray(t, dtype=C.float64)
    assert d.dtype is C.float64 and d.device == t.device
    with err(ValueError, "can't alias tensor with dtype 'Float' into dtype 'Double'."):
        C.asarray(t, dtype=C.float64, copy=False)
    i = C.asarray(C.ones(2, dtype=C.int32, device=device), dtype=C.float32)
    assert i.dtype is C.float32 and to_np(i).tolist() == [1.0, 1.0]


def test_numpy_arrays_are_aliased():
    a = np.arange(4.0)
    t = C.asarray(a)
    assert t.data_ptr() == a.ctypes.data and t.dtype is C.float64
    t[0] = 9
    assert a[0] == 9  # shared memory
    assert C.asarray(a[::2]).stride() == (2,)
    assert C.asarray(a, copy=True).data_ptr() != a.ctypes.data
    f = C.asarray(a, dtype=C.float32)
    assert f.dtype is C.float32 and to_np(f).tolist() == [9, 1, 2, 3]
    with err(ValueError, "can't alias tensor with dtype 'Double' into dtype 'Float'."):
        C.asarray(a, dtype=C.float32, copy=False)
    with pytest.raises(ValueError, match="negative"):
        C.asarray(a[::-1])
    assert C.asarray(np.array([True])).dtype is C.bool


def test_numpy_scalars_are_copied():
    s = C.asarray(np.float64(2.5))
    assert s.dtype is C.float64 and s.shape == () and s.item() == 2.5
    assert C.asarray(np.int32(2)).dtype is C.int32
    with err(
        RuntimeError,
        "can't alias NumPy scalars. Either remove copy=False or transform it in a ndarray. ",
    ):
        C.asarray(np.float64(2.5), copy=False)


def test_buffers_are_aliased():
    b = array.array("f", [1, 2, 3])
    t = C.asarray(b)
    assert t.dtype is C.float32 and to_np(t).tolist() == [1, 2, 3]
    t[1] = 7
    assert b[1] == 7
    assert to_np(C.asarray(memoryview(b))).tolist() == [1, 7, 3]
    ba = bytearray(b"ab")
    C.asarray(ba, dtype=C.uint8).fill_(7)
    assert ba == bytearray(b"\x07\x07")
    with err(
        ValueError,
        "buffer length (3 bytes) after offset (0 bytes) must be a multiple of element size (4)",
    ):
        C.asarray(b"abc")  # the default dtype, float32


def test_sequences_are_copied(device):
    t = C.asarray([1, 2, 3], device=device)
    assert t.dtype is C.int64 and t.device.type == device.split(":")[0]
    assert C.asarray([1.5, 2]).dtype is C.float32
    assert C.asarray(3).shape == () and C.asarray(3.5).dtype is C.float32
    assert to_np(C.asarray([C.tensor(1.0), C.tensor(2.0)])).tolist() == [1.0, 2.0]
    assert C.asarray([1, 2], dtype=C.float64).dtype is C.float64
    with err(ValueError, "can't alias arbitrary sequence into a tensor."):
        C.asarray([1, 2, 3], copy=False)
    with err(ValueError, "expected sequence of length 2 at dim 1 (got 1)"):
        C.asarray([[1, 2], [3]])
    with err(RuntimeError, "Could not infer dtype of NoneType"):
        C.asarray(None)


def test_arguments():
    with err(TypeError, "asarray(): argument 'dtype' must be torch.dtype, not str"):
        C.asarray([1], dtype="float")
    with pytest.raises(TypeError):
        C.asarray(C.ones(1), C.float64)  # dtype is keyword-only
    assert to_np(C.asarray(obj=[1])).tolist() == [1]


def test_requires_grad():
    t = C.arange(4.0)
    r = C.asarray(t, requires_grad=True)
    assert r is t and t.requires_grad and t.is_leaf
    x = C.ones(2, requires_grad=True)
    assert C.asarray(x) is x and not x.requires_grad  # torch clears the flag of a leaf
    y = C.ones(2, requires_grad=True)
    z = y * 2
    assert C.asarray(z) is z and z.requires_grad and z.grad_fn is not None
    with err(
        RuntimeError, "Only Tensors of floating point and complex dtype can require gradients"
    ):
        C.asarray([1, 2], requires_grad=True)


def test_frombuffer():
    t = C.frombuffer(bytearray(8), dtype=C.float32, offset=4, count=1)
    assert t.shape == (1,) and t.item() == 0.0
    buf = bytearray(b"abcdef")
    i = C.frombuffer(buf, dtype=C.int16, offset=2, count=2)
    assert to_np(i).tolist() == list(np.frombuffer(b"cdef", dtype=np.int16))
    i.fill_(0)
    assert buf == bytearray(b"ab\x00\x00\x00\x00")
    bf = C.frombuffer(bytearray(b"\x80\x3f\x00\x40"), dtype=C.bfloat16)
    assert bf.dtype is C.bfloat16 and bf.float().tolist() == [1.0, 2.0]
    assert C.frombuffer(bytearray(8), dtype=C.float32, requires_grad=True).requires_grad


@pytest.mark.parametrize(
    "kwargs, msg",
    [
        (dict(count=0), "both buffer length (8) and count (0) must not be 0"),
        (dict(offset=8), "offset (8 bytes) must be non-negative and no greater than buffer "
         "length (8 bytes) minus 1"),
        (dict(offset=-1), "offset (-1 bytes) must be non-negative and no greater than buffer "
         "length (8 bytes) minus 1"),
        (dict(count=3), "requested buffer length (3 * 4 bytes) after offset (0 bytes) must not "
         "be greater than actual buffer length (8 bytes)"),
        (dict(offset=1), "buffer length (7 bytes) after offset (1 bytes) must be a multiple of "
         "element size (4)"),
    ],
)  # fmt: skip
def test_frombuffer_errors(kwargs, msg):
    with err(ValueError, msg):
        C.frombuffer(bytearray(8), dtype=C.float32, **kwargs)


def test_frombuffer_other_errors():
    with err(ValueError, "both buffer length (0) and count (-1) must not be 0"):
        C.frombuffer(bytearray(0), dtype=C.float32)
    with err(ValueError, "object does not implement Python buffer protocol."):
        C.frombuffer([1, 2], dtype=C.float32)
    with err(TypeError, 'frombuffer() missing 1 required positional arguments: "dtype"'):
        C.frombuffer(bytearray(8))


def test_frombuffer_read_only_warns_once():
    from cudalite import _asarray

    _asarray._NOT_WRITABLE_WARNED[0] = False
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        t = C.frombuffer(b"abcd", dtype=C.uint8)
        C.frombuffer(b"abcd", dtype=C.uint8)
    assert to_np(t).tolist() == [97, 98, 99, 100]
    assert len(record) == 1 and str(record[0].message).startswith(
        "The given buffer is not writable, and cudalite does not support non-writable tensors."
    )


@requires_cuda
def test_devices():
    t = C.arange(3.0)
    g = C.asarray(t, device="cuda")
    assert g.device.type == "cuda" and to_np(g).tolist() == [0, 1, 2]
    assert C.asarray(g, device="cuda") is g and C.asarray(g, device="cuda:0") is g
    with err(ValueError, "can't alias tensor from device 'cpu' to 'cuda'."):
        C.asarray(t, device="cuda", copy=False)
    a = np.arange(3.0)
    assert C.asarray(a, device="cuda").device.type == "cuda"
    cupy = pytest.importorskip("cupy")
    x = cupy.arange(4, dtype=cupy.float32)
    y = C.asarray(x)  # through DLPack: shares the GPU memory
    assert y.device.type == "cuda" and y.data_ptr() == x.data.ptr
    y.fill_(5)
    C.cuda.synchronize()
    assert float(x.sum()) == 20.0
