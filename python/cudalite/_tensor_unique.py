"""``unique`` and ``unique_consecutive``: the distinct elements (or slices along ``dim``) of a
tensor, with the inverse indices and the counts on request, as torch has them.

Both are a (stable) sort, a comparison of neighbours that marks where each run of equal
values starts, and a cumulative sum of those marks (the run number of every element, which
is the inverse). Slices along a dim are sorted lexicographically, one stable sort per column
from the last. NaN equals nothing, so every NaN is its own value, as in torch. The results
depend on the data's values, so they are read back to size the outputs (one synchronisation
on CUDA, as torch's). Not differentiable (as torch's).
"""

from __future__ import annotations

from cudalite import _C
from cudalite._tensor import method

__all__ = ["unique", "unique_consecutive"]


def _runs(rows, sorted_rows):
    """(start mask, run id of each row) of the runs of equal rows (dim 0) of ``sorted_rows``."""
    n = sorted_rows.shape[0]
    start = _C._full([n], True, _C.bool, rows.device)
    if n > 1:
        diff = sorted_rows[1:] != sorted_rows[:-1]
        if diff.dim() > 1:
            diff = diff.reshape(n - 1, -1).any(1)
        start[1:] = diff
    run = start.long().cumsum(0) - 1
    return start, run


def _counts(start, n_unique):
    if start.shape[0] == 0:
        return _C._empty([0], _C.int64, start.device, False)
    pos = start.nonzero().reshape(-1)
    ends = _C._cat([pos[1:], _C._full([1], start.shape[0], _C.int64, start.device)], 0)
    return ends - pos


def _lexsort_rows(rows):
    """The permutation that sorts the rows (dim 0) of a 2-D tensor lexicographically."""
    n, k = rows.shape[0], rows.shape[1]
    perm = _C._arange(0, n, 1, _C.int64, rows.device)
    for c in range(k - 1, -1, -1):
        _, order = rows[perm, c].sort(0)
        perm = perm[order]
    return perm


def _results(out, inverse, counts, return_inverse, return_counts):
    if not return_inverse and not return_counts:
        return out
    res = (out,)
    if return_inverse:
        res += (inverse,)
    if return_counts:
        res += (counts,)
    return res


def _unique_flat(t, consecutive):
    flat = t.reshape(-1)
    if consecutive:
        values, perm = flat, None
    else:
        values, perm = flat.sort(0)
    start, run = _runs(flat, values)
    out = values[start]
    inverse = _C._empty(list(t.shape), _C.int64, t.device, False)
    if perm is None:
        inverse.view(-1).copy_(run)
    elif flat.shape[0]:
        inverse.view(-1)[perm] = run
    return out, inverse, _counts(start, out.shape[0])


def _unique_dim(t, dim, consecutive):
    if t.dim() == 0:
        raise IndexError(f"Dimension specified as {dim} but tensor has no dimensions")
    dim = _C._wrap_dim(dim, t.dim())
    shape = list(t.shape)
    if any(s == 0 for d, s in enumerate(shape) if d != dim):
        raise RuntimeError(
            "There are 0 sized dimensions, and they aren't selected, so unique cannot be applied"
        )
    n = shape[dim] if t.dim() else 1
    x = t if t.dim() else t.reshape([1])
    moved = x.movedim(dim, 0)
    rest = 1
    for s in moved.shape[1:]:
        rest *= s
    rows = moved.reshape(n, rest)
    if n == 0:
        empty = _C._empty([0], _C.int64, t.device, False)
        return x.clone(), empty, empty.clone()
    perm = _C._arange(0, n, 1, _C.int64, t.device) if consecutive else _lexsort_rows(rows)
    start, run = _runs(rows, rows[perm])
    first = perm[start]
    inverse = _C._empty([n], _C.int64, t.device, False)
    inverse[perm] = run
    # laid out as torch's: the slices dense, in the order of dim 0 of the moved tensor
    out = moved.index_select(0, first).contiguous().movedim(0, dim)._alias()
    return out, inverse, _counts(start, first.shape[0])


def _unique(t, consecutive, return_inverse, return_counts, dim):
    with _no_grad():
        if dim is None:
            out, inverse, counts = _unique_flat(t.detach(), consecutive)
        else:
            out, inverse, counts = _unique_dim(t.detach(), dim, consecutive)
    return _results(out, inverse, counts, return_inverse, return_counts)


def _no_grad():
    from cudalite.autograd import no_grad

    return no_grad()


@method(name="unique")
def _unique_method(self, sorted=True, return_inverse=False, return_counts=False, dim=None):
    """The distinct values of ``self`` in ascending order (with ``dim``: the distinct slices
    along ``dim``, in lexicographic order); ``return_inverse`` adds the position in the result
    of every element (slice), ``return_counts`` how many times each one occurs. (``sorted`` is
    accepted: the result is always sorted, as torch's.)"""
    return _unique(self, False, return_inverse, return_counts, dim)


def unique(input, sorted=True, return_inverse=False, return_counts=False, dim=None):
    return input.unique(sorted, return_inverse, return_counts, dim)


@method(name="unique_consecutive")
def _unique_consecutive_method(self, return_inverse=False, return_counts=False, dim=None):
    """The first element (slice along ``dim``) of every run of equal consecutive ones;
    ``return_inverse`` and ``return_counts`` as in ``unique``."""
    return _unique(self, True, return_inverse, return_counts, dim)


def unique_consecutive(input, return_inverse=False, return_counts=False, dim=None):
    return input.unique_consecutive(
        return_inverse=return_inverse, return_counts=return_counts, dim=dim
    )
