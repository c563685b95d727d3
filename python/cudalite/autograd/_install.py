"""Puts the recorder in front of every differentiable entry point.

Each wrapper costs one check when nothing requires grad: ``t._rg`` (a dict lookup, see
Note [The _rg mirror] in graph.py) for each tensor argument, and only when one is set, the
grad-mode flag. Methods that were one-line Python functions are rebuilt with the check inline
rather than wrapped, so they keep a single Python frame. The arithmetic dunders stay in C++
and call ``_hook`` only when an operand requires grad in grad mode.
"""

from __future__ import annotations

import weakref

import cudalite
from cudalite import _C, _ops, _tensor, _tensor_math
from cudalite._C import Tensor
from cudalite.autograd import engine
from cudalite.autograd.functions import indexing as ix
from cudalite.autograd.functions import linalg as la
from cudalite.autograd.functions import nn as nnf
from cudalite.autograd.functions import pointwise as pw
from cudalite.autograd.functions import reduce as rd
from cudalite.autograd.functions import views as vw
from cudalite.autograd.functions import _common
from cudalite.autograd.functions._common import no_out
from cudalite.autograd.graph import RemovableHandle, set_requires_grad

_gm = _C._is_grad_enabled
U, B = _ops.UNARY, _ops.BINARY


def _name(f, orig):
    f.__name__ = getattr(orig, "__name__", f.__name__)
    f.__qualname__ = f.__name__
    f.__doc__ = getattr(orig, "__doc__", None)
    return f


def method(orig, rec):
    """A Tensor method differentiable in ``self`` only."""

    def f(self, *args, **kwargs):
        if self._rg and _gm():
            return rec(self, *args, **kwargs)
        return orig(self, *args, **kwargs)

    return _name(f, orig)


def func(orig, rec):
    """A function differentiable in its first argument only."""

    def f(input, *args, **kwargs):
        if isinstance(input, Tensor) and input._rg and _gm():
            return rec(input, *args, **kwargs)
        return orig(input, *args, **kwargs)

    return _name(f, orig)


def anyarg(orig, rec):
    """A function or method differentiable in any tensor argument."""

    def f(*args, **kwargs):
        for a in args:
            if isinstance(a, Tensor) and a._rg:
                if _gm():
                    return rec(*args, **kwargs)
                break
        else:
            for a in kwargs.values():
                if isinstance(a, Tensor) and a._rg and _gm():
                    return rec(*args, **kwargs)
        return orig(*args, **kwargs)

    return _name(f, orig)


def seqarg(orig, rec):
    """cat / stack: differentiable in the tensors of the first argument."""

    def f(tensors, *args, **kwargs):
        if _gm():
            for t in tensors:
                if isinstance(t, Tensor) and t._rg:
                    return rec(tensors, *args, **kwargs)
        return orig(tensors, *args, **kwargs)

    return _name(f, orig)


# ---- elementwise, rebuilt with the check inline ----


def _unary_method(name):
    op = U[name]

    def f(self):
        if self._rg and _gm():
            return pw.unary(name, self)
        return _C._unary(op, self, None)

    def f_(self):
        if self._rg and _gm():
            return pw.unary_(name, self)
        return _C._unary(op, self, self)

    f.__name__, f_.__name__ = name, name + "_"
    return f, f_


def _unary_func(name, orig):
    op = U[name]

    def f(input, *, out=None):
        if isinstance(input, Tensor) and input._rg and _gm():
            no_out(out, name)
            return pw.unary(name, input)
        return _C._unary(op, input, out)

    return _name(f, orig)


def _binary_method(name, opname):
    rec = pw.BINARY_RECORDERS[opname]
    op = B[opname]

    def f(self, other):
        if (self._rg or (isinstance(other, Tensor) and other._rg)) and _gm():
            return rec(self, other)
        return _C._binary(op, self, other, None)

    def f_(self, other):
        if (self._rg or (isinstance(other, Tensor) and other._rg)) and _gm():
            return pw.binary_(opname, self, other)
        return _C._binary(op, self, other, self)

    f.__name__, f_.__name__ = name, name + "_"
    return f, f_


def _binary_func(name, opname, orig):
    rec = pw.BINARY_RECORDERS[opname]
    op = B[opname]

    def f(input, other, *, out=None):
        if (
            (isinstance(input, Tensor) and input._rg) or (isinstance(other, Tensor) and other._rg)
        ) and _gm():
            no_out(out, name)
            return rec(input, other)
        return _C._binary(op, input, other, out)

    return _name(f, orig)


def _alpha_method(opname):
    orig = getattr(_ops, opname)
    rec = pw.BINARY_RECORDERS[opname]

    def f(self, other, *, alpha=1):
        if (self._rg or (isinstance(other, Tensor) and other._rg)) and _gm():
            return rec(self, other, alpha=alpha)
        return orig(self, other, alpha=alpha)

    def f_(self, other, *, alpha=1):
        if (self._rg or (isinstance(other, Tensor) and other._rg)) and _gm():
            return pw.binary_(opname, self, other, alpha=alpha)
        return orig(self, other, alpha=alpha, out=self)

    f.__name__, f_.__name__ = opname, opname + "_"
    return f, f_


def _div_method():
    def f(self, other, *, rounding_mode=None):
        if (self._rg or (isinstance(other, Tensor) and other._rg)) and _gm():
            return pw.div(self, other, rounding_mode=rounding_mode)
        return _ops.div(self, other, rounding_mode=rounding_mode)

    def f_(self, other, *, rounding_mode=None):
        if (self._rg or (isinstance(other, Tensor) and other._rg)) and _gm():
            return pw.binary_("div", self, other, rounding_mode=rounding_mode)
        return _ops.div(self, other, rounding_mode=rounding_mode, out=self)

    f.__name__, f_.__name__ = "div", "div_"
    return f, f_


def _t_method(orig):
    transpose = vw._orig["transpose"]

    def t(self):
        if self._rg and _gm():
            return vw.t(self)
        if self.dim() == 2:
            return transpose(self, 0, 1)
        return orig(self)

    return _name(t, orig)


def _hook(op, kind, self, other):
    """Called by the C++ arithmetic dunders when an operand requires grad in grad mode."""
    if kind == "fwd":
        return pw.unary("neg", self) if op == "neg" else pw.binary(op, self, other)
    if kind == "rev":
        return pw.binary_rev(op, other, self)
    return pw.binary_(op, self, other)


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
    if self.grad_fn is not None:
        raise RuntimeError(
            "post accumulate grad hooks cannot be registered on non-leaf tensors"
        )
    lst = self.__dict__.setdefault("_post_acc_hooks", [])
    lst.append(hook)
    return RemovableHandle(lst, hook)


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
        old = t.grad
        t.grad = g._clone() if old is None else old + g

    fn._add_pre(("retain", self._output_nr), keep)
    self.__dict__["_retains"] = True


def _set_requires_grad(self, value):
    _tensor._set_requires_grad(self, value)
    self.__dict__["_rg"] = bool(value)


def _requires_grad_(self, requires_grad=True):
    """Sets ``requires_grad`` in place and returns self."""
    _set_requires_grad(self, requires_grad)
    return self


def _detach_(self):
    """Removes self from the autograd graph in place."""
    d = self.__dict__
    for k in ("grad_fn", "_output_nr", "_view_of_leaf"):
        d.pop(k, None)
    set_requires_grad(self, False)
    return self


def _deepcopy(self, memo):
    import copy

    if self.grad_fn is not None:
        raise RuntimeError(
            "Only Tensors created explicitly by the user (graph leaves) support the deepcopy "
            "protocol at the moment."
        )
    out = _C._to(self, None, None, False, True) if type(self) is Tensor else self._clone()
    skip = ("_acc", "_hooks", "_post_acc_hooks")
    out.__dict__.update(
        copy.deepcopy({k: v for k, v in self.__dict__.items() if k not in skip}, memo)
    )
    if self._requires_grad_flag:
        set_requires_grad(out, True)
    return out


def install():
    """Wires autograd into Tensor and the ``cudalite`` namespace."""
    T = Tensor
    g = cudalite.__dict__
    for name in ("view", "reshape", "permute", "transpose", "swapaxes", "expand", "squeeze"):
        vw._orig[name] = getattr(T, name)
    for name in ("unsqueeze", "flatten", "select", "as_strided", "contiguous", "t", "copy_"):
        vw._orig[name] = getattr(T, name)
    for name in ("index_select", "masked_fill", "unbind", "split", "chunk", "repeat", "flip"):
        vw._orig[name] = getattr(T, name)
    _common.RAW.update(vw._orig)

    T._rg = False
    T._output_nr = 0
    T.requires_grad = property(_tensor._get_requires_grad, _set_requires_grad)
    T.requires_grad_ = _requires_grad_
    T.detach_ = _detach_
    T.backward = _backward
    T.register_hook = _register_hook
    T.register_post_accumulate_grad_hook = _register_post_accumulate_grad_hook
    T.retain_grad = _retain_grad
    T.retains_grad = property(lambda self: bool(self.__dict__.get("_retains")))
    T.__deepcopy__ = _deepcopy
    T.output_nr = property(lambda self: self._output_nr)

    # elementwise
    for name in _tensor_math._UNARY:
        if name in pw.UNARY_NODES or name == "square":
            f, f_ = _unary_method(name)
            setattr(T, name, f)
            setattr(T, name + "_", f_)
            g[name] = _unary_func(name, g[name])
    for alias, target in (("negative", "neg"), ("absolute", "abs")):
        setattr(T, alias, getattr(T, target))
        setattr(T, alias + "_", getattr(T, target + "_"))
        g[alias] = g[target]
    T.__abs__ = T.abs
    T.__pos__ = T.positive = lambda self: self  # torch.positive returns its input
    T.broadcast_to = lambda self, size: self.expand(*size)
    for name, opname in (
        ("mul", "mul"),
        ("true_divide", "div"),
        ("pow", "pow"),
        ("maximum", "maximum"),
        ("minimum", "minimum"),
        ("atan2", "atan2"),
        ("remainder", "remainder"),
        ("floor_divide", "floor_divide"),
    ):
        f, f_ = _binary_method(name, opname)
        setattr(T, name, f)
        setattr(T, name + "_", f_)
        g[name] = _binary_func(name, opname, g[name])
    T.multiply, T.multiply_ = T.mul, T.mul_
    g["multiply"] = g["mul"]
    T.add, T.add_ = _alpha_method("add")
    T.sub, T.sub_ = _alpha_method("sub")
    T.subtract, T.subtract_ = T.sub, T.sub_
    T.div, T.div_ = _div_method()
    T.divide, T.divide_ = T.div, T.div_
    for name, rec in (("add", pw.add), ("sub", pw.sub), ("div", pw.div)):
        g[name] = anyarg(g[name], rec)
    g["subtract"], g["divide"] = g["sub"], g["div"]
    g["where"] = anyarg(g["where"], pw.where)
    T.where = anyarg(T.where, lambda self, condition, other: pw.where(condition, self, other))
    g["clamp"] = g["clip"] = anyarg(g["clamp"], pw.clamp)
    T.clamp = T.clip = anyarg(T.clamp, pw.clamp)
    T.clamp_ = T.clip_ = anyarg(T.clamp_, pw.clamp_)
    g["lerp"] = anyarg(g["lerp"], pw.lerp)
    T.lerp = anyarg(T.lerp, pw.lerp)
    T.fill_ = method(T.fill_, pw.fill_like(pw.FillBackward2, _tensor._methods["fill_"]))
    T.zero_ = method(T.zero_, pw.fill_like(pw.ZeroBackward0, _tensor._methods["zero_"]))
    T.uniform_ = method(T.uniform_, pw.fill_like(pw.UniformBackward0, T.uniform_))
    T.normal_ = method(T.normal_, pw.fill_like(pw.NormalBackward0, T.normal_))
    T.random_ = method(T.random_, pw.fill_like(pw.RandomBackward0, T.random_))

    # reductions
    for name in ("sum", "mean", "prod", "amax", "amin", "std", "var", "norm"):
        rec = getattr(rd, name)
        setattr(T, name, method(getattr(T, name), rec))
        g[name] = func(g[name], rec)
    for name in ("max", "min"):
        rec = getattr(rd, name)
        setattr(T, name, anyarg(getattr(T, name), rec))
        g[name] = anyarg(g[name], rec)
    g["std_mean"] = func(g["std_mean"], rd.std_mean)
    g["var_mean"] = func(g["var_mean"], rd.var_mean)

    # matrix products
    for name in ("matmul", "mm", "bmm", "mv", "dot", "addmm"):
        rec = getattr(la, name)
        setattr(T, name, anyarg(getattr(T, name), rec))
        g[name] = anyarg(g[name], rec)
    T.__matmul__ = anyarg(T.__matmul__, la.matmul)
    T.__rmatmul__ = anyarg(T.__rmatmul__, la.rmatmul)

    # views, copies, casts
    for name, rec in (
        ("view", vw.view),
        ("reshape", vw.reshape),
        ("permute", vw.permute),
        ("transpose", vw.transpose),
        ("swapaxes", vw.transpose),
        ("expand", vw.expand),
        ("squeeze", vw.squeeze),
        ("unsqueeze", vw.unsqueeze),
        ("flatten", vw.flatten),
        ("select", vw.select),
        ("as_strided", vw.as_strided),
        ("contiguous", vw.contiguous),
        ("narrow", vw.narrow),
        ("clone", vw.clone),
        ("unbind", ix.unbind),
        ("split", ix.split),
        ("chunk", ix.chunk),
        ("repeat", ix.repeat),
        ("flip", ix.flip),
        ("index_select", ix.index_select),
        ("__getitem__", ix.getitem),
    ):
        setattr(T, name, method(getattr(T, name), rec))
    for name in ("to", "cuda", "cpu", "float", "double", "half", "bfloat16", "type"):
        vw._orig[name] = _tensor._methods[name]
        setattr(T, name, method(getattr(T, name), vw.cast_method(name)))
    T.t = _t_method(T.t)
    T.__setitem__ = anyarg(T.__setitem__, ix.setitem)
    T.index_put_ = anyarg(T.index_put_, ix.index_put_)
    T.masked_fill = anyarg(T.masked_fill, ix.masked_fill)
    T.masked_fill_ = anyarg(T.masked_fill_, ix.masked_fill_)
    T.copy_ = anyarg(T.copy_, vw.copy_)
    g["cat"] = g["concat"] = g["concatenate"] = seqarg(g["cat"], ix.cat)
    g["stack"] = seqarg(g["stack"], ix.stack)

    # new ops that torch has as functions and methods
    T.softmax = lambda self, dim, dtype=None: nnf.softmax(self, dim, dtype)
    T.log_softmax = lambda self, dim, dtype=None: nnf.log_softmax(self, dim, dtype)
    g["softmax"] = nnf.softmax
    g["log_softmax"] = nnf.log_softmax

    _C._set_autograd_hook(_hook)
