"""Memory formats (cudalite._memory_format): contiguous / is_contiguous / clone / to / the
casts with contiguous_format, preserve_format, channels_last and channels_last_3d; errors;
autograd through a layout change. CPU and CUDA."""

from __future__ import annotations

import pickle
import re

import numpy as np
import pytest

import cudalite as C
from conftest import to_np


def err(exc, msg):
    return pytest.raises(exc, match=f"^{re.escape(msg)}$")


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
