"""Random tensors: rand, randn, randint, randperm, normal, bernoulli, multinomial and the
*_like forms, with torch's bounds checks (_random_bounds.py; generator= everywhere; the
streams are torch's: docs/random.md)."""

from __future__ import annotations

from cudalite import _C
from cudalite._C import Tensor
from cudalite._creation import (
    _NO_FORMAT,
    _check_out,
    _empty_like_input,
    _finish,
    _like,
    _no_format,
    _resize_out,
    _size,
    _write_out,
)
from cudalite._random_bounds import check_random_bounds
from cudalite.autograd.function import Function as _Function
from cudalite.random import _check_generator

__all__ = [
    "rand",
    "randn",
    "randint",
    "rand_like",
    "randn_like",
    "randint_like",
    "randperm",
    "normal",
    "bernoulli",
    "multinomial",
]


def _random(size, dtype, device, fill, requires_grad, pin_memory=False, out=None):
    """``fill(t, bump_version)`` draws into ``out`` (a write that counts) or a new tensor."""
    if out is not None:
        _resize_out(out, size)
        fill(out, True)  # (out has the dtype checked by _check_out)
        return _finish(out, requires_grad)
    t = _C._empty(size, dtype or _C.get_default_dtype(), device, pin_memory)
    fill(t, False)
    return _finish(t, requires_grad)


def _distribution(name, draw, doc):
    """rand / randn: ``draw(t, generator)`` fills a new tensor (or ``out``)."""

    def fn(
        *size,
        generator=None,
        out=None,
        dtype=None,
        device=None,
        requires_grad=False,
        pin_memory=False,
        memory_format=_NO_FORMAT,
    ):
        if memory_format is not _NO_FORMAT:
            raise _no_format(name, size, memory_format, out=out, dtype=dtype)
        shape = _size(size, name)
        if out is not None:
            _check_out(out, name, size, dtype, device)
        gen = _check_generator(generator, name)
        return _random(
            shape, dtype, device, lambda t, bump: draw(t, gen, bump), requires_grad, pin_memory, out
        )

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = doc
    return fn


rand = _distribution(
    "rand",
    lambda t, g, bump: _C._uniform_(t, 0.0, 1.0, g, bump),
    "Uniform random numbers in [0, 1).",
)
randn = _distribution(
    "randn",
    lambda t, g, bump: _C._normal_(t, 0.0, 1.0, g, bump),
    "Standard normal random numbers.",
)


def randint(
    *args,
    size=None,
    low=None,
    high=None,
    generator=None,
    out=None,
    dtype=None,
    device=None,
    requires_grad=False,
    pin_memory=False,
    memory_format=_NO_FORMAT,
):
    """Random integers in [low, high): ``randint(high, size)`` or ``randint(low, high, size)``."""
    from cudalite import int64

    if memory_format is not _NO_FORMAT:
        raise _no_format("randint", args, memory_format, out=out, dtype=dtype)

    if out is not None:
        dtype = _check_out(out, "randint", args, dtype, device)
        device = out.device
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
    if out is not None:
        lo, hi_inc = check_random_bounds(out.dtype, int(low), int(high))
        _resize_out(out, shape)
        t = out
    else:
        t = _C._empty(shape, dtype or int64, device, pin_memory)
        lo, hi_inc = check_random_bounds(t.dtype, int(low), int(high))
    gen = _check_generator(generator, "randint")
    _C._random_int_(t, lo, hi_inc, gen, out is not None)
    return _finish(t, requires_grad)


def rand_like(
    input, *, dtype=None, device=None, requires_grad=False, pin_memory=False, memory_format=None
):
    """Uniform random numbers with ``input``'s size, dtype and device."""
    dt, dev = _like(input, dtype, device)
    t = _empty_like_input(input, dt, dev, pin_memory, memory_format, "rand_like", ())
    _C._uniform_(t, 0.0, 1.0, None, False)
    return _finish(t, requires_grad)


def randn_like(
    input, *, dtype=None, device=None, requires_grad=False, pin_memory=False, memory_format=None
):
    """Normal random numbers with ``input``'s size, dtype and device."""
    dt, dev = _like(input, dtype, device)
    t = _empty_like_input(input, dt, dev, pin_memory, memory_format, "randn_like", ())
    _C._normal_(t, 0.0, 1.0, None, False)
    return _finish(t, requires_grad)


def randint_like(
    input,
    low=0,
    high=None,
    *,
    dtype=None,
    device=None,
    requires_grad=False,
    pin_memory=False,
    memory_format=None,
):
    """Random integers with ``input``'s size, dtype and device, laid out like ``input``
    (preserve_format) or as ``memory_format`` asks."""
    given = (low,) if high is None else (low, high)
    if not all(hasattr(v, "__index__") for v in given):
        got = ", ".join(["Tensor"] + [type(v).__name__ for v in given])
        raise TypeError(
            f"randint_like() received an invalid combination of arguments - got ({got}), but "
            "expected one of:"
        )
    if high is None:
        low, high = 0, low
    dt, dev = _like(input, dtype, device)
    fmt = memory_format
    t = _empty_like_input(input, dt, dev, pin_memory, fmt, "randint_like", given)
    lo, hi_inc = check_random_bounds(t.dtype, int(low), int(high))
    _C._random_int_(t, lo, hi_inc, None, False)
    return _finish(t, requires_grad)


def randperm(
    n, *, generator=None, out=None, dtype=None, device=None, requires_grad=False, pin_memory=False
):
    """A random permutation of 0..n-1, drawn as torch draws it: on the CPU torch's swaps with
    32-bit draws (64-bit inside-out shuffle from n = 2^32 / 20 on)."""
    from cudalite import int64

    if out is not None:
        dtype = _check_out(out, "randperm", (n,), dtype, device)
        p = randperm(n, generator=generator, dtype=dtype, device=out.device)
        return _write_out(out, p, requires_grad)
    gen = _check_generator(generator, "randperm")
    if dtype == _C.bool:
        raise NotImplementedError("\"randperm\" not implemented for 'Bool'")
    perm = _C._empty([n], int64, device, False)
    _C._randperm_(perm, n, gen)
    t = perm if dtype in (None, int64) else _C._to(perm, perm.device, dtype, False, False)
    return _finish(t, requires_grad, pin_memory)


def normal(mean, std, size=None, *, generator=None, dtype=None, device=None):
    """Normal random numbers with the given mean and std (numbers, or tensors broadcast
    together), drawn as torch draws them: N(0, std) plus a tensor mean, or N(0, 1) times a
    tensor std plus the mean, in the dtype of the tensor mean (else of std)."""
    if isinstance(mean, Tensor) or isinstance(std, Tensor):
        if size is not None:  # a size only with numbers: torch's TypeError (Argument errors)
            raise TypeError("normal takes a size only with a float mean and std")
        return _Normal.apply(mean, std, _check_generator(generator, "normal"))
    shape = _size((size,), "normal", pos=3, sequence_only=True)
    t = _C._empty(shape, dtype or _C.get_default_dtype(), device, False)
    _C._normal_(t, float(mean), float(std), _check_generator(generator, "normal"), False)
    return t


def _normal_tensors(mean, std, gen):
    """torch's normal_out_impl for a tensor mean and/or std."""
    if isinstance(std, Tensor):
        if std.numel() and not bool((std >= 0).all()):
            raise RuntimeError("normal expects all elements of std >= 0.0")
        ref = mean if isinstance(mean, Tensor) else std
        shape = _C._broadcast_shapes(mean.shape, std.shape) if ref is mean else std.shape
        out = _C._empty(list(shape), ref.dtype, ref.device, False)
        _C._normal_(out, 0.0, 1.0, gen, False)
        steps = (std, mean)  # out.mul_(std).add_(mean)
    else:
        out = _C._empty(list(mean.shape), mean.dtype, mean.device, False)
        _C._normal_(out, 0.0, float(std), gen, False)
        steps = (None, mean)  # out.add_(mean)
    mul, add = steps
    if mul is not None:
        out = out * mul
        if out.dtype != ref.dtype:
            out = out.to(ref.dtype)
    out = out + add
    if out.dtype != (mean.dtype if isinstance(mean, Tensor) else std.dtype):
        out = out.to(mean.dtype if isinstance(mean, Tensor) else std.dtype)
    return out


class _Normal(_Function):
    """normal with tensor arguments: not reparameterised, so (as in torch) the gradients of
    mean and std are zero."""

    @staticmethod
    def forward(ctx, mean, std, gen):
        ctx.like = [a if isinstance(a, Tensor) else None for a in (mean, std)]
        return _normal_tensors(mean, std, gen)

    @staticmethod
    def backward(ctx, grad):
        from cudalite import zeros_like

        return (*(None if a is None else zeros_like(a) for a in ctx.like), None)


_Normal.__name__ = "Normal"  # grad_fn: NormalBackward (torch: NormalBackward1 to 3)


def bernoulli(input, p=None, *, generator=None, out=None):
    """0 or 1 with probability ``input`` per element (or ``p`` for every element), in
    ``input``'s dtype."""
    gen = _check_generator(generator, "bernoulli")
    t = _C._empty(list(input.shape), input.dtype, input.device, False) if out is None else out
    if p is None:
        _C._bernoulli_tensor_(t, input, gen, out is not None)
    else:
        _C._bernoulli_scalar_(t, float(p), gen, out is not None)
    return t


def multinomial(input, num_samples, replacement=False, *, generator=None, out=None):
    """Indices drawn from the rows of ``input`` as (unnormalised) probabilities: with
    replacement by torch's inverse-CDF search, without by its exponential race (Gumbel top-k)."""
    if isinstance(num_samples, bool) or not hasattr(num_samples, "__index__"):
        raise TypeError(
            "multinomial(): argument 'num_samples' (position 2) must be int, not "
            f"{type(num_samples).__name__}"
        )
    gen = _check_generator(generator, "multinomial")
    if out is not None and out.dtype != _C.int64:
        raise RuntimeError(f"multinomial expects Long tensor out, got: {out.dtype._short_name}")
    r = _C._multinomial(input, int(num_samples), bool(replacement), gen)
    if out is None:
        return r
    _resize_out(out, list(r.shape))
    out.copy_(r)
    return out
