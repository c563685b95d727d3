"""Wires autograd into cudalite at import: Tensor's autograd methods (backward, hooks,
requires_grad), and wrappers around the differentiable top-level functions.

Everything else waits for the first tensor that requires grad (Note [Arming] in
_wrappers.py): then ``_arm.arm`` loads the backward formulas, swaps recording methods into
Tensor and connects the C++ arithmetic dunders. A process that never uses autograd imports
none of it.
"""

from __future__ import annotations

import warnings
import weakref

from cudalite import _C, _ops, _tensor
from cudalite._C import Tensor
from cudalite.autograd import _wrappers as W
from cudalite.autograd import engine, graph
from cudalite.autograd.graph import RemovableHandle, set_requires_grad
from cudalite.autograd.variable import _tp_name

U, B = _ops.UNARY, _ops.BINARY

# ---- autograd methods of Tensor ----


def _backward(self, gradient=None, retain_graph=None, create_graph=False, inputs=None):
    """Accumulates the gradient of this tensor into the leaves of its graph."""
    engine.backward(self, gradient, retain_graph, create_graph, inputs=inputs)


def _register_hook(self, hook):
    """Registers ``hook(grad)``, run when this tensor's gradient is computed."""
    if not self._requires_grad_flag:
        raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
    fn = self.grad_fn
    if fn is not None:
        return fn._add_pre(self._output_nr, hook)
    lst = self.__dict__.setdefault("_hooks", [])
    lst.append(hook)
    return RemovableHandle(lst, hook)


def _register_post_accumulate_grad_hook(self, hook):
    """Registers ``hook(tensor)``, run after the gradient is accumulated into this leaf."""
    if not self._requires_grad_flag:
        raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
    if self.grad_fn is not None:
        raise RuntimeError("post accumulate grad hooks cannot be registered on non-leaf tensors")
    lst = self.__dict__.setdefault("_post_acc_hooks", [])
    lst.append(hook)
    return RemovableHandle(lst, hook)


_register_post_accumulate_grad_hook.__name__ = "register_post_accumulate_grad_hook"
_register_post_accumulate_grad_hook.__qualname__ = "register_post_accumulate_grad_hook"


def _retain_grad(self):
    """Keeps ``.grad`` for this non-leaf tensor after backward."""
    if not self._requires_grad_flag:
        raise RuntimeError("can't retain_grad on Tensor that has requires_grad=False")
    fn = self.grad_fn
    if fn is None or self.__dict__.get("_retains"):
        return
    ref = weakref.ref(self)

    def keep(g):
        t = ref()
        if t is None:
            return
        old = t.__dict__.get("grad")
        t.__dict__["grad"] = g._clone() if old is None else old + g

    fn._add_pre(("retain", self._output_nr), keep)
    self.__dict__["_retains"] = True


def _set_requires_grad(self, value):
    _tensor._set_requires_grad(self, value)
    if _keep_view_rg(self):
        return
    self.__dict__["_rg"] = bool(value)
    if value:
        graph.ARM[0]()


def _keep_view_rg(self):
    """A view made in no_grad mode of a tensor that requires grad keeps requiring grad (torch
    derives it from the base)."""
    if "_nograd_view" in self.__dict__:
        self._requires_grad_flag = True
        return True
    return False


def _requires_grad_(self, requires_grad=True):
    """Sets ``requires_grad`` in place and returns self."""
    _tensor._methods["requires_grad_"](self, requires_grad)  # validates, with torch's text
    if _keep_view_rg(self):
        return self
    self.__dict__["_rg"] = bool(requires_grad)
    if requires_grad:
        graph.ARM[0]()
    return self


_PRIVATE = (
    "_acc",
    "_hooks",
    "_post_acc_hooks",
    "_retains",
    "_base_",
    "_multi_view",
    "_view_fn",
    "_attr_version",
)


def _copy(self):
    """A shallow copy shares the storage (and the graph position), not the hooks or the
    leaf's gradient accumulator."""
    out = self._alias()
    out.__dict__.update({k: v for k, v in self.__dict__.items() if k not in _PRIVATE})
    if "_view_fn" in self.__dict__:  # a view's node, as it is now (Note [View grad_fn])
        out.__dict__["grad_fn"] = self.grad_fn
    out._requires_grad_flag = self._requires_grad_flag
    return out


def _detach_(self):
    """Removes self from the autograd graph in place (views refuse, as in torch: any view,
    recorded by autograd or not, see Tensor._base)."""
    d = self.__dict__
    if self._is_view():
        raise RuntimeError(_tensor.DETACH_VIEW_MSG)
    for k in ("grad_fn", "_output_nr", "_view_of_leaf", "_base_", "_multi_view"):
        d.pop(k, None)
    set_requires_grad(self, False)
    return self


# ---- .grad: torch's checks on assignment, and its warning for a non-leaf's .grad ----

_NONLEAF_GRAD_MSG = (
    "The .grad attribute of a Tensor that is not a leaf Tensor is being accessed. Its .grad "
    "attribute won't be populated during autograd.backward(). If you indeed want the .grad "
    "field to be populated for a non-leaf Tensor, use .retain_grad() on the non-leaf Tensor. "
    "If you access the non-leaf Tensor by mistake, make sure you access the leaf Tensor "
    "instead. See github.com/pytorch/pytorch/pull/30531 for more information."
)

# dtype -> (C++ type name, ScalarType name): torch's message prints both spellings
_DTYPE_NAMES = {
    "float32": ("float", "Float"),
    "float64": ("double", "Double"),
    "float16": ("c10::Half", "Half"),
    "bfloat16": ("c10::BFloat16", "BFloat16"),
    "bool": ("bool", "Bool"),
    "int8": ("signed char", "Char"),
    "uint8": ("unsigned char", "Byte"),
    "int16": ("short int", "Short"),
    "int32": ("int", "Int"),
    "int64": ("long int", "Long"),
}


def _dtype_names(dtype):
    key = str(dtype).rpartition(".")[2]
    return _DTYPE_NAMES.get(key, (key, key))


def _get_grad(self):
    d = self.__dict__
    g = d.get("grad")
    if g is None and self.grad_fn is not None and not d.get("_retains"):
        warnings.warn(_NONLEAF_GRAD_MSG, UserWarning, stacklevel=2)
    return g


def _set_grad(self, grad):
    if grad is not None:
        _check_grad(self, grad)
    self.__dict__["grad"] = grad


def _del_grad(self):
    self.__dict__["grad"] = None


def _check_grad(var, grad):
    if not isinstance(grad, Tensor):
        raise TypeError(
            f"assigned grad expected to be a Tensor or None but got grad of type {_tp_name(grad)}"
        )
    if grad is var:
        raise RuntimeError("can't assign Variable as its own grad")
    if grad.dtype != var.dtype:
        raise RuntimeError(
            f"attempting to assign a gradient with dtype '{_dtype_names(grad.dtype)[0]}' to a "
            f"tensor with grad_dtype '{_dtype_names(var.dtype)[1]}'. The gradient must match "
            "the tensor's grad_dtype (defaults to the tensor's dtype). You can set the tensor's "
            "grad_dtype attribute with a specific dtype, or None to allow any dtype. Set "
            "grad_dtype with caution. Diverging the dtypes of a tensor and its gradient may "
            "break downstream systems that assume they match."
        )
    gd, vd = grad.device, var.device
    if gd.type != vd.type:
        raise RuntimeError(
            f"attempting to assign a gradient with device type '{gd.type}' to a tensor with "
            f"device type '{vd.type}'. Please ensure that the gradient and the tensor are on "
            "the same device"
        )
    if grad.get_device() != var.get_device():
        raise RuntimeError(
            "attempting to assign a gradient located on device with index "
            f"'{grad.get_device()}' to a tensor located on device with index "
            f"'{var.get_device()}'. Please ensure that the gradient and the tensor are on the "
            "same device"
        )
    if tuple(grad.shape) != tuple(var.shape):
        raise RuntimeError(
            f"attempting to assign a gradient of size '{list(grad.shape)}' to a tensor of size "
            f"'{list(var.shape)}'. Please ensure that the gradient and the tensor are the same "
            "size"
        )


def _deepcopy(self, memo):
    import copy

    if self.grad_fn is not None:
        raise RuntimeError(
            "Only Tensors created explicitly by the user (graph leaves) support the deepcopy "
            "protocol at the moment."
        )
    out = _C._to(self, None, None, False, True) if type(self) is Tensor else self._clone()
    out.__dict__.update(
        copy.deepcopy({k: v for k, v in self.__dict__.items() if k not in _PRIVATE}, memo)
    )
    if self._requires_grad_flag:
        set_requires_grad(out, True)
    return out


FUNCTION_WRAPPERS = {}  # name -> the box holding the wrapper's recorder (filled by arm())


def _wrap_function(g, name, factory):
    box = [None]

    def first(*args, **kwargs):
        # A recorded call implies a tensor that requires grad, so arming has normally
        # replaced this already.
        arm()
        return box[0](*args, **kwargs)

    box[0] = first
    f = factory(g[name], box)
    f.__name__ = f.__qualname__ = name
    f.__doc__ = getattr(g[name], "__doc__", None)
    f.__wrapped__ = g[name]
    FUNCTION_WRAPPERS[name] = box
    g[name] = f


def arm():
    """Installs the recording Tensor methods and recorders (once)."""
    from cudalite.autograd import _arm

    _arm.arm()


def _positive(self):
    """torch.positive returns its input (bool tensors excepted, as in torch)."""
    if self.dtype == _C.bool:
        raise RuntimeError("The `+` operator, on a bool tensor is not supported.")
    return self


def _broadcast_to(self, *size):
    """``self.expand(*size)``."""
    return self.expand(*size)


_positive.__name__ = _positive.__qualname__ = "positive"
_broadcast_to.__name__ = _broadcast_to.__qualname__ = "broadcast_to"


def _softmax(input, dim, dtype=None):
    from cudalite.autograd.functions import nn

    return nn.softmax(input, dim, dtype)


def _log_softmax(input, dim, dtype=None):
    from cudalite.autograd.functions import nn

    return nn.log_softmax(input, dim, dtype)


def install(g):
    """Wires autograd into Tensor and the ``cudalite`` namespace ``g`` (its globals)."""
    T = Tensor
    T._rg = False
    T._output_nr = 0
    T.requires_grad = property(_tensor._get_requires_grad, _set_requires_grad)
    T.requires_grad_ = _requires_grad_
    T.detach_ = _detach_
    T.grad = property(_get_grad, _set_grad, _del_grad)
    T.backward = _backward
    T.register_hook = _register_hook
    T.register_post_accumulate_grad_hook = _register_post_accumulate_grad_hook
    T.retain_grad = _retain_grad
    T.retains_grad = property(lambda self: bool(self.__dict__.get("_retains")))
    T.__deepcopy__ = _deepcopy
    T.__copy__ = _copy
    T.output_nr = property(lambda self: self._output_nr)
    T.__pos__ = T.positive = _positive
    T.broadcast_to = _broadcast_to
    T.softmax = _softmax
    T.log_softmax = _log_softmax
    g["softmax"] = _softmax
    g["log_softmax"] = _log_softmax
    for name, factory in W.FUNCTIONS.items():
        _wrap_function(g, name, factory)
    for alias, target in W.FUNCTION_ALIASES.items():
        g[alias] = g[target]
    g["concat"] = g["concatenate"] = g["cat"]
    graph.ARM[0] = arm
