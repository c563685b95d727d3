"""Function forms of Tensor methods that torch has at the top level (``cudalite.reshape``)."""

from __future__ import annotations

from cudalite import _strided, _tensor_views
from cudalite._C import Tensor

__all__ = [
    "reshape",
    "transpose",
    "permute",
    "flatten",
    "unflatten",
    "squeeze",
    "unsqueeze",
    "t",
    "clone",
    "numel",
    "is_tensor",
    "is_floating_point",
    "masked_fill",
    "nonzero",
    "narrow",
    "split",
    "chunk",
    "unbind",
    "flip",
    "index_select",
    "swapaxes",
    "broadcast_to",
    "broadcast_tensors",
    "broadcast_shapes",
    "detach",
    "select",
    "diagonal",
    "movedim",
    "moveaxis",
    "as_strided",
]


def reshape(input, shape):
    """``input.reshape(shape)``."""
    return input.reshape(shape)


def transpose(input, dim0, dim1):
    return input.transpose(dim0, dim1)


swapaxes = transpose


def permute(input, dims):
    return input.permute(dims)


def flatten(input, start_dim=0, end_dim=-1):
    return input.flatten(start_dim, end_dim)


def unflatten(input, dim, sizes):
    """``input.unflatten(dim, sizes)``."""
    return input.unflatten(dim, sizes)


def squeeze(input, dim=None):
    return input.squeeze(dim)


def unsqueeze(input, dim):
    return input.unsqueeze(dim)


def select(input, dim, index):
    return input.select(dim, index)


diagonal = _tensor_views.diagonal_function
movedim = _tensor_views.movedim_function("movedim")
moveaxis = _tensor_views.movedim_function("moveaxis")
as_strided = _strided.as_strided


def t(input):
    return input.t()


def clone(input, *, memory_format=None):
    return input.clone(memory_format=memory_format)


def detach(input):
    return input.detach()


def numel(input):
    return input.numel()


def is_tensor(obj):
    """True for cudalite tensors."""
    return isinstance(obj, Tensor)


def is_floating_point(input):
    return input.dtype.is_floating_point


def masked_fill(input, mask, value):
    return input.masked_fill(mask, value)


def nonzero(input, *, as_tuple=False):
    return input.nonzero(as_tuple=as_tuple)


def narrow(input, dim, start, length):
    return input.narrow(dim, start, length)


def split(tensor, split_size_or_sections, dim=0):
    return tensor.split(split_size_or_sections, dim)


def chunk(input, chunks, dim=0):
    return input.chunk(chunks, dim)


def unbind(input, dim=0):
    return input.unbind(dim)


def flip(input, dims):
    return input.flip(dims)


def index_select(input, dim, index):
    return input.index_select(dim, index)


def broadcast_shapes(*shapes):
    """The shape that all ``shapes`` broadcast to."""
    from cudalite import _C

    out = ()
    for s in shapes:
        out = tuple(_C._broadcast_shapes(out, (s,) if isinstance(s, int) else tuple(s)))
    return _C._broadcast_shapes(out, ())


def broadcast_to(input, size):
    return input.expand(*size)


def broadcast_tensors(*tensors):
    shape = broadcast_shapes(*[t.shape for t in tensors])
    return tuple(t.expand(*shape) for t in tensors)
