"""Memory formats (cudalite._memory_format): contiguous / is_contiguous / clone / to / the
casts with contiguous_format, preserve_format, channels_last and channels_last_3d; errors;
autograd through a layout change. CPU and CUDA."""

from __future__ import annotations

import pickle

import numpy as np
import pytest

import cudalite as C
from conftest import exact, requires_cuda, to_np


def err(exc, msg):
    return pytest.raises(exc, match=exact(msg))


def nchw(device, shape=(2, 3, 4, 5)):
    return C.arange(int(np.prod(shape)), dtype=C.float32, device=device).view(*shape)


def test_constants():
    assert repr(C.channels_last) == "cudalite.channels_last"
    assert repr(C.contiguous_format) == "cudalite.contiguous_format"
    assert isinstance(C.preserve_format, C.memory_format)
    assert pickle.loads(pickle.dumps(C.channels_last_3d)) is C.channels_last_3d


def test_channels_last_layout(device):
    x = nchw(device)
    y = x.contiguous(memory_format=C.channels_last)
    assert y.stride() == (60, 1, 15, 3) and y.shape == x.shape
    assert not y.is_contiguous() and y.is_contiguous(memory_format=C.channels_last)
    assert not x.is_contiguous(memory_format=C.channels_last)
    np.testing.assert_array_equal(to_np(y), to_np(x))
    assert y.contiguous(memory_format=C.channels_last) is y  # already in that layout
    assert y.contiguous().stride() == (60, 20, 5, 1)
    assert x.contiguous(memory_format=C.contiguous_format) is x
    assert x.contiguous(memory_format=C.preserve_format) is x


def test_channels_last_3d_and_size_one_dims(device):
    x = nchw(device, (2, 3, 2, 2, 2))
    y = x.contiguous(memory_format=C.channels_last_3d)
    assert y.stride() == (24, 1, 12, 6, 3)
    assert y.is_contiguous(memory_format=C.channels_last_3d)
    # dims of size 1 may have any stride: both layouts at once
    z = C.ones(1, 3, 1, 1, device=device)
    assert z.is_contiguous() and z.is_contiguous(memory_format=C.channels_last)
    assert not C.ones(2, 3, device=device).is_contiguous(memory_format=C.channels_last)


@pytest.mark.parametrize(
    "convert",
    [
        lambda x, f: x.clone(memory_format=f),
        lambda x, f: x.to(memory_format=f),
        lambda x, f: x.float(memory_format=f),
        lambda x, f: x.double(memory_format=f),
        lambda x, f: C.clone(x, memory_format=f),
        lambda x, f: x.to(x.device, C.float32, memory_format=f),
    ],
)
def test_conversions_take_the_format(convert, device):
    x = nchw(device)
    y = convert(x, C.channels_last)
    assert y.is_contiguous(memory_format=C.channels_last)
    np.testing.assert_array_equal(to_np(y), to_np(x))
    back = convert(y, C.contiguous_format)
    assert back.is_contiguous()
    assert convert(y, C.preserve_format).stride() == y.stride()


@pytest.mark.parametrize(
    "convert",
    [
        lambda x, f: x.to(memory_format=f),
        lambda x, f: x.to(C.float64, memory_format=f),
        lambda x, f: x.clone(memory_format=f),
        lambda x, f: x.cpu(memory_format=f),
        lambda x, f: x.double(memory_format=f),
    ],
)
def test_new_memory_gets_the_formats_own_strides(convert, device):
    # torch's _to_copy/clone: (1, 3, 1, 1) is both contiguous and channels_last, but its
    # suggested format is contiguous, so to() copies, and a copy gets (3, 1, 3, 3).
    x = nchw(device, (1, 3, 1, 1))
    y = convert(x, C.channels_last)
    assert y is not x and y.stride() == (3, 1, 3, 3)
    np.testing.assert_array_equal(to_np(y), to_np(x))
    z = nchw(device, (2, 1, 3, 1))
    assert convert(z, C.channels_last).stride() == (3, 1, 1, 1)
    assert convert(z, C.channels_last) is not z
    e = convert(C.zeros(2, 0, 4, 5, device=device), C.channels_last)  # empty: (0, 1, 0, 0)
    assert e.stride() == (0, 1, 0, 0) and e.is_contiguous(memory_format=C.channels_last)


def test_to_returns_self_when_its_layout_is_the_format(device):
    y = nchw(device).contiguous(memory_format=C.channels_last)
    assert y.to(memory_format=C.channels_last) is y
    assert y.cpu(memory_format=C.channels_last).stride() == (60, 1, 15, 3)
    x = nchw(device)
    assert x.to(memory_format=C.contiguous_format) is x
    assert x.to(memory_format=C.preserve_format) is x


def test_an_empty_tensor_is_contiguous(device):
    e = C.zeros(2, 0, 4, 5, device=device)
    assert e.stride() == (20, 20, 5, 1) and e.is_contiguous()
    assert e.to(C.float64, memory_format=C.contiguous_format).is_contiguous()
    assert not e.is_contiguous(memory_format=C.channels_last)  # as torch


def test_layout_change_through_to_keeps_the_gradient(device):
    w = C.ones(1, 3, 1, 1, device=device, requires_grad=True)
    y = w.to(C.float64, memory_format=C.channels_last)
    assert y.stride() == (3, 1, 3, 3) and y.grad_fn is not None
    (y * 2).sum().backward()
    np.testing.assert_array_equal(to_np(w.grad), np.full((1, 3, 1, 1), 2.0, np.float32))


def test_cpu_and_cuda_take_the_format(device):
    x = nchw(device)
    assert x.cpu(memory_format=C.channels_last).stride() == (60, 1, 15, 3)
    if device == "cuda":
        assert x.cuda(memory_format=C.channels_last).stride() == (60, 1, 15, 3)


def test_module_to_formats_4d_tensors_only(device):
    m = C.nn.Linear(3, 2).to(device)
    m.register_buffer("img", nchw(device))
    m.to(memory_format=C.channels_last)
    assert m.img.is_contiguous(memory_format=C.channels_last)
    assert m.weight.is_contiguous()


def test_autograd_through_a_layout_change(device):
    w = C.ones(2, 3, 4, 5, device=device, requires_grad=True)
    z = w.contiguous(memory_format=C.channels_last)
    assert type(z.grad_fn).__name__ == "CloneBackward0"
    (z * nchw(device)).sum().backward()
    np.testing.assert_array_equal(to_np(w.grad), to_np(nchw(device)))
    c = w.clone(memory_format=C.channels_last)
    assert c.is_contiguous(memory_format=C.channels_last) and c.grad_fn is not None


def test_errors(device):
    x = nchw(device)
    with err(RuntimeError, "required rank 4 tensor to use channels_last format"):
        C.zeros(3, 4, device=device).contiguous(memory_format=C.channels_last)
    with err(RuntimeError, "required rank 5 tensor to use channels_last_3d format"):
        x.float(memory_format=C.channels_last_3d)
    with err(RuntimeError, "preserve memory format is unsupported by the contiguous operator"):
        x[:, :, ::2].contiguous(memory_format=C.preserve_format)
    with err(TypeError, "clone(): argument 'memory_format' must be torch.memory_format, not int"):
        x.clone(memory_format=3)
    with err(
        TypeError, "is_contiguous(): argument 'memory_format' must be torch.memory_format, not str"
    ):  # noqa: E501
        x.is_contiguous(memory_format="channels_last")


# ---- the factories: empty(memory_format=) and the *_like forms ----

LIKE = {
    "empty_like": (),
    "zeros_like": (),
    "ones_like": (),
    "full_like": (7,),
    "rand_like": (),
    "randn_like": (),
    "randint_like": (3, 9),
}


def test_empty_takes_the_format(device):
    t = C.empty(2, 3, 4, 5, memory_format=C.channels_last, device=device)
    assert t.stride() == (60, 1, 15, 3) and t.shape == (2, 3, 4, 5)
    assert t.is_contiguous(memory_format=C.channels_last) and t.device.type == device
    t = C.empty((2, 3, 4, 5, 6), memory_format=C.channels_last_3d, dtype=C.int32, device=device)
    assert t.stride() == (360, 1, 90, 18, 3) and t.dtype is C.int32
    assert C.empty(2, 3, memory_format=C.contiguous_format, device=device).stride() == (3, 1)
    assert C.empty(2, 3, memory_format=None, device=device).stride() == (3, 1)
    # torch's channels-last strides do not raise sizes 0 to 1
    assert C.empty(2, 0, 4, 5, memory_format=C.channels_last).stride() == (0, 1, 0, 0)
    assert C.empty(2, 1, 1, 5, memory_format=C.channels_last).stride() == (5, 1, 5, 1)
    t = C.empty(2, 3, 4, 5, memory_format=C.channels_last, requires_grad=True, device=device)
    assert t.requires_grad and t.is_leaf


def test_empty_format_errors(device):
    with err(RuntimeError, "unsupported memory format Preserve"):
        C.empty(2, 3, memory_format=C.preserve_format, device=device)
    with err(RuntimeError, "required rank 4 tensor to use channels_last format"):
        C.empty(2, 3, 4, memory_format=C.channels_last, device=device)
    with err(RuntimeError, "required rank 5 tensor to use channels_last_3d format"):
        C.empty(2, 3, 4, 5, memory_format=C.channels_last_3d, device=device)
    with err(
        TypeError,
        "empty() received an invalid combination of arguments - got (int, int, "
        "memory_format=str), but expected one of:",
    ):
        C.empty(2, 3, memory_format="channels_last")
    out = C.zeros(2, 3, 4, 5, device=device)
    for fmt in (C.channels_last, C.preserve_format):
        with err(
            RuntimeError, "'memory_format' argument is incompatible with 'out' tensor argument"
        ):
            C.empty(2, 3, 4, 5, memory_format=fmt, out=out)


@pytest.mark.parametrize("name", list(LIKE))
def test_like_factories_take_the_format(name, device):
    f, extra = getattr(C, name), LIKE[name]
    x = nchw(device)
    xcl = x.contiguous(memory_format=C.channels_last)
    xt = C.zeros(3, 4, device=device).t()
    cl = f(x, *extra, memory_format=C.channels_last)
    assert cl.stride() == (60, 1, 15, 3) and cl.dtype is x.dtype and cl.device == x.device
    assert f(xcl, *extra, memory_format=C.contiguous_format).stride() == (60, 20, 5, 1)
    # preserve_format, the default: the input's dense layout
    assert f(xcl, *extra).stride() == (60, 1, 15, 3)
    assert f(xcl, *extra, memory_format=C.preserve_format).stride() == (60, 1, 15, 3)
    assert f(xt, *extra, memory_format=None).stride() == (1, 4)
    assert f(xt, *extra, memory_format=C.contiguous_format).stride() == (3, 1)
    x5 = C.zeros(2, 3, 4, 5, 6, device=device)
    assert f(x5, *extra, memory_format=C.channels_last_3d).stride() == (360, 1, 90, 18, 3)
    assert f(x, *extra, memory_format=C.channels_last, dtype=C.float64).dtype is C.float64
    with err(RuntimeError, "required rank 4 tensor to use channels_last format"):
        f(x5, *extra, memory_format=C.channels_last)
    with err(RuntimeError, "required rank 5 tensor to use channels_last_3d format"):
        f(xcl, *extra, memory_format=C.channels_last_3d)


def test_like_factories_fill_in_the_format(device):
    x = nchw(device)
    fmt = C.channels_last
    assert (to_np(C.zeros_like(x, memory_format=fmt)) == 0).all()
    assert (to_np(C.ones_like(x, memory_format=fmt)) == 1).all()
    assert (to_np(C.full_like(x, 2.5, memory_format=fmt)) == 2.5).all()
    r = to_np(C.randint_like(x, 3, 9, memory_format=fmt))
    assert r.min() >= 3 and r.max() < 9 and len(np.unique(r)) > 1
    r = to_np(C.rand_like(x, memory_format=fmt))
    assert r.min() >= 0 and r.max() < 1 and len(np.unique(r)) > 1


def test_like_factories_wrong_format_type():
    x = nchw("cpu")
    for name in ("empty_like", "zeros_like", "ones_like", "full_like"):
        with err(
            TypeError, f"{name}(): argument 'memory_format' must be torch.memory_format, not str"
        ):
            getattr(C, name)(x, *LIKE[name], memory_format="x")
    for name, got in (
        ("rand_like", "Tensor"),
        ("randn_like", "Tensor"),
        ("randint_like", "Tensor, int, int"),
    ):
        with err(
            TypeError,
            f"{name}() received an invalid combination of arguments - got ({got}, "
            "memory_format=str), but expected one of:",
        ):
            getattr(C, name)(x, *LIKE[name], memory_format="x")


def test_randint_like_argument_errors():
    x = nchw("cpu")
    for args, got in (((5.5,), "Tensor, float"), ((1, 5.5), "Tensor, int, float")):
        with err(
            TypeError,
            f"randint_like() received an invalid combination of arguments - got ({got}), but "
            "expected one of:",
        ):
            C.randint_like(x, *args)


FACTORIES = {
    "zeros": ((2, 3), "int, int"),
    "ones": ((2, 3), "int, int"),
    "rand": ((2, 3), "int, int"),
    "randn": ((2, 3), "int, int"),
    "full": (((2, 3), 1), "tuple, int"),
    "randint": ((5, (2, 3)), "int, tuple"),
    "arange": ((5,), "int"),
    "eye": ((3,), "int"),
    "linspace": ((0, 1, 5), "int, int, int"),
}


@pytest.mark.parametrize("name", list(FACTORIES))
def test_factories_without_memory_format(name):
    """torch's parser has no memory_format= for these (even None): its TypeError."""
    args, got = FACTORIES[name]
    f = getattr(C, name)
    for fmt, tn in ((C.channels_last, "cudalite.memory_format"), (None, "NoneType")):
        with err(
            TypeError,
            f"{name}() received an invalid combination of arguments - got ({got}, "
            f"memory_format={tn}), but expected one of:",
        ):
            f(*args, memory_format=fmt)
    with err(
        TypeError,
        f"{name}() received an invalid combination of arguments - got ({got}, "
        "memory_format=cudalite.memory_format, dtype=cudalite.dtype), but expected one of:",
    ):
        f(*args, dtype=C.float32, memory_format=C.contiguous_format)


# preserve_format's layouts, recorded from torch 2.11: a non-overlapping and dense tensor
# (any empty one, any strides of size-1 dims) keeps its strides, another gets dense strides in
# the order of its own (torch's infer_dense_strides).
PRESERVE_CASES = [
    (lambda d: C.zeros(3, 4, device=d).t(), (1, 4)),
    (lambda d: C.zeros(4, 6, device=d)[:, ::2].t(), (1, 3)),
    (lambda d: C.zeros(3, 4, device=d).t()[:0], (1, 4)),
    (lambda d: C.zeros(1, 4, device=d).expand(0, 4), (0, 1)),
    (lambda d: C.zeros(3, 1, device=d).t(), (1, 1)),
    (lambda d: C.zeros(2, 3, 4, device=d).permute(2, 0, 1)[:, ::2], (1, 24, 4)),
    (lambda d: C.zeros(3, device=d).expand(2, 3), (3, 1)),
    (lambda d: C.zeros(3, 4, device=d)[:, :1], (1, 1)),
]


@pytest.mark.parametrize("make, want", PRESERVE_CASES)
def test_preserve_format_layouts(device, make, want):
    x = make(device)
    for y in (
        x.clone(),
        x.clone(memory_format=C.preserve_format),
        x.double(),
        x.to(C.float64),
        C.empty_like(x),
        C.zeros_like(x),
        C.rand_like(x),
    ):
        assert y.shape == x.shape and y.stride() == want
    y = x.clone()
    assert y.untyped_storage().nbytes() == y.numel() * 4  # dense: no more storage than needed
    np.testing.assert_array_equal(to_np(y), to_np(x))


@requires_cuda
@pytest.mark.parametrize("make, want", PRESERVE_CASES)
def test_preserve_format_across_devices(make, want):
    # torch 2.11 keeps the layout on the other device too (x.t().cuda() has x.t()'s strides)
    for src, dev in ((make("cpu"), "cuda"), (make("cuda"), "cpu")):
        assert src.to(dev).stride() == want and src.to(dev, C.float16).stride() == want
        src = src.clone().copy_(C.arange(src.numel(), dtype=C.float32).view(src.shape))
        for y in (src.to(dev), src.to(dev, C.float64), src.to(dev, non_blocking=True)):
            C.cuda.synchronize()
            assert y.stride() == want and y.device.type == dev
            np.testing.assert_array_equal(to_np(y), to_np(src))
    arr = np.arange(12.0).reshape(3, 4).T
    t = C.tensor(arr, device="cuda")
    assert t.stride() == (1, 4)
    np.testing.assert_array_equal(to_np(t), arr)


@pytest.mark.parametrize(
    "make, want",
    [
        (lambda: np.zeros((3, 4)).T, (1, 4)),
        (lambda: np.zeros((3, 4))[:, ::2], (2, 1)),
        (lambda: np.zeros((3, 4))[:0], (4, 1)),
        (lambda: np.zeros((0, 4)), (0, 0)),
        (lambda: np.zeros((4, 3, 2)).transpose(1, 0, 2)[:, :0], (2, 6, 1)),
        (lambda: np.zeros((3, 1)).T, (1, 1)),
        (lambda: np.broadcast_to(np.arange(3.0), (2, 3)), (3, 1)),
    ],
)
def test_tensor_from_ndarray_keeps_the_layout(make, want):
    arr = make()
    for t in (C.tensor(arr), C.tensor(arr, dtype=C.float32)):
        assert t.stride() == want
        np.testing.assert_array_equal(to_np(t), arr)
