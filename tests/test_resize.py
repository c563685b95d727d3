"""Tensor.resize_ / resize_as_ (cudalite._resize, csrc/core/resize.cpp): sizes, strides and
storage offset as torch 2.11 sets them, the storage kept or grown in place (views see the new
memory), torch's errors. CPU and CUDA; pinned storages where a GPU is visible."""

from __future__ import annotations

import re
import warnings

import numpy as np
import pytest

import cudalite as C
from conftest import requires_cuda, to_np


def err(exc, msg):
    return pytest.raises(exc, match=f"^{re.escape(msg)}$")


def info(t):
    return tuple(t.shape), t.stride(), t.storage_offset()


def test_resize_keeps_storage_when_large_enough(device):
    x = C.arange(10.0, device=device)
    ptr, nbytes = x.data_ptr(), x._storage_nbytes()
    assert x.resize_(2, 3) is x
    assert info(x) == ((2, 3), (3, 1), 0)
    assert x.data_ptr() == ptr and x._storage_nbytes() == nbytes  # never shrinks
    np.testing.assert_array_equal(to_np(x), np.arange(6.0).reshape(2, 3))
    x.resize_(10)
    assert x.data_ptr() == ptr
    np.testing.assert_array_equal(to_np(x), np.arange(10.0))  # the old values are still there


def test_resize_grows_storage_and_copies(device):
    x = C.arange(10.0, device=device)
    ptr = x.data_ptr()
    x.resize_(11)
    assert x.data_ptr() != ptr and x._storage_nbytes() == 44
    np.testing.assert_array_equal(to_np(x[:10]), np.arange(10.0))


def test_resize_of_a_view_keeps_offset_and_grows_the_shared_storage(device):
    x = C.arange(4.0, device=device)
    y = x[2:]
    y.resize_(4)
    assert info(y) == ((4,), (1,), 2)
    assert y._is_same_storage(x) and x._storage_nbytes() == 24
    assert x._storage_ptr() == y._storage_ptr()  # x sees the new memory
    y[:2] = C.tensor([7.0, 8.0], device=device)
    np.testing.assert_array_equal(to_np(x), [0.0, 1.0, 7.0, 8.0])
    x.resize_(6)  # fits the grown storage: x now reaches y's new elements
    assert x._storage_ptr() == y._storage_ptr()


def test_resize_same_sizes_keeps_strides(device):
    z = C.zeros(2, 3, device=device).t()
    assert z.resize_(3, 2).stride() == (1, 3)
    e = C.zeros(3, device=device).expand(2, 3)
    assert e.resize_(2, 3).stride() == (0, 1)
    assert z.resize_(2, 3).stride() == (3, 1)  # other sizes: contiguous


@pytest.mark.parametrize(
    "args, want",
    [
        (((2, 2),), (2, 2)),
        (([2, 2],), (2, 2)),
        ((C.Size([2, 2]),), (2, 2)),
        ((), None),
        (((),), ()),
        ((0,), (0,)),
        ((2, 0, 3), (2, 0, 3)),
    ],
)
def test_resize_size_forms(device, args, want):
    x = C.zeros(3, device=device)
    if want is None:
        with err(TypeError, 'resize_() missing 1 required positional arguments: "size"'):
            x.resize_(*args)
        return
    assert tuple(x.resize_(*args).shape) == want


def test_resize_size_keyword_and_int_tensors(device):
    assert tuple(C.zeros(3, device=device).resize_(size=(2, 2)).shape) == (2, 2)
    assert tuple(C.zeros(3, device=device).resize_(C.tensor(2), 2).shape) == (2, 2)
    assert tuple(C.zeros(3, device=device).resize_(np.int64(2), 2).shape) == (2, 2)


@pytest.mark.parametrize(
    "call, exc, msg",
    [
        (lambda x: x.resize_(-1), RuntimeError, "numel: integer multiplication overflow"),
        (lambda x: x.resize_(2, -3), RuntimeError, "numel: integer multiplication overflow"),
        (lambda x: x.resize_(-1, -1), RuntimeError, "numel: integer multiplication overflow"),
        # torch makes a tensor of size [0, -1] here; cudalite refuses negative sizes.
        (
            lambda x: x.resize_(0, -1),
            RuntimeError,
            "Trying to create tensor with negative dimension -1: [0, -1]",
        ),
        (
            lambda x: x.resize_(2**62),
            RuntimeError,
            "Storage size calculation overflowed with sizes=[4611686018427387904]",
        ),
        (
            lambda x: x.resize_(2**62, 4),
            RuntimeError,
            "numel: integer multiplication overflow",
        ),
        (
            lambda x: x.resize_(2.0),
            TypeError,
            "resize_(): argument 'size' (position 1) must be tuple of ints, not float",
        ),
        (
            lambda x: x.resize_(True),
            TypeError,
            "resize_(): argument 'size' (position 1) must be tuple of ints, not bool",
        ),
        (
            lambda x: x.resize_(2, 2.0),
            TypeError,
            "resize_(): argument 'size' failed to unpack the object at pos 2 with error "
            '"type must be tuple of ints,but got float"',
        ),
        (
            lambda x: x.resize_([2, 2], 3),
            TypeError,
            "resize_() takes 1 positional argument but 2 were given",
        ),
        (
            lambda x: x.resize_(2, size=(2, 2)),
            TypeError,
            "resize_() got multiple values for argument 'size'",
        ),
        (
            lambda x: x.resize_(size=2),
            TypeError,
            "resize_(): argument 'size' must be tuple of ints, not int",
        ),
        (
            lambda x: x.resize_(2, memory_format=1),
            TypeError,
            "resize_(): argument 'memory_format' must be torch.memory_format, not int",
        ),
        (
            lambda x: x.resize_(2, 3, memory_format=C.preserve_format),
            RuntimeError,
            "Unsupported memory formatPreserve",
        ),
        (
            lambda x: x.resize_(2, 3, 4, memory_format=C.channels_last),
            RuntimeError,
            "required rank 4 tensor to use channels_last format",
        ),
        (
            lambda x: x.resize_(2, 3, 4, 5, memory_format=C.channels_last_3d),
            RuntimeError,
            "required rank 5 tensor to use channels_last_3d format",
        ),
    ],
)
def test_resize_errors(device, call, exc, msg):
    x = C.zeros(3, device=device)
    with err(exc, msg):
        call(x)


def test_resize_refused_format_leaves_the_tensor_resized(device):
    x = C.zeros(3, device=device)  # as torch: the format is checked after the resize
    with pytest.raises(RuntimeError):
        x.resize_(2, 3, 4, memory_format=C.channels_last)
    assert info(x) == ((2, 3, 4), (12, 4, 1), 0)


def test_resize_failed_growth_leaves_the_tensor_unchanged():
    # torch sets the sizes before it finds the storage can't grow; cudalite checks first.
    x = C.from_numpy(np.zeros(3))
    with err(RuntimeError, "Trying to resize storage that is not resizable"):
        x.resize_(4)
    assert info(x) == ((3,), (1,), 0)


@pytest.mark.parametrize(
    "shape, fmt, strides",
    [
        ((2, 3), C.contiguous_format, (3, 1)),
        ((2, 3, 4, 5), C.channels_last, (60, 1, 15, 3)),
        ((2, 0, 4, 5), C.channels_last, (0, 1, 0, 0)),
        ((2, 3, 4, 5, 6), C.channels_last_3d, (360, 1, 90, 18, 3)),
        ((2, 3, 4, 5), None, (60, 20, 5, 1)),
    ],
)
def test_resize_memory_format(device, shape, fmt, strides):
    x = C.zeros(3, device=device)
    assert x.resize_(*shape, memory_format=fmt).stride() == strides
    assert x._storage_nbytes() >= 4 * int(np.prod(shape))


def test_resize_memory_format_restrides_same_sizes(device):
    z = C.zeros(2, 3, device=device).t()
    assert z.resize_(3, 2, memory_format=C.contiguous_format).stride() == (2, 1)
    assert z.resize_(3, 2, memory_format=None).stride() == (2, 1)
    # An expanded tensor given contiguous strides: torch keeps its 12-byte storage (the
    # tensor then reaches past it); cudalite grows it.
    e = C.zeros(3, device=device).expand(2, 3)
    e.resize_(2, 3, memory_format=C.contiguous_format)
    assert e.stride() == (3, 1) and e._storage_nbytes() == 24


def test_resize_requires_grad_refused(device):
    a = C.zeros(3, device=device, requires_grad=True)
    msg = "cannot resize variables that require grad"
    with err(RuntimeError, msg):
        a.resize_(3)  # even the same sizes
    with err(RuntimeError, msg):
        a[:2].resize_(2)  # a view that requires grad
    with C.no_grad(), err(RuntimeError, msg):
        a.resize_(2)  # even under no_grad
    with err(RuntimeError, msg):
        a.resize_as_(C.zeros(3))
    with err(TypeError, "resize_(): argument 'size' (position 1) must be tuple of ints, not float"):
        a.resize_(2.0)  # the argument checks come first
    assert tuple(a.detach().resize_(5).shape) == (5,)
    assert tuple(a.shape) == (3,)


def test_resize_from_numpy_and_dlpack_not_resizable():
    x = C.from_numpy(np.zeros(3))
    assert tuple(x.resize_(2).shape) == (2,)
    assert tuple(x.resize_(3).shape) == (3,)  # within the array's memory
    assert tuple(x.resize_(0).shape) == (0,)
    with err(RuntimeError, "Trying to resize storage that is not resizable"):
        x.resize_(4)
    d = C.from_dlpack(np.zeros(3))
    with err(RuntimeError, "Trying to resize storage that is not resizable"):
        d.resize_(5)
    assert tuple(C.as_tensor(np.zeros(3)).resize_(2).shape) == (2,)


@pytest.mark.parametrize(
    "make",
    [
        lambda: C.tensor(np.zeros(3)),
        lambda: C.randperm(3),
        lambda: C.FloatTensor(np.zeros(3)),
        lambda: C.mm(C.ones(2, 2), C.ones(2, 2)),
        lambda: C.random.get_rng_state(),
    ],
)
def test_copies_from_numpy_are_resizable(make):
    t = make()  # torch's own memory, though cudalite makes it through NumPy
    t.resize_(100)
    assert t._storage_nbytes() >= 100 * t.element_size()


def test_resize_as(device):
    x = C.zeros(3, device=device)
    assert x.resize_as_(C.zeros(2, 2).t()) is x
    assert info(x) == ((2, 2), (2, 1), 0)
    assert x.dtype == C.float32
    assert tuple(x.resize_as_(C.zeros(2, dtype=C.int64)).shape) == (2,)
    assert x.resize_as_(C.zeros(2, 3, requires_grad=True)).shape == (2, 3)
    assert C.resize_as_(C.zeros(3, device=device), C.zeros(4, 1)).shape == (4, 1)
    y = C.zeros(3, device=device)
    assert y.resize_as_(the_template=C.zeros(2)).shape == (2,)


@pytest.mark.parametrize(
    "fmt, want",
    [
        (None, (60, 20, 5, 1)),
        (C.contiguous_format, (60, 20, 5, 1)),
        (C.preserve_format, (60, 1, 15, 3)),
        (C.channels_last, (60, 1, 15, 3)),
    ],
)
def test_resize_as_memory_format(device, fmt, want):
    tmpl = C.zeros(2, 3, 4, 5).contiguous(memory_format=C.channels_last)
    assert C.zeros(3, device=device).resize_as_(tmpl, memory_format=fmt).stride() == want


@pytest.mark.parametrize(
    "tmpl, want",
    [
        (C.zeros(2, 3, 4, 5, 6).contiguous(memory_format=C.channels_last_3d), (360, 1, 90, 18, 3)),
        (C.zeros(2, 3, 4, 5), (60, 20, 5, 1)),
        (C.zeros(2, 3)[:, ::2], (2, 1)),
        # ambiguous strides fall to contiguous, as torch's suggest_memory_format
        (C.zeros(2, 1, 3, 3), (9, 9, 3, 1)),
        (C.zeros(1, 3, 1, 1).as_strided((1, 3, 1, 1), (3, 1, 1, 1)), (3, 1, 1, 1)),
        (C.zeros(2, 3, 4, 5).as_strided((2, 3, 4, 5), (60, 0, 15, 3)), (60, 20, 5, 1)),
    ],
)
def test_resize_as_preserve_format(device, tmpl, want):
    x = C.zeros(3, device=device)
    assert x.resize_as_(tmpl, memory_format=C.preserve_format).stride() == want


@pytest.mark.parametrize(
    "call, exc, msg",
    [
        (
            lambda x: x.resize_as_([2, 2]),
            TypeError,
            "resize_as_(): argument 'the_template' (position 1) must be Tensor, not list",
        ),
        (
            lambda x: x.resize_as_(),
            TypeError,
            'resize_as_() missing 1 required positional arguments: "the_template"',
        ),
        (
            lambda x: x.resize_as_(C.zeros(2), C.contiguous_format),
            TypeError,
            "resize_as_() takes 1 positional argument but 2 were given",
        ),
        (
            lambda x: x.resize_as_(C.zeros(2), the_template=C.zeros(2)),
            TypeError,
            "resize_as_() got multiple values for argument 'the_template'",
        ),
        (
            lambda x: x.resize_as_(C.zeros(2), other=1),
            TypeError,
            "resize_as_() got an unexpected keyword argument 'other'",
        ),
        (
            lambda x: x.resize_as_(C.zeros(2), memory_format=1),
            TypeError,
            "resize_as_(): argument 'memory_format' must be torch.memory_format, not int",
        ),
        (
            lambda x: x.resize_as_(C.zeros(2, 3), memory_format=C.channels_last),
            RuntimeError,
            "required rank 4 tensor to use channels_last format",
        ),
    ],
)
def test_resize_as_errors(device, call, exc, msg):
    with err(exc, msg):
        call(C.zeros(3, device=device))


@requires_cuda
def test_resize_pinned_stays_pinned():
    x = C.arange(4.0).pin_memory()
    x.resize_(1000)
    assert x.is_pinned()
    np.testing.assert_array_equal(to_np(x[:4]), np.arange(4.0))


@requires_cuda
def test_resize_cuda_grows_on_its_device():
    x = C.arange(4.0, device="cuda")
    y = x[1:]
    y.resize_(100)
    assert y.device == x.device and x._storage_ptr() == y._storage_ptr()
    np.testing.assert_array_equal(to_np(x), np.arange(4.0))
    C.cuda.synchronize()


# ---- out= resizes in place ----

_RESIZED = "An output with one or more elements was resized since it had shape"


def _base_and_view(device, n=10, stop=4):
    x = C.arange(float(n), device=device)
    return x, x[:stop]


@pytest.mark.parametrize(
    "op, want",
    [
        (lambda d, y: C.add(C.ones(2, device=d), 1, out=y), [2.0, 2.0]),
        (lambda d, y: C.neg(C.ones(2, device=d), out=y), [-1.0, -1.0]),
        (lambda d, y: C.clamp(C.ones(2, device=d), 0, 0.5, out=y), [0.5, 0.5]),
        (lambda d, y: C.sum(C.ones(2, 3, device=d), 1, out=y), [3.0, 3.0]),
        (lambda d, y: C.mean(C.ones(2, 3, device=d), 1, out=y), [1.0, 1.0]),
        (lambda d, y: C.mv(C.ones(2, 3, device=d), C.ones(3, device=d), out=y), [3.0, 3.0]),
        (lambda d, y: C.cat([C.ones(1, device=d), C.ones(1, device=d)], out=y), [1.0, 1.0]),
    ],
)
def test_out_resized_in_place_with_warning(device, op, want):
    x, y = _base_and_view(device)
    with pytest.warns(UserWarning, match=_RESIZED):
        r = op(device, y)
    assert r is y and tuple(y.shape) == (2,) and y._storage_ptr() == x._storage_ptr()
    np.testing.assert_allclose(to_np(x), want + list(range(2, 10)))


@pytest.mark.parametrize(
    "op, want",
    [
        (lambda y: C.ones(6, out=y), [1.0] * 6),
        (lambda y: C.zeros(2, 3, out=y), [0.0] * 6),
        (lambda y: C.full((6,), 3.0, out=y), [3.0] * 6),
        (lambda y: C.arange(6.0, out=y), list(range(6))),
        (lambda y: C.linspace(0, 5, 6, out=y), list(range(6))),
        (lambda y: C.eye(2, 3, out=y), [1.0, 0.0, 0.0, 0.0, 1.0, 0.0]),
        (lambda y: C.empty(6, out=y), list(range(6))),  # the values are left as they are
    ],
)
def test_factory_out_resized_in_place_silently(device, recwarn, op, want):
    x, y = _base_and_view(device)
    assert op(y) is y
    assert y.numel() == 6 and y._storage_ptr() == x._storage_ptr()
    np.testing.assert_allclose(to_np(x), want + list(range(6, 10)))
    assert not [w for w in recwarn if _RESIZED in str(w.message)]


def test_random_factory_out_resized_in_place(device):
    x, y = _base_and_view(device)
    C.rand(6, out=y)
    C.randint(5, (6,), out=C.zeros(0, device=device))
    assert y.numel() == 6 and y._storage_ptr() == x._storage_ptr()
    np.testing.assert_array_equal(to_np(x)[6:], [6.0, 7.0, 8.0, 9.0])


def test_out_grows_shared_storage(device):
    x = C.arange(4.0, device=device)
    y = x[2:]
    with pytest.warns(UserWarning, match=_RESIZED):
        C.add(C.ones(4, device=device), 1, out=y)
    assert y._storage_ptr() == x._storage_ptr() and x._storage_nbytes() == 24
    np.testing.assert_array_equal(to_np(x), [0.0, 1.0, 2.0, 2.0])
    z = C.zeros(10, device=device)
    C.ones(3, out=z[8:])  # factories too
    assert z._storage_nbytes() == 44


def test_empty_out_resized_silently_into_base(device, recwarn):
    x = C.arange(10.0, device=device)
    y = x[:0]
    C.add(x[2:6], 1, out=y)  # checked for overlap at size 0, as torch does
    np.testing.assert_array_equal(to_np(x), [3.0, 4.0, 5.0, 6.0] + list(range(4, 10)))
    assert not [w for w in recwarn if _RESIZED in str(w.message)]


def test_out_overlap_checked_before_resize(device):
    x = C.arange(10.0, device=device)
    msg = "unsupported operation: some elements of the input tensor and the written-to tensor"
    with pytest.raises(RuntimeError, match=re.escape(msg)):
        C.add(x[2:6], 1, out=x[:3])
    o = C.zeros(1, device=device).expand(3)
    with pytest.raises(RuntimeError, match="more than one element of the written-to tensor"):
        C.add(C.ones(4, device=device), 1, out=o)


def test_out_keeps_strides_of_the_right_shape(device):
    x = C.zeros(3, 2, device=device).t()
    C.add(C.ones(2, 3, device=device), 1, out=x)
    assert x.stride() == (1, 2)
    C.ones(2, 3, out=x)
    assert x.stride() == (1, 2)
    x = C.zeros(3, 3, device=device).t()
    with pytest.warns(UserWarning, match=_RESIZED):
        C.add(C.ones(2, 3, device=device), 1, out=x)
    assert x.stride() == (3, 1)


def test_out_not_resizable_storage():
    msg = "Trying to resize storage that is not resizable"
    for op in (
        lambda t: C.add(C.ones(4, dtype=C.float64), 1, out=t),
        lambda t: C.zeros(4, out=t, dtype=C.float64),
        lambda t: C.mm(C.ones(4, 2, dtype=C.float64), C.ones(2, 4, dtype=C.float64), out=t),
    ):
        t = C.from_numpy(np.zeros(3))
        with err(RuntimeError, msg), warnings.catch_warnings():
            warnings.simplefilter("ignore")  # torch warns about the resize, then raises
            op(t)
        assert tuple(t.shape) == (3,)
    t = C.from_numpy(np.zeros(3))
    with pytest.warns(UserWarning, match=_RESIZED):
        C.add(C.ones(2, dtype=C.float64), 1, out=t)  # smaller: fits the array
    assert t.tolist() == [2.0, 2.0]


def test_empty_out_requires_grad_refused_even_under_no_grad(device):
    a = C.zeros(3, device=device, requires_grad=True)
    with C.no_grad():
        with err(RuntimeError, "cannot resize variables that require grad"):
            C.empty(3, out=a)
        C.zeros(4, out=a)  # zeros, ones, randn... resize it under no_grad
    assert tuple(a.shape) == (4,)
