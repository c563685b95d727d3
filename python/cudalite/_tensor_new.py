"""Tensor.new_empty / new_zeros / new_ones / new_full / new_tensor: torch's factories that
default to self's dtype and device, installed on ``Tensor`` by ``_tensor.install``."""

from __future__ import annotations

import warnings

from cudalite import _C, _creation
from cudalite._C import Tensor
from cudalite._tensor import _methods, method


def _new(name, factory):
    def fn(self, *args, dtype=None, device=None, requires_grad=False, **kw):
        if "size" in kw:
            if args:
                raise TypeError(f"{name}() got multiple values for argument 'size'")
            args = (kw.pop("size"),)
        if not args:
            if name == "new_full":  # (torch's wording)
                raise TypeError(
                    'new_full() missing 2 required positional argument: "size", "fill_value"'
                )
            raise TypeError(f'{name}() missing 1 required positional arguments: "size"')
        if name == "new_full" and len(args) < 2 and "fill_value" not in kw:
            raise TypeError('new_full() missing 1 required positional arguments: "fill_value"')
        return factory(
            *args,
            dtype=dtype or self.dtype,
            device=device or self.device,
            requires_grad=requires_grad,
            **kw,
        )

    fn.__name__ = name
    fn.__doc__ = f"Like ``cudalite.{name[4:]}`` with self's dtype and device by default."
    return fn


_methods["new_empty"] = _new("new_empty", _creation.empty)


def _new_zeros(*size, dtype=None, device=None, requires_grad=False):
    # Not cudalite.zeros: torch's new_zeros reports negative sizes like empty, not like zeros.
    return _creation._filled(_creation._size(size, "new_zeros"), 0, dtype, device, requires_grad)


_methods["new_zeros"] = _new("new_zeros", _new_zeros)
_methods["new_ones"] = _new("new_ones", _creation.ones)
_methods["new_full"] = _new("new_full", _creation.full)


@method
def new_tensor(self, data, dtype=None, device=None, requires_grad=False):
    """A new tensor from ``data`` with self's dtype and device by default."""
    if isinstance(data, Tensor):
        warnings.warn(
            "To copy construct from a tensor, it is recommended to use sourceTensor.detach()."
            "clone() or sourceTensor.detach().clone().requires_grad_(True), rather than "
            "tensor.new_tensor(sourceTensor).",
            UserWarning,
            stacklevel=2,
        )
        t = _C._to(data.detach(), device or self.device, dtype or self.dtype, False, True)
        return _creation._finish(t, requires_grad)
    return _creation.tensor(
        data, dtype=dtype or self.dtype, device=device or self.device, requires_grad=requires_grad
    )
