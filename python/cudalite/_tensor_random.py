"""Tensor methods that fill a tensor with random numbers in place (normal_, uniform_,
random_, bernoulli_, exponential_) and draw from it (bernoulli, multinomial), from the default
generator of the tensor's device or ``generator=``."""

from __future__ import annotations

from cudalite import _C, _random_bounds
from cudalite._tensor import method
from cudalite.random import _check_generator


@method
def normal_(self, mean=0.0, std=1.0, *, generator=None):
    """Fills self with normal random numbers."""
    _C._normal_(self, float(mean), float(std), _check_generator(generator, "normal_"))
    return self


@method
def uniform_(self, from_=0.0, to=1.0, *, generator=None):
    """Fills self with uniform random numbers in [from_, to)."""
    _C._uniform_(self, float(from_), float(to), _check_generator(generator, "uniform_"))
    return self


_NO_ARG = object()


def _random_arg_error(args):
    got = ", ".join(type(a).__name__ for a in args)
    return TypeError(
        f"random_() received an invalid combination of arguments - got ({got}), but expected "
        "one of:"
    )


@method
def random_(self, from_=_NO_ARG, to=_NO_ARG, *, generator=None):
    """Fills self with random integers: ``random_()`` over the dtype's values (integers up
    to 2^digits for floating dtypes), ``random_(to)`` in [0, to), ``random_(from, to)`` in
    [from, to), ``random_(from, None)`` from ``from`` up to the default maximum."""
    given = [a for a in (from_, to) if a is not _NO_ARG]
    if from_ is _NO_ARG and to is not _NO_ARG:
        from_, to = 0, to  # random_(to=n)
    elif from_ is not _NO_ARG and to is _NO_ARG:
        from_, to = 0, from_  # random_(n): n is the upper bound
    for i, a in enumerate(given):
        if not (hasattr(a, "__index__") or (a is None and i == 1)):
            raise _random_arg_error(given)
    gen = _check_generator(generator, "random_")
    if not given:
        _C._random_default_(self, _random_bounds.random_max(self.dtype), gen)
        return self
    if to is None:
        lo, hi_inc = _random_bounds.random_from_bounds(self.dtype, int(from_), self.device.type)
    else:
        lo, hi_inc = _random_bounds.check_random_bounds(self.dtype, int(from_), int(to))
    _C._random_int_(self, lo, hi_inc, gen)  # [lo, hi_inc]: any int64 range, exactly
    return self


@method
def bernoulli_(self, p=0.5, *, generator=None):
    """Fills self with 0 or 1: 1 with probability ``p`` (a number, or a tensor broadcast to
    self)."""
    from cudalite import Tensor

    gen = _check_generator(generator, "bernoulli_")
    if isinstance(p, Tensor):
        _C._bernoulli_tensor_(self, p, gen)
    else:
        _C._bernoulli_scalar_(self, float(p), gen)
    return self


@method
def bernoulli(self, p=None, *, generator=None):
    """0 or 1 per element, with probability self (or ``p``)."""
    from cudalite._creation_random import bernoulli as _bernoulli

    return _bernoulli(self, p, generator=generator)


@method
def exponential_(self, lambd=1.0, *, generator=None):
    """Fills self with exponential random numbers of rate ``lambd``."""
    if not self.dtype.is_floating_point:
        raise RuntimeError(
            "Exponential distribution is a continuous probability distribution. dtype must be "
            f"a floating point but you specified {self.dtype._short_name}"
        )
    if not lambd > 0.0:
        raise RuntimeError(f"exponential_ expects lambda > 0.0, but found lambda={lambd:g}")
    _C._exponential_(self, float(lambd), _check_generator(generator, "exponential_"))
    return self


@method
def multinomial(self, num_samples, replacement=False, *, generator=None):
    """Indices drawn from the rows of self as probabilities (``cudalite.multinomial``)."""
    from cudalite._creation_random import multinomial as _multinomial

    return _multinomial(self, num_samples, replacement, generator=generator)
