"""``autograd.Function``: user-defined ops with a hand-written backward, as in torch.

class Exp(Function):
    @staticmethod
    def forward(ctx, x):
        y = x.exp()
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, grad):
        (y,) = ctx.saved_tensors
        return grad * y

y = Exp.apply(x)          # y.grad_fn is an ExpBackward node
"""

from __future__ import annotations

import weakref

from cudalite import _C
from cudalite._C import Tensor
from cudalite.autograd import saved as _saved
from cudalite.autograd.graph import FREED_MSG, Node, edge, mark

__all__ = ["Function", "FunctionCtx"]


class FunctionCtx:
    """What ``forward`` and ``backward`` share: saved tensors and flags. As in torch, the
    versions of the saved tensors are taken when ``forward`` returns and checked when
    ``saved_tensors`` is read."""

    def save_for_backward(self, *tensors):
        self._saved = tensors

    @property
    def saved_tensors(self):
        d = self.__dict__
        saved = d.get("_saved", ())
        if saved is None:
            raise RuntimeError(FREED_MSG)
        vers = d.get("_vers")
        if vers is not None:
            for t, (v, nr) in zip(saved, vers, strict=True):
                if v is not None and t._version != v:
                    node = d["_node"]() if nr is not None else None
                    raise RuntimeError(_saved.modified_msg(t, v, node, nr or 0))
        return saved

    def _capture(self, node, outs):
        """Records the version of each saved tensor, and which output it is (torch's message
        names the node for those)."""
        out_nr = {id(o): i for i, o in enumerate(outs) if isinstance(o, Tensor)}
        self._vers = [
            (t._version, out_nr.get(id(t))) if isinstance(t, Tensor) else (None, None)
            for t in self.__dict__.get("_saved", ())
        ]
        self._node = weakref.ref(node)

    def mark_non_differentiable(self, *tensors):
        self._non_diff = {id(t) for t in tensors}

    def mark_dirty(self, *tensors):
        self._dirty = tensors

    def set_materialize_grads(self, value):
        self.materialize_grads = value


class _FunctionNode(Node):
    """The backward node of one ``Function.apply`` call."""

    __slots__ = ("ctx", "fn", "_n", "shapes")
    _saved = ("ctx",)

    @property
    def _multi(self):
        return self._n > 1

    def apply(self, grads):
        grads = list(grads) if self._n > 1 else [grads]
        if getattr(self.ctx, "materialize_grads", True):
            for i, g in enumerate(grads):
                if g is None:
                    shape, dtype, device = self.shapes[i]
                    grads[i] = _C._full(list(shape), 0, dtype, device)
        out = self.fn.backward(self.ctx, *grads)
        if not isinstance(out, tuple):
            out = (out,)
        n = len(self._next)
        if len(out) < n:
            raise RuntimeError(
                f"function {type(self).__name__} returned an incorrect number of gradients "
                f"(expected {n}, got {len(out)})"
            )
        return tuple(out[:n])

    def _release(self):
        self.ctx._saved = None
        self._released = True


_node_types = {}


def _node_type(cls):
    t = _node_types.get(cls)
    if t is None:
        t = _node_types[cls] = type(cls.__name__ + "Backward", (_FunctionNode,), {"__slots__": ()})
    return t


class Function:
    """Base class of ops with a custom backward: subclass with static ``forward(ctx, ...)``
    and ``backward(ctx, *grads)``, call ``YourFn.apply(...)``."""

    @staticmethod
    def forward(ctx, *args, **kwargs):
        raise NotImplementedError(
            "You must implement the forward function for custom autograd.Function."
        )

    @staticmethod
    def backward(ctx, *grad_outputs):
        raise NotImplementedError(
            "You must implement either the backward or vjp method for your custom "
            "autograd.Function to use it with backward mode AD."
        )

    @classmethod
    def apply(cls, *args, **kwargs):
        ctx = FunctionCtx()
        record = _C._is_grad_enabled() and any(isinstance(a, Tensor) and a._rg for a in args)
        ctx.needs_input_grad = tuple(isinstance(a, Tensor) and a._rg for a in args)
        prev = _C._is_grad_enabled()
        _C._set_grad_enabled(False)
        try:
            out = cls.forward(ctx, *args, **kwargs)
        finally:
            _C._set_grad_enabled(prev)
        for t in getattr(ctx, "_dirty", ()):
            t._bump_version()  # torch's mark_dirty counts as a write (saved copies are stale)
        if not record:
            return out
        outs = out if isinstance(out, tuple) else (out,)
        node = _node_type(cls)(tuple(edge(a) if isinstance(a, Tensor) else None for a in args))
        node.ctx, node.fn, node._n = ctx, cls, len(outs)
        node.shapes = [
            (o.shape, o.dtype, o.device) if isinstance(o, Tensor) else None for o in outs
        ]
        non_diff = getattr(ctx, "_non_diff", ())
        for i, o in enumerate(outs):
            if isinstance(o, Tensor) and id(o) not in non_diff and o.dtype.is_floating_point:
                if o.grad_fn is not None or any(o is a for a in args):
                    o = o._alias()  # an input returned as is: give the output its own object
                    outs = outs[:i] + (o,) + outs[i + 1 :]
                mark(o, node, i if len(outs) > 1 else None)
        ctx._capture(node, out if isinstance(out, tuple) else (out,))  # as forward returned them
        return outs if isinstance(out, tuple) else outs[0]
