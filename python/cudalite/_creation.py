"""Tensor creation: ``tensor``, ``zeros``, ``arange``, ``rand`` and torch's other factories."""

from __future__ import annotations

import warnings

from cudalite import _C, _memory_format, _ops
from cudalite._C import Tensor
from cudalite._lazy import is_ndarray

__all__ = [
    "tensor",
    "as_tensor",
    "from_numpy",
    "empty",
    "zeros",
    "ones",
    "full",
    "arange",
    "linspace",
    "eye",
    "empty_like",
    "zeros_like",
    "ones_like",
    "full_like",
    "scalar_tensor",
]

from_numpy = _C.from_numpy
_INT64_LIMIT = 1 << 63  # sizes are int64: torch's unpacking error beyond


def _is_int(a):
    if isinstance(a, Tensor):
        return a.dim() == 0 and not a.dtype.is_floating_point and a.dtype != _C.bool
    if isinstance(a, bool) or not hasattr(a, "__index__"):
        return False
    try:
        a.__index__()
    except Exception:  # an __index__ that raises: not an int
        return False
    return True


def _size(args, name="size", pos=1, sequence_only=False):
    """Sizes given as varargs ints, or one tuple / list / Size, with torch's argument errors.

    Like torch's parser, only the first element decides whether the argument is a list of ints;
    a later bad element fails while unpacking, with a different message.
    """
    fast = _C._int_sizes(args)  # ints, or one tuple / list of ints, all >= 0
    if fast is not None and (not sequence_only or isinstance(args[0], (tuple, list))):
        return fast
    if not args:
        raise TypeError(
            f"{name}() received an invalid combination of arguments - got (), but expected one of:"
        )
    one = len(args) == 1
    varargs = not (one and isinstance(args[0], (tuple, list)))
    if varargs and (sequence_only or (one and not _is_int(args[0]))):
        raise TypeError(
            f"{name}(): argument 'size' (position {pos}) must be tuple of ints, not "
            f"{type(args[0]).__name__}"
        )
    seq = args if varargs else args[0]
    out = []
    for i, a in enumerate(seq):
        if not _is_int(a):
            tn = type(a).__name__
            if i > 0:
                raise TypeError(
                    f"{name}(): argument 'size' failed to unpack the object at pos "
                    f'{i + 1} with error "type must be tuple of ints,but got {tn}"'
                )
            if varargs:
                got = ", ".join(type(x).__name__ for x in seq)
                raise TypeError(
                    f"{name}() received an invalid combination of arguments - got "
                    f"({got}), but expected one of:"
                )
            raise TypeError(
                f"{name}(): argument 'size' (position {pos}) must be tuple of ints, "
                f"but found element of type {tn} at pos 0"
            )
        v = a.__index__()
        if not -_INT64_LIMIT <= v < _INT64_LIMIT:
            raise TypeError(
                f"{name}(): argument 'size' failed to unpack the object at pos {i + 1} with "
                'error "Overflow when unpacking long long"'
            )
        out.append(v)
    return out


def _beyond_int64(v):
    return isinstance(v, int) and not -_INT64_LIMIT <= v < _INT64_LIMIT


def _check_int64(v):
    """An int argument that does not fit int64: torch's unpacking error."""
    if _beyond_int64(v):
        raise ValueError("Overflow when unpacking long long")


def _finish(t, requires_grad, pin_memory=False):
    if pin_memory:
        # Made on the CPU, then copied into memory from the pinned allocator (whose errors
        # are torch's for pin_memory=True, and "Only dense CPU tensors can be pinned").
        out = _C._empty(list(t.shape), t.dtype, t.device, True)
        _C._copy_(out, t, False, bump_version=False)
        t = out
    if requires_grad:
        if not t.dtype.is_floating_point:
            raise RuntimeError(
                "Only Tensors of floating point and complex dtype can require gradients"
            )
        t.requires_grad_(True)
    return t


def _check_out(out, name, args, dtype, device):
    """torch's checks of a factory's ``out=``; returns the dtype to make the values in."""
    if not isinstance(out, Tensor):
        got = ", ".join([_ops._type_name(a) for a in args] + [f"out={_ops._type_name(out)}"])
        raise TypeError(
            f"{name}() received an invalid combination of arguments - got ({got}), but "
            "expected one of:"
        )
    if dtype is not None and dtype != out.dtype:
        raise RuntimeError(
            f"dtype {dtype._short_name} does not match dtype of out parameter "
            f"({out.dtype._short_name})"
        )
    if device is not None:
        dev = device if isinstance(device, _C.device) else _C.device(device)
        if dev.type != out.device.type:
            raise RuntimeError(
                f"device type {dev.type} does not match device type of out parameter "
                f"({out.device.type})"
            )
    # empty resizes first, as torch's does, even under no_grad; randn resizes first when
    # grad mode is on.
    if out.requires_grad and (name == "empty" or _C._is_grad_enabled()):
        if name in ("empty", "randn"):
            raise RuntimeError("cannot resize variables that require grad")
        raise RuntimeError(
            f"aten::{name}(): functions with out=... arguments don't support automatic "
            "differentiation, but one of the arguments requires grad."
        )
    return out.dtype


def _resize_out(out, shape):
    """Resizes ``out`` in place to ``shape`` (``resize_``: its storage is kept when large
    enough). torch's factories resize out tensors without a warning."""
    out._resize_(list(shape))


def _write_out(out, r, requires_grad):
    """Writes the factory's result ``r`` (made in out's dtype and device) into ``out``."""
    _resize_out(out, r.shape)
    _C._copy_(out, r, False)
    return _finish(out, requires_grad)


def _from_ndarray(arr, dtype, device):
    # from_numpy refuses what torch.tensor refuses (negative strides, a non-native byte order);
    # the copy keeps the array's layout as torch's preserve_format does (its strides when it
    # is dense, an empty array's whatever they are).
    return _C._to(_C._from_numpy_quiet(arr), device, dtype, False, True)


def tensor(data, *, dtype=None, device=None, requires_grad=False, pin_memory=False):
    """Creates a tensor that copies ``data`` (numbers, nested sequences, NumPy arrays)."""
    if type(data) is list and not requires_grad and not pin_memory:
        return _C._tensor_from_data(data, dtype, device)  # the common case, in one call
    if isinstance(data, Tensor):
        warnings.warn(
            "To copy construct from a tensor, it is recommended to use sourceTensor.clone()."
            "detach() or sourceTensor.clone().detach().requires_grad_(True), rather than "
            "cudalite.tensor(sourceTensor).",
            UserWarning,
            stacklevel=2,
        )
        t = _C._to(data, device, dtype, False, True)
    elif is_ndarray(data):
        t = _from_ndarray(data, dtype, device)
    else:
        t = _C._tensor_from_data(data, dtype, device)
    return _finish(t, requires_grad, pin_memory)


def as_tensor(data, dtype=None, device=None):
    """Converts ``data`` to a tensor, sharing memory when dtype and device already match."""
    if isinstance(data, Tensor):
        return _C._to(data, device, dtype, False, False)
    if is_ndarray(data):
        if not data.flags.writeable:
            _C._warn_numpy_not_writable(2)
        return _C._to(_C._from_numpy_quiet(data), device, dtype, False, False)
    return _C._tensor_from_data(data, dtype, device)


def scalar_tensor(s, *, dtype=None, device=None, requires_grad=False):
    """A 0-dim tensor holding ``s`` (default dtype unless given)."""
    return _finish(_C._full([], s, dtype or _C.get_default_dtype(), device), requires_grad)


def _empty(
    *size,
    memory_format=None,
    dtype=None,
    device=None,
    requires_grad=False,
    pin_memory=False,
    out=None,
):
    """empty's general path: what _C.empty does not handle itself (Note [empty in one call])."""
    shape = _size(size, "empty")
    if memory_format is not None:
        if not isinstance(memory_format, _memory_format.memory_format):
            kw = {"memory_format": memory_format}
            raise _memory_format.factory_type_error("empty", size, kw)
        if out is not None:
            raise RuntimeError(
                "'memory_format' argument is incompatible with 'out' tensor argument"
            )
        t = _memory_format.empty(shape, memory_format, dtype, device, pin_memory)
        return _finish(t, requires_grad)
    if out is not None:
        _check_out(out, "empty", size, dtype, device)
        _resize_out(out, shape)  # the values are left as they are
        return _finish(out, requires_grad)
    return _finish(_C._empty(shape, dtype, device, pin_memory), requires_grad)


_NO_FORMAT = object()  # memory_format= not given (torch's parser refuses even None)


def _no_format(name, args, fmt, **given):
    """The TypeError of a factory without memory_format= (torch's parser: no such overload);
    ``given`` the other keywords, listed when not None."""
    kw = {"memory_format": fmt, **{k: v for k, v in given.items() if v is not None}}
    return _memory_format.factory_type_error(name, args, kw)


def _filled(shape, value, dtype, device, requires_grad, pin_memory=False):
    t = _C._full(shape, value, dtype or _C.get_default_dtype(), device)
    return _finish(t, requires_grad, pin_memory)


def _filled_out(out, name, size, shape, value, dtype, device, requires_grad):
    _check_out(out, name, size, dtype, device)
    _resize_out(out, shape)
    _C._fill_(out, value)
    return _finish(out, requires_grad)


def _zeros(
    *size,
    dtype=None,
    device=None,
    requires_grad=False,
    pin_memory=False,
    out=None,
    memory_format=_NO_FORMAT,
):
    if memory_format is not _NO_FORMAT:
        raise _no_format("zeros", size, memory_format, dtype=dtype, out=out)
    shape = _size(size, "zeros")
    if shape and min(shape) < 0:
        raise RuntimeError("zeros: Dimension size must be non-negative.")
    if out is not None:
        return _filled_out(out, "zeros", size, shape, 0, dtype, device, requires_grad)
    return _filled(shape, 0, dtype, device, requires_grad, pin_memory)


def _ones(
    *size,
    dtype=None,
    device=None,
    requires_grad=False,
    pin_memory=False,
    out=None,
    memory_format=_NO_FORMAT,
):
    if memory_format is not _NO_FORMAT:
        raise _no_format("ones", size, memory_format, dtype=dtype, out=out)
    shape = _size(size, "ones")
    if out is not None:
        return _filled_out(out, "ones", size, shape, 1, dtype, device, requires_grad)
    return _filled(shape, 1, dtype, device, requires_grad, pin_memory)


# empty, zeros and ones take their common calls in C (Note [empty in one call]) and hand the
# others to these general paths, named as the public functions in argument errors.
# (_checked.install() sets them again, wrapped for torch's whole argument errors.)
FACTORY_SLOW = {"empty": _empty, "zeros": _zeros, "ones": _ones}
for _name, _slow in FACTORY_SLOW.items():
    _slow.__name__ = _slow.__qualname__ = _name
    _C._set_factory_slow(_name, _slow)
empty, zeros, ones = _C.empty, _C.zeros, _C.ones


def full(
    size,
    fill_value,
    *,
    out=None,
    dtype=None,
    device=None,
    requires_grad=False,
    pin_memory=False,
    memory_format=_NO_FORMAT,
):
    """A tensor filled with ``fill_value``; the dtype follows the value like torch."""
    if memory_format is not _NO_FORMAT:
        raise _no_format("full", (size, fill_value), memory_format, out=out, dtype=dtype)
    if isinstance(fill_value, Tensor):
        fill_value = fill_value.item()
    shape = _size((size,), "full", sequence_only=True)
    if out is not None:
        dtype = _check_out(out, "full", (size, fill_value), dtype, device)
        t = _C._full(shape, fill_value, dtype, out.device)
        return _write_out(out, t, requires_grad)
    return _finish(_C._full(shape, fill_value, dtype, device), requires_grad, pin_memory)


def _num(x):
    return x.item() if isinstance(x, Tensor) else x


_NO_START = object()


def arange(
    start=_NO_START,
    end=None,
    step=1,
    *,
    out=None,
    dtype=None,
    device=None,
    requires_grad=False,
    pin_memory=False,
    memory_format=_NO_FORMAT,
):
    """Values from ``start`` to ``end`` (exclusive) spaced by ``step``."""
    from cudalite import get_default_dtype, int64

    if start is _NO_START:  # arange(end=5) or, no end either, torch's TypeError
        if end is None:
            raise TypeError("arange() missing 1 required positional argument: 'end'")
        start = 0
    if memory_format is not _NO_FORMAT:
        given = (start,) if end is None else (start, end, step)
        raise _no_format("arange", given, memory_format, out=out, dtype=dtype)

    if out is not None:
        given = (start,) if end is None else (start, end, step)
        dtype, device = _check_out(out, "arange", given, dtype, device), out.device
    start, end, step = _num(start), _num(end), _num(step)
    if end is None:
        start, end = 0, start
    if dtype is None:
        is_float = any(isinstance(v, float) for v in (start, end, step))
        dtype = get_default_dtype() if is_float else int64
    if not dtype.is_floating_point and any(_beyond_int64(v) for v in (start, end, step)):
        raise RuntimeError("value cannot be converted to type int64_t without overflow")
    t = _C._arange(start, end, step, dtype, device)
    if out is None:
        return _finish(t, requires_grad, pin_memory)
    if out.numel() == t.numel():  # arange keeps the shape of an out of the right size
        return _write_out(out, t.reshape(out.shape), requires_grad)
    if out.numel():
        warnings.warn(
            f"The number of elements in the out tensor of shape {list(out.shape)} is "
            f"{out.numel()} which does not match the computed number of elements {t.numel()}. "
            "Note that this may occur as a result of rounding error. The out tensor will be "
            f"resized to a tensor of shape ({t.numel()},).",
            UserWarning,
            stacklevel=2,
        )
    return _write_out(out, t, requires_grad)


def linspace(
    start,
    end,
    steps,
    *,
    out=None,
    dtype=None,
    device=None,
    requires_grad=False,
    pin_memory=False,
    memory_format=_NO_FORMAT,
):
    """``steps`` evenly spaced values from ``start`` to ``end`` inclusive."""
    from cudalite import get_default_dtype

    if memory_format is not _NO_FORMAT:
        raise _no_format("linspace", (start, end, steps), memory_format, out=out, dtype=dtype)

    _check_int64(steps)
    if out is not None:
        dtype = _check_out(out, "linspace", (start, end, steps), dtype, device)
        t = _C._linspace(_num(start), _num(end), steps, dtype, out.device)
        return _write_out(out, t, requires_grad)
    t = _C._linspace(_num(start), _num(end), steps, dtype or get_default_dtype(), device)
    return _finish(t, requires_grad, pin_memory)


def eye(
    n,
    m=None,
    *,
    out=None,
    dtype=None,
    device=None,
    requires_grad=False,
    pin_memory=False,
    memory_format=_NO_FORMAT,
):
    """A 2-D tensor with ones on the diagonal."""
    from cudalite import get_default_dtype

    if memory_format is not _NO_FORMAT:
        given = (n,) if m is None else (n, m)
        raise _no_format("eye", given, memory_format, out=out, dtype=dtype)

    if out is not None:
        given = (n,) if m is None else (n, m)
        dtype, device = _check_out(out, "eye", given, dtype, device), out.device
    _check_int64(n)
    _check_int64(m)
    t = _C._eye(n, n if m is None else m, dtype or get_default_dtype(), device)
    if out is not None:
        return _write_out(out, t, requires_grad)
    return _finish(t, requires_grad, pin_memory)


def _like(t, dtype, device):
    return (t.dtype if dtype is None else dtype), (t.device if device is None else device)


def _empty_like_input(
    input, dtype, device, pin_memory, memory_format=None, op="empty_like", given=None
):
    """Uninitialised, laid out like ``input`` (torch's preserve_format, the default; pinned
    ones are contiguous) or as ``memory_format`` asks."""
    if memory_format is None and not pin_memory:
        return _C._empty_like(input, dtype, device)
    return _memory_format.empty_like(input, memory_format, dtype, device, pin_memory, op, given)


def _filled_like(input, value, dtype, device, requires_grad, pin_memory, memory_format, op):
    t = _empty_like_input(input, dtype, device, pin_memory, memory_format, op)
    _C._fill_(t, value, bump_version=False)
    return _finish(t, requires_grad)


def empty_like(
    input, *, dtype=None, device=None, requires_grad=False, pin_memory=False, memory_format=None
):
    """An uninitialised tensor with ``input``'s size, dtype and device."""
    dt, dev = _like(input, dtype, device)
    t = _empty_like_input(input, dt, dev, pin_memory, memory_format, "empty_like")
    return _finish(t, requires_grad)


def zeros_like(
    input, *, dtype=None, device=None, requires_grad=False, pin_memory=False, memory_format=None
):
    """Zeros with ``input``'s size, dtype and device."""
    dt, dev = _like(input, dtype, device)
    return _filled_like(input, 0, dt, dev, requires_grad, pin_memory, memory_format, "zeros_like")


def ones_like(
    input, *, dtype=None, device=None, requires_grad=False, pin_memory=False, memory_format=None
):
    """Ones with ``input``'s size, dtype and device."""
    dt, dev = _like(input, dtype, device)
    return _filled_like(input, 1, dt, dev, requires_grad, pin_memory, memory_format, "ones_like")


def full_like(
    input,
    fill_value,
    *,
    dtype=None,
    device=None,
    requires_grad=False,
    pin_memory=False,
    memory_format=None,
):
    """``fill_value`` with ``input``'s size, dtype and device."""
    dt, dev = _like(input, dtype, device)
    fmt = memory_format
    return _filled_like(input, fill_value, dt, dev, requires_grad, pin_memory, fmt, "full_like")
