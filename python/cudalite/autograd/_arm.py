"""Arming (Note [Arming] in _wrappers.py): run once, when the first tensor of the process is
made to require grad. Loads the backward formulas, fills the recording slots of Tensor's
methods (Note [Recording slots] in csrc/bindings/bind_checked.cpp: no method is replaced),
points the top-level wrappers at their recorders and connects the C++ arithmetic dunders."""

from __future__ import annotations

import functools
import threading

from cudalite import _C, _checked, _ops, _tensor, _tensor_math
from cudalite._C import Tensor
from cudalite.autograd import _install
from cudalite.autograd import _wrappers as W
from cudalite.autograd.functions import _common
from cudalite.autograd.functions import index_ops as ixo
from cudalite.autograd.functions import indexing as ix
from cudalite.autograd.functions import linalg as la
from cudalite.autograd.functions import pointwise as pw
from cudalite.autograd.functions import reduce as rd
from cudalite.autograd.functions import scatter_reduce as srd
from cudalite.autograd.functions import sorting as so
from cudalite.autograd.functions import views as vw
from cudalite.autograd.functions import views_strided as vs
from cudalite.autograd.functions import where as wh

_gm = _C._is_grad_enabled
U, B = _ops.UNARY, _ops.BINARY
_done = []  # arming has started (in the thread that holds _lock)
_ready = []  # arming has finished
_lock = threading.RLock()


def _name(f, orig):
    f.__name__ = getattr(orig, "__name__", f.__name__)
    f.__qualname__ = f.__name__
    f.__doc__ = getattr(orig, "__doc__", None)
    return f


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


def _raw(fn):
    """The function inside a method's entry (``_C._Checked``): what a recorder calls when it
    does not record, since the entry itself would hand the call back to the recorder."""
    return fn.__wrapped__ if isinstance(fn, _C._Checked) else fn


def _orig(name):
    """What the recorder of ``Tensor.<name>`` calls when it does not record: for the C++ fast
    methods (add_, sum, cuda, ...), their Python slow method; else the method's function."""
    fn = _tensor._slow_methods.get(name) or _C.Tensor.__dict__.get(name)
    return None if fn is None else _raw(fn)


def _binary_method(name, opname):
    """``x.mul(y)`` / ``x.mul_(y)``: the foundation's method unless recording (argument
    errors are the foundation's either way); ``f_`` is None for ops without an in-place form."""
    rec = pw.BINARY_RECORDERS[opname]
    orig, orig_ = _orig(name), _orig(name + "_")
    check = _ops.check_args

    def f(self, other):
        if (self._rg or (isinstance(other, Tensor) and other._rg)) and _gm():
            check(name, self, other, True)
            return rec(self, other)
        return orig(self, other)

    def f_(self, other):
        if (self._rg or (isinstance(other, Tensor) and other._rg)) and _gm():
            check(name + "_", self, other, True)
            return pw.binary_(opname, self, other)
        return orig_(self, other)

    f.__name__, f_.__name__ = name, name + "_"
    return f, (f_ if orig_ is not None else None)


def _kw_method(name, opname):
    """add/sub (``alpha``) and div (``rounding_mode``)."""
    rec = pw.BINARY_RECORDERS[opname]
    orig, orig_ = _orig(name), _orig(name + "_")
    check = _ops.check_args

    def f(self, other, **kwargs):
        if (self._rg or (isinstance(other, Tensor) and other._rg)) and _gm():
            check(name, self, other, True)
            return rec(self, other, **kwargs)
        return orig(self, other, **kwargs)

    def f_(self, other, **kwargs):
        if (self._rg or (isinstance(other, Tensor) and other._rg)) and _gm():
            check(name + "_", self, other, True)
            return pw.binary_(opname, self, other, **kwargs)
        return orig_(self, other, **kwargs)

    f.__name__, f_.__name__ = name, name + "_"
    return f, f_


def _t_method(orig):
    transpose = vw._orig["transpose"]

    def t(self):
        if self._rg:
            if _gm():
                return vw.t(self)
            return vw.nograd_view(orig(self), self)
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


def _method_recorders():
    return {
        "view": vw.view,
        "reshape": vw.reshape,
        "permute": vw.permute,
        "transpose": vw.transpose,
        "swapaxes": vw.transpose,
        "expand": vw.expand,
        "squeeze": vw.squeeze,
        "unsqueeze": vw.unsqueeze,
        "flatten": vw.flatten,
        "select": vw.select,
        "as_strided": vw.as_strided,
        "diagonal": vs.diagonal,
        "unfold": vs.unfold,
        "movedim": vs.movedim,
        "moveaxis": vs.moveaxis,
        "contiguous": vw.contiguous,
        "narrow": vw.narrow,
        "clone": vw.clone,
        "unbind": ix.unbind,
        "split": ix.split,
        "chunk": ix.chunk,
        "repeat": ix.repeat,
        "flip": ix.flip,
        "index_select": ix.index_select,
        "__getitem__": ix.getitem,
        "__setitem__": ix.setitem,
        "index_put_": ix.index_put_,
        "masked_fill": ix.masked_fill,
        "masked_fill_": ix.masked_fill_,
        "copy_": vw.copy_,
        "where": lambda self, condition, other: wh.where(condition, self, other),
        "clamp": wh.clamp,
        "clamp_": wh.clamp_,
        "lerp": wh.lerp,
        "max": rd.max,
        "min": rd.min,
        "matmul": la.matmul,
        "mm": la.mm,
        "bmm": la.bmm,
        "mv": la.mv,
        "dot": la.dot,
        "addmm": la.addmm,
        "__matmul__": lambda s, o: la.matmul(s, o) if isinstance(o, Tensor) else NotImplemented,
        "__rmatmul__": lambda s, o: la.matmul(o, s) if isinstance(o, Tensor) else NotImplemented,
        "fill_": wh.fill_like(pw.FillBackward2, _tensor._methods["fill_"]),
        "zero_": wh.fill_like(pw.ZeroBackward0, _tensor._methods["zero_"]),
        "uniform_": wh.fill_like(pw.UniformBackward0, _tensor._methods["uniform_"]),
        "normal_": wh.fill_like(pw.NormalBackward0, _tensor._methods["normal_"]),
        "random_": wh.fill_like(pw.RandomBackward0, _tensor._methods["random_"]),
        # ---- random fills: bernoulli_, exponential_ ----
        "bernoulli_": lambda self, p=0.5, **kw: wh.fill_like(
            pw.BernoulliBackward1 if isinstance(p, Tensor) else pw.BernoulliBackward2,
            _tensor._methods["bernoulli_"],
        )(self, p, **kw),
        "exponential_": wh.fill_like(pw.ExponentialBackward0, _tensor._methods["exponential_"]),
        **{n: getattr(rd, n) for n in ("sum", "mean", "prod", "amax", "amin", "std", "var")},
        "norm": rd.norm,
        "t_": vw.inplace_view(vw.t, "t_"),
        "transpose_": vw.inplace_view(vw.transpose, "transpose_"),
        "swapdims_": vw.inplace_view(
            lambda s, dim0, dim1: vw.transpose(s, dim0, dim1), "swapdims_"
        ),
        "swapaxes_": vw.inplace_view(
            lambda s, axis0, axis1: vw.transpose(s, axis0, axis1), "swapaxes_"
        ),
        "squeeze_": vw.inplace_view(vw.squeeze, "squeeze_"),
        "unsqueeze_": vw.inplace_view(vw.unsqueeze, "unsqueeze_"),
        **{n: vw.cast_method(n) for n in ("to", "cuda", "cpu", "float", "double", "half")},
        "bfloat16": vw.cast_method("bfloat16"),
        "type": vw.cast_method("type"),
        **_sorting_recorders(),
        "logit_": pw.logit_,
        # ---- gather/scatter, scans, triangles, roll ----
        **ixo.RECORDERS,
        # ---- scatter_reduce (prod) ----
        **srd.RECORDERS,
    }


def _sorting_recorders():
    """sort, msort, topk, kthvalue, logsumexp and logit: methods and functions alike."""
    return {
        **{n: getattr(so, n) for n in ("sort", "msort", "topk", "kthvalue")},
        "logsumexp": rd.logsumexp,
        "logit": pw.logit,
    }


def _function_recorders():
    return {
        "add": pw.add,
        "sub": pw.sub,
        "div": pw.div,
        "where": wh.where,
        "clamp": wh.clamp,
        "lerp": wh.lerp,
        "std_mean": rd.std_mean,
        "var_mean": rd.var_mean,
        **{n: getattr(rd, n) for n in ("sum", "mean", "prod", "amax", "amin", "std", "var")},
        **{n: getattr(rd, n) for n in ("norm", "max", "min")},
        **{n: getattr(la, n) for n in ("matmul", "mm", "bmm", "mv", "dot", "addmm")},
        **_sorting_recorders(),
    }


def _function_recorder(name):
    if name in pw.UNARY_NODES or name == "square":
        return functools.partial(pw.unary_out, name)
    if name in W.BINARY_FUNCTIONS:
        base = pw.BINARY_RECORDERS[W.BINARY_FUNCTIONS[name]]

        def rec(input, other, *, out=None):
            _ops.check_args(name, input, other)  # the foundation's argument errors
            return base(input, other, out=out)

        return rec
    if name in ("cat", "stack"):
        return getattr(ix, name)
    return _function_recorders()[name]


def arm():
    """Arms once. Another thread that asks while arming is under way waits for it to finish
    (it would otherwise record nothing); the arming thread's own nested calls return."""
    if _ready:
        return
    with _lock:
        if _done:
            return
        _done.append(True)
        _arm()
        _ready.append(True)


def _arm():
    for name in ("view", "reshape", "permute", "transpose", "swapaxes", "expand", "squeeze"):
        vw._orig[name] = _orig(name)
    for name in ("unsqueeze", "flatten", "select", "as_strided", "contiguous", "t", "copy_"):
        vw._orig[name] = _orig(name)
    for name in ("index_select", "masked_fill", "unbind", "split", "chunk", "repeat", "flip"):
        vw._orig[name] = _orig(name)
    vw._orig["t_"] = _orig("t_")
    for name in ("to", "cuda", "cpu", "float", "double", "half", "bfloat16", "type"):
        vw._orig[name] = _orig(name)
    _common.RAW.update(vw._orig)

    armed = {"t": _t_method(_orig("t"))}
    for name in _tensor_math._UNARY:
        if name in pw.UNARY_NODES or name == "square":
            armed[name], armed[name + "_"] = _unary_method(name)
    for name, opname in W.BINARY_FUNCTIONS.items():
        armed[name], f_ = _binary_method(name, opname)
        if f_ is not None:
            armed[name + "_"] = f_
    armed["add"], armed["add_"] = _kw_method("add", "add")
    armed["sub"], armed["sub_"] = _kw_method("sub", "sub")
    armed["div"], armed["div_"] = _kw_method("div", "div")
    for name, rec in _method_recorders().items():
        orig = _orig(name)
        ngv = vw.nograd_view if name in W.VIEW_METHODS else None
        if name in W.HOT_METHODS:
            params, args, cond = W.METHODS[name]
            armed[name] = W.gen(name, orig, rec, params, args, cond, ngv=ngv)
        elif ngv is not None:
            armed[name] = W.generic_view(name, orig, rec, ngv)
        else:
            armed[name] = W.generic(name, orig, rec)
    for alias, target in W.METHOD_ALIASES.items():
        armed[alias] = armed[target]
        if target + "_" in armed and not alias.startswith("_"):
            armed[alias + "_"] = armed[target + "_"]
    # Every method keeps its place on the class (Note [Recording slots]): its entry hands
    # the calls whose tensors require grad to the recorder put in its slot here.
    for name, fn in armed.items():
        _checked.recording_slot(name)._set_recorder(fn)
    for name, box in _install.FUNCTION_WRAPPERS.items():
        box[0] = _function_recorder(name)
    _C._set_autograd_hook(_hook)
