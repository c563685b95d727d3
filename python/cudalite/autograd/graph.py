"""The autograd graph: ``Node`` (torch's ``grad_fn`` objects), ``AccumulateGrad`` for leaves,
and the helpers that connect op outputs to the graph.

An edge is ``(node, output_nr)``: the gradient that flows along it is the gradient of output
``output_nr`` of ``node``. A node's ``_next`` holds one edge per differentiable input, or
``None`` where that input needs no gradient; ``next_functions`` shows them as torch does.

Every node takes a sequence number when it is created. An op's inputs always exist before
its output, so every edge goes from a higher number to a lower one and "highest number
first" is a topological order: the engine sorts instead of counting dependencies.

Note [The _rg mirror]
Whether a tensor takes part in autograd is the C++ flag ``_requires_grad_flag`` (the C++
dunders read it). Every place that sets that flag is in Python, so a copy lives in the
instance dict as ``_rg`` (class default False). Reading ``t._rg`` costs a dict lookup, about
a quarter of a pybind11 property read, which keeps the check in front of every
differentiable op cheap when nothing requires grad.
"""

from __future__ import annotations

import itertools
import sys
import threading
import weakref

from cudalite import _C
from cudalite._C import Tensor
from cudalite.autograd import saved

__all__ = ["Node", "AccumulateGrad"]

_seq = itertools.count()
_ADD = _C._binary_op_names.index("add")

FREED_MSG = (
    "Trying to backward through the graph a second time (or directly access saved tensors "
    "after they have already been freed). Saved intermediate values of the graph are freed when "
    "you call .backward() or autograd.grad(). Specify retain_graph=True if you need to backward "
    "through the graph a second time or if you need to access saved tensors after calling "
    "backward."
)


class RemovableHandle:
    """Returned by ``register_hook``; ``remove()`` takes the hook out again."""

    __slots__ = ("_list", "_fn")

    def __init__(self, lst, fn):
        self._list, self._fn = lst, fn

    def remove(self):
        try:
            self._list.remove(self._fn)
        except ValueError:
            pass

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.remove()


class Node:
    """A backward function: maps the gradient of its output(s) to its inputs' gradients.

    Subclasses are named like torch's (``AddBackward0``) and implement ``apply``; the names of
    the attributes holding saved tensors are listed in ``_saved`` so that they can be freed
    after a backward pass without ``retain_graph``, and their versions checked before it uses
    them (``_vers``, saved.py).
    """

    __slots__ = ("_next", "_seq", "_pre", "_post", "_released", "_vers", "__weakref__")
    _saved = ()
    _multi = False  # several differentiable outputs: apply receives a list of gradients
    _cpp_name = None  # name() of the nodes torch writes by hand ("torch::autograd::CopySlices")

    def __init__(self, edges):
        self._next = edges
        self._seq = next(_seq)
        self._pre = None
        self._post = None
        self._released = False
        self._vers = None

    def name(self):
        return self._cpp_name or type(self).__name__

    @property
    def next_functions(self):
        return tuple((None, 0) if e is None else e for e in self._next)

    @property
    def metadata(self):
        return {}

    def apply(self, grad):
        raise NotImplementedError

    def __call__(self, *grads):
        if self._released and self._saved:
            raise RuntimeError(FREED_MSG)
        if self._vers is not None:
            saved.check(self)
        out = self.apply(list(grads) if self._multi else grads[0])
        return out[0] if len(out) == 1 else tuple(out)

    def _release(self):
        for a in self._saved:
            setattr(self, a, None)
        self._released = True

    # Note [Saved outputs]
    # A node that needs its own output (exp, sigmoid, softmax ...) keeps a detached alias of
    # it: keeping the output itself would make a reference cycle (output -> grad_fn ->
    # output) that only the cyclic GC could free, holding (GPU) memory. When a backward pass
    # builds a graph, the alias is handed out as an output of this node again, as torch
    # unpacks saved outputs.

    @property
    def result(self):
        r = self._result
        if r is not None and _C._is_grad_enabled():
            a = r._alias()
            mark(a, self)
            return a
        return r

    @result.setter
    def result(self, out):
        self._result = None if out is None else out._alias()

    def register_hook(self, fn):
        """``fn(grad_inputs, grad_outputs)`` runs after this node; may return new grad_inputs."""
        if self._post is None:
            self._post = []
        self._post.append(fn)
        return RemovableHandle(self._post, fn)

    def register_prehook(self, fn):
        """``fn(grad_outputs)`` runs before this node; may return new grad_outputs."""
        return self._add_pre(-1, fn)

    def _add_pre(self, nr, fn):
        if self._pre is None:
            self._pre = {}
        lst = self._pre.setdefault(nr, [])
        lst.append(fn)
        return RemovableHandle(lst, fn)

    def __repr__(self):
        return f"<{type(self).__name__} object at {hex(id(self))}>"


class AccumulateGrad(Node):
    """The sink for a leaf tensor: adds the incoming gradient into ``variable.grad``.

    The leaf keeps its AccumulateGrad (so a training loop does not build a new one for every
    parameter at every step) and the node refers back to the leaf weakly, so there is no
    reference cycle: a leaf nobody can reach any more has no gradient anyone could read.
    """

    __slots__ = ("_var",)
    _cpp_name = "torch::autograd::AccumulateGrad"

    def __init__(self, variable):
        super().__init__(())
        self._var = weakref.ref(variable)

    @property
    def variable(self):
        return self._var()

    def apply(self, grad):
        var = self._var()
        if var is not None:
            accumulate(var, grad, False)
        return ()


def acc_node(t):
    """The leaf's AccumulateGrad, created on first use."""
    node = t.__dict__.get("_acc")
    if node is None:
        node = t.__dict__["_acc"] = AccumulateGrad(t)
    return node


def edge(t):
    """The edge a gradient for tensor ``t`` travels along, or None if it needs none (a view
    made in no_grad mode requires grad but takes none, as in torch)."""
    fn = t.grad_fn
    if fn is not None:
        return (fn, t._output_nr)
    if t._rg:
        d = t.__dict__
        node = d.get("_acc")
        if node is None:
            if "_nograd_view" in d:
                return None
            node = d["_acc"] = AccumulateGrad(t)
        return (node, 0)
    return None


def mark(out, node, nr=None, key="grad_fn"):
    """Makes ``out`` the output of ``node`` (a non-leaf that requires grad). The first call,
    right after the forward, records the versions of the tensors the node saved. ``key``:
    where the node goes in out's dict ("_view_fn" for views, Note [View grad_fn])."""
    out._requires_grad_flag = True
    d = out.__dict__
    d["_rg"] = True
    d[key] = node
    if nr is not None:
        d["_output_nr"] = nr
    if node._saved and node._vers is None:
        node._vers = saved.capture(node)
    return out


class _Inference(threading.local):
    """How many inference_mode blocks this thread has open (grad mode is per thread too):
    views made in one say so in their error."""

    depth = 0


INFERENCE = _Inference()

# Called when a tensor first requires grad: installs the recording Tensor methods (Note
# [Arming] in _wrappers.py). Replaced by autograd.install.
ARM = [lambda: None]


def set_requires_grad(t, value):
    t._requires_grad_flag = value
    t.__dict__["_rg"] = value
    if value:
        ARM[0]()


def needs_grad(*ts):
    """True when grad mode is on and one of ``ts`` (tensors or anything else) requires grad."""
    for t in ts:
        if isinstance(t, Tensor) and t._rg:
            return _C._is_grad_enabled()
    return False


def stealable(g, refs):
    """Whether gradient buffer ``g`` can become ``.grad`` as is: contiguous, and no other
    Python reference or tensor can see its memory (so later in-place accumulation is safe)."""
    return sys.getrefcount(g) <= refs and g._storage_use_count() == 1 and g.is_contiguous()


def accumulate(var, g, create_graph, refs=3):
    """``var.grad += g`` with torch's rules: the first gradient is stored (copied when it may
    be shared), later ones are added in place unless building a differentiable graph."""
    d = var.__dict__  # .grad's checks and warning are for users (_install._set_grad)
    old = d.get("grad")
    if old is None:
        if create_graph:
            d["grad"] = g
        elif g.grad_fn is None and stealable(g, refs):
            d["grad"] = g
        else:
            d["grad"] = g.detach()._clone()
    elif create_graph or old._rg:
        d["grad"] = old + g
    else:
        _C._binary(_ADD, old, g, old)
    for hook in var.__dict__.get("_post_acc_hooks", ()):
        hook(var)
