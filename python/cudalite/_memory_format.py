"""Memory formats (torch.memory_format): ``contiguous_format``, ``preserve_format``,
``channels_last`` (4-D, NHWC strides) and ``channels_last_3d`` (5-D, NDHWC), for
``contiguous``, ``is_contiguous``, ``clone``, ``to`` / ``cuda`` / ``cpu`` / the casts, and the
factories ``empty`` and ``empty_like`` / ``zeros_like`` / ... / ``randint_like``.

The fast paths (no memory_format, the default) never come here: the C++ bindings and the
Python methods call these functions only when a format is given.
"""

from __future__ import annotations

from cudalite import _C

__all__ = ["memory_format", "contiguous_format", "preserve_format", "channels_last",
           "channels_last_3d"]  # fmt: skip


class memory_format:  # noqa: N801  (torch's name)
    """A layout request; compare by identity, as torch's singletons."""

    def __init__(self, name):
        self._name = name

    def __repr__(self):
        return f"cudalite.{self._name}"

    def __reduce__(self):
        return self._name


contiguous_format = memory_format("contiguous_format")
preserve_format = memory_format("preserve_format")
channels_last = memory_format("channels_last")
channels_last_3d = memory_format("channels_last_3d")

# rank, the permutation whose contiguous layout a channels-last tensor has, and its inverse
_CHANNELS_LAST = {
    channels_last: (4, (0, 2, 3, 1), (0, 3, 1, 2)),
    channels_last_3d: (5, (0, 2, 3, 4, 1), (0, 4, 1, 2, 3)),
}
_contiguous = _C.Tensor.contiguous  # the C++ method: contiguous_format


def _check(fmt, op):
    if not isinstance(fmt, memory_format):
        raise TypeError(
            f"{op}(): argument 'memory_format' must be torch.memory_format, not "
            f"{type(fmt).__name__}"
        )


def _channels_last_strides(shape, perm):
    strides, step = [0] * len(shape), 1
    for d in reversed(perm):
        strides[d] = step
        step *= shape[d]
    return strides


def is_contiguous(t, fmt):
    """``t.is_contiguous(memory_format=fmt)``: dims of size 1 may have any stride."""
    _check(fmt, "is_contiguous")
    if fmt is contiguous_format or fmt is preserve_format:
        return t.is_contiguous()
    rank, perm, _ = _CHANNELS_LAST[fmt]
    if t.dim() != rank:
        return False
    want = _channels_last_strides(t.shape, perm)
    return all(n == 1 or s == w for n, s, w in zip(t.shape, t.stride(), want, strict=True))


def _copy_in_format(t, fmt):
    """A copy of ``t`` (new memory, not a view) with ``fmt``'s own strides (channels_last(_3d))."""
    pinned = t.device.type == "cpu" and t.is_pinned()
    out = _empty_channels_last(list(t.shape), fmt, t.dtype, t.device, pinned)
    _C._copy_(out, t, False, bump_version=False)
    return out


def contiguous(t, fmt):
    """``t.contiguous(memory_format=fmt)``: t itself when it already has that layout."""
    _check(fmt, "contiguous")
    if fmt is preserve_format:
        if t.is_contiguous():
            return t
        raise RuntimeError("preserve memory format is unsupported by the contiguous operator")
    if fmt is contiguous_format:
        return _contiguous(t, None)
    _rank_check(t.shape, fmt)
    return t if is_contiguous(t, fmt) else _copy_in_format(t, fmt)


def suggest(t):
    """torch's suggest_memory_format: channels_last(_3d) when t's strides look like it."""
    for fmt, order in ((channels_last, (1, 3, 2, 0)), (channels_last_3d, (1, 4, 3, 2, 0))):
        if t.dim() == len(order) and _strides_like(t.shape, t.stride(), order):
            return fmt
    return contiguous_format


def _strides_like(sizes, strides, order):
    # torch's is_channels_last_strides_2d_s4 / _3d_s5, ambiguous cases falling to contiguous.
    if strides[1] == 0:
        return False
    lowest = 0
    for d in order:
        if sizes[d] == 0 or strides[d] < lowest:
            return False
        if d == 0 and lowest == strides[1]:
            return False
        lowest = strides[d] * (sizes[d] if sizes[d] > 1 else 1)
    return True


def apply(t, fmt, op, src=None):
    """``t`` (a result of ``op``: clone, to, cuda, ...; ``src``: the input, which to() and the
    others return as it is when nothing changes) in the layout ``fmt`` asks for, as torch's
    _to_copy and clone make it: src itself only when suggest(src) is fmt (torch's
    to_will_alias), new memory with the format's own strides otherwise (size-1 dims
    included: (1, 3, 1, 1) in channels_last is (3, 1, 3, 3))."""
    if fmt is None or fmt is preserve_format:
        return t
    _check(fmt, op)
    if t is src and suggest(src) is fmt:
        return t
    if fmt is contiguous_format:
        return _contiguous(t, None)
    _rank_check(t.shape, fmt)
    if t is not src and t.stride() == tuple(
        _channels_last_strides(t.shape, _CHANNELS_LAST[fmt][1])
    ):
        return t
    return _copy_in_format(t, fmt)


def _rank_check(shape, fmt):
    rank = _CHANNELS_LAST[fmt][0]
    if len(shape) != rank:
        raise RuntimeError(f"required rank {rank} tensor to use {fmt._name} format")


def _empty_channels_last(shape, fmt, dtype, device, pin_memory):
    """A new (not a view) uninitialised tensor of ``shape`` with ``fmt``'s strides: made in
    the permuted order, then given the permuted metadata in place."""
    _rank_check(shape, fmt)
    perm = _CHANNELS_LAST[fmt][1]
    t = _C._empty([shape[d] for d in perm], dtype, device, pin_memory)
    # torch's strides: sizes 0 are not raised to 1 (empty(2, 0, 4, 5) has (0, 1, 0, 0))
    t._set_metadata(t.as_strided(shape, _channels_last_strides(shape, perm), 0))
    return t


def empty(shape, fmt, dtype, device, pin_memory):
    """``empty(*shape, memory_format=fmt)``: torch refuses preserve_format here."""
    if fmt is preserve_format:
        raise RuntimeError("unsupported memory format Preserve")
    if fmt is contiguous_format:
        return _C._empty(shape, dtype, device, pin_memory)
    return _empty_channels_last(shape, fmt, dtype, device, pin_memory)


def empty_like(input, fmt, dtype, device, pin_memory, op, given=None):
    """The uninitialised result of ``op`` (empty_like, zeros_like, ...) for ``memory_format=fmt``
    (None: preserve_format): preserve_format keeps ``input``'s dense layout (pinned results are
    contiguous), the others are those of ``empty``. ``given``: the arguments after input, for
    the ops whose wrong memory_format gets the "invalid combination" TypeError."""
    if fmt is None or fmt is preserve_format:
        if pin_memory:
            return _C._empty(list(input.shape), dtype, device, True)
        return _C._empty_like(input, dtype, device)
    if given is not None and not isinstance(fmt, memory_format):
        # rand_like, randn_like, randint_like (several overloads): the parser's error
        raise factory_type_error(op, (input, *given), {"memory_format": fmt})
    _check(fmt, op)
    return empty(list(input.shape), fmt, dtype, device, pin_memory)


def factory_type_error(name, args, kwargs):
    """torch's argument-parser TypeError for ``memory_format=`` given to a factory that does not
    take it (zeros, ones, full, rand, ...): ``args`` the positional arguments, ``kwargs`` the
    keywords in the order to list them (None: not given; torch lists the last keyword given
    first, so this order is exact for the common calls only)."""
    from cudalite._ops import _type_name

    def tn(a):
        if isinstance(a, memory_format):
            return "cudalite.memory_format"
        return "cudalite.dtype" if isinstance(a, _C.dtype) else _type_name(a)

    kw = [f"{k}={tn(v)}" for k, v in kwargs.items() if v is not None or k == "memory_format"]
    got = [tn(a) for a in args] + kw
    return TypeError(
        f"{name}() received an invalid combination of arguments - got ({', '.join(got)}), but "
        "expected one of:"
    )
