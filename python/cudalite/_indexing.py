"""``Tensor.__getitem__`` / ``__setitem__`` with torch's indexing rules.

Basic indices (ints, slices, None, Ellipsis) become a view. Advanced indices (integer and
boolean tensors, lists) are turned into element offsets with ordinary tensor ops, then read
or written through ``_C._gather_offsets`` / ``_C._scatter_offsets``, so the same code serves
CPU and CUDA tensors.
"""

from __future__ import annotations

import operator
import sys

from cudalite import _C
from cudalite._C import Tensor
from cudalite._lazy import is_ndarray, is_np_integer, numpy

_INDEX_TYPES = (
    "only integers, slices (`:`), ellipsis (`...`), None and long or byte Variables "
    "are valid indices (got {})"
)


def _as_index_tensor(i, device):
    if isinstance(i, Tensor):
        t = i
    elif is_ndarray(i):
        t = _C._from_numpy_quiet(numpy().ascontiguousarray(i))
    elif isinstance(i, (list, tuple)) and len(i) == 0:
        t = _C._empty([0], _C.int64, None, False)
    else:
        t = _C._tensor_from_data(i, None, None)
    if t.dtype.is_floating_point:
        raise IndexError("tensors used as indices must be long, int, byte or bool tensors")
    if t.dtype == _C.uint8:
        t = _C._to(t, None, _C.bool, False, False)
    if t.device != device:
        t = _C._to(t, device, None, False, False)
    return t


def _consumed(i):
    if i is None or i is Ellipsis or isinstance(i, bool):
        return 0
    if isinstance(i, Tensor) and i.dtype in (_C.bool, _C.uint8):
        return i.dim()
    return 1


def _slice_int(v):
    """A slice bound or step as Python's slice.indices reads it (torch's errors)."""
    if not hasattr(type(v), "__index__"):
        raise TypeError("slice indices must be integers or None or have an __index__ method")
    return operator.index(v)


def _check_steps(self, idx, used):
    """Slice steps, in torch's order: left to right with the integers (tensors come later)."""
    d, shape = 0, self.shape
    for i in idx:
        if i is Ellipsis:
            d += self.dim() - used
        elif isinstance(i, slice):
            if i.step is not None and _slice_int(i.step) <= 0:
                raise ValueError(
                    "slice step cannot be zero"
                    if _slice_int(i.step) == 0
                    else "step must be greater than zero"
                )
            d += 1
        elif isinstance(i, (int, Tensor, list, tuple)) or is_np_integer(i) or is_ndarray(i):
            if (isinstance(i, int) or is_np_integer(i)) and not isinstance(i, bool):
                if d < len(shape) and not -shape[d] <= int(i) < shape[d]:
                    return  # the walk raises torch's error for it
            d += _consumed(i)


def _index_beyond(i, n, ndim, at):
    """torch's error for an index after a second Ellipsis (its dim counter at ``at``)."""
    if i is None or isinstance(i, bool):
        raise IndexError(
            f"Dimension out of range (expected to be in range of [{-n - 1}, {n}], but got {at})"
        )
    if isinstance(i, (int, slice)) or is_np_integer(i):
        raise IndexError(
            f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], but got {at})"
        )
    raise IndexError(f"too many indices for tensor of dimension {ndim} (got {at + 1})")


def _walk(self, idx):
    """Applies basic indices as views; returns (view, [(dim, int64 index tensor)])."""
    single = not isinstance(idx, tuple)
    if single:
        idx = (idx,)
    used, stepped = 0, False
    for i in idx:
        used += _consumed(i)
        stepped = stepped or (type(i) is slice and i.step is not None)
    # The order of torch's checks: a tuple's length, then slice steps, then the rest.
    if not single and used > self.dim():
        raise IndexError(f"too many indices for tensor of dimension {self.dim()}")
    if stepped:
        _check_steps(self, idx, used)
    if self.dim() == 0 and any(
        (isinstance(i, (int, slice)) or is_np_integer(i)) and not isinstance(i, bool) for i in idx
    ):
        raise IndexError(
            "invalid index of a 0-dim tensor. Use `tensor.item()` in Python or "
            "`tensor.item<T>()` in C++ to convert a 0-dim tensor to a number"
        )
    if used > self.dim():
        raise IndexError(f"too many indices for tensor of dimension {self.dim()}")
    # (index, its position in idx): torch's messages for ints name the position.
    items, seen_ellipsis = [], False
    for pos, i in enumerate(idx):
        if i is Ellipsis:
            # torch accepts several: each moves its dim counter past the unindexed dims, so
            # after the first, any index that follows lands beyond the last dim.
            if not seen_ellipsis:
                items.extend([(slice(None), pos)] * (self.dim() - used))
            elif self.dim() > used:
                items.append((Ellipsis, self.dim() - used))
            seen_ellipsis = True
        else:
            items.append((i, pos))
    view, d, adv, beyond = self, 0, [], 0
    for i, pos in items:
        if i is Ellipsis:
            beyond += pos
            continue
        if beyond:
            _index_beyond(i, view.dim(), self.dim(), d + beyond)
        if i is None:
            view = view.unsqueeze(d)
            d += 1
        elif isinstance(i, bool):
            view = view.unsqueeze(d)
            adv.append((d, _C._full([1 if i else 0], 0, _C.int64, view.device)))
            d += 1
        elif isinstance(i, slice):
            step = 1 if i.step is None else _slice_int(i.step)
            start = 0 if i.start is None else _slice_int(i.start)
            stop = sys.maxsize if i.stop is None else _slice_int(i.stop)
            view = view._slice(d, start, stop, step)
            d += 1
        elif isinstance(i, int) or is_np_integer(i):
            size = view.shape[d]
            if not -size <= int(i) < size:
                raise IndexError(
                    f"index {int(i)} is out of bounds for dimension {pos} with size {size}"
                )
            view = view._select(d, int(i))
        elif isinstance(i, (Tensor, list, tuple)) or is_ndarray(i):
            t = _as_index_tensor(i, view.device)
            if t.dtype == _C.bool:
                k = t.dim()
                for j in range(k):
                    if t.shape[j] != view.shape[d + j]:
                        raise IndexError(
                            f"The shape of the mask {list(t.shape)} at index {j} does not match "
                            f"the shape of the indexed tensor {list(view.shape)} at index {d + j}"
                        )
                if k == 0:
                    view = view.unsqueeze(d)
                    n = 1 if t.item() else 0
                    adv.append((d, _C._full([n], 0, _C.int64, view.device)))
                    d += 1
                    continue
                nz = _C._nonzero(t)
                for j in range(k):
                    adv.append((d + j, nz.select(1, j)))
                d += k
            else:
                adv.append((d, _C._to(t, None, _C.int64, False, False)))
                d += 1
        elif isinstance(i, (str, bytes)):
            # torch tries to build an index tensor from it.
            raise TypeError(f"new(): invalid data type '{type(i).__name__}'")
        else:
            raise IndexError(_INDEX_TYPES.format(type(i).__name__))
    return view, adv


def _index_shape(adv):
    """The broadcast shape of the index tensors (torch's IndexError when there is none)."""
    shapes = [tuple(t.shape) for _, t in adv]
    try:
        b = ()
        for s in shapes:
            b = tuple(_C._broadcast_shapes(b, s))
    except RuntimeError:
        shown = ", ".join(str(list(s)) for s in shapes)
        raise IndexError(
            f"shape mismatch: indexing tensors could not be broadcast together with shapes {shown}"
        ) from None
    return b


def _offsets(view, adv, checked=False):
    """Storage offsets (int64, the result's shape) of the elements the indices select;
    ``checked``: the caller has bounds-checked the indices (none negative)."""
    b = _index_shape(adv)
    positions = [p for p, _ in adv]
    rest = [d for d in range(view.dim()) if d not in positions]
    adjacent = positions == list(range(positions[0], positions[0] + len(positions)))
    if adjacent:
        before = [d for d in rest if d < positions[0]]
        after = [d for d in rest if d > positions[0]]
    else:
        before, after = [], rest
    out_shape = [view.shape[d] for d in before] + list(b) + [view.shape[d] for d in after]
    nb, na = len(before), len(after)
    dev = view.device
    total = None
    empty = 0 in out_shape  # torch checks indices as it reads them: none when there is nothing
    for k, (p, t) in enumerate(adv):
        size = view.shape[p]
        if size == 0 and t.numel() and not checked:  # torch checks this even for empty results
            raise IndexError("index is out of bounds for dimension with size 0")
        if t.numel() and not empty and not checked:
            hi, lo = int(t.max().item()), int(t.min().item())
            bad = hi if hi >= size else lo if lo < -size else None
            if bad is not None:
                # torch numbers the dimension among the index tensors, not the tensor's dims.
                raise IndexError(f"index {bad} is out of bounds for dimension {k} with size {size}")
            if lo < 0:
                t = _C._where(t < 0, t + size, t)
        term = (t * view.stride(p)).reshape([1] * (len(b) - t.dim()) + list(t.shape))
        term = term.reshape([1] * nb + list(term.shape) + [1] * na)
        total = term if total is None else total + term
    for k, d in enumerate(before + after):
        pos = k if k < nb else nb + len(b) + (k - nb)
        ar = _C._arange(0, view.shape[d], 1, _C.int64, dev) * view.stride(d)
        shape = [1] * len(out_shape)
        shape[pos] = view.shape[d]
        total = total + ar.reshape(shape)
    total = total + view.storage_offset()
    return total.expand(out_shape).contiguous()


def getitem(self, idx, checked=False):
    """``self[idx]``; ``checked``: the index tensors are known to be in range and non-negative
    (index_select checks them itself)."""
    view, adv = _walk(self, idx)
    if not adv:
        return view._alias() if view is self else view
    return _C._gather_offsets(view, _offsets(view, adv, checked))


def _value(self, value):
    """The assigned value as torch's setitem accepts it: a tensor (leading 1s dropped) or a
    Python bool/int/float (NumPy integers and float64 included); anything else is refused."""
    if isinstance(value, Tensor):
        while value.dim() > 0 and value.shape[0] == 1:
            value = value._select(0, 0)
        return value
    if isinstance(value, (bool, int, float)) or is_np_integer(value):
        return value
    from cudalite import _legacy

    tp = type(value)
    name = tp.__name__ if tp.__module__ == "builtins" else f"{tp.__module__}.{tp.__qualname__}"
    raise TypeError(f"can't assign a {name} to a {_legacy.type_name(self)}")


def _mask_only(idx):
    """Whether the only advanced index is one boolean (or byte) tensor."""
    items = idx if isinstance(idx, tuple) else (idx,)
    adv = [i for i in items if isinstance(i, (Tensor, list)) or is_ndarray(i)]
    return len(adv) == 1 and isinstance(adv[0], Tensor) and adv[0].dtype in (_C.bool, _C.uint8)


def _dtype_mismatch(dst, src):
    return RuntimeError(
        "Index put requires the source and destination dtypes match, got "
        f"{dst.dtype._short_name} for the destination and {src.dtype._short_name} for the source."
    )


def setitem(self, idx, value):
    value = _value(self, value)
    if not isinstance(value, Tensor):  # torch converts the number before it indexes
        _C._check_fill_value(value, self.dtype, True)
    view, adv = _walk(self, idx)
    if not adv:
        if isinstance(value, Tensor):
            if value.shape != view.shape:  # torch's copy_to: leading 1s dropped, then expand
                sizes = list(value.shape)
                while sizes and sizes[0] == 1:
                    sizes.pop(0)
                value = _C.Tensor.expand(_C.Tensor.view(value, sizes), list(view.shape))
            _C._copy_(view, value, False)
        else:
            _C._fill_(view, value, True)
        return
    if isinstance(value, Tensor):
        _index_shape(adv)  # torch's order: the indices' shapes, the dtypes, then the bounds
        if value.dtype != view.dtype and value.dim() == 0 and _mask_only(idx):
            # torch assigns through masked_fill_ here, which converts the value.
            if value.device.type == "cpu":
                _C._check_fill_value(value.item(), view.dtype)
            value = _C._to(value, None, view.dtype, False, False)
        if value.dtype != view.dtype:  # checked before the indices are
            raise _dtype_mismatch(view, value)
    offsets = _offsets(view, adv)
    if isinstance(value, Tensor):
        try:
            _C._broadcast_shapes(tuple(value.shape), tuple(offsets.shape))
            ok = value.dim() <= offsets.dim()
        except RuntimeError:
            ok = False
        if not ok:
            raise RuntimeError(
                f"shape mismatch: value tensor of shape {list(value.shape)} cannot be broadcast "
                f"to indexing result of shape {list(offsets.shape)}"
            )
        values = value
        if values.device != view.device:
            values = _C._to(values, view.device, view.dtype, False, False)
    else:
        values = _C._empty([], view.dtype, view.device, False)
        _C._fill_(values, value, True, bump_version=False)
    _C._scatter_offsets(view, offsets, values, False)


def index_put_(self, indices, values, accumulate=False):
    """``self[indices] = values`` (or ``+=`` with accumulate=True) for a tuple of tensors."""
    if isinstance(values, Tensor) and values.dtype != self.dtype:
        raise _dtype_mismatch(self, values)
    view, adv = _walk(self, tuple(indices))
    offsets = _offsets(view, adv) if adv else None
    if offsets is None:
        raise IndexError("index_put_ needs at least one index tensor")
    _C._scatter_offsets(view, offsets, values, accumulate)
    return self
