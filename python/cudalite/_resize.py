"""``Tensor.resize_`` and ``resize_as_``: new sizes on the same storage, which grows in place
when it is too small (csrc/core/resize.h), so that views of it see the new memory.

The out= arguments of the ops resize through the same core function (``_C.Tensor._resize_``),
without the argument and autograd checks made here.
"""

from __future__ import annotations

from cudalite import _memory_format as _mf
from cudalite._C import Tensor
from cudalite._creation import _size
from cudalite._tensor import method

__all__ = ["resize_as_"]

_MISSING = object()


def _missing(name, arg):
    return TypeError(f'{name}() missing 1 required positional arguments: "{arg}"')


def _check_grad(t):
    # torch refuses even under no_grad, and even for sizes that change nothing.
    if t.requires_grad:
        raise RuntimeError("cannot resize variables that require grad")


def _contiguous_strides(shape):
    strides, step = [0] * len(shape), 1
    for d in range(len(shape) - 1, -1, -1):
        strides[d] = step
        step *= max(shape[d], 1)
    return strides


def _restride(t, fmt):
    """torch's empty_tensor_restride: the strides of ``fmt`` for t's sizes (checked after the
    resize, as torch does, which leaves t resized when the format is refused)."""
    if fmt is _mf.preserve_format:
        raise RuntimeError("Unsupported memory formatPreserve")
    shape = list(t.shape)
    if fmt is _mf.contiguous_format:
        strides = _contiguous_strides(shape)
    else:
        _mf._rank_check(shape, fmt)
        strides = _mf._channels_last_strides(shape, _mf._CHANNELS_LAST[fmt][1])
    # (torch leaves the storage as it is here; cudalite also grows it when the new strides
    # reach past it, as for an expanded tensor given contiguous strides.)
    Tensor._resize_(t, shape, strides)


def _sizes(args, size):
    if size is _MISSING:
        if not args:
            raise _missing("resize_", "size")
        if len(args) > 1 and isinstance(args[0], (tuple, list)):
            raise TypeError(f"resize_() takes 1 positional argument but {len(args)} were given")
        return _size(args, "resize_")
    if args:
        raise TypeError("resize_() got multiple values for argument 'size'")
    if not isinstance(size, (tuple, list)):
        raise TypeError(
            f"resize_(): argument 'size' must be tuple of ints, not {type(size).__name__}"
        )
    return _size((size,), "resize_")


@method
def resize_(self, *args, size=_MISSING, memory_format=None):
    """Gives ``self`` the sizes ``size`` with contiguous strides (those of ``memory_format``
    when given), keeping its storage and storage offset; the storage grows (new elements are
    uninitialized) when it is too small, and never shrinks. Returns ``self``."""
    shape = _sizes(args, size)
    if memory_format is not None:
        _mf._check(memory_format, "resize_")
    _check_grad(self)
    Tensor._resize_(self, shape, None, True)
    if memory_format is not None:
        _restride(self, memory_format)
    return self


@method(name="resize_as_")
def _resize_as_method(self, *args, memory_format=None, **kwargs):
    """Resizes ``self`` to the sizes of ``the_template`` (``resize_``); with ``memory_format``
    also gives it that format's strides (preserve_format: the template's format)."""
    template = kwargs.pop("the_template", _MISSING)
    if template is _MISSING and not args:
        raise _missing("resize_as_", "the_template")
    if kwargs:
        raise TypeError(f"resize_as_() got an unexpected keyword argument '{next(iter(kwargs))}'")
    if template is not _MISSING and args:
        raise TypeError("resize_as_() got multiple values for argument 'the_template'")
    if len(args) > 1:
        raise TypeError(f"resize_as_() takes 1 positional argument but {len(args)} were given")
    template = args[0] if args else template
    if not isinstance(template, Tensor):
        raise TypeError(
            "resize_as_(): argument 'the_template' (position 1) must be Tensor, not "
            f"{type(template).__name__}"
        )
    if memory_format is not None:
        _mf._check(memory_format, "resize_as_")
    _check_grad(self)
    Tensor._resize_(self, list(template.shape), None, True)
    if memory_format is not None:
        if memory_format is _mf.preserve_format:
            memory_format = _mf.suggest(template)
        _restride(self, memory_format)
    return self


def resize_as_(input, the_template, *, memory_format=None):
    """``input.resize_as_(the_template, memory_format=...)``."""
    return input.resize_as_(the_template, memory_format=memory_format)


@method
def resize(self, *sizes):
    """Deprecated: ``self``'s elements with new sizes of the same number of elements (a view
    when ``self`` is contiguous); use ``reshape``."""
    import functools
    import operator
    import warnings

    warnings.warn("non-inplace resize is deprecated", UserWarning, stacklevel=2)
    numel = functools.reduce(operator.mul, sizes, 1)
    if self.numel() != numel:
        raise RuntimeError(
            f"requested resize to {'x'.join(map(str, sizes))} ({numel} elements in total), but "
            f"the given tensor has a size of {'x'.join(map(str, self.shape))} ({self.numel()} "
            "elements). autograd's resize can only change the shape of a given tensor, while "
            "preserving the number of elements. "
        )
    return self.contiguous().view(*sizes)


@method
def resize_as(self, tensor):
    """Deprecated: ``resize`` to ``tensor``'s sizes."""
    import warnings

    warnings.warn("non-inplace resize_as is deprecated", UserWarning, stacklevel=2)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return self.resize(*tensor.shape)
