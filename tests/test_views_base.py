"""torch's notion of a view: _base, _is_view() and detach_() on views and non-views."""

from __future__ import annotations

import re

import pytest

import cudalite as C

DETACH_VIEW_MSG = (
    "Can't detach views in-place. Use detach() instead. If you are using "
    "DistributedDataParallel (DDP) for training, and gradient_as_bucket_view is set as True, "
    "gradients are views of DDP buckets, and hence detach_() cannot be called on these "
    "gradients. To fix this error, please refer to the Optimizer.zero_grad() function in "
    "torch/optim/optimizer.py as the solution."
)

VIEWS = {
    "x[0]": lambda x: x[0],
    "x[1:]": lambda x: x[1:],
    "x[...]": lambda x: x[...],
    "x[None]": lambda x: x[None],
    "x[:, None]": lambda x: x[:, None],
    "x[0, 1:]": lambda x: x[0, 1:],
    "view": lambda x: x.view(6, 4),
    "view_as": lambda x: x.view_as(x),
    "reshape": lambda x: x.reshape(6, 4),
    "reshape_same": lambda x: x.reshape(2, 3, 4),
    "t": lambda x: x[0].t(),
    "T": lambda x: x[0].T,
    "mT": lambda x: x.mT,
    "transpose": lambda x: x.transpose(0, 1),
    "swapaxes": lambda x: x.swapaxes(0, 1),
    "permute": lambda x: x.permute(2, 0, 1),
    "expand": lambda x: x[:, :1].expand(2, 3, 4),
    "expand_as": lambda x: x.expand_as(x),
    "unbind": lambda x: x.unbind()[0],
    "split": lambda x: x.split(1)[0],
    "chunk": lambda x: x.chunk(2)[0],
    "narrow": lambda x: x.narrow(0, 0, 1),
    "flatten": lambda x: x.flatten(),
    "flatten_0d": lambda x: x[0, 0, 0].flatten(),
    "as_strided": lambda x: x.as_strided((2,), (1,)),
    "squeeze": lambda x: x.squeeze(),
    "squeeze_noop": lambda x: x.squeeze(0),
    "unsqueeze": lambda x: x.unsqueeze(0),
    "select": lambda x: x.select(0, 1),
    "diagonal": lambda x: x.diagonal(),
    "diagonal_empty": lambda x: x.diagonal(9),
    "diagonal_fn": lambda x: C.diagonal(x, 1, 1, 2),
    "movedim": lambda x: x.movedim(0, 2),
    "movedim_same": lambda x: x.movedim(0, 0),
    "moveaxis": lambda x: x.moveaxis((0, 1), (1, 0)),
    "movedim_fn": lambda x: C.movedim(x, 2, 0),
    "moveaxis_fn": lambda x: C.moveaxis(x, 2, 0),
    "movedim_0d": lambda x: x[0, 0, 0].movedim(0, 0),
    "unfold": lambda x: x.unfold(2, 2, 1),
    "unfold_0d": lambda x: x[0, 0, 0].unfold(0, 1, 1),
    "as_strided_fn": lambda x: C.as_strided(x, (2,), (1,), 3),
}

NOT_VIEWS = {
    "detach": lambda x: x.detach(),
    "data": lambda x: x.data,
    "contiguous": lambda x: x.contiguous(),
    "to": lambda x: x.to(C.float32),
    "clone": lambda x: x.clone(),
    "index_list": lambda x: x[[0]],
    "mask": lambda x: x[x > 3],
    "view_dtype": lambda x: x.view(C.int32),
    "reshape_copy": lambda x: x.transpose(0, 1).reshape(6, 4),
    "contiguous_copy": lambda x: x.transpose(0, 1).contiguous(),
    "channels_last": lambda x: x[None].contiguous(memory_format=C.channels_last),
    "add": lambda x: x + 1,
    "type_as": lambda x: x.type_as(C.zeros(1, dtype=C.float64)),
    "type_as_same": lambda x: x.type_as(x),
    "sum_to_size": lambda x: x.sum_to_size(2, 1, 4),
    "sum_to_size_same": lambda x: x.sum_to_size(2, 3, 4),
}


@pytest.mark.parametrize("name", list(VIEWS))
def test_views_know_their_base(name, device):
    x = C.zeros(2, 3, 4, device=device)
    assert not x._is_view() and x._base is None
    v = VIEWS[name](x)
    assert v._is_view() and v._base is x
    with pytest.raises(RuntimeError, match=f"^{re.escape(DETACH_VIEW_MSG)}$"):
        v.detach_()


@pytest.mark.parametrize("name", list(NOT_VIEWS))
def test_non_views(name, device):
    x = C.zeros(2, 3, 4, device=device)
    v = NOT_VIEWS[name](x)
    assert not v._is_view() and v._base is None
    assert v.detach_() is v


def test_base_of_a_view_of_a_view_is_the_root():
    x = C.zeros(2, 3, 4)
    assert x[0][1]._base is x and x[0].t()[1:]._base is x
    v = x[0]
    assert v.contiguous() is v and v.contiguous()._base is x  # contiguous: v itself
    d = v.detach()
    assert not d._is_view() and d._base is None and d.detach_() is d
    with pytest.raises(AttributeError):
        x._base = None


def test_views_taken_without_autograd_refuse_detach_():
    x = C.ones(3, requires_grad=True)
    with C.no_grad():
        v = x[1:]
    assert v._base is x
    with pytest.raises(RuntimeError, match=f"^{re.escape(DETACH_VIEW_MSG)}$"):
        v.detach_()
    y = C.ones(3) * 2
    with pytest.raises(RuntimeError, match=f"^{re.escape(DETACH_VIEW_MSG)}$"):
        y[0:2].detach_()
    assert x.detach_() is x and not x.requires_grad  # a leaf, not a view


def test_inplace_views_keep_view_status():
    y = C.zeros(3, 4)
    y.t_()
    assert not y._is_view()
    x = C.zeros(2, 3, 4)
    z = x[0]
    z.t_()
    assert z._base is x
    z = x[:1]
    z.squeeze_(0)
    assert z._base is x
