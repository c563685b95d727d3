"""Tensor creation: ``tensor``, ``zeros``, ``arange``, ``rand`` and torch's other factories."""

from __future__ import annotations

import warnings

from cudalite import _C
from cudalite._C import Tensor
from cudalite._lazy import is_ndarray, numpy
from cudalite.random import _check_generator

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
    "rand",
    "randn",
    "randint",
    "rand_like",
    "randn_like",
    "randint_like",
    "randperm",
    "normal",
    "scalar_tensor",
]

from_numpy = _C.from_numpy


def _is_int(a):
    if isinstance(a, Tensor):
        return a.dim() == 0 and not a.dtype.is_floating_point and a.dtype != _C.bool
    return not isinstance(a, bool) and hasattr(a, "__index__")


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
        out.append(a.__index__())
    return out


def _finish(t, requires_grad, pin_memory=False):
    if pin_memory:
        # Made on the CPU, then copied into memory from the pinned allocator (whose errors
        # are torch's for pin_memory=True, and "Only dense CPU tensors can be pinned").
        out = _C._empty(list(t.shape), t.dtype, t.device, True)
        _C._copy_(out, t, False)
        t = out
    if requires_grad:
        if not t.dtype.is_floating_point:
            raise RuntimeError(
                "Only Tensors of floating point and complex dtype can require gradients"
            )
        t.requires_grad_(True)
    return t


def _from_ndarray(arr, dtype, device):
    # from_numpy refuses what torch.tensor refuses (negative strides, a non-native byte order);
    # the copy keeps the memory order of the array, as torch.tensor does.
    _C.from_numpy(arr)
    t = _C.from_numpy(numpy().array(arr, copy=True, order="K"))
    if dtype is not None or device is not None:
        t = _C._to(t, device, dtype, False, False)
    return t


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
        return _C._to(_C.from_numpy(data), device, dtype, False, False)
    return _C._tensor_from_data(data, dtype, device)


def scalar_tensor(s, *, dtype=None, device=None, requires_grad=False):
    """A 0-dim tensor holding ``s`` (default dtype unless given)."""
    return _finish(_C._full([], s, dtype or _C.get_default_dtype(), device), requires_grad)


def _empty(*size, dtype=None, device=None, requires_grad=False, pin_memory=False, out=None):
    """empty's general path: what _C.empty does not handle itself (Note [empty in one call])."""
    t = _C._empty(_size(size, "empty"), dtype, device, pin_memory)
    if out is not None:
        out._set_metadata(t)
        return out
    return _finish(t, requires_grad)


def _filled(shape, value, dtype, device, requires_grad, pin_memory=False):
    t = _C._full(shape, value, dtype or _C.get_default_dtype(), device)
    return _finish(t, requires_grad, pin_memory)


def _zeros(*size, dtype=None, device=None, requires_grad=False, pin_memory=False):
    shape = _size(size, "zeros")
    if shape and min(shape) < 0:
        raise RuntimeError("zeros: Dimension size must be non-negative.")
    return _filled(shape, 0, dtype, device, requires_grad, pin_memory)


def _ones(*size, dtype=None, device=None, requires_grad=False, pin_memory=False):
    return _filled(_size(size, "ones"), 1, dtype, device, requires_grad, pin_memory)


# empty, zeros and ones take their common calls in C (Note [empty in one call]) and hand the
# others to these general paths, named as the public functions in argument errors.
for _name, _slow in (("empty", _empty), ("zeros", _zeros), ("ones", _ones)):
    _slow.__name__ = _slow.__qualname__ = _name
    _C._set_factory_slow(_name, _slow)
empty, zeros, ones = _C.empty, _C.zeros, _C.ones


def full(size, fill_value, *, dtype=None, device=None, requires_grad=False, pin_memory=False):
    """A tensor filled with ``fill_value``; the dtype follows the value like torch."""
    if isinstance(fill_value, Tensor):
        fill_value = fill_value.item()
    shape = _size((size,), "full", sequence_only=True)
    return _finish(_C._full(shape, fill_value, dtype, device), requires_grad, pin_memory)


def _num(x):
    return x.item() if isinstance(x, Tensor) else x


def arange(
    start=0, end=None, step=1, *, dtype=None, device=None, requires_grad=False, pin_memory=False
):
    """Values from ``start`` to ``end`` (exclusive) spaced by ``step``."""
    from cudalite import get_default_dtype, int64

    start, end, step = _num(start), _num(end), _num(step)
    if end is None:
        start, end = 0, start
    if dtype is None:
        is_float = any(isinstance(v, float) for v in (start, end, step))
        dtype = get_default_dtype() if is_float else int64
    return _finish(_C._arange(start, end, step, dtype, device), requires_grad, pin_memory)


def linspace(start, end, steps, *, dtype=None, device=None, requires_grad=False, pin_memory=False):
    """``steps`` evenly spaced values from ``start`` to ``end`` inclusive."""
    from cudalite import get_default_dtype

    t = _C._linspace(_num(start), _num(end), steps, dtype or get_default_dtype(), device)
    return _finish(t, requires_grad, pin_memory)


def eye(n, m=None, *, dtype=None, device=None, requires_grad=False, pin_memory=False):
    """A 2-D tensor with ones on the diagonal."""
    from cudalite import get_default_dtype

    t = _C._eye(n, n if m is None else m, dtype or get_default_dtype(), device)
    return _finish(t, requires_grad, pin_memory)


def _like(t, dtype, device):
    return (t.dtype if dtype is None else dtype), (t.device if device is None else device)


def _empty_like_input(input, dtype, device, pin_memory):
    """Uninitialised, laid out like ``input`` (torch's preserve_format); pinned ones are
    contiguous."""
    if pin_memory:
        return _C._empty(list(input.shape), dtype, device, True)
    return _C._empty_like(input, dtype, device)


def _filled_like(input, value, dtype, device, requires_grad, pin_memory):
    t = _empty_like_input(input, dtype, device, pin_memory)
    _C._fill_(t, value)
    return _finish(t, requires_grad)


def empty_like(input, *, dtype=None, device=None, requires_grad=False, pin_memory=False):
    """An uninitialised tensor with ``input``'s size, dtype and device."""
    dt, dev = _like(input, dtype, device)
    return _finish(_empty_like_input(input, dt, dev, pin_memory), requires_grad)


def zeros_like(input, *, dtype=None, device=None, requires_grad=False, pin_memory=False):
    """Zeros with ``input``'s size, dtype and device."""
    return _filled_like(input, 0, *_like(input, dtype, device), requires_grad, pin_memory)


def ones_like(input, *, dtype=None, device=None, requires_grad=False, pin_memory=False):
    """Ones with ``input``'s size, dtype and device."""
    return _filled_like(input, 1, *_like(input, dtype, device), requires_grad, pin_memory)


def full_like(input, fill_value, *, dtype=None, device=None, requires_grad=False, pin_memory=False):
    """``fill_value`` with ``input``'s size, dtype and device."""
    dt, dev = _like(input, dtype, device)
    return _filled_like(input, fill_value, dt, dev, requires_grad, pin_memory)


def _random(size, dtype, device, fill, requires_grad, pin_memory=False):
    t = _C._empty(size, dtype or _C.get_default_dtype(), device, pin_memory)
    fill(t)
    return _finish(t, requires_grad)


def rand(*size, generator=None, dtype=None, device=None, requires_grad=False, pin_memory=False):
    """Uniform random numbers in [0, 1)."""
    return _random(
        _size(size, "rand"),
        dtype,
        device,
        lambda t: _C._uniform_(t, 0.0, 1.0, _check_generator(generator, "rand")),
        requires_grad,
        pin_memory,
    )


def randn(*size, generator=None, dtype=None, device=None, requires_grad=False, pin_memory=False):
    """Standard normal random numbers."""
    return _random(
        _size(size, "randn"),
        dtype,
        device,
        lambda t: _C._normal_(t, 0.0, 1.0, _check_generator(generator, "randn")),
        requires_grad,
        pin_memory,
    )


def randint(
    *args,
    size=None,
    low=None,
    high=None,
    generator=None,
    dtype=None,
    device=None,
    requires_grad=False,
    pin_memory=False,
):
    """Random integers in [low, high): ``randint(high, size)`` or ``randint(low, high, size)``."""
    from cudalite import int64

    args = list(args)
    if high is not None:
        args = [0 if low is None else low, high, *args]
    if size is None:
        if not args:
            raise TypeError("randint() missing required argument 'size'")
        size = args.pop()
    if len(args) == 1:
        low, high = 0, args[0]
        if not hasattr(high, "__index__"):
            raise TypeError(
                f"randint(): argument 'high' (position 1) must be int, not {type(high).__name__}"
            )
    elif len(args) == 2:
        low, high = args
        if not all(hasattr(v, "__index__") for v in args):
            got = ", ".join(type(v).__name__ for v in (*args, size))
            raise TypeError(
                f"randint() received an invalid combination of arguments - got "
                f"({got}), but expected one of:"
            )
    else:
        raise TypeError("randint() received an invalid combination of arguments")
    shape = _size((size,), "randint", pos=2, sequence_only=True)
    t = _C._empty(shape, dtype or int64, device, pin_memory)
    check_random_bounds(t.dtype, int(low), int(high))
    _C._random_int_(t, int(low), int(high), _check_generator(generator, "randint"))
    return _finish(t, requires_grad)


_INT_BOUNDS = {
    "uint8": (0, 255, "unsigned char"),
    "int8": (-128, 127, "signed char"),
    "int16": (-(2**15), 2**15 - 1, "short int"),
    "int32": (-(2**31), 2**31 - 1, "int"),
    "int64": (-(2**63), 2**63 - 1, "long int"),
    "bool": (0, 1, "bool"),
}


def check_random_bounds(dtype, low, high):
    """torch's random_(from, to) checks for integer dtypes."""
    if low >= high:
        raise RuntimeError(
            f"random_ expects 'from' to be less than 'to', but got from={low} >= to={high}"
        )
    if dtype._name in _INT_BOUNDS:
        lo, hi, cpp = _INT_BOUNDS[dtype._name]
        if not lo <= low <= hi:
            raise RuntimeError(f"from is out of bounds for {cpp}")
        if not lo <= high - 1 <= hi:
            raise RuntimeError(f"to - 1 is out of bounds for {cpp}")


def rand_like(input, *, dtype=None, device=None, requires_grad=False, pin_memory=False):
    """Uniform random numbers with ``input``'s size, dtype and device."""
    t = _empty_like_input(input, *_like(input, dtype, device), pin_memory)
    _C._uniform_(t, 0.0, 1.0)
    return _finish(t, requires_grad)


def randn_like(input, *, dtype=None, device=None, requires_grad=False, pin_memory=False):
    """Normal random numbers with ``input``'s size, dtype and device."""
    t = _empty_like_input(input, *_like(input, dtype, device), pin_memory)
    _C._normal_(t, 0.0, 1.0)
    return _finish(t, requires_grad)


def randint_like(
    input, low=0, high=None, *, dtype=None, device=None, requires_grad=False, pin_memory=False
):
    """Random integers with ``input``'s size, dtype and device."""
    if high is None:
        low, high = 0, low
    dt, dev = _like(input, dtype, device)
    return randint(
        low,
        high,
        list(input.shape),
        dtype=dt,
        device=dev,
        requires_grad=requires_grad,
        pin_memory=pin_memory,
    )


def randperm(n, *, generator=None, dtype=None, device=None, requires_grad=False, pin_memory=False):
    """A random permutation of 0..n-1: random keys drawn by the generator of the result's
    device, sorted on the host."""
    from cudalite import int64

    gen = _check_generator(generator, "randperm")
    keys = _C._empty([n], _C.float64, device, False)
    _C._uniform_(keys, 0.0, 1.0, gen)
    np = numpy()
    perm = np.argsort(_C._numpy(_C._to(keys, "cpu", None, False, False)), kind="stable")
    perm = perm.astype(np.int64)
    t = _C._to(_C.from_numpy(perm), device, dtype or int64, False, False)
    return _finish(t, requires_grad, pin_memory)


def normal(mean, std, size=None, *, generator=None, dtype=None, device=None):
    """Normal random numbers with the given mean and std (numbers) and size."""
    if isinstance(mean, Tensor) or isinstance(std, Tensor):
        m = mean if isinstance(mean, Tensor) else None
        s = std if isinstance(std, Tensor) else None
        ref = m if m is not None else s
        z = randn(list(ref.shape), dtype=ref.dtype, device=ref.device, generator=generator)
        return z * std + mean
    shape = _size((size,), "normal", pos=3, sequence_only=True)
    t = _C._empty(shape, dtype or _C.get_default_dtype(), device, False)
    _C._normal_(t, float(mean), float(std), _check_generator(generator, "normal"))
    return t
