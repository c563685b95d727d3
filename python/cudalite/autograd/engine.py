"""The backward pass: ``cudalite.autograd.backward`` and ``cudalite.autograd.grad``.

The engine collects the nodes reachable from the outputs, visits them from the newest to the
oldest (a topological order, see graph.py), and sums the gradients arriving at each node in a
buffer before calling it once. Saved tensors are freed as soon as a node has run unless
``retain_graph`` is set. With ``create_graph`` the pass runs in grad mode, so the backward
formulas (plain tensor ops) record a graph of their own and can be differentiated again.
"""

from __future__ import annotations

from heapq import heappop, heappush

from cudalite import _C
from cudalite._C import Tensor
from cudalite.autograd.graph import FREED_MSG, AccumulateGrad, accumulate, edge
from cudalite.autograd.saved import check as check_saved

__all__ = ["backward", "grad"]


def _as_tuple(x):
    if x is None:
        return None
    if isinstance(x, Tensor):
        return (x,)
    return tuple(x)


def _make_grads(outputs, grads):
    """Gradients for the outputs: ones for scalar outputs when none are given."""
    out = []
    for i, (t, g) in enumerate(zip(outputs, grads, strict=True)):
        if g is None:
            if t._requires_grad_flag:
                if t.numel() != 1:
                    raise RuntimeError("grad can be implicitly created only for scalar outputs")
                if not t.dtype.is_floating_point:
                    raise RuntimeError(
                        "grad can be implicitly created only for real scalar outputs but got "
                        f"{t.dtype}"
                    )
                g = _C._full(list(t.shape), 1, t.dtype, t.device)
        elif isinstance(g, Tensor):
            if tuple(g.shape) != tuple(t.shape):
                raise RuntimeError(
                    f"Mismatch in shape: grad_output[{i}] has a shape of {g.shape!r} and "
                    f"output[{i}] has a shape of {t.shape!r}."
                )
        else:
            g = _C._full(list(t.shape), g, t.dtype, t.device)
        out.append(g)
    return out


def _root_edges(outputs):
    edges = []
    for i, t in enumerate(outputs):
        e = edge(t)
        if e is None:
            raise RuntimeError(
                f"element {i} of tensors does not require grad and does not have a grad_fn"
            )
        edges.append(e)
    return edges


def _collect(edges):
    """All nodes reachable from ``edges``, newest first."""
    seen = set()
    stack = [e[0] for e in edges]
    while stack:
        n = stack.pop()
        if n in seen:
            continue
        seen.add(n)
        for e in n._next:
            if e is not None and e[0] not in seen:
                stack.append(e[0])
    return sorted(seen, key=_seq_of, reverse=True)


def _seq_of(n):
    return n._seq


def _add(buf, node, nr, g):
    if node._multi:
        lst = buf.get(node)
        if lst is None:
            lst = buf[node] = [None] * node._n
        lst[nr] = g if lst[nr] is None else lst[nr] + g
    else:
        old = buf.get(node)
        buf[node] = g if old is None else old + g


def _run_pre_hooks(node, g):
    pre = node._pre
    if node._multi:
        for nr in range(node._n):
            if g[nr] is not None:
                g[nr] = _tensor_hooks(pre, nr, g[nr])
        grads = g
    else:
        g = _tensor_hooks(pre, 0, g)
        grads = [g]
    for fn in pre.get(-1, ()):
        r = fn(tuple(grads))
        if r is not None:
            grads = list(r)
    return grads if node._multi else grads[0]


def _tensor_hooks(pre, nr, g):
    for fn in pre.get(nr, ()):
        r = fn(g)
        if r is not None:
            g = r
    for fn in pre.get(("retain", nr), ()):
        fn(g)
    return g


def _capture(node, g, capture, results):
    if node._multi:
        for nr, gi in enumerate(g):
            slot = capture.get((node, nr))
            if slot is not None:
                results[slot] = gi
    else:
        slot = capture.get((node, 0))
        if slot is not None:
            results[slot] = g


def _run_post_hooks(node, out, g):
    for fn in node._post:
        r = fn(tuple(out), (tuple(g) if node._multi else (g,)))
        if r is not None:
            out = list(r)
    return out


def _leaf_hooks(var, g):
    for fn in var.__dict__.get("_hooks", ()):
        r = fn(g)
        if r is not None:
            g = r
    return g


def execute(edges, grads, retain_graph, create_graph, capture=None, accumulate_grad=True):
    """Runs the backward pass from ``edges`` seeded with ``grads``.

    Nodes wait in a heap keyed by sequence number and run newest first: when a node is
    popped, every node that can send it a gradient is newer and has already run (see
    graph.py), so its buffer is complete. ``capture`` maps edges whose arriving gradient is
    wanted (autograd.grad) to slots of the returned list; then only nodes leading to a
    captured edge run, and leaves are not updated unless ``accumulate_grad``.
    """
    buf = {}
    heap = []
    results = needed = targets = None
    if capture is not None:
        results = [None] * len(capture)
        targets = {e[0] for e in capture}
        needed = set(targets)
        for n in reversed(_collect(edges)):
            if n not in needed:
                for e in n._next:
                    if e is not None and e[0] in needed:
                        needed.add(n)
                        break
    for (node, nr), g in zip(edges, grads, strict=True):
        if g is not None and (needed is None or node in needed):
            if node not in buf:
                heappush(heap, (-node._seq, node))
            _add(buf, node, nr, g)
    prev = _C._is_grad_enabled()
    _C._set_grad_enabled(bool(create_graph))
    pop = buf.pop
    get = buf.get
    try:
        while heap:
            node = heappop(heap)[1]
            g = pop(node)
            if type(node) is AccumulateGrad:
                var = node._var()
                if var is None:
                    continue
                if "_hooks" in var.__dict__:
                    g = _leaf_hooks(var, g)
                if capture is not None:
                    slot = capture.get((node, 0))
                    if slot is not None:
                        results[slot] = g
                    if not accumulate_grad:
                        continue
                # references to g here: this frame, accumulate's and stealable's arguments
                # and getrefcount's; anything more means someone else holds it.
                accumulate(var, g, create_graph, 4)
                continue
            if node._pre is not None:
                g = _run_pre_hooks(node, g)
            if targets is not None and node in targets:
                _capture(node, g, capture, results)
                if not any(e is not None and e[0] in needed for e in node._next):
                    continue  # nothing further back is wanted
            if node._released and node._saved:
                raise RuntimeError(FREED_MSG)
            if node._vers is not None:
                try:
                    check_saved(node)
                except RuntimeError:
                    if not retain_graph:  # as torch's: a second pass says "a second time"
                        node._release()
                    raise
            out = node.apply(g)
            if node._post is not None:
                out = _run_post_hooks(node, out, g)
            if not retain_graph and node._saved:
                node._release()
            del g
            gi = None
            for e, gi in zip(node._next, out, strict=True):
                if e is None or gi is None:
                    continue
                child = e[0]
                if needed is not None and child not in needed:
                    continue
                if child._multi:
                    if child not in buf:
                        heappush(heap, (-child._seq, child))
                    _add(buf, child, e[1], gi)
                else:
                    old = get(child)
                    if old is None:
                        buf[child] = gi
                        heappush(heap, (-child._seq, child))
                    else:
                        buf[child] = old + gi
            # drop our references so the next AccumulateGrad can keep the buffer as .grad
            out = gi = None
    finally:
        _C._set_grad_enabled(prev)
    return results


def backward(
    tensors,
    grad_tensors=None,
    retain_graph=None,
    create_graph=False,
    grad_variables=None,
    inputs=None,
):
    """Accumulates the gradients of ``tensors`` into the ``.grad`` of the leaves they depend
    on (or only of ``inputs``)."""
    tensors = _as_tuple(tensors)
    if grad_tensors is None:
        grad_tensors = grad_variables
    grad_tensors = _as_tuple(grad_tensors) or (None,) * len(tensors)
    if len(grad_tensors) != len(tensors):
        raise RuntimeError(f"got {len(grad_tensors)} tensors and {len(tensors)} gradients")
    if retain_graph is None:
        retain_graph = create_graph
    grads = _make_grads(tensors, grad_tensors)
    edges = _root_edges(tensors)
    if inputs is None:
        execute(edges, grads, retain_graph, create_graph)
        return
    inputs = _as_tuple(inputs)
    if not inputs:
        raise RuntimeError("'inputs' argument to backward() cannot be empty.")
    capture = _capture_map(inputs)
    found = execute(edges, grads, retain_graph, create_graph, capture, accumulate_grad=False)
    for t, slot in zip(inputs, _slots(inputs, capture), strict=True):
        g = found[slot]
        if g is not None:
            accumulate(t, g, create_graph, 4)


def _input_edge(t):
    if not isinstance(t, Tensor):
        raise TypeError(f"expected Tensor as element of inputs, got {type(t).__name__}")
    if not t._requires_grad_flag:
        raise RuntimeError("One of the differentiated Tensors does not require grad")
    e = edge(t)
    # a view made in no_grad mode requires grad but no gradient reaches it: a key of its own
    return ("nograd_view", id(t)) if e is None else e


def _capture_map(inputs):
    capture = {}
    for t in inputs:
        e = _input_edge(t)
        if e not in capture:
            capture[e] = len(capture)
    return capture


def _slots(inputs, capture):
    return [capture[_input_edge(t)] for t in inputs]


def grad(
    outputs,
    inputs,
    grad_outputs=None,
    retain_graph=None,
    create_graph=False,
    only_inputs=True,
    allow_unused=None,
    is_grads_batched=False,
    materialize_grads=False,
):
    """The gradients of ``outputs`` with respect to ``inputs`` (``.grad`` is left alone)."""
    if is_grads_batched:
        raise NotImplementedError("is_grads_batched=True is not supported by cudalite")
    if allow_unused is None:
        allow_unused = materialize_grads
    if materialize_grads and allow_unused is False:
        raise ValueError(
            "Expected allow_unused to be True or not passed when materialize_grads=True, "
            "but got: allow_unused=False."
        )
    outputs = _as_tuple(outputs)
    inputs = _as_tuple(inputs)
    grad_outputs = _as_tuple(grad_outputs) or (None,) * len(outputs)
    if len(grad_outputs) != len(outputs):
        raise RuntimeError(
            f"grad_outputs has {len(grad_outputs)} elements, but outputs has {len(outputs)}"
        )
    if retain_graph is None:
        retain_graph = create_graph
    grads = _make_grads(outputs, grad_outputs)
    edges = _root_edges(outputs)
    capture = _capture_map(inputs)
    found = execute(edges, grads, retain_graph, create_graph, capture, accumulate_grad=False)
    result = []
    for t, slot in zip(inputs, _slots(inputs, capture), strict=True):
        g = found[slot]
        if g is None:
            if not allow_unused:
                raise RuntimeError(
                    "One of the differentiated Tensors appears to not have been used in the "
                    "graph. Set allow_unused=True if this is the desired behavior."
                )
            if materialize_grads:
                g = _C._full(list(t.shape), 0, t.dtype, t.device)
        elif not create_graph and g._rg:
            g = g.detach()
        result.append(g)
    return tuple(result)
