"""In-place views (t_, transpose_, swapdims_, swapaxes_, squeeze_, unsqueeze_): self takes the
view's geometry over the same memory; autograd records them under torch's node names."""

from __future__ import annotations

import re

import numpy as np
import pytest

import cudalite as C
from conftest import to_np


@pytest.mark.parametrize(
    ("shape", "call", "want_shape", "want_stride"),
    [
        ((2, 3), lambda x: x.t_(), (3, 2), (1, 3)),
        ((3,), lambda x: x.t_(), (3,), (1,)),
        ((), lambda x: x.t_(), (), ()),
        ((2, 3, 4), lambda x: x.transpose_(0, 2), (4, 3, 2), (1, 4, 12)),
        ((2, 3, 4), lambda x: x.transpose_(dim0=-1, dim1=0), (4, 3, 2), (1, 4, 12)),
        ((2, 1, 4), lambda x: x.swapdims_(0, 1), (1, 2, 4), (4, 4, 1)),
        ((2, 1, 4), lambda x: x.swapaxes_(0, 1), (1, 2, 4), (4, 4, 1)),
        ((2, 1, 4), lambda x: x.squeeze_(), (2, 4), (4, 1)),
        ((2, 1, 4), lambda x: x.squeeze_(dim=1), (2, 4), (4, 1)),
        ((2, 1, 4), lambda x: x.squeeze_((0, 1)), (2, 4), (4, 1)),
        ((2, 1, 4), lambda x: x.unsqueeze_(3), (2, 1, 4, 1), (4, 4, 1, 1)),
        ((2, 1, 4), lambda x: x.unsqueeze_(dim=-1), (2, 1, 4, 1), (4, 4, 1, 1)),
    ],
)
def test_inplace_views(shape, call, want_shape, want_stride, device):
    n = int(np.prod(shape))
    x = C.arange(float(n), device=device).reshape(shape)
    ptr = x.data_ptr()
    assert call(x) is x
    assert x.shape == want_shape and x.stride() == want_stride and x.data_ptr() == ptr
    # the same memory read through the new geometry (a CUDA tensor's copy is contiguous, so
    # compare values, not memory order)
    ref = np.lib.stride_tricks.as_strided(
        np.arange(float(n)), want_shape, [s * 8 for s in want_stride]
    )
    np.testing.assert_array_equal(to_np(x), ref)


def test_t_of_a_view_writes_its_base(device):
    base = C.zeros(2, 3, device=device)
    v = base[0:2]
    v.t_()
    assert v.shape == (3, 2) and base.shape == (2, 3)
    v[0].add_(1)
    np.testing.assert_array_equal(to_np(base), [[1, 0, 0], [1, 0, 0]])


def test_inplace_view_errors(device):
    x = C.ones(2, 3, 4, device=device)
    msg = "t_() expects a tensor with <= 2 dimensions, but self is 3D"
    with pytest.raises(RuntimeError, match=re.escape(msg)):
        x.t_()
    with pytest.raises(
        IndexError, match=re.escape("expected to be in range of [-3, 2], but got 3")
    ):
        x.transpose_(0, 3)
    with pytest.raises(
        IndexError, match=re.escape("expected to be in range of [-4, 3], but got 4")
    ):
        x.unsqueeze_(4)
    assert x.shape == (2, 3, 4)


@pytest.mark.parametrize(
    ("call", "node", "undo"),
    [
        (lambda m: m[0].t_(), "TBackward1", lambda w: w.T[None]),
        (lambda m: m.transpose_(0, 2), "TransposeBackward1", lambda w: w.transpose(2, 1, 0)),
        (lambda m: m.swapdims_(0, 1), "TransposeBackward1", lambda w: w.transpose(1, 0, 2)),
        (lambda m: m.swapaxes_(0, 1), "TransposeBackward1", lambda w: w.transpose(1, 0, 2)),
        (lambda m: m.squeeze_(), "SqueezeBackward3", lambda w: w.reshape(2, 1, 3)),
        (lambda m: m.squeeze_(1), "SqueezeBackward4", lambda w: w.reshape(2, 1, 3)),
        (lambda m: m.squeeze_((1,)), "SqueezeBackward5", lambda w: w.reshape(2, 1, 3)),
        (lambda m: m.unsqueeze_(0), "UnsqueezeBackward1", lambda w: w[0]),
    ],
)
def test_inplace_views_record(call, node, undo, device):
    leaf = C.ones(2, 1, 3, device=device, requires_grad=True)
    r = call(leaf * 2)
    assert type(r.grad_fn).__name__ == node
    w = C.arange(float(r.numel()), device=device).reshape(r.shape)
    (r * w).sum().backward()
    want = 2 * undo(to_np(w))  # d/dleaf of sum(view(2 * leaf) * w), put back through the view
    if node == "TBackward1":  # only leaf[0] was viewed
        want = np.concatenate([want, np.zeros_like(want)])
    np.testing.assert_array_equal(to_np(leaf.grad), want)


def test_inplace_view_of_non_leaf_view_rebases(device):
    leaf = C.ones(2, 1, 3, device=device, requires_grad=True)
    m = leaf * 2
    w = m[0]
    w.t_()
    w.mul_(C.arange(3.0, device=device).reshape(3, 1))
    m.sum().backward()
    np.testing.assert_array_equal(to_np(leaf.grad), [[[0, 2, 4]], [[2, 2, 2]]])


def test_inplace_views_on_leaves(device):
    leaf = C.ones(2, 3, device=device, requires_grad=True)
    msg = "a leaf Variable that requires grad is being used in an in-place operation."
    for call in (lambda: leaf.t_(), lambda: leaf.transpose_(0, 1), lambda: leaf.unsqueeze_(0)):
        with pytest.raises(RuntimeError, match=re.escape(msg)):
            call()
    with pytest.raises(RuntimeError, match="a view of a leaf Variable"):
        leaf[0:1].t_()
    with C.no_grad():
        assert leaf.t_().shape == (3, 2) and leaf.grad_fn is None
