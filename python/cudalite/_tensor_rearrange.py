"""roll, repeat_interleave, tile, rot90, fliplr / flipud, ravel and narrow_copy: copies that
move, repeat or flatten slices along dimensions.

roll is one ``cat`` of two narrowed views per rolled dim; repeat_interleave with an int is a
broadcast (``expand``) made dense, and with a tensor of repeats an ``index_select`` of the
positions the repeats spell out (read on the host, as torch's CUDA kernel also synchronises
for the output size).
"""

from __future__ import annotations

import operator
import warnings

from cudalite import _C
from cudalite._arg_parser import tp_name
from cudalite._C import Tensor
from cudalite._lazy import numpy
from cudalite._memory_format import contiguous_format
from cudalite._tensor import method

__all__ = [
    "roll",
    "repeat_interleave",
    "tile",
    "rot90",
    "fliplr",
    "flipud",
    "ravel",
    "narrow_copy",
    "meshgrid",
]


def _int_list(v, name, pos):
    """``v`` (an int or a sequence of ints) as a list; torch's TypeError for anything else."""
    items = v if isinstance(v, (list, tuple)) else [v]
    for k, i in enumerate(items):
        if isinstance(i, bool) or not hasattr(type(i), "__index__"):
            where = "not" if items is not v else "but found element of type"
            tail = tp_name(i) if items is not v else f"{tp_name(i)} at pos {k}"
            raise TypeError(
                f"roll(): argument '{name}' (position {pos}) must be tuple of ints, {where} {tail}"
            )
    return [operator.index(i) for i in items]


def _roll_dim(t, shift, dim):
    n = t.shape[dim]
    if n == 0:
        return t
    s = shift % n
    if s == 0:
        return t
    return _C._cat([t.narrow(dim, n - s, s), t.narrow(dim, 0, n - s)], dim)


@method(name="roll")
def _roll(self, shifts, dims=()):
    shifts, dims = _int_list(shifts, "shifts", 1), _int_list(dims, "dims", 2)
    if not shifts:
        raise RuntimeError("`shifts` required")
    if not dims and len(shifts) == 1:
        flat = self.reshape(-1)
        return _roll_dim(flat, shifts[0], 0).clone().view(list(self.shape))
    if len(shifts) != len(dims):
        raise RuntimeError(
            f"shifts and dimensions must align. shifts: {len(shifts)}, dims:{len(dims)}"
        )
    if self.numel() == 0:  # torch returns before it looks at the dims
        return self.clone()
    out = self
    for s, d in zip(shifts, dims, strict=True):
        if self.dim() == 0:
            raise IndexError(f"Dimension specified as {d} but tensor has no dimensions")
        out = _roll_dim(out, s, _C._wrap_dim(d, self.dim()))
    return out.clone() if out is self else out


def roll(input, shifts, dims=()):
    return input.roll(shifts, dims)


def _repeats_index(repeats, n, device):
    """int64 positions ``[0] * r0 + [1] * r1 + ...`` for a 1-D repeats tensor of length n."""
    reps = repeats.tolist()
    if any(r < 0 for r in reps):
        raise RuntimeError("Repeats must be non-negative")
    np = numpy()
    idx = _C._from_numpy_quiet(np.repeat(np.arange(n, dtype=np.int64), reps))
    return idx if idx.device == device else _C._to(idx, device, None, False, False)


def _check_output_size(total, output_size):
    if output_size is not None and output_size != total:
        raise RuntimeError(
            f"repeat_interleave: Invalid output_size, expected {total} but got {output_size}"
        )


@method(name="repeat_interleave")
def _repeat_interleave(self, repeats, dim=None, *, output_size=None):
    x = self.reshape(-1) if dim is None else self
    d = 0 if dim is None else _C._wrap_dim(dim, self.dim())
    if isinstance(repeats, Tensor):
        if repeats.dim() > 1:
            raise RuntimeError("repeats must be 0-dim or 1-dim tensor")
        if repeats.dtype not in (_C.int64, _C.int32):
            kernel = "repeat_interleave_cuda" if repeats.is_cuda else "repeat_interleave_cpu"
            raise NotImplementedError(
                f"\"{kernel}\" not implemented for '{repeats.dtype._short_name}'"
            )
        if not x.dim():  # torch reads input.size(dim) for its message
            raise IndexError(f"Dimension specified as {d} but tensor has no dimensions")
        if repeats.numel() == 1:
            repeats = repeats.reshape(-1).expand([x.shape[d] if x.dim() else 1])
        n = x.shape[d] if x.dim() else 1
        if repeats.shape[0] != n:
            raise RuntimeError(
                "repeats must have the same size as input along dim, but got "
                f"repeats.size(0) = {repeats.shape[0]} and input.size({d}) = {n}"
            )
        idx = _repeats_index(repeats, n, x.device)
        _check_output_size(idx.numel(), output_size)
        return x.index_select(d, idx) if x.dim() else x.reshape(1).index_select(0, idx)
    r = operator.index(repeats)
    if r < 0:
        raise RuntimeError("repeats can not be negative")
    shape = list(x.shape)
    _check_output_size((shape[d] if shape else 1) * r, output_size)
    e = x.unsqueeze(d + 1)  # (torch's IndexError for dim 0 of a 0-dim tensor comes from here)
    sizes = list(e.shape)
    sizes[d + 1] = r
    return e.expand(sizes).contiguous().view(shape[:d] + [shape[d] * r] + shape[d + 1 :])


def repeat_interleave(input, repeats=None, dim=None, *, output_size=None):
    if repeats is None:  # repeat_interleave(repeats): the positions, repeated
        if not isinstance(input, Tensor):
            raise TypeError("repeat_interleave(): argument 'repeats' must be Tensor")
        reps = input.reshape(-1)
        n = reps.shape[0]
        ar = _C._arange(0, n, 1, input.dtype, input.device)
        return ar.repeat_interleave(reps, 0, output_size=output_size)
    return input.repeat_interleave(repeats, dim, output_size=output_size)


# ---- tile, rot90, fliplr / flipud, ravel, narrow_copy ----


@method(name="tile")
def _tile(self, *dims):
    """``repeat`` with ``dims`` padded with leading ones to ``self``'s number of dims."""
    if len(dims) == 1 and isinstance(dims[0], (tuple, list)):
        dims = tuple(dims[0])
    dims = [operator.index(d) for d in dims]
    if len(dims) < self.dim():
        dims = [1] * (self.dim() - len(dims)) + dims
    return self.repeat(dims)


def tile(input, dims):
    return input.tile(dims)


@method(name="rot90")
def _rot90(self, k=1, dims=(0, 1)):
    """The (dims[0], dims[1]) planes turned ``k`` quarter turns, from dims[0] towards dims[1]."""
    dims = list(dims)
    n = self.dim()
    if len(dims) != 2:
        raise RuntimeError(f"expected total rotation dims == 2, but got dims = {len(dims)}")
    if n < 2:
        raise RuntimeError(f"expected total dims >= 2, but got total dims = {n}")
    d0, d1 = dims
    if d0 == d1 or abs(d0 - d1) == n:
        raise RuntimeError(
            f"expected rotation dims to be different, but got dim0 = {d0} and dim1 = {d1}"
        )
    if d0 >= n or d0 < -n:
        raise RuntimeError(f"Rotation dim0 out of range, dim0 = {d0}")
    if d1 >= n or d1 < -n:
        raise RuntimeError(f"Rotation dim1 out of range, dim1 = {d1}")
    k = operator.index(k) % 4
    if k == 1:
        return self.flip([d1]).transpose_(d0, d1)
    if k == 2:
        return self.flip([d0, d1])
    if k == 3:
        return self.flip([d0]).transpose_(d0, d1)
    return self.clone(memory_format=contiguous_format)


def rot90(input, k=1, dims=(0, 1)):
    return input.rot90(k, dims)


@method(name="fliplr")
def _fliplr(self):
    """``flip`` of dim 1 (columns)."""
    if self.dim() < 2:
        raise RuntimeError("Input must be >= 2-d.")
    return self.flip([1])


@method(name="flipud")
def _flipud(self):
    """``flip`` of dim 0 (rows)."""
    if self.dim() < 1:
        raise RuntimeError("Input must be >= 1-d.")
    return self.flip([0])


def fliplr(input):
    return input.fliplr()


def flipud(input):
    return input.flipud()


@method(name="ravel")
def _ravel(self):
    """The elements as one dim in row-major order: a view when ``self`` is contiguous."""
    return self.contiguous().view(-1)


def ravel(input):
    return input.ravel()


@method(name="narrow_copy")
def _narrow_copy(self, dim, start, length):
    """``narrow``'s elements in new, contiguous memory."""
    if isinstance(start, Tensor):
        start = start.item()
    part = self.narrow(dim, start, length)
    out = _C._empty(list(part.shape), self.dtype, self.device, False)
    return out.copy_(part)


def narrow_copy(input, dim, start, length):
    return input.narrow_copy(dim, start, length)


def meshgrid(*tensors, indexing=None):
    """Coordinate grids of 0-d or 1-d tensors: each output has one dim per input and varies
    along its own input's dim (``indexing="ij"``); ``"xy"`` swaps the first two dims, as
    NumPy's default. The outputs are views of the inputs (``expand``), as torch's."""
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        tensors = tuple(tensors[0])
    if indexing is None:
        warnings.warn(
            "torch.meshgrid: in an upcoming release, it will be required to pass the indexing "
            "argument.",
            UserWarning,
            stacklevel=2,
        )
        indexing = "ij"
    if not tensors:
        raise RuntimeError("meshgrid expects a non-empty TensorList")
    for t in tensors:
        if not isinstance(t, Tensor):
            raise TypeError(
                f"meshgrid(): expected Tensor as element {tensors.index(t)} in argument 0, but "
                f"got {type(t).__name__}"
            )
    if any(t.dtype != tensors[0].dtype for t in tensors):
        raise RuntimeError("meshgrid expects all tensors to have the same dtype")
    if any(t.device != tensors[0].device for t in tensors):
        raise RuntimeError("meshgrid expects all tensors to have the same device")
    if indexing not in ("ij", "xy"):
        raise RuntimeError(
            f'torch.meshgrid: indexing must be one of "xy" or "ij", but received: {indexing}'
        )
    for t in tensors:
        if t.dim() > 1:
            raise RuntimeError(
                "torch.meshgrid: Expected 0D or 1D tensor in the tensor list but got: "
                f"a {t.dim()}-D tensor of size {list(t.shape)}"
            )
    ts = list(tensors)
    swap = indexing == "xy" and len(ts) >= 2
    if swap:
        ts[0], ts[1] = ts[1], ts[0]
    shape = [t.numel() for t in ts]
    grids = []
    for i, t in enumerate(ts):
        view = [1] * len(ts)
        view[i] = -1
        grids.append(t.reshape(view).expand(shape))
    if swap:
        grids[0], grids[1] = grids[1], grids[0]
    return tuple(grids)
