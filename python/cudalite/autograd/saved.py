"""Saved tensors and their versions: the check that a tensor saved for the backward pass was
not modified in place before the pass used it (torch's SavedVariable).

A node lists the attributes holding what it saved in ``_saved``. When the node is attached to
its output (``graph.mark``), right after the forward, ``capture`` records the version of every
tensor found there (an attribute may also hold a tuple or list, such as an index, whose tensors
count); ``check`` compares them again before the engine runs the node, in ``_saved`` order,
which follows torch's (inputs by name, then the output), so that the first mismatch reported
is torch's. ``_result`` is the node's own output (Note [Saved outputs] in graph.py); every
other attribute holds an input. A node that saved nothing pays nothing, and neither does any
op when nothing requires grad.

Versions are counted in C++ (Note [Version counters] in core/version_counter.h): views share
their base's counter, ``x.data`` has its own.
"""

from __future__ import annotations

import weakref

from cudalite import _C
from cudalite._C import Tensor

__all__ = ["capture", "check", "resave_output", "modified_msg"]


def _tensors(v):
    if isinstance(v, Tensor):
        return (v,)
    if isinstance(v, (tuple, list)):
        return tuple(e for e in v if isinstance(e, Tensor))
    return ()


def capture(node):
    """The versions of what ``node`` saved, one entry per name in ``node._saved``: an int for
    a tensor, a tuple for the tensors of a tuple or list, None for anything else (read in C:
    this runs for every recorded op that saves something)."""
    return _C._saved_versions(node)


def check(node):
    """Raises torch's error when a tensor ``node`` saved has been modified in place since."""
    i = _C._first_modified(node)
    if i < 0:
        return
    name, saved = node._saved[i], node._vers[i]
    v = getattr(node, name)
    if isinstance(saved, int):
        raise RuntimeError(modified_msg(v, saved, node if name == "_result" else None))
    for t, s in zip(_tensors(v), saved, strict=True):
        if t._version != s:
            raise RuntimeError(modified_msg(t, s))


def resave_output(node, out):
    """An in-place op computed out of place has written its result into ``out``: the node's
    saved output is now ``out``, at its version after the write (torch saves the result of
    ``x.exp_()`` as x, so a later ``x.add_(1)`` is caught)."""
    node.result = out
    i = node._saved.index("_result")
    node._vers[i] = out._version
    if "_base_" in out.__dict__ or "_view_of_leaf" in out.__dict__:
        # torch names the view's own node while the view keeps it (see modified_msg)
        node._result.__dict__["_inplace_view"] = (weakref.ref(out), weakref.ref(out.grad_fn))


# torch's error text names the legacy type ("torch.FloatTensor") of these dtypes, and the
# ATen type ("CPUBoolType") of the others; cudalite's x.type() names stand for the former.
_LEGACY = {"float32", "float64", "float16", "uint8", "int8", "int16", "int32", "int64"}
_ATEN = {"bool": "Bool", "bfloat16": "BFloat16"}


def _type_str(t):
    name = t.dtype._name
    if name in _LEGACY:
        return t.type()
    return ("CUDA" if t.is_cuda else "CPU") + _ATEN.get(name, name) + "Type"


def _producer(t, node, nr=0):
    """(node name, output number) of the node ``t`` is an output of, as torch's message has
    it: a saved output names the node that saved it (or, after an in-place op on a view, the
    view's node while the view still has it); a saved input names its current grad_fn."""
    if node is not None:
        iv = t.__dict__.get("_inplace_view")
        if iv is not None:
            view, fn = iv[0](), iv[1]()
            if view is not None and fn is not None and view.__dict__.get("_view_fn") is fn:
                return fn.name(), 0
        return node.name(), nr
    fn = t.grad_fn
    if fn is None:
        return None
    return fn.name(), t._output_nr


def modified_msg(t, expected, node=None, nr=0):
    """torch's error for saved tensor ``t`` found at another version than ``expected``;
    ``node``: the node whose output ``nr`` ``t`` is (None for an input)."""
    what = f"[{_type_str(t)} {list(t.shape)}]"
    p = _producer(t, node, nr)
    if p is not None:
        what += f", which is output {p[1]} of {p[0]},"
    return (
        "one of the variables needed for gradient computation has been modified by an "
        f"inplace operation: {what} is at version {t._version}; expected version {expected} "
        "instead. Hint: enable anomaly detection to find the operation that failed to compute "
        "its gradient, with torch.autograd.set_detect_anomaly(True, check_nan=False)."
    )
