"""Tensor's views made by strides, ``diagonal``, ``movedim`` / ``moveaxis`` and ``unfold``,
two helpers torch groups with them, ``type_as`` and ``sum_to_size``, and ``unflatten``, with
torch's errors.

The views are built on the C++ ``as_strided`` and ``permute`` (which make them views of the
tensor's base, ``_base``); autograd records them in autograd/functions/views_strided.py.
The methods take the parser's values (``@parsed``: their entries match each call against
torch's signatures and pass the converted values), and each view itself (``*_view``) is a
function of those values, which the recorders reuse.
"""

from __future__ import annotations

import math
import operator

from cudalite import _C
from cudalite._arg_parser import MISSING, parsed
from cudalite._strided import raw_as_strided
from cudalite._tensor import method

raw_permute = _C.Tensor.permute  # the C++ method (autograd wraps Tensor.permute)
_wrap = _C._wrap_dim


# ---- diagonal ----


def named_dims(t, outdim, dim2):
    """torch's overload with dimension names (``outdim`` given): cudalite's tensors have
    none (torch looks dim2 up first)."""
    if outdim is MISSING:
        return
    if dim2 is None:
        raise RuntimeError("Please look up dimensions by name, got: name = None.")
    raise RuntimeError(f"Name '{dim2}' not found in Tensor[{', '.join(['None'] * t.dim())}].")


def diagonal_view(t, offset, dim1, dim2):
    """The diagonal of the (dim1, dim2) matrices, ``offset`` above the main one, as the last
    dim (empty when the offset is past the matrix)."""
    nd = t.dim()
    d1, d2 = _wrap(dim1, nd), _wrap(dim2, nd)
    if d1 == d2:
        raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    sizes, strides = list(t.shape), list(t.stride())
    if offset >= 0:
        n = max(min(sizes[d1], sizes[d2] - offset), 0)
    else:
        n = max(min(sizes[d1] + offset, sizes[d2]), 0)
    off = t.storage_offset()
    if n:  # (an empty diagonal keeps the offset, as torch's)
        off += offset * strides[d2] if offset >= 0 else -offset * strides[d1]
    step = strides[d1] + strides[d2]
    for d in sorted((d1, d2), reverse=True):
        del sizes[d], strides[d]
    return raw_as_strided(t, sizes + [n], strides + [step], off)


@method
@parsed
def diagonal(self, offset=0, dim1=0, dim2=1, *, outdim=MISSING):
    """diagonal(offset=0, dim1=0, dim2=1): a view of the diagonal of the (dim1, dim2)
    matrices, appended as the last dim."""
    named_dims(self, outdim, dim2)
    return diagonal_view(self, offset, dim1, dim2)


@parsed
def diagonal_function(input, offset=0, dim1=0, dim2=1, *, outdim=MISSING):
    """diagonal(input, offset=0, dim1=0, dim2=1): ``input.diagonal(offset, dim1, dim2)``."""
    named_dims(input, outdim, dim2)
    return input.diagonal(offset, dim1, dim2)


diagonal_function.__name__ = diagonal_function.__qualname__ = "diagonal"


# ---- movedim / moveaxis ----


def movedim_lists(source, destination):
    """(source, destination) as lists (torch's int and int[] overloads)."""
    if type(source) is int:
        return [source], [destination]
    return source, destination


def movedim_order(t, src, dst):
    """The permutation that moves dims ``src`` to ``dst`` (the others keep their order);
    None for a 0-dim tensor."""
    if len(src) != len(dst):
        raise RuntimeError(
            f"movedim: Invalid source or destination dims: source ({src} dims) should contain "
            f"the same number of dims as destination ({dst} dims)"
        )
    nd = t.dim()
    s = [_wrap(d, nd) for d in src]
    d = [_wrap(d, nd) for d in dst]
    if len(set(s)) != len(s):
        raise RuntimeError(f"movedim: repeated dim in `source` ({src})")
    if len(set(d)) != len(d):
        raise RuntimeError(f"movedim: repeated dim in `destination` ({dst})")
    if nd == 0:
        return None
    order = [i for i in range(nd) if i not in s]
    for to, frm in sorted(zip(d, s, strict=True)):
        order.insert(to, frm)
    return order


def movedim_view(t, order):
    """``t.permute(order)``; a 0-dim tensor's alias (a view of it) when ``order`` is None."""
    if order is None:
        return raw_as_strided(t, [], [], t.storage_offset())
    return raw_permute(t, order)


@method
@parsed
def movedim(self, source, destination):
    """movedim(source, destination): a view with the dims ``source`` (an int or a sequence)
    moved to the positions ``destination``, the others in their order."""
    return movedim_view(self, movedim_order(self, *movedim_lists(source, destination)))


@method
@parsed
def moveaxis(self, source, destination):
    """``movedim`` (NumPy's name)."""
    return movedim_view(self, movedim_order(self, *movedim_lists(source, destination)))


def movedim_function(name):
    @parsed
    def fn(input, source, destination):
        return getattr(input, name)(source, destination)

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"``input.{name}(source, destination)``."
    return fn


# ---- unfold ----


def unfold_view(t, dimension, size, step):
    """The windows of ``size`` elements every ``step`` along ``dimension``, as a new last
    dim (a 0-dim tensor is one window of its element)."""
    nd = t.dim()
    d = _wrap(dimension, nd)
    sizes, strides = list(t.shape), list(t.stride())
    most = sizes[d] if nd else 1
    if size > most:
        raise RuntimeError(f"maximum size for tensor at dimension {d} is {most} but size is {size}")
    if size < 0:
        raise RuntimeError(f"size is {size} but must be >= 0")
    if step <= 0:
        raise RuntimeError(f"step is {step} but must be > 0")
    if nd:
        sizes.append(size)
        strides.append(strides[d])
        sizes[d] = (sizes[d] - size) // step + 1
        strides[d] *= step
    else:
        sizes, strides = [size], [1]
    return raw_as_strided(t, sizes, strides, t.storage_offset())


@method
@parsed
def unfold(self, dimension, size, step):
    """unfold(dimension, size, step): a view of the windows of ``size`` elements taken every
    ``step`` along ``dimension``, as a new last dim."""
    return unfold_view(self, dimension, size, step)


# ---- type_as, sum_to_size ----


@method
@parsed
def type_as(self, other):
    """type_as(other): self converted to other's dtype and device (self when they match)."""
    return self.to(device=other.device, dtype=other.dtype)


@method
@parsed
def sum_to_size(self, size):
    """sum_to_size(*size): self summed down to ``size``, which must expand to self's shape
    (self itself when it has that shape)."""
    shape = list(self.shape)
    lead = len(shape) - len(size)
    if lead < 0 or any(s != n and s != 1 for s, n in zip(size, shape[lead:], strict=True)):
        raise RuntimeError(f"size {{{size}}} is not expandable to size {{{shape}}}.")
    if not size:
        return self.sum()
    dims = list(range(lead))
    dims += [i for i in range(lead, len(shape)) if size[i - lead] == 1 and shape[i] != 1]
    t = self.sum(dims, keepdim=True) if dims else self
    return t.view(size) if lead else t


@method
def unflatten(self, dim, sizes):
    """A view with dim ``dim`` split into ``sizes`` (one of them may be -1)."""
    d = _C._wrap_dim(dim, self.dim())
    sizes = [operator.index(s) for s in sizes]  # not ints: worded by Note [Argument errors]
    if not sizes:
        raise RuntimeError("unflatten: sizes must be non-empty")
    if sizes.count(-1) > 1:
        raise RuntimeError("only one dimension can be inferred")
    n = self.shape[d] if self.dim() else 1
    known = 1
    for s in sizes:
        known *= s if s != -1 else 1
    if -1 in sizes and known != 0 and n % known == 0:
        sizes[sizes.index(-1)] = n // known
    if -1 in sizes or math.prod(sizes) != n:
        raise RuntimeError(
            f"unflatten: Provided sizes {sizes} don't multiply up to the size of dim {d} "
            f"({n}) in the input tensor"
        )
    shape = list(self.shape)
    return self.view(shape[:d] + sizes + shape[d + 1 :])
