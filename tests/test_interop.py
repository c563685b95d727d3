"""Zero-copy exchange: DLPack (both directions) and the CUDA Array Interface.

NumPy tests run everywhere; torch and CuPy tests run where those import and see a GPU.
"""

import ctypes
import gc
import re
import weakref

import numpy as np
import pytest

import cudalite
import cudalite.cuda as cuda
from cudalite import _C
from cudalite._interop import DLDeviceType, from_dlpack

HAS_GPU = cuda.is_available()
gpu = pytest.mark.skipif(not HAS_GPU, reason="needs a visible CUDA GPU")

_name = ctypes.pythonapi.PyCapsule_GetName
_name.restype = ctypes.c_char_p
_name.argtypes = [ctypes.py_object]


def capsule_name(cap):
    return _name(cap).decode()


def tensor(data, dtype=None, device=None):
    return _C._tensor_from_data(data, dtype, device)


NUMPY_DTYPES = ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "float32", "float64"]


# ---- cudalite -> NumPy ----


@pytest.mark.parametrize("dtype", NUMPY_DTYPES)
def test_numpy_reads_tensor_without_copy(dtype):
    src = np.arange(12).reshape(3, 4).astype(dtype)
    t = _C.from_numpy(src.copy())
    a = np.from_dlpack(t)
    assert a.dtype == np.dtype(dtype) and a.shape == (3, 4)
    np.testing.assert_array_equal(a, src)
    assert a.ctypes.data == t.data_ptr()
    _C._fill_(t, 1)
    assert (a == np.ones((3, 4), dtype)).all()


def test_numpy_reads_views_with_strides():
    t = _C.from_numpy(np.arange(24, dtype=np.float32).reshape(4, 6))
    v = t.transpose(0, 1)._slice(0, 1, 5, 2)  # [2, 4] with strides (12, 1)... in elements
    a = np.from_dlpack(v)
    np.testing.assert_array_equal(a, np.arange(24, dtype=np.float32).reshape(4, 6).T[1:5:2])
    assert a.strides == tuple(s * 4 for s in v.stride())
    assert a.ctypes.data == v.data_ptr()


@pytest.mark.parametrize("shape", [(), (0,), (2, 0, 3)])
def test_numpy_reads_scalars_and_empty(shape):
    t = _C.from_numpy(np.full(shape, 7, dtype=np.int64))
    a = np.from_dlpack(t)
    assert a.shape == shape
    np.testing.assert_array_equal(a, np.full(shape, 7))


def test_capsule_keeps_memory_alive():
    arr = np.arange(5.0)
    ref = weakref.ref(arr)
    t = _C.from_numpy(arr)
    del arr
    cap = t.__dlpack__()
    del t
    gc.collect()
    assert ref() is not None  # the unconsumed capsule holds the storage
    del cap
    gc.collect()
    assert ref() is None  # ... and its destructor released it


def test_consumer_keeps_memory_alive():
    arr = np.arange(5.0)
    ref = weakref.ref(arr)
    a = np.from_dlpack(_C.from_numpy(arr))
    del arr
    gc.collect()
    assert ref() is not None
    np.testing.assert_array_equal(a, np.arange(5.0))
    del a
    gc.collect()
    assert ref() is None


# ---- NumPy -> cudalite ----


@pytest.mark.parametrize("dtype", NUMPY_DTYPES)
def test_from_numpy_without_copy(dtype):
    arr = np.arange(6).reshape(2, 3).astype(dtype)
    t = from_dlpack(arr)
    assert t.dtype._name == dtype
    assert tuple(t.shape) == (2, 3) and t.device == _C.device("cpu")
    assert t.data_ptr() == arr.ctypes.data
    np.testing.assert_array_equal(_C._numpy(t), arr)
    arr[0, 0] = 1
    assert _C._item(t.select(0, 0).select(0, 0)) == 1


def test_from_numpy_strided_and_lifetime():
    base = np.arange(20, dtype=np.float64).reshape(4, 5).copy()  # owns its memory
    view = base[::2, 1::2]
    ref = weakref.ref(base)
    t = from_dlpack(view)
    assert t.stride() == (10, 2)
    del base, view
    gc.collect()
    assert ref() is not None
    np.testing.assert_array_equal(_C._numpy(t), [[1.0, 3.0], [11.0, 13.0]])
    del t
    gc.collect()
    assert ref() is None


def test_from_numpy_errors():
    with pytest.raises(RuntimeError, match="^Unsupported kUInt bits 16$"):
        from_dlpack(np.zeros(3, np.uint16))
    with pytest.raises(RuntimeError, match="complex"):
        from_dlpack(np.zeros(3, np.complex64))
    with pytest.raises(ValueError, match="negative strides"):
        from_dlpack(np.arange(4.0)[::-1])
    with pytest.raises(RuntimeError, match="^from_dlpack received an invalid capsule"):
        from_dlpack([1, 2])  # torch's error for anything that is neither
    from cudalite.utils.dlpack import from_dlpack as from_dlpack_too
    from cudalite.utils.dlpack import to_dlpack

    assert from_dlpack_too(to_dlpack(cudalite.arange(3.0))).tolist() == [0.0, 1.0, 2.0]


def test_from_dlpack_device_and_copy():
    arr = np.arange(4.0)
    t = from_dlpack(arr, copy=True)
    assert t.data_ptr() != arr.ctypes.data
    np.testing.assert_array_equal(_C._numpy(t), arr)
    assert from_dlpack(arr, device="cpu").data_ptr() == arr.ctypes.data
    if not HAS_GPU:
        with pytest.raises(ValueError, match="without copying"):
            from_dlpack(arr, device="cuda", copy=False)


# ---- capsules ----


def test_legacy_and_versioned_capsules():
    t = tensor([1.0, 2.0, 3.0])
    legacy = t.__dlpack__()
    assert capsule_name(legacy) == "dltensor"
    versioned = t.__dlpack__(max_version=(1, 0))
    assert capsule_name(versioned) == "dltensor_versioned"
    assert capsule_name(t.__dlpack__(max_version=(0, 8))) == "dltensor"
    for cap, used in ((legacy, "used_dltensor"), (versioned, "used_dltensor_versioned")):
        u = from_dlpack(cap)
        assert capsule_name(cap) == used
        assert u.data_ptr() == t.data_ptr()
        with pytest.raises(RuntimeError, match="^from_dlpack received an invalid capsule"):
            from_dlpack(cap)


def test_round_trip_keeps_dtype_and_memory():
    for dtype in (_C.bfloat16, _C.float16, _C.int32, _C.bool):
        t = tensor([[1, 0], [0, 1]], dtype)
        u = from_dlpack(t)
        assert u.dtype is t.dtype and u.data_ptr() == t.data_ptr()
        assert _C._numpy(_C._to(u, None, _C.float32, False, False)).tolist() == [[1, 0], [0, 1]]


def test_copy_flag_and_dl_device():
    t = tensor([1.0, 2.0])
    assert from_dlpack(t.__dlpack__(copy=True)).data_ptr() != t.data_ptr()
    cpu = (DLDeviceType.kDLCPU, 0)
    assert from_dlpack(t.__dlpack__(dl_device=cpu, copy=False)).data_ptr() == t.data_ptr()
    if not HAS_GPU:
        with pytest.raises(BufferError, match="copy=False"):
            t.__dlpack__(dl_device=(DLDeviceType.kDLCUDA, 0), copy=False)
    with pytest.raises(BufferError, match="^Unsupported dl_device"):
        t.__dlpack__(dl_device=(DLDeviceType.kDLMetal, 0))


def test_dlpack_argument_checks():
    t = tensor([1.0])
    assert t.__dlpack_device__() == (DLDeviceType.kDLCPU, 0)
    assert isinstance(t.__dlpack_device__()[0], DLDeviceType)
    assert capsule_name(t.__dlpack__(stream=None)) == "dltensor"
    with pytest.raises(AssertionError, match="^stream should be None on cpu.$"):
        t.__dlpack__(stream=5)
    with pytest.raises(TypeError, match="^stream must be ``int`` or ``none``$"):
        t.__dlpack__(stream="x")
    t.requires_grad = True
    with pytest.raises(BufferError, match="^Can't export tensors that require gradient"):
        t.__dlpack__()


def test_producer_without_max_version():
    t = tensor([4.0, 5.0])

    class OldProducer:  # a DLPack 0.x producer: __dlpack__ takes only `stream`
        def __dlpack__(self, stream=None):
            return t.__dlpack__()

        def __dlpack_device__(self):
            return (1, 0)

    assert from_dlpack(OldProducer()).data_ptr() == t.data_ptr()


def test_cuda_array_interface_is_absent_on_cpu():
    t = tensor([1.0])
    assert not hasattr(t, "__cuda_array_interface__")
    with pytest.raises(AttributeError) as info:
        t.__cuda_array_interface__  # noqa: B018
    assert str(info.value) == (
        "Can't get __cuda_array_interface__ on non-CUDA tensor type: cudalite.FloatTensor If "
        "CUDA data is required use tensor.cuda() to copy tensor to device memory."
    )


# ---- GPU ----


def cuda_tensor(data, dtype=None):
    return _C._to(tensor(data, dtype), "cuda", None, False, False)


@gpu
def test_cuda_array_interface():
    t = cuda_tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    cai = t.__cuda_array_interface__
    assert cai == {
        "typestr": "<f4",
        "shape": (2, 3),
        "strides": None,
        "data": (t.data_ptr(), False),
        "version": 3,
        "stream": 1,
    }
    tt = t.transpose(0, 1)
    assert tt.__cuda_array_interface__["strides"] == (4, 12)
    for dt, ts in (
        (_C.float16, "<f2"),
        (_C.bfloat16, "<V2"),
        (_C.int64, "<i8"),
        (_C.bool, "|b1"),
        (_C.uint8, "|u1"),
    ):
        assert cuda_tensor([1], dt).__cuda_array_interface__["typestr"] == ts
    assert cuda_tensor([]).__cuda_array_interface__["data"] == (0, False)


@gpu
def test_cuda_dlpack_device_and_round_trip():
    t = cuda_tensor([1.0, 2.0])
    assert t.__dlpack_device__() == (DLDeviceType.kDLCUDA, 0)
    u = from_dlpack(t.__dlpack__(stream=1, max_version=(1, 0)))
    assert u.device == t.device and u.data_ptr() == t.data_ptr()
    host = from_dlpack(t.__dlpack__(dl_device=(DLDeviceType.kDLCPU, 0)))
    assert host.device == _C.device("cpu")
    assert _C._numpy(host).tolist() == [1.0, 2.0]
    with pytest.raises(AssertionError, match="^unsupported stream on CUDA: 0.$"):
        t.__dlpack__(stream=0)
    pinned = _C._empty([2], None, None, True)
    assert pinned.__dlpack_device__() == (DLDeviceType.kDLCUDAHost, 0)
    assert np.from_dlpack(pinned).shape == (2,)


@gpu
def test_numpy_refuses_cuda_tensor():
    with pytest.raises((BufferError, RuntimeError, ValueError)):
        np.from_dlpack(cuda_tensor([1.0]))


@gpu
def test_exchange_with_torch():
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("torch has no CUDA here")
    t = cuda_tensor([[1.0, 2.0], [3.0, 4.0]])
    tt = torch.from_dlpack(t)
    assert tt.device.type == "cuda" and tt.data_ptr() == t.data_ptr()
    assert tt.cpu().tolist() == [[1.0, 2.0], [3.0, 4.0]]
    tt.mul_(2)  # shared memory: cudalite sees torch's write
    assert _C._numpy(_C._to(t, "cpu", None, False, False)).tolist() == [[2.0, 4.0], [6.0, 8.0]]
    back = from_dlpack(torch.arange(6, device="cuda", dtype=torch.float32).reshape(2, 3).t())
    assert back.stride() == (1, 3) and tuple(back.shape) == (3, 2)
    cai = torch.as_tensor(t, device="cuda")  # through __cuda_array_interface__
    assert cai.data_ptr() == t.data_ptr()
    for dtype in (torch.bfloat16, torch.float16, torch.int64, torch.bool):
        src = torch.ones(3, device="cuda", dtype=dtype)
        assert from_dlpack(src).data_ptr() == src.data_ptr()


@gpu
def test_exchange_with_cupy():
    cp = pytest.importorskip("cupy")
    t = cuda_tensor([1.0, 2.0, 3.0])
    a = cp.from_dlpack(t)
    assert a.data.ptr == t.data_ptr() and a.tolist() == [1.0, 2.0, 3.0]
    b = cp.asarray(t)  # through __cuda_array_interface__
    assert b.data.ptr == t.data_ptr()
    src = cp.arange(10, dtype=cp.float32)[::2]
    u = from_dlpack(src)
    assert u.data_ptr() == src.data.ptr and u.stride() == (2,)
    assert re.match(r"cuda", str(u.device))


# ---- read-only memory (DLPack 1.0's read-only flag) ----


def _read_only_arrays(tmp_path):
    frozen = np.arange(6.0)
    frozen.flags.writeable = False
    path = tmp_path / "data.bin"
    np.arange(6.0).tofile(path)
    return {
        "not writable": frozen,
        "over bytes": np.frombuffer(memoryview(np.arange(6.0).tobytes()), dtype=np.float64),
        "read-only memmap": np.memmap(path, dtype=np.float64, mode="r"),
    }


@pytest.mark.parametrize("kind", ["not writable", "over bytes", "read-only memmap"])
def test_from_dlpack_copies_read_only_memory(kind, tmp_path, device):
    arr = _read_only_arrays(tmp_path)[kind]
    t = from_dlpack(arr, device=device)
    assert t.device.type == device and t.tolist() == list(range(6))
    t.add_(1)  # its own memory: the read-only source is untouched
    np.testing.assert_array_equal(arr, np.arange(6.0))
    assert t.tolist() == [float(i + 1) for i in range(6)]
    cap = arr.__dlpack__(max_version=(1, 0))
    assert _C._dlpack_read_only(cap)
    host = from_dlpack(cap)
    assert host.data_ptr() != arr.ctypes.data
    with pytest.raises(BufferError, match="^from_dlpack: the DLPack tensor is read-only"):
        from_dlpack(arr, copy=False)
    del arr, t, host
    gc.collect()


def test_from_dlpack_shares_writable_memory():
    arr = np.arange(4.0)
    assert not _C._dlpack_read_only(arr.__dlpack__(max_version=(1, 0)))
    t = from_dlpack(arr)
    t.add_(1)
    np.testing.assert_array_equal(arr, [1.0, 2.0, 3.0, 4.0])
