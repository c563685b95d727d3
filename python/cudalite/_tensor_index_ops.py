"""Reads and writes through index tensors and masks beyond gather / scatter / index_add:
``index_copy``, ``index_fill``, ``index_put``, ``masked_select``, ``masked_scatter``,
``take``, ``put``, ``take_along_dim``, ``fill_diagonal_``, ``argwhere`` and
``nonzero_static``, with torch's checks and messages (those of its CPU kernels).

They are compositions of indexing (``x[i] = v``, ``index_put_``, Note [Indexing through
offsets] in design.md), ``gather`` and views: one gather or scatter pass over the elements
after the bounds check, on both devices, and autograd records them through the ops they are
made of (the gradients are torch's; the nodes carry those ops' names).
"""

from __future__ import annotations

import operator

from cudalite import _C
from cudalite._C import Tensor
from cudalite._memory_format import contiguous_format
from cudalite._strided import raw_as_strided
from cudalite._tensor import method
from cudalite._tensor_scatter import _check_writable

__all__ = [
    "index_copy",
    "index_fill",
    "index_put",
    "masked_select",
    "masked_scatter",
    "take",
    "put",
    "take_along_dim",
    "argwhere",
    "nonzero_static",
]

_DTYPE_NAMES = {
    _C.float32: "Float",
    _C.float64: "Double",
    _C.float16: "Half",
    _C.bfloat16: "BFloat16",
    _C.int64: "Long",
    _C.int32: "Int",
    _C.int16: "Short",
    _C.int8: "Char",
    _C.uint8: "Byte",
    _C.bool: "Bool",
}


def _name(dtype):
    return _DTYPE_NAMES[dtype]


def _along(t, dim, index):
    """The index tuple that selects ``index`` along ``dim`` (every position of the others)."""
    return (slice(None),) * dim + (index,)


def _first_outside(flat, lo, hi):
    """The first value of ``flat`` outside [lo, hi), or None (one synchronisation)."""
    if flat.numel() == 0:
        return None
    bad = (flat < lo) | (flat >= hi)
    if not bad.any().item():
        return None
    return flat[bad][0].item()


# ---- index_copy, index_fill, index_put ----


def _index_copy_checks(self, dim, index, source):
    dim = _C._wrap_dim(dim, self.dim())
    if index.dim() >= 2:
        raise IndexError(f"index_copy_(): Index should have dimension 1 or 0 (got {index.dim()})")
    n = index.numel()
    if source.dim() == 0 and n != 1:
        raise IndexError(
            f"index_copy_(): When source is scalar, index should have one element (got {n})"
        )
    if source.dim() != self.dim() and source.dim() != 0 and self.dim() != 0:
        raise IndexError(
            "index_copy_(): When source and destination are not scalars, their dimensionality "
            f"must match. Source dimensionality ({source.dim()}), destination dimensionality "
            f"({self.dim()})"
        )
    if index.dtype != _C.int64:
        raise RuntimeError(
            f"index_copy_(): Expected a long tensor for index, but got {_name(index.dtype)}"
        )
    if self.dtype != source.dtype:
        raise RuntimeError(
            "index_copy_(): self and source expected to have the same dtype, but got (self) "
            f"{_name(self.dtype)} and (source) {_name(source.dtype)}"
        )
    dst = [s for d, s in enumerate(self.shape) if d != dim]
    src = [s for d, s in enumerate(source.shape) if d != dim]
    if dst != src:
        raise RuntimeError(
            "index_copy_(): Source/destination tensor must have same slice shapes. Destination "
            f"slice shape: {' '.join(map(str, dst))} at dimension {dim} and source slice shape: "
            f"{' '.join(map(str, src))} at dimension 0."
        )
    if source.dim() and n != source.shape[dim]:
        raise IndexError(
            f"index_copy_(): Number of indices ({n}) should be equal to source.size(dim) "
            f"({source.shape[dim]})"
        )
    size = self.shape[dim] if self.dim() else 1
    bad = _first_outside(index.reshape(-1), 0, size)
    if bad is not None:
        raise IndexError(
            f"index_copy_(): index {bad} is out of bounds for dimension {dim} with size {size}"
        )
    return dim


@method(name="index_copy_")
def _index_copy_(self, dim, index, source):
    """``self``'s slices ``index[i]`` along ``dim`` become ``source``'s slices ``i``."""
    _check_writable(self)
    dim = _index_copy_checks(self, dim, index, source)
    if index.numel() == 0:
        return self
    x = self if self.dim() else self.view([1])
    src = source if source.dim() == x.dim() else source.reshape([1] * x.dim())
    x[_along(x, dim, index.reshape(-1))] = src
    return self


@method(name="index_copy")
def _index_copy(self, dim, index, source):
    return self.clone(memory_format=contiguous_format).index_copy_(dim, index, source)


def index_copy(input, dim, index, source, *, out=None):
    from cudalite._reductions import _out
    from cudalite._tensor_scatter import out_no_grad

    out_no_grad("index_copy", out, input, source)
    return _out(input.index_copy(dim, index, source), out, exact=True)


@method(name="index_fill_")
def _index_fill_(self, dim, index, value):
    """``self``'s slices ``index[i]`` along ``dim`` (negative indices count from the end)
    filled with ``value`` (a number or a 0-dim tensor)."""
    _check_writable(self)
    if isinstance(value, Tensor) and value.dim() != 0:
        raise RuntimeError(
            "index_fill_ only supports a 0-dimensional value tensor, but got tensor with "
            f"{value.dim()} dimension(s)."
        )
    if index.dtype != _C.int64:
        raise IndexError("index_fill_(): Expected dtype int64 for index.")
    dim = _C._wrap_dim(dim, self.dim())
    if index.dim() > 1:
        raise RuntimeError("Index has to be a vector/scalar")
    size = self.shape[dim] if self.dim() else 1
    flat = index.reshape(-1)
    bad = _first_outside(flat, -size, size)
    if bad is not None:
        raise IndexError(f"index {bad} is out of bounds for dimension {dim} with size {size}")
    if flat.numel() == 0:
        return self
    if isinstance(value, Tensor) and value.dtype != self.dtype:
        value = value.to(self.dtype)
    x = self if self.dim() else self.view([1])
    x[_along(x, dim, flat)] = value
    return self


@method(name="index_fill")
def _index_fill(self, dim, index, value):
    return self.clone().index_fill_(dim, index, value)


def index_fill(input, dim, index, value):
    return input.index_fill(dim, index, value)


@method(name="index_put")
def _index_put(self, indices, values, accumulate=False):
    """``index_put_`` on a copy of ``self``."""
    return self.clone().index_put_(indices, values, accumulate)


def index_put(input, indices, values, accumulate=False):
    return input.index_put(indices, values, accumulate)


# ---- masked_select, masked_scatter ----


def _check_bool_mask(mask, msg):
    if mask.dtype != _C.bool:
        raise RuntimeError(msg)


@method(name="masked_select")
def _masked_select(self, mask):
    """The elements of ``self`` where ``mask`` (broadcast together) is True, in row-major
    order, as a 1-D tensor."""
    _check_bool_mask(mask, "masked_select: expected BoolTensor for mask")
    shape = _C._broadcast_shapes(tuple(mask.shape), tuple(self.shape))
    return self.expand(*shape)[mask.expand(*shape)]


def masked_select(input, mask, *, out=None):
    from cudalite._reductions import _out
    from cudalite._tensor_scatter import out_no_grad

    out_no_grad("masked_select", out, input)
    return _out(input.masked_select(mask), out, exact=True)


def _masked_scatter_checks(self, mask, source):
    if mask.dtype != _C.bool:
        raise RuntimeError(
            "masked_scatter_ only supports boolean masks, but got mask with dtype "
            f"{_name(mask.dtype)}"
        )
    if self.dtype != source.dtype:
        raise RuntimeError(
            "masked_scatter: expected self and source to have same dtypes but got"
            f"{_name(self.dtype)} and {_name(source.dtype)}"
        )


@method(name="masked_scatter_")
def _masked_scatter_(self, mask, source):
    """The elements of ``self`` where ``mask`` is True take ``source``'s first elements, in
    row-major order."""
    _check_writable(self)
    _masked_scatter_checks(self, mask, source)
    if mask.dim() > self.dim():
        kind = "CUDA" if mask.is_cuda else "CPU"
        raise RuntimeError(
            f"expand({kind}BoolType{{{list(mask.shape)}}}, size={list(self.shape)}): the number "
            f"of sizes provided ({self.dim()}) must be greater or equal to the number of "
            f"dimensions in the tensor ({mask.dim()})"
        )
    m = mask.expand(*self.shape)
    n = int(m.sum().item()) if m.numel() else 0
    if n > source.numel():
        raise RuntimeError("Number of elements of source < number of ones in mask")
    if n:
        self[m] = source.reshape(-1)[:n]
    return self


@method(name="masked_scatter")
def _masked_scatter(self, mask, source):
    _masked_scatter_checks(self, mask, source)
    shape = _C._broadcast_shapes(tuple(self.shape), tuple(mask.shape))
    out = self.expand(*shape).clone(memory_format=contiguous_format)
    return out.masked_scatter_(mask, source)


def masked_scatter(input, mask, source):
    return input.masked_scatter(mask, source)


# ---- take, put, take_along_dim ----


def _flat_index(self, name, index):
    """``index`` checked against ``self.numel()`` (negative counts from the end) and split
    into one index per dim of ``self`` (row-major)."""
    if index.dtype != _C.int64:
        raise RuntimeError(
            f"{name}(): Expected a long tensor for index, but got {_name(index.dtype)}"
        )
    n = self.numel()
    if n == 0 and index.numel() and name == "take":
        raise IndexError("take(): tried to take from an empty tensor")
    bad = _first_outside(index.reshape(-1), -n, n)
    if bad is not None:
        raise IndexError(f"out of range: tried to access index {bad} on a tensor of {n} elements.")
    if n == 0:
        return None
    idx = index.remainder(n) if index.numel() else index  # wrapped to [0, n)
    parts, step = [], 1
    for s in reversed(list(self.shape)):
        parts.append((idx // step).remainder(s) if s != 1 else idx * 0)
        step *= s
    return tuple(reversed(parts)) if self.dim() else (idx,)


@method(name="take")
def _take(self, index):
    """The elements of ``self`` at the row-major positions ``index`` (shaped as ``index``)."""
    parts = _flat_index(self, "take", index)
    if parts is None:
        return _C._empty(list(index.shape), self.dtype, self.device, False)
    x = self if self.dim() else self.view([1])
    return x[parts]


def take(input, index):
    return input.take(index)


@method(name="put_")
def _put_(self, index, source, accumulate=False):
    """Writes (or with ``accumulate`` adds) ``source``'s elements at the row-major positions
    ``index`` of ``self``."""
    _check_writable(self)
    if index.numel() != source.numel():
        raise IndexError(
            "put_(): Expected source and index to have the same number of elements, but got "
            f"source.numel() = {source.numel()}, index.numel() = {index.numel()}"
        )
    if self.dtype != source.dtype:
        raise RuntimeError(
            "put_(): self and source expected to have the same dtype, but got self.dtype = "
            f"{_name(self.dtype)} and source.dtype = {_name(source.dtype)}"
        )
    parts = _flat_index(self, "put_", index)
    if parts is None or index.numel() == 0:
        return self
    x = self if self.dim() else self.view([1])
    x.index_put_(tuple(p.reshape(-1) for p in parts), source.reshape(-1), accumulate)
    return self


@method(name="put")
def _put(self, index, source, accumulate=False):
    return self.clone().put_(index, source, accumulate)


def put(input, index, source, accumulate=False):
    return input.put(index, source, accumulate)


@method(name="take_along_dim")
def _take_along_dim(self, indices, dim=None):
    """``gather`` with ``indices`` broadcast against ``self`` (all but ``dim``); without
    ``dim``, of the flattened tensor."""
    if indices.dtype != _C.int64:
        raise RuntimeError(
            "torch.take_along_dim(): dtype of indices should be Long but got "
            f"{_name(indices.dtype)}"
        )
    if dim is None:
        return self.view(-1).gather(0, indices.view(-1))  # (views, as torch: no copies)
    dim = _C._wrap_dim(dim, self.dim())
    if self.dim() != indices.dim():
        raise RuntimeError(
            "torch.take_along_dim(): input and indices should have the same number of "
            f"dimensions, but got {self.dim()} dimensions for input, and {indices.dim()} "
            "dimensions for indices"
        )
    if self.dim() == 0:  # (torch reads indices.size(dim))
        raise IndexError(f"Dimension specified as {dim} but tensor has no dimensions")
    sizes = list(self.shape)
    sizes[dim] = indices.shape[dim]
    shape = list(_C._broadcast_shapes(tuple(sizes), tuple(indices.shape)))
    idx = indices.expand(*shape)
    shape[dim] = self.shape[dim]
    return self.expand(*shape).gather(dim, idx)


def take_along_dim(input, indices, dim=None, *, out=None):
    from cudalite._reductions import _out
    from cudalite._tensor_scatter import out_no_grad

    out_no_grad("take_along_dim", out, input)
    return _out(input.take_along_dim(indices, dim), out, exact=True)


# ---- fill_diagonal_, argwhere, nonzero_static ----


@method(name="fill_diagonal_")
def _fill_diagonal_(self, fill_value, wrap=False):
    """Fills the main diagonal (all indices equal) with ``fill_value``; for a 2-D matrix
    taller than wide with ``wrap``, the diagonal starts again every ``width + 1`` rows."""
    n = self.dim()
    if n < 2:
        raise RuntimeError("dimensions must larger than 1")
    h, w = self.shape[0], self.shape[1]
    if n > 2 and any(s != h for s in self.shape):
        raise RuntimeError("all dimensions of input must be of equal length")
    size = min(h, w)
    step = sum(self.stride())
    off = self.storage_offset()
    self.as_strided([size], [step], off).fill_(fill_value)
    if wrap and n == 2 and h > w + 1:
        wrap_size = (self.numel() + w) // (w + 1) - size
        self.as_strided([wrap_size], [step], off + self.stride(0) * (w + 1)).fill_(fill_value)
    return self


@method(name="argwhere")
def _argwhere(self):
    """The indices of the non-zero elements, one row each (``nonzero``, laid out as torch's:
    each column dense)."""
    nz = self.nonzero()
    n, k = nz.shape
    flat = _C._empty([n * k], _C.int64, self.device, False)
    return raw_as_strided(flat, [n, k], [1, n], 0)._alias().copy_(nz)


def argwhere(input):
    return input.argwhere()


@method(name="nonzero_static")
def _nonzero_static(self, *, size, fill_value=-1):
    """``nonzero`` with exactly ``size`` rows: the first ``size`` ones, then rows of
    ``fill_value``."""
    size = operator.index(size)
    if size < 0:
        raise RuntimeError("nonzero_static: 'size' must be an non-negative integer")
    nz = self.nonzero()
    k = nz.shape[0]
    if k == size:
        return nz
    if k > size:
        return nz[:size].clone()
    out = _C._full([size, self.dim()], fill_value, _C.int64, self.device)
    if k:
        out[:k] = nz
    return out


def nonzero_static(input, *, size, fill_value=-1):
    return input.nonzero_static(size=size, fill_value=fill_value)
