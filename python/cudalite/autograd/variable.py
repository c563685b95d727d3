"""The legacy ``Variable`` constructor (torch/autograd/variable.py and
python_legacy_variable.cpp): every tensor is a Variable, and ``Variable(t)`` returns a new
leaf that shares ``t``'s memory, never ``t`` itself."""

from __future__ import annotations

import operator
import warnings

from cudalite import _C

__all__ = ["Variable"]

_ARGS = ("data", "requires_grad", "volatile", "_grad_fn", "name")
_VOLATILE_MSG = "volatile was removed and now has no effect. Use `with torch.no_grad():` instead."


def _tp_name(obj):
    """CPython's ``tp_name``: 'numpy.ndarray' for a static C type, 'Foo' for a class."""
    t = type(obj)
    heap = t.__flags__ & (1 << 9)  # Py_TPFLAGS_HEAPTYPE
    if heap or t.__module__ == "builtins":
        return t.__name__
    return f"{t.__module__}.{t.__name__}"


def _byte(value):
    """PyArg's 'b' converter (an unsigned char), as the C constructor reads its flags."""
    v = operator.index(value)
    if v > (1 << 63) - 1 or v < -(1 << 63):
        raise OverflowError("Python int too large to convert to C long")
    if v < 0:
        raise OverflowError("unsigned byte integer is less than minimum")
    if v > 255:
        raise OverflowError("unsigned byte integer is greater than maximum")
    return bool(v)


def _parse(args, kwargs):
    if len(args) + len(kwargs) > len(_ARGS):
        raise TypeError(
            f"function takes at most {len(_ARGS)} arguments ({len(args) + len(kwargs)} given)"
        )
    values = dict(zip(_ARGS, args, strict=False))
    for key, value in kwargs.items():
        if key not in _ARGS:
            raise TypeError(f"'{key}' is an invalid keyword argument for this function")
        if key in values:
            raise TypeError(
                f"argument for function given by name ('{key}') and position "
                f"({_ARGS.index(key) + 1})"
            )
        values[key] = value
    # converted in argument order, as PyArg_ParseTupleAndKeywords does
    if "requires_grad" in values:
        values["requires_grad"] = _byte(values["requires_grad"])
    if "volatile" in values:
        values["volatile"] = _byte(values["volatile"])
    name = values.get("name")
    if name is not None and not isinstance(name, str):
        raise TypeError(f"argument 5 must be str or None, not {_tp_name(name)}")
    return values


class _VariableMeta(type):
    def __instancecheck__(cls, other):
        return isinstance(other, _C.Tensor)


class Variable(metaclass=_VariableMeta):
    """``Variable(data=None, requires_grad=False, volatile=False)``: a new leaf tensor that
    shares ``data``'s memory (``data.detach().requires_grad_(requires_grad)``); ``data``
    itself is left alone. Every tensor is an instance of Variable."""

    def __new__(cls, *args, **kwargs):
        values = _parse(args, kwargs)
        data = values.get("data")
        requires_grad = values.get("requires_grad", False)
        grad_fn = values.get("_grad_fn")
        if values.get("volatile", False):
            warnings.warn(_VOLATILE_MSG, UserWarning, stacklevel=2)
            if requires_grad:
                raise ValueError("Variable can't be volatile and require_grad at the same time!")
        if grad_fn is not None:
            from cudalite.autograd.function import _FunctionNode

            if not isinstance(grad_fn, _FunctionNode):
                raise TypeError(
                    f"_grad_fn has to be a Function object or None, but got {_tp_name(grad_fn)}"
                )
        if data is None:
            # legacy serialization and Parameter() build an empty tensor
            out = _C._empty([0], _C.get_default_dtype(), "cpu", False)
        elif isinstance(data, _C.Tensor):
            out = data.detach()
            if type(out) is not _C.Tensor:  # a Parameter's detach is a plain Tensor
                out = _C.Tensor._alias(out)
        else:
            raise TypeError(f"Variable data has to be a tensor, but got {_tp_name(data)}")
        if grad_fn is not None:
            raise RuntimeError(
                "_grad_fn argument to legacy Variable constructor is no longer supported.  "
                "Instead, please invoke your _grad_fn to produce a variable with it as the "
                "_grad_fn."
            )
        if requires_grad:
            if not out.dtype.is_floating_point:
                raise RuntimeError(
                    "Only Tensors of floating point and complex dtype can require gradients"
                )
            out.requires_grad_(True)
        return out
