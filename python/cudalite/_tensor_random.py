"""Tensor methods that fill a tensor with random numbers in place (normal_, uniform_,
random_), drawn from the default generator of the tensor's device or ``generator=``."""

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
        lo, hi_inc = 0, _random_bounds.random_max(self.dtype)
    elif to is None:
        lo, hi_inc = _random_bounds.random_from_bounds(self.dtype, int(from_), self.device.type)
    else:
        lo, hi_inc = _random_bounds.check_random_bounds(self.dtype, int(from_), int(to))
    _C._random_int_(self, lo, hi_inc, gen)  # [lo, hi_inc]: any int64 range, exactly
    return self
