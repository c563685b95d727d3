"""Views and shape ops against NumPy: values, strides, storage sharing and torch's errors."""

from __future__ import annotations

import re

import numpy as np
import pytest

import cudalite as C
from conftest import exact, to_np


def base(device, shape=(2, 3, 4), dtype=C.int64):
    n = int(np.prod(shape))
    return C.arange(n, dtype=dtype, device=device).reshape(*shape), np.arange(n).reshape(shape)


def same(t, a):
    assert tuple(t.shape) == a.shape
    np.testing.assert_array_equal(to_np(t), a)


# ---- values vs NumPy ----


@pytest.mark.parametrize(
    "shape",
    [(6, 4), (-1,), (-1, 4), (4, -1), (2, 12), (24,), (1, 2, 3, 4), (2, 3, 4)],
)
def test_view_and_reshape(shape, device):
    x, a = base(device)
    same(x.view(*shape), a.reshape(shape))
    same(x.view(shape), a.reshape(shape))
    same(
        x.view(C.Size([s if s != -1 else a.size // -np.prod(shape) for s in shape])),
        a.reshape(shape),
    )
    same(x.reshape(shape), a.reshape(shape))
    same(C.reshape(x, shape), a.reshape(shape))
    assert x.view(*shape).data_ptr() == x.data_ptr()


def test_reshape_copies_only_when_needed(device):
    x, a = base(device)
    t = x.transpose(0, 1)
    r = t.reshape(-1)
    same(r, a.transpose(1, 0, 2).reshape(-1))
    assert r.is_contiguous()
    assert x.reshape(6, 4).data_ptr() == x.data_ptr()
    # A transposed (1, n) matrix is still viewable.
    v = C.zeros(1, 3, device=device).t()
    assert v.is_contiguous() and v.view(3).shape == (3,)


@pytest.mark.parametrize("start, end", [(0, -1), (1, -1), (0, 1), (1, 2), (2, 2), (-2, -1)])
def test_flatten(start, end, device):
    x, a = base(device)
    s, e = start % 3, end % 3
    want = a.reshape(a.shape[:s] + (-1,) + a.shape[e + 1 :])
    same(x.flatten(start, end), want)
    same(C.flatten(x, start, end), want)


def test_flatten_zero_dim_and_views(device):
    assert C.tensor(3, device=device).flatten().shape == (1,)
    x, _ = base(device)
    assert x.flatten().data_ptr() == x.data_ptr()
    assert x.transpose(0, 1).flatten().is_contiguous()


@pytest.mark.parametrize("dim", [None, 0, 1, 2, -1, (0, 2), (1,)])
def test_squeeze(dim, device):
    x = C.zeros(1, 2, 1, device=device)
    a = np.zeros((1, 2, 1))
    if dim is None:
        want = a.squeeze()
    else:
        dims = dim if isinstance(dim, tuple) else (dim,)
        want = a.squeeze(tuple(d for d in dims if a.shape[d] == 1))
    same(x.squeeze(dim) if dim is not None else x.squeeze(), want)


@pytest.mark.parametrize("dim", [0, 1, 3, -1, -4])
def test_unsqueeze(dim, device):
    x, a = base(device)
    same(x.unsqueeze(dim), np.expand_dims(a, dim))
    same(C.unsqueeze(x, dim), np.expand_dims(a, dim))


def test_zero_dim_shape_ops(device):
    s = C.tensor(3, device=device)
    for t in (s.squeeze(), s.squeeze(0), s.squeeze(-1), s.t(), s.T, s.transpose(0, -1)):
        assert t.shape == ()
    assert s.unsqueeze(0).shape == (1,)
    assert s.view(1, 1).shape == (1, 1)
    assert s.reshape(-1).shape == (1,)


@pytest.mark.parametrize("d0, d1", [(0, 1), (0, 2), (1, 2), (-1, 0), (2, 2)])
def test_transpose(d0, d1, device):
    x, a = base(device)
    same(x.transpose(d0, d1), np.swapaxes(a, d0, d1))
    same(C.transpose(x, d0, d1), np.swapaxes(a, d0, d1))
    same(x.swapaxes(d0, d1), np.swapaxes(a, d0, d1))


def test_t_T_mT(device):
    m, a = base(device, (3, 4))
    same(m.t(), a.T)
    same(C.t(m), a.T)
    same(m.T, a.T)
    assert m.t().stride() == (1, 4)
    v, va = base(device, (3,))
    same(v.t(), va)
    x, xa = base(device)
    same(x.T, xa.transpose(2, 1, 0))
    same(x.mT, np.swapaxes(xa, -1, -2))
    same(m.mT, a.T)


@pytest.mark.parametrize("perm", [(2, 0, 1), (0, 1, 2), (1, 2, 0), (-1, 0, 1)])
def test_permute(perm, device):
    x, a = base(device)
    same(x.permute(*perm), a.transpose(perm))
    same(x.permute(perm), a.transpose(perm))
    same(C.permute(x, perm), a.transpose(perm))
    assert x.permute(*perm).stride() == tuple(s // 8 for s in a.transpose(perm).strides)


@pytest.mark.parametrize(
    "src, target",
    [((3, 1), (3, 4)), ((3, 1), (-1, 4)), ((3, 1), (2, 3, 4)), ((1,), (5,)), ((), (2, 2))],
)
def test_expand(src, target, device):
    x = C.arange(int(np.prod(src)), device=device).reshape(src)
    a = np.arange(int(np.prod(src))).reshape(src)
    want_shape = tuple(
        s if s != -1 else a.shape[i - (len(target) - a.ndim)] for i, s in enumerate(target)
    )
    e = x.expand(*target)
    same(e, np.broadcast_to(a, want_shape))
    same(x.expand(target), np.broadcast_to(a, want_shape))
    assert e.stride() == tuple(s // 8 for s in np.broadcast_to(a, want_shape).strides)
    same(x.expand_as(C.zeros(want_shape)), np.broadcast_to(a, want_shape))
    same(C.broadcast_to(x, want_shape), np.broadcast_to(a, want_shape))


def test_contiguous_and_clone(device):
    x, a = base(device)
    assert x.contiguous() is x
    t = x.transpose(1, 2)
    c = t.contiguous()
    assert c.is_contiguous() and c.stride() == (12, 3, 1)
    same(c, a.transpose(0, 2, 1))
    assert c.data_ptr() != x.data_ptr()
    k = x.clone()
    same(k, a)
    assert k.data_ptr() != x.data_ptr()
    k.fill_(0)
    same(x, a)
    same(C.clone(t), a.transpose(0, 2, 1))


@pytest.mark.parametrize(
    "shape, strides",
    [
        ((2, 4, 1, 3), (0, 1, 24, 4)),  # a size-1 dim between a broadcast dim and the rest
        ((2, 4, 1, 2, 2, 3), (0, 1, 24, 12, 0, 4)),  # x.permute(...).repeat(...)
        ((3, 1, 2), (1, 7, 3)),
    ],
)
def test_copies_of_strided_views_with_size_one_dims(shape, strides, device):
    # Dims on either side of a dropped size-1 dim merge only when both are contiguous with
    # each other (once read 16 elements past the end of a 24-element tensor).
    x, a = base(device, (100,))
    v = x.as_strided(shape, strides)
    want = np.lib.stride_tricks.as_strided(a, shape, [s * a.itemsize for s in strides])
    same(v.contiguous(), want)
    same(v + 0, want)
    out = C.zeros(shape, dtype=C.int64, device=device).permute(*range(len(shape) - 1, -1, -1))
    out.copy_(v.permute(*range(len(shape) - 1, -1, -1)))
    same(out, want.transpose())
    p = C.arange(24, device=device).reshape(2, 3, 4).permute(2, 0, 1)
    same(p.repeat(2, 1, 2), np.tile(np.arange(24).reshape(2, 3, 4).transpose(2, 0, 1), (2, 1, 2)))


@pytest.mark.parametrize(
    "dim, start, length", [(1, 1, 2), (-1, 0, 2), (1, -1, 1), (1, 3, 0), (0, 0, 2)]
)
def test_narrow(dim, start, length, device):
    x, a = base(device)
    s = start % a.shape[dim] if start < 0 else start
    want = np.take(a, range(s, s + length), axis=dim)
    same(x.narrow(dim, start, length), want)
    same(C.narrow(x, dim, start, length), want)


def test_narrow_storage_offset(device):
    x, _ = base(device)
    assert x.narrow(-1, 0, 2).storage_offset() == 0
    assert x.narrow(1, 1, 2).storage_offset() == 4


@pytest.mark.parametrize(
    "size, dim", [(2, 2), (3, 2), (1, 0), ([1, 3], 2), ([2, 0, 1], 1), (2, -1)]
)
def test_split(size, dim, device):
    x, a = base(device)
    n = a.shape[dim]
    bounds = list(range(size, n, size)) if isinstance(size, int) else list(np.cumsum(size)[:-1])
    parts = x.split(size, dim)
    want = np.split(a, bounds, axis=dim)
    assert len(parts) == len(want)
    for p, w in zip(parts, want, strict=True):
        same(p, w)
        assert p.data_ptr() == x.data_ptr() + p.storage_offset() * 8
    assert len(C.split(x, size, dim)) == len(want)


@pytest.mark.parametrize("n, chunks", [(5, 3), (6, 4), (6, 3), (2, 5), (0, 2)])
def test_chunk(n, chunks, device):
    x = C.arange(n, device=device)
    a = np.arange(n)
    step = max(1, -(-n // chunks))
    want = np.split(a, list(range(step, n, step))) if n else [a] * chunks  # torch's rule
    parts = x.chunk(chunks)
    assert [p.tolist() for p in parts] == [w.tolist() for w in want]
    assert len(C.chunk(x, chunks)) == len(want)


@pytest.mark.parametrize("dim", [0, 1, 2, -1])
def test_unbind(dim, device):
    x, a = base(device)
    parts = x.unbind(dim)
    assert len(parts) == a.shape[dim]
    for i, p in enumerate(parts):
        same(p, np.take(a, i, axis=dim))
    assert len(C.unbind(x, dim)) == a.shape[dim]


@pytest.mark.parametrize("dim, index", [(0, 1), (1, -1), (2, 3), (-2, 0)])
def test_select(dim, index, device):
    x, a = base(device)
    same(x.select(dim, index), np.take(a, index, axis=dim))
    same(C.select(x, dim, index), np.take(a, index, axis=dim))


@pytest.mark.parametrize("reps", [(2, 1, 1), (1, 2, 3), (2, 1, 1, 1), (0, 1, 1)])
def test_repeat(reps, device):
    x, a = base(device)
    same(x.repeat(*reps), np.tile(a, reps))
    same(x.repeat(reps), np.tile(a, reps))
    v = C.arange(3, device=device)
    same(v.repeat(2, 2), np.tile(np.arange(3), (2, 2)))


@pytest.mark.parametrize("dims", [0, (0, 2), [1], (-1,), (0, 1, 2), ()])
def test_flip(dims, device):
    x, a = base(device)
    axes = (dims,) if isinstance(dims, int) else tuple(dims)
    want = np.flip(a, axes) if axes else a
    same(x.flip(dims), want)
    if isinstance(dims, int):  # torch.flip takes a tuple only (the method takes ints too)
        with pytest.raises(TypeError, match=r"^flip\(\): argument 'dims' \(position 2\)"):
            C.flip(x, dims)
    else:
        same(C.flip(x, dims), want)
    if isinstance(dims, tuple) and len(dims) > 1:
        same(x.flip(*dims), want)


def test_views_of_non_contiguous(device):
    x, a = base(device, (4, 6))
    t = x[:, ::2].t()
    same(t, a[:, ::2].T)
    same(t.reshape(-1), a[:, ::2].T.reshape(-1))
    same(t.flatten(), a[:, ::2].T.flatten())
    same(t.unsqueeze(1), np.expand_dims(a[:, ::2].T, 1))
    same(t.expand(2, 3, 4), np.broadcast_to(a[:, ::2].T, (2, 3, 4)))
    same(t.flip(0), np.flip(a[:, ::2].T, 0))


# ---- storage sharing ----


@pytest.mark.parametrize(
    "make",
    [
        lambda x: x.view(-1),
        lambda x: x.view(6, 4)[1:3],
        lambda x: x.reshape(4, 6),
        lambda x: x.transpose(0, 2),
        lambda x: x.permute(1, 2, 0)[0],
        lambda x: x.unsqueeze(0)[0, 1],
        lambda x: x.narrow(2, 1, 2),
        lambda x: x.split(1, 1)[1],
        lambda x: x.chunk(2, 2)[1],
        lambda x: x.unbind(0)[1],
        lambda x: x.select(2, 3),
        lambda x: x.flatten(0, 1),
        lambda x: x[:, ::2, 1:],
        lambda x: x.squeeze(),
        lambda x: x.T,
        lambda x: x.mT,
        lambda x: x.detach(),
    ],
)
def test_write_through_view(make, device):
    x, _ = base(device)
    v = make(x)
    # Same storage: the view's first element sits storage_offset elements into x's memory.
    assert v.data_ptr() - v.storage_offset() * v.element_size() == x.data_ptr()
    want = to_np(x)
    idx = np.zeros(want.shape, dtype=bool)
    marker = C.arange(x.numel(), device=device).reshape(x.shape)
    # Which base elements does the view cover? Map them through the same view of a marker tensor.
    covered = to_np(make(marker)).reshape(-1)
    idx.reshape(-1)[covered] = True
    v.fill_(-7)
    want[idx] = -7
    np.testing.assert_array_equal(to_np(x), want)


def test_base_write_seen_by_view(device):
    x, _ = base(device)
    v = x.transpose(0, 1)[1]
    x[0, 1, 2] = 1000
    assert v[0, 2].item() == 1000


# ---- strides, contiguity, offsets ----


def test_strides_and_offsets(device):
    x, a = base(device)
    assert x.stride() == (12, 4, 1)
    assert x.stride(1) == 4 and x.stride(-1) == 1
    assert x.is_contiguous()
    assert x.storage_offset() == 0
    s = x[:, ::2]
    assert s.stride() == (12, 8, 1)
    assert not s.is_contiguous()
    assert x[:, 1:].storage_offset() == 4
    assert not x[:, 1:].is_contiguous()
    assert x[1].storage_offset() == 12
    assert x[1].is_contiguous()
    assert not C.zeros(3, 1, device=device).expand(3, 4).is_contiguous()
    assert C.zeros(2, 3).view(3, 2).stride() == (2, 1)
    assert C.tensor(1.0).stride() == ()
    with pytest.raises(
        IndexError, match=re.escape("expected to be in range of [-3, 2], but got 3")
    ):
        x.stride(3)


# ---- errors ----


def err(exc, msg):
    return pytest.raises(exc, match=exact(msg))


def test_swapdims_mH_adjoint_is_inference(device):
    x, a = base(device)
    same(x.swapdims(0, 2), a.swapaxes(0, 2))
    same(x.swapdims(dim0=1, dim1=2), a.swapaxes(1, 2))
    same(C.swapdims(x, 0, 1), a.swapaxes(0, 1))
    same(x.mH, a.swapaxes(-2, -1))
    same(x.adjoint(), a.swapaxes(-2, -1))
    with err(
        RuntimeError,
        "tensor.mH is only supported on matrices or batches of matrices. Got 1-D tensor.",
    ):
        _ = C.ones(3, device=device).mH
    with err(
        RuntimeError,
        "tensor.adjoint() is only supported on matrices or batches of matrices. Got 1-D tensor.",
    ):
        C.ones(2, device=device).adjoint()
    with pytest.warns(UserWarning, match="^Tensor.mH is deprecated on 0-D tensors"):
        assert C.ones((), device=device).mH.item() == 1.0
    with pytest.warns(UserWarning, match="^Tensor.mT is deprecated on 0-D tensors. This"):
        assert C.ones((), device=device).mT.item() == 1.0
    with pytest.warns(UserWarning, match="^adjoint\\(\\) is deprecated on 0-D tensors"):
        assert C.ones((), device=device).adjoint().item() == 1.0
    assert x.is_inference() is False
    with C.inference_mode():  # cudalite's inference_mode makes ordinary tensors (no_grad)
        assert C.ones(2, device=device).is_inference() is False


def test_view_errors(device):
    x, _ = base(device)
    with err(RuntimeError, "shape '[5, 5]' is invalid for input of size 24"):
        x.view(5, 5)
    with err(RuntimeError, "shape '[-1, 5]' is invalid for input of size 24"):
        x.view(-1, 5)
    with err(RuntimeError, "only one dimension can be inferred"):
        x.view(-1, -1)
    msg = (
        "view size is not compatible with input tensor's size and stride (at least one dimension "
        "spans across two contiguous subspaces). Use .reshape(...) instead."
    )
    with err(RuntimeError, msg):
        x.transpose(0, 1).view(-1)
    with err(RuntimeError, msg):
        x.permute(2, 0, 1).view(3, 8)
    with err(RuntimeError, "shape '[5, 5]' is invalid for input of size 24"):
        x.reshape(5, 5)
    msg = (
        "cannot reshape tensor of 0 elements into shape [-1, 0] because the unspecified "
        "dimension size -1 can be any value and is ambiguous"
    )
    with err(RuntimeError, msg):
        C.zeros(0, 3).view(-1, 0)
    assert C.zeros(0, 3).view(3, -1).shape == (3, 0)


def test_shape_op_errors():
    x, _ = base("cpu")
    rng = "Dimension out of range (expected to be in range of [-3, 2], but got {})"
    for call, bad in [
        (lambda: x.flatten(5), 5),
        (lambda: x.transpose(0, 3), 3),
        (lambda: x.squeeze(3), 3),
        (lambda: x.unbind(3), 3),
        (lambda: x.flip(3), 3),
        (lambda: x.narrow(5, 0, 1), 5),
        (lambda: x.select(3, 0), 3),
        (lambda: x.split(1, 4), 4),
    ]:
        with err(IndexError, rng.format(bad)):
            call()
    with err(IndexError, "Dimension out of range (expected to be in range of [-4, 3], but got 4)"):
        x.unsqueeze(4)
    with err(IndexError, "Dimension out of range (expected to be in range of [-1, 0], but got 1)"):
        C.tensor(3).squeeze(1)
    with err(RuntimeError, "flatten() has invalid args: start_dim cannot come after end_dim"):
        x.flatten(2, 1)
    with err(RuntimeError, "t() expects a tensor with <= 2 dimensions, but self is 3D"):
        x.t()
    msg = "tensor.mT is only supported on matrices or batches of matrices. Got 1-D tensor."
    with err(RuntimeError, msg):
        _ = C.zeros(3).mT
    with err(RuntimeError, "permute(): duplicate dims are not allowed."):
        x.permute(0, 0, 1)
    with pytest.raises(
        RuntimeError, match=re.escape("input.dim() = 3 is not equal to len(dims) = 2")
    ):
        x.permute(0, 1)


def test_expand_errors():
    msg = (
        "The expanded size of the tensor (4) must match the existing size (2) at non-singleton "
        "dimension 1.  Target sizes: [3, 4].  Tensor sizes: [3, 2]"
    )
    with err(RuntimeError, msg):
        C.zeros(3, 2).expand(3, 4)
    msg = (
        "expand(cudalite.FloatTensor{[3, 1]}, size=[4]): the number of sizes provided (1) must "
        "be greater or equal to the number of dimensions in the tensor (2)"
    )
    with err(RuntimeError, msg):
        C.zeros(3, 1).expand(4)
    msg = (
        "The expanded size of the tensor (-1) isn't allowed in a leading, non-existing dimension 0"
    )
    with err(RuntimeError, msg):
        C.zeros(3, 1).expand(-1, -1, 4)


def test_narrow_split_chunk_errors():
    x, _ = base("cpu")
    with err(IndexError, "start out of range (expected to be in range of [-3, 3], but got -4)"):
        x.narrow(1, -4, 1)
    with err(IndexError, "start out of range (expected to be in range of [-3, 3], but got 4)"):
        x.narrow(1, 4, 0)
    with err(RuntimeError, "narrow(): length must be non-negative."):
        x.narrow(1, 0, -1)
    with err(RuntimeError, "start (2) + length (2) exceeds dimension size (3)."):
        x.narrow(1, 2, 2)
    with err(RuntimeError, "chunk expects `chunks` to be greater than 0, got: 0"):
        x.chunk(0)
    with err(RuntimeError, "chunk expects `chunks` to be greater than 0, got: -1"):
        x.chunk(-1)
    with err(
        RuntimeError, "split_size can only be 0 if dimension size is 0, but got dimension size of 2"
    ):
        x.split(0)
    with err(RuntimeError, "split expects split_size be non-negative, but got split_size=-1"):
        x.split(-1)
    msg = (
        "split_with_sizes expects split_sizes to sum exactly to 4 (input tensor's size at "
        "dimension 2), but got split_sizes=[1, 2]"
    )
    with err(RuntimeError, msg):
        x.split([1, 2], dim=2)
    assert len(C.zeros(0).split(0)) == 1


def test_select_repeat_flip_errors():
    x, _ = base("cpu")
    with err(
        IndexError, "select(): index 3 out of range for tensor of size [2, 3, 4] at dimension 1"
    ):
        x.select(-2, 3)
    with err(
        IndexError, "select(): index -4 out of range for tensor of size [2, 3, 4] at dimension 1"
    ):
        x.select(1, -4)
    with err(IndexError, "select() cannot be applied to a 0-dim tensor."):
        C.tensor(3).select(0, 0)
    msg = (
        "Number of dimensions of repeat dims can not be smaller than number of dimensions of tensor"
    )
    with err(RuntimeError, msg):
        x.repeat(2)
    with err(RuntimeError, "Trying to create tensor with negative dimension -2: [-2, 3, 4]"):
        x.repeat(-1, 1, 1)
    with err(RuntimeError, "dim 0 appears multiple times in the list of dims"):
        x.flip(0, 0)


def test_zero_dim_tensors_in_shape_ops(device):
    s = C.tensor(5.0, device=device)
    for call, msg in [
        (lambda: s.chunk(2), "chunk expects at least a 1-dimensional tensor"),
        (lambda: s.split(1), "split expects at least a 1-dimensional tensor"),
        (lambda: s.narrow(0, 0, 1), "narrow() cannot be applied to a 0-dim tensor."),
    ]:
        with err(RuntimeError, msg):
            call()
    assert s.flip(0).item() == 5.0 and s.flip((-1,)).shape == ()
    with err(IndexError, "Dimension out of range (expected to be in range of [-1, 0], but got 1)"):
        s.flip(1)
    (nz,) = s.nonzero(as_tuple=True)
    assert nz.tolist() == [0]
    assert C.tensor(0.0, device=device).nonzero(as_tuple=True)[0].shape == (0,)


def test_squeeze_repeated_dims():
    with err(RuntimeError, "dim 0 appears multiple times in the list of dims"):
        C.zeros(2, 1).squeeze((0, -2))
    with err(RuntimeError, "dim 1 appears multiple times in the list of dims"):
        C.zeros(2, 1).squeeze((1, -1))


def test_chunk_of_an_empty_dim_gives_empty_pieces(device):
    pieces = C.zeros(2, 0, device=device).chunk(3, 1)
    assert len(pieces) == 3 and all(p.shape == (2, 0) for p in pieces)
    assert len(C.zeros(0, device=device).split(2)) == 1


_COMBO = "view() received an invalid combination of arguments - got ({}), but expected one of:"


def test_view_reshape_permute_keywords(device):
    x = C.arange(6.0, device=device).view(2, 3)
    assert x.view(size=(3, 2)).shape == (3, 2) and x.view(dtype=C.int32).dtype is C.int32
    assert x.reshape(shape=(6,)).shape == (6,) and x.permute(dims=[1, 0]).shape == (3, 2)
    w = C.ones(2, 3, device=device, requires_grad=True)  # the autograd wrappers pass them on
    (
        w.view(size=(3, 2)).sum() + w.reshape(shape=(6,)).sum() + w.permute(dims=(1, 0)).sum()
    ).backward()
    assert w.grad.tolist() == [[3.0] * 3] * 2
    cases = [
        (
            lambda: x.view(6, size=(6,)),
            _COMBO.format("int, size=tuple"),
        ),
        (
            lambda: x.view(shape=(6,)),
            _COMBO.format("shape=tuple, "),
        ),
        (lambda: x.reshape(3, shape=(6,)), "reshape() got multiple values for argument 'shape'"),
        (
            lambda: x.reshape(size=(6,)),
            'reshape() missing 1 required positional arguments: "shape"',
        ),  # noqa: E501
        (lambda: x.reshape(shape=6), "reshape(): argument 'shape' must be tuple of ints, not int"),
        (lambda: x.permute(1, dims=(1, 0)), "permute() got multiple values for argument 'dims'"),
    ]
    for f, msg in cases:
        with pytest.raises(TypeError, match=exact(msg)):
            f()
