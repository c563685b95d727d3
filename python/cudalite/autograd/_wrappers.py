"""Generated wrappers: the recorder in front of each differentiable entry point.

A wrapper has the exact signature of the function it wraps (generated from a one-line spec),
so the only cost it adds when nothing requires grad is one Python frame and the check
itself: ``t._rg`` (a dict lookup, see Note [The _rg mirror] in graph.py) for each tensor
argument, and the grad-mode flag only when one is set.

Note [Arming]
The recorders are built only when the first tensor of the process is made to require grad
(``arm`` in _arm.py), so ``import cudalite`` loads no backward formula. Arming replaces no
method: each Tensor method is an entry (``_C._Checked``) with a recording slot, and arming
fills the slots (Note [Recording slots] in csrc/bindings/bind_checked.cpp). Per call, the
entry hands the call to the recorder only when a tensor argument requires grad; the
recorder records in grad mode and otherwise calls the method's own function. ``Tensor.mul_``
is the same object before and after the first ``backward()``. Top-level functions
(``cudalite.sum``) are wrapped from the start the same way: their ``box[0]`` is the slot.
"""

from __future__ import annotations

from cudalite import _C, _reductions
from cudalite._C import Tensor
from cudalite._op_registry import OPS
from cudalite._reductions import NO_DIM, NO_KEEPDIM, NO_OTHER

_ABSENT = {"NO_DIM": NO_DIM, "NO_KEEPDIM": NO_KEEPDIM, "NO_OTHER": NO_OTHER}

_gm = _C._is_grad_enabled

SELF = "self._rg and _gm()"


def rg(*names):
    """The check for a function differentiable in any of the named (maybe tensor) args."""
    terms = " or ".join(f"(isinstance({n}, Tensor) and {n}._rg)" for n in names)
    return f"({terms}) and _gm()"


def gen(name, orig, rec, params, args, cond=SELF, ns=None, ngv=None):
    """``def name(params): return rec(args) if cond else orig(args)``; ``ns`` (the function's
    globals) may be given so that ``rec`` can be replaced later. For a view method, ``ngv``
    marks the views it returns in no_grad mode of a tensor that requires grad."""
    if ngv is None:
        src = (
            f"def {name}({params}):\n"
            f"    if {cond}:\n"
            f"        return rec({args})\n"
            f"    return orig({args})\n"
        )
    else:
        src = (
            f"def {name}({params}):\n"
            "    if self._rg:\n"
            "        if _gm():\n"
            f"            return rec({args})\n"
            f"        return ngv(orig({args}), self)\n"
            f"    return orig({args})\n"
        )
    ns = {} if ns is None else ns
    ns.update({"orig": orig, "rec": rec, "ngv": ngv, "_gm": _gm, "Tensor": Tensor, **_ABSENT})
    exec(src, ns)  # noqa: S102 - generating a signature-exact wrapper, as dataclasses do
    f = ns[name]
    f.__doc__ = getattr(orig, "__doc__", None)
    f.__wrapped__ = orig
    return f


def _any_rg(values):
    for a in values:
        if isinstance(a, Tensor) and a._rg:
            return True
    return False


def generic(name, orig, rec):
    """A wrapper that passes any arguments through (no compile step, ~0.3 us more per call
    than ``gen``'s): for the methods outside HOT_METHODS."""

    def f(self, *args, **kwargs):
        if (self._rg or _any_rg(args) or (kwargs and _any_rg(kwargs.values()))) and _gm():
            return rec(self, *args, **kwargs)
        return orig(self, *args, **kwargs)

    f.__name__ = f.__qualname__ = name
    f.__doc__ = getattr(orig, "__doc__", None)
    f.__wrapped__ = orig
    return f


def generic_view(name, orig, rec, ngv):
    """``generic`` for a view method of one tensor (see ``gen``'s ``ngv``)."""

    def f(self, *args, **kwargs):
        if self._rg:
            if _gm():
                return rec(self, *args, **kwargs)
            return ngv(orig(self, *args, **kwargs), self)
        return orig(self, *args, **kwargs)

    f.__name__ = f.__qualname__ = name
    f.__doc__ = getattr(orig, "__doc__", None)
    f.__wrapped__ = orig
    return f


# The methods whose results can be views of self: made in no_grad mode of a tensor that
# requires grad, those require grad too (views.nograd_view).
VIEW_METHODS = {
    "view",
    "reshape",
    "permute",
    "transpose",
    "swapaxes",
    "expand",
    "squeeze",
    "unsqueeze",
    "flatten",
    "select",
    "as_strided",
    "diagonal",
    "unfold",
    "movedim",
    "moveaxis",
    "narrow",
    "unbind",
    "split",
    "chunk",
    "__getitem__",
}

# Methods common in training loops get exact-signature wrappers (compiled when autograd is
# armed, ~0.1 ms each); the rest get ``generic`` ones.
HOT_METHODS = {
    "view",
    "reshape",
    "permute",
    "transpose",
    "expand",
    "squeeze",
    "unsqueeze",
    "flatten",
    "__getitem__",
    "__setitem__",
    "sum",
    "mean",
    "max",
    "min",
    "matmul",
    "mm",
    "__matmul__",
    "to",
    "contiguous",
    "clone",
}

# Tensor methods: name -> (parameters, call arguments, condition)
METHODS = {
    "view": ("self, *shape, **kw", "self, *shape, **kw", SELF),
    "reshape": ("self, *shape, **kw", "self, *shape, **kw", SELF),
    "permute": ("self, *dims, **kw", "self, *dims, **kw", SELF),
    "expand": ("self, *sizes", "self, *sizes", SELF),
    "transpose": ("self, dim0, dim1", "self, dim0, dim1", SELF),
    "swapaxes": ("self, dim0, dim1", "self, dim0, dim1", SELF),
    "squeeze": ("self, dim=None", "self, dim", SELF),
    "unsqueeze": ("self, dim", "self, dim", SELF),
    "flatten": ("self, start_dim=0, end_dim=-1", "self, start_dim, end_dim", SELF),
    "select": ("self, dim, index", "self, dim, index", SELF),
    "as_strided": ("self, *args, **kwargs", "self, *args, **kwargs", SELF),
    # memory_format is forwarded only when given: torch's signature takes no None, and a
    # failed call is checked against it (Note [Argument errors]).
    "contiguous": (
        "self, memory_format=None",
        "self, *(() if memory_format is None else (memory_format,))",
        SELF,
    ),
    "narrow": ("self, dim, start, length", "self, dim, start, length", SELF),
    "clone": ("self, *, memory_format=None", "self, memory_format=memory_format", SELF),
    "unbind": ("self, dim=0", "self, dim", SELF),
    "split": ("self, split_size, dim=0", "self, split_size, dim", SELF),
    "chunk": ("self, chunks, dim=0", "self, chunks, dim", SELF),
    "repeat": ("self, *sizes", "self, *sizes", SELF),
    "flip": ("self, *dims", "self, *dims", SELF),
    "index_select": ("self, dim, index", "self, dim, index", SELF),
    "__getitem__": ("self, idx", "self, idx", SELF),
    "sum": (
        "self, dim=NO_DIM, keepdim=NO_KEEPDIM, *, dtype=None, out=None",
        "self, dim, keepdim, dtype=dtype, out=out",
        SELF,
    ),
    "mean": (
        "self, dim=NO_DIM, keepdim=NO_KEEPDIM, *, dtype=None, out=None",
        "self, dim, keepdim, dtype=dtype, out=out",
        SELF,
    ),
    "prod": (
        "self, dim=NO_DIM, keepdim=NO_KEEPDIM, *, dtype=None, out=None",
        "self, dim, keepdim, dtype=dtype, out=out",
        SELF,
    ),
    "amax": ("self, dim=(), keepdim=False", "self, dim, keepdim", SELF),
    "amin": ("self, dim=(), keepdim=False", "self, dim, keepdim", SELF),
    "std": (
        "self, dim=None, unbiased=None, keepdim=False, *, correction=None",
        "self, dim, unbiased, keepdim, correction=correction",
        SELF,
    ),
    "var": (
        "self, dim=None, unbiased=None, keepdim=False, *, correction=None",
        "self, dim, unbiased, keepdim, correction=correction",
        SELF,
    ),
    "norm": (
        "self, p='fro', dim=None, keepdim=False, dtype=None",
        "self, p, dim, keepdim, dtype",
        SELF,
    ),
    "max": (
        "self, dim=NO_DIM, keepdim=NO_KEEPDIM, *, other=NO_OTHER, out=None",
        "self, dim, keepdim, other=other, out=out",
        rg("self", "dim", "other"),
    ),
    "min": (
        "self, dim=NO_DIM, keepdim=NO_KEEPDIM, *, other=NO_OTHER, out=None",
        "self, dim, keepdim, other=other, out=out",
        rg("self", "dim", "other"),
    ),
    "matmul": ("self, other, *, out=None", "self, other, out=out", rg("self", "other")),
    "mm": ("self, other, *, out=None", "self, other, out=out", rg("self", "other")),
    "bmm": ("self, other, *, out=None", "self, other, out=out", rg("self", "other")),
    "mv": ("self, other, *, out=None", "self, other, out=out", rg("self", "other")),
    "dot": ("self, other, *, out=None", "self, other, out=out", rg("self", "other")),
    "addmm": (
        "self, mat1, mat2, *, beta=1, alpha=1",
        "self, mat1, mat2, beta=beta, alpha=alpha",
        rg("self", "mat1", "mat2"),
    ),
    "__matmul__": ("self, other", "self, other", rg("self", "other")),
    "__rmatmul__": ("self, other", "self, other", rg("self", "other")),
    "masked_fill": ("self, mask, value", "self, mask, value", rg("self", "value")),
    "masked_fill_": ("self, mask, value", "self, mask, value", rg("self", "value")),
    "where": ("self, condition, other", "self, condition, other", rg("self", "other")),
    "clamp": ("self, min=None, max=None", "self, min, max", rg("self", "min", "max")),
    "clamp_": ("self, min=None, max=None", "self, min, max", rg("self", "min", "max")),
    "lerp": ("self, end, weight", "self, end, weight", rg("self", "end", "weight")),
    "copy_": ("self, src, non_blocking=False", "self, src, non_blocking", rg("self", "src")),
    "__setitem__": ("self, idx, value", "self, idx, value", rg("self", "value")),
    "index_put_": (
        "self, indices, values, accumulate=False",
        "self, indices, values, accumulate",
        rg("self", "values"),
    ),
    "fill_": ("self, value", "self, value", SELF),
    "zero_": ("self", "self", SELF),
    "uniform_": (
        "self, from_=0.0, to=1.0, *, generator=None",
        "self, from_, to, generator=generator",
        SELF,
    ),
    "normal_": (
        "self, mean=0.0, std=1.0, *, generator=None",
        "self, mean, std, generator=generator",
        SELF,
    ),
    "random_": (
        "self, from_=0, to=None, *, generator=None",
        "self, from_, to, generator=generator",
        SELF,
    ),
    "to": ("self, *args, **kwargs", "self, *args, **kwargs", SELF),
    "cuda": (
        "self, device=None, non_blocking=False, memory_format=None",
        "self, device, non_blocking, memory_format",
        SELF,
    ),
    "cpu": ("self, memory_format=None", "self, memory_format", SELF),
    "float": ("self, memory_format=None", "self, memory_format", SELF),
    "double": ("self, memory_format=None", "self, memory_format", SELF),
    "half": ("self, memory_format=None", "self, memory_format", SELF),
    "bfloat16": ("self, memory_format=None", "self, memory_format", SELF),
    "type": ("self, dtype=None, non_blocking=False", "self, dtype, non_blocking", SELF),
}

# The registry's differentiable elementwise ops (Note [The op registry]); add, sub and div
# take more arguments and have their own wrappers.
UNARY_FUNCTIONS = tuple(op.name for op in OPS if op.arity == 1 and op.grad)
# function / method name -> the binary op it records
BINARY_FUNCTIONS = {
    **{op.name: op.name for op in OPS if op.arity == 2 and op.grad and not op.custom},
    "true_divide": "div",
}
_REGISTRY_ALIASES = {a: op.name for op in OPS if op.grad for a in op.aliases}
METHOD_ALIASES = {**_REGISTRY_ALIASES, "__abs__": "abs", "clip": "clamp"}
FUNCTION_ALIASES = {**_REGISTRY_ALIASES, "clip": "clamp"}

# ---- top-level functions ----
#
# These are wrapped at import, so they are closures (no compile step): one factory per
# signature. ``box[0]`` is the recorder, filled in when autograd is armed.


def _r(t):
    return isinstance(t, Tensor) and t._rg


def f_unary(orig, box):
    def f(input, *, out=None):
        if _r(input) and _gm():
            return box[0](input, out=out)
        return orig(input, out=out)

    return f


def f_binary(orig, box):
    def f(input, other, *, out=None):
        if (_r(input) or _r(other)) and _gm():
            return box[0](input, other, out=out)
        return orig(input, other, out=out)

    return f


def f_mat2(orig, box):
    def f(input, mat2, *, out=None):
        if (_r(input) or _r(mat2)) and _gm():
            return box[0](input, mat2, out=out)
        return orig(input, mat2, out=out)

    return f


def f_vec(orig, box):
    def f(input, vec, *, out=None):
        if (_r(input) or _r(vec)) and _gm():
            return box[0](input, vec, out=out)
        return orig(input, vec, out=out)

    return f


def f_alpha(orig, box):
    def f(input, other, *, alpha=1, out=None):
        if (_r(input) or _r(other)) and _gm():
            return box[0](input, other, alpha=alpha, out=out)
        return orig(input, other, alpha=alpha, out=out)

    return f


def f_div(orig, box):
    def f(input, other, *, rounding_mode=None, out=None):
        if (_r(input) or _r(other)) and _gm():
            return box[0](input, other, rounding_mode=rounding_mode, out=out)
        return orig(input, other, rounding_mode=rounding_mode, out=out)

    return f


def f_where(orig, box):
    def f(condition, input=None, other=None):
        if (_r(input) or _r(other)) and _gm():
            return box[0](condition, input, other)
        return orig(condition, input, other)

    return f


def f_clamp(orig, box):
    def f(input, min=None, max=None, *, out=None):
        if (_r(input) or _r(min) or _r(max)) and _gm():
            return box[0](input, min, max, out=out)
        return orig(input, min, max, out=out)

    return f


def f_lerp(orig, box):
    def f(input, end, weight):
        if (_r(input) or _r(end) or _r(weight)) and _gm():
            return box[0](input, end, weight)
        return orig(input, end, weight)

    return f


def f_sum(orig, box):
    name = orig.__name__

    def f(input, dim=NO_DIM, keepdim=NO_KEEPDIM, *, dtype=None, out=None):
        if dim is NO_DIM:  # the function's own argument errors (the methods word them apart)
            _reductions.whole(name, False, keepdim, dtype, out)
        if _r(input) and _gm():
            return box[0](input, dim, keepdim, dtype=dtype, out=out)
        return orig(input, dim, keepdim, dtype=dtype, out=out)

    return f


def f_prod(orig, box):
    def f(input, dim=NO_DIM, keepdim=NO_KEEPDIM, *, dtype=None, out=None):
        if dim is NO_DIM:
            _reductions.whole("prod", False, keepdim, dtype, out)
        if _r(input) and _gm():
            return box[0](input, dim, keepdim, dtype=dtype, out=out)
        return orig(input, dim, keepdim, dtype=dtype, out=out)

    return f


def f_amax(orig, box):
    def f(input, dim=(), keepdim=False, *, out=None):
        if _r(input) and _gm():
            return box[0](input, dim, keepdim, out=out)
        return orig(input, dim, keepdim, out=out)

    return f


def f_var(orig, box):
    def f(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
        if _r(input) and _gm():
            return box[0](input, dim, unbiased, keepdim, correction=correction)
        return orig(input, dim, unbiased, keepdim, correction=correction)

    return f


def f_var_out(orig, box):
    def f(input, dim=None, unbiased=None, keepdim=False, *, correction=None, out=None):
        if _r(input) and _gm():
            return box[0](input, dim, unbiased, keepdim, correction=correction, out=out)
        return orig(input, dim, unbiased, keepdim, correction=correction, out=out)

    return f


def f_norm(orig, box):
    def f(input, p="fro", dim=None, keepdim=False, dtype=None, *, out=None):
        if _r(input) and _gm():
            return box[0](input, p, dim, keepdim, dtype, out=out)
        return orig(input, p, dim, keepdim, dtype, out=out)

    return f


def f_max(orig, box):
    name = orig.__name__

    def f(input, dim=NO_DIM, keepdim=NO_KEEPDIM, *, other=NO_OTHER, out=None):
        _reductions.extreme_args(name, False, dim, keepdim, other, out)
        if (_r(input) or _r(dim) or _r(other)) and _gm():
            return box[0](input, dim, keepdim, other=other, out=out)
        return orig(input, dim, keepdim, other=other, out=out)

    return f


def f_addmm(orig, box):
    def f(input, mat1, mat2, *, beta=1, alpha=1, out=None):
        if (_r(input) or _r(mat1) or _r(mat2)) and _gm():
            return box[0](input, mat1, mat2, beta=beta, alpha=alpha, out=out)
        return orig(input, mat1, mat2, beta=beta, alpha=alpha, out=out)

    return f


def f_seq(orig, box):
    def f(tensors, dim=0, *, out=None):
        if _gm():
            for t in tensors:
                if _r(t):
                    return box[0](tensors, dim, out=out)
        return orig(tensors, dim, out=out)

    return f


# ---- sorting, logsumexp, logit ----


def f_sort(orig, box):
    def f(input, dim=-1, descending=False, *, stable=None, out=None):
        if _r(input) and _gm():
            return box[0](input, dim, descending, stable=stable, out=out)
        return orig(input, dim, descending, stable=stable, out=out)

    return f


def f_topk(orig, box):
    def f(input, k, dim=-1, largest=True, sorted=True, *, out=None):
        if _r(input) and _gm():
            return box[0](input, k, dim, largest, sorted, out=out)
        return orig(input, k, dim, largest, sorted, out=out)

    return f


def f_kthvalue(orig, box):
    def f(input, k, dim=-1, keepdim=False, *, out=None):
        if _r(input) and _gm():
            return box[0](input, k, dim, keepdim, out=out)
        return orig(input, k, dim, keepdim, out=out)

    return f


def f_logsumexp(orig, box):
    def f(input, dim, keepdim=False, *, out=None):
        if _r(input) and _gm():
            return box[0](input, dim, keepdim, out=out)
        return orig(input, dim, keepdim, out=out)

    return f


def f_logit(orig, box):
    def f(input, eps=None, *, out=None):
        if _r(input) and _gm():
            return box[0](input, eps, out=out)
        return orig(input, eps, out=out)

    return f


_SORTING_FUNCTIONS = {
    "sort": f_sort,
    "msort": f_unary,
    "topk": f_topk,
    "kthvalue": f_kthvalue,
    "logsumexp": f_logsumexp,
    "logit": f_logit,
}

# Top-level functions: name -> wrapper factory
FUNCTIONS = {
    **{n: f_unary for n in UNARY_FUNCTIONS},
    **{n: f_binary for n in BINARY_FUNCTIONS},
    "add": f_alpha,
    "sub": f_alpha,
    "div": f_div,
    "where": f_where,
    "clamp": f_clamp,
    "lerp": f_lerp,
    "sum": f_sum,
    "mean": f_sum,
    "prod": f_prod,
    "amax": f_amax,
    "amin": f_amax,
    "std": f_var_out,
    "var": f_var_out,
    "std_mean": f_var,
    "var_mean": f_var,
    "norm": f_norm,
    "max": f_max,
    "min": f_max,
    "matmul": f_binary,
    "mm": f_mat2,
    "bmm": f_mat2,
    "mv": f_vec,
    "dot": f_binary,
    "addmm": f_addmm,
    "cat": f_seq,
    "stack": f_seq,
    **_SORTING_FUNCTIONS,
}
