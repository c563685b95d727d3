"""make_graphed_callables: modules and functions whose forward and backward replay CUDA graphs.

Each callable is warmed up on a side stream, its forward captured (callables in order) and
its backward captured with ``autograd.grad`` (callables in reverse order), all graphs in one
memory pool. The graphed callable is an ``autograd.Function`` whose forward copies the
arguments into the static inputs and replays the forward graph, and whose backward copies
the incoming gradients into the static gradient buffers and replays the backward graph.
"""

from __future__ import annotations

import cudalite
from cudalite import _C
from cudalite._C import Tensor


def _flatten(obj, leaves):
    """Leaves (in order) of nested tuples, lists and dicts, and the structure to rebuild."""
    if isinstance(obj, (tuple, list)):
        return (type(obj), [_flatten(o, leaves) for o in obj])
    if isinstance(obj, dict):
        return (dict, [(k, _flatten(v, leaves)) for k, v in obj.items()])
    leaves.append(obj)
    return None


def _unflatten(spec, it):
    if spec is None:
        return next(it)
    kind, children = spec
    if kind is dict:
        return {k: _unflatten(c, it) for k, c in children}
    return kind(_unflatten(c, it) for c in children)


def _leaves(obj):
    out = []
    _flatten(obj, out)
    return out


def _addr(t):
    """data_ptr() without marking the memory as handed out (which would stop deferral)."""
    return t._storage_ptr(False) + t.storage_offset() * t.element_size()


def _check_module(c):
    hooks = ("_backward_hooks", "_forward_hooks", "_forward_pre_hooks")
    if any(getattr(c, h, None) for h in hooks):
        raise AssertionError(
            "Modules must not have hooks registered at the time they are passed. However, "
            "registering hooks on modules after passing them through make_graphed_callables "
            "is allowed."
        )
    if not all(b.requires_grad is False for b in c.buffers()):
        raise AssertionError(
            "In any :class:`~torch.nn.Module` passed to :func:`~make_graphed_callables`, only "
            "parameters may be trainable. All buffers must have ``requires_grad=False``."
        )


def _grad(outputs, inputs, grad_outputs, allow_unused):
    if not inputs:
        return ()
    return cudalite.autograd.grad(
        outputs=outputs,
        inputs=inputs,
        grad_outputs=grad_outputs,
        only_inputs=True,
        allow_unused=allow_unused,
    )


def make_graphed_callables(callables, sample_args, num_warmup_iters, allow_unused_input, pool):
    from cudalite.cuda.graphs import CUDAGraph, graph, graph_pool_handle

    if cudalite.is_autocast_enabled() and cudalite.is_autocast_cache_enabled():
        raise RuntimeError(
            "make_graphed_callables does not support the autocast caching. Please set "
            "`cache_enabled=False`."
        )
    just_one = not isinstance(callables, tuple)
    if just_one:
        callables = (callables,)
        sample_args = (sample_args,)

    flat_args = []
    for c, args in zip(callables, sample_args, strict=True):
        if isinstance(c, cudalite.nn.Module):
            _check_module(c)
        leaves = tuple(_leaves(args))
        if not all(isinstance(a, Tensor) for a in leaves):
            raise AssertionError(
                "In the beta API, sample_args for each callable must contain only Tensors. "
                "Other types are not allowed."
            )
        flat_args.append(leaves)

    n_user_args = [len(a) for a in flat_args]
    module_params = [
        tuple(c.parameters()) if isinstance(c, cudalite.nn.Module) else () for c in callables
    ]
    surfaces = [flat_args[i] + module_params[i] for i in range(len(callables))]
    fwd_graphs = [CUDAGraph() for _ in callables]
    bwd_graphs = [CUDAGraph() for _ in callables]
    mempool = graph_pool_handle() if pool is None else pool

    # Warm-up on a side stream: lazy initialisations (cuBLAS handles and workspaces, autograd
    # buffers) happen outside the captures.
    cudalite.cuda.synchronize()
    with cudalite.cuda.stream(cudalite.cuda.Stream()):
        for func, args, surface in zip(callables, sample_args, surfaces, strict=True):
            for _ in range(num_warmup_iters):
                outputs = _leaves(func(*args))
                needs = tuple(o for o in outputs if o.requires_grad)
                if needs:
                    _grad(
                        needs,
                        tuple(i for i in surface if i.requires_grad),
                        tuple(cudalite.empty_like(o) for o in needs),
                        allow_unused_input,
                    )
            del outputs, needs
    cudalite.cuda.synchronize()

    static_outputs, out_specs = [], []
    for func, args, fwd in zip(callables, sample_args, fwd_graphs, strict=True):
        with graph(fwd, pool=mempool):
            out = func(*args)
        leaves = []
        out_specs.append(_flatten(out, leaves))
        static_outputs.append(tuple(leaves))

    static_grad_outputs, static_grad_inputs = [], []
    for surface, outs, bwd in zip(
        reversed(surfaces), reversed(static_outputs), reversed(bwd_graphs), strict=True
    ):
        grad_outs = tuple(cudalite.empty_like(o) if o.requires_grad else None for o in outs)
        needs = tuple(o for o in outs if o.requires_grad)
        grads = None
        if needs:
            with graph(bwd, pool=mempool):
                grads = _grad(
                    needs,
                    tuple(i for i in surface if i.requires_grad),
                    tuple(g for g in grad_outs if g is not None),
                    allow_unused_input,
                )
        per_input, k = [], 0
        for a in surface:
            if a.requires_grad and grads is not None:
                per_input.append(grads[k])
                k += 1
            else:
                per_input.append(None)
        static_grad_outputs.append(grad_outs)
        static_grad_inputs.append(tuple(per_input))
    static_grad_outputs.reverse()
    static_grad_inputs.reverse()

    ret = []
    for i, func in enumerate(callables):
        graphed = _graphed_function(
            fwd_graphs[i],
            bwd_graphs[i],
            module_params[i],
            n_user_args[i],
            out_specs[i],
            surfaces[i],
            static_outputs[i],
            static_grad_outputs[i],
            static_grad_inputs[i],
        )
        if isinstance(func, cudalite.nn.Module):
            func.forward = _graphed_forward(func, func.training, graphed, func.forward)
            ret.append(func)
        else:
            ret.append(graphed)
    return ret[0] if just_one else tuple(ret)


def _graphed_function(
    fwd_graph,
    bwd_graph,
    module_params,
    n_user_args,
    out_spec,
    surface,
    static_outputs,
    static_grad_outputs,
    static_grad_inputs,
):
    class Graphed(cudalite.autograd.Function):
        @staticmethod
        def forward(ctx, *inputs):
            for i in range(n_user_args):
                if _addr(surface[i]) != _addr(inputs[i]):
                    surface[i].copy_(inputs[i])
            fwd_graph.replay()
            return tuple(o.detach() for o in static_outputs)

        @staticmethod
        def backward(ctx, *grads):
            if len(grads) != len(static_grad_outputs):
                raise AssertionError(
                    f"len(grads)={len(grads)} != "
                    f"len(static_grad_outputs)={len(static_grad_outputs)}"
                )
            for g, grad in zip(static_grad_outputs, grads, strict=True):
                if g is not None and grad is not None and _addr(g) != _addr(grad):
                    g.copy_(grad)
            prev = _C._is_grad_enabled()
            _C._set_grad_enabled(
                False
            )  # the graph's work is recorded nowhere (once_differentiable)
            try:
                bwd_graph.replay()
            finally:
                _C._set_grad_enabled(prev)
            return tuple(b.detach() if b is not None else b for b in static_grad_inputs)

    def functionalized(*user_args):
        flat = tuple(_leaves(user_args))
        out = Graphed.apply(*(flat + module_params))
        return _unflatten(out_spec, iter(out))

    return functionalized


def _graphed_forward(module, training_state, graphed, orig_forward):
    def new_forward(*user_args, **user_kwargs):
        if module.training == training_state:
            return graphed(*user_args, **user_kwargs)
        return orig_forward(*user_args, **user_kwargs)

    return new_forward
