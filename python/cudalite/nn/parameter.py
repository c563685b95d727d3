"""``nn.Parameter``: a tensor that a Module registers as one of its parameters."""

from __future__ import annotations

from collections import OrderedDict

from cudalite import _C, _utils
from cudalite._C import Tensor

__all__ = ["Parameter", "UninitializedParameter"]


class Parameter(Tensor):
    """A leaf tensor that requires grad (by default) and is registered by ``Module`` when
    assigned as an attribute. It shares its storage with ``data``."""

    def __init__(self, data=None, requires_grad=True):
        Tensor.__init__(self)
        if data is None:
            data = _C._empty([0], _C.get_default_dtype(), "cpu", False)
        # Re-point this tensor at data's memory (the legacy constructor made an empty one):
        # torch's Parameter aliases data the same way.
        dt = data.dtype
        if requires_grad and not (dt.is_floating_point or getattr(dt, "is_complex", False)):
            # torch's message here (Tensor._make_subclass) differs from requires_grad_'s
            raise RuntimeError(
                "Only Tensors of floating point and complex dtype can require gradients"
            )
        self._set_metadata(data)
        self.requires_grad_(requires_grad)

    def __repr__(self):
        return "Parameter containing:\n" + Tensor.__repr__(self)

    __str__ = __repr__

    def __deepcopy__(self, memo):
        if id(self) in memo:
            return memo[id(self)]
        result = Parameter(self.detach()._clone(), self.requires_grad)
        memo[id(self)] = result
        return result

    def __reduce_ex__(self, protocol):
        # As torch's: the data, the flag, (never saved) backward hooks, and attributes if any.
        state = _utils._get_obj_state(self)
        if not state:
            return (_utils._rebuild_parameter, (self.detach(), self.requires_grad, OrderedDict()))
        return (
            _utils._rebuild_parameter_with_state,
            (self.detach(), self.requires_grad, OrderedDict(), state),
        )


class UninitializedParameter(Parameter):
    """A parameter whose shape is not known yet (``nn.LazyLinear``'s before its first call):
    it holds no data until ``materialize(shape)``, which turns it, in place, into a
    ``Parameter`` of that shape on its device and dtype."""

    cls_to_become = Parameter

    def __init__(self, requires_grad=True, device=None, dtype=None):
        data = _C._empty([0], dtype or _C.get_default_dtype(), device or "cpu", False)
        super().__init__(data, requires_grad)

    def materialize(self, shape, device=None, dtype=None):
        """Gives this parameter uninitialised memory of ``shape`` and makes it a Parameter."""
        device = device or self.device
        dtype = dtype or self.dtype
        if isinstance(shape, int):
            shape = (shape,)
        self._set_metadata(_C._empty(list(shape), dtype, device, False))
        self.__class__ = self.cls_to_become

    def __repr__(self):
        return "<UninitializedParameter>"

    __str__ = __repr__

    def __deepcopy__(self, memo):
        if id(self) in memo:
            return memo[id(self)]
        result = type(self)(self.requires_grad, self.device, self.dtype)
        memo[id(self)] = result
        return result


def _register_reducer():
    """cudalite.multiprocessing, when loaded before this module, registered its tensor reducer
    for the classes it knew: Parameters go through it too (shared, not copied)."""
    import sys

    reductions = sys.modules.get("cudalite.multiprocessing.reductions")
    if reductions is not None:
        reductions.init_reductions()


_register_reducer()
