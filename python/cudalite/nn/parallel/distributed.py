"""``DistributedDataParallel``: data parallelism across processes (one per GPU).

At construction the module's parameters and buffers are broadcast from rank 0, and the
parameters that need gradients are split into buckets: in reverse registration order (the
order their gradients are ready in backward), one dtype per bucket, the first bucket
capped at 1 MiB and the others at ``bucket_cap_mb`` (25 MiB). During backward, a hook
after each parameter's gradient accumulation copies it into its bucket's flat buffer
(or, with ``gradient_as_bucket_view``, the gradient already lives there); when a bucket is
full, its all-reduce starts on NCCL's stream (``async_op=True``) while backward goes on.
Buckets start in order, as every rank must issue the same collectives in the same order.
When the last bucket has started, the current stream waits for every all-reduce and the
averaged gradients are written back to ``.grad``: backward returns with no host wait.
"""

from __future__ import annotations

import contextlib
import weakref

import cudalite
from cudalite._utils import _flatten_dense_tensors, _take_tensors, _unflatten_dense_tensors
from cudalite.nn.module import Module

__all__ = ["DistributedDataParallel"]

_DEFAULT_FIRST_BUCKET_BYTES = 1024 * 1024
_BROADCAST_BUCKET_BYTES = 250 * 1024 * 1024

_UNFINISHED = (
    "Expected to have finished reduction in the prior iteration before starting a new one. "
    "This error indicates that your module has parameters that were not used in producing "
    "loss. You can enable unused parameter detection by passing the keyword argument "
    "`find_unused_parameters=True` to `torch.nn.parallel.DistributedDataParallel`, and by \n"
    "making sure all `forward` function outputs participate in calculating loss. \n"
    "If you already have done the above, then the distributed data parallel module wasn't "
    "able to locate the output tensors in the return value of your module's `forward` "
    "function. Please include the loss function and the structure of the return value of "
    "`forward` of your module when reporting this issue (e.g. list, dict, iterable).\n"
    "Parameters which did not receive grad for rank {rank}: {names}"
)


class _Bucket:
    __slots__ = ("buffer", "index", "offsets", "params", "pending", "views", "work")

    def __init__(self, index, params, device):
        self.index = index
        self.params = params
        self.offsets = []
        n = 0
        for p in params:
            self.offsets.append(n)
            n += p.numel()
        self.buffer = cudalite.zeros((n,), dtype=params[0].dtype, device=device)
        self.pending = len(params)
        self.work = None
        # Each parameter's slot, made once: the hooks run for every parameter at every step.
        self.views = [
            self.buffer.narrow(0, o, p.numel()).view(p.shape)
            for o, p in zip(self.offsets, params, strict=True)
        ]

    def view(self, i):
        return self.views[i]


def _tensors_in(obj, out):
    """The tensors inside a (nested) forward output."""
    if isinstance(obj, cudalite.Tensor):
        out.append(obj)
    elif isinstance(obj, (list, tuple)):
        for x in obj:
            _tensors_in(x, out)
    elif isinstance(obj, dict):
        for x in obj.values():
            _tensors_in(x, out)
    return out


def _to_device(obj, device):
    if isinstance(obj, cudalite.Tensor):
        return obj.to(device, non_blocking=True)
    if isinstance(obj, tuple) and hasattr(obj, "_fields"):
        return type(obj)(*(_to_device(x, device) for x in obj))
    if isinstance(obj, (list, tuple)):
        return type(obj)(_to_device(x, device) for x in obj)
    if isinstance(obj, dict):
        return type(obj)((k, _to_device(v, device)) for k, v in obj.items())
    return obj


class DistributedDataParallel(Module):
    """torch.nn.parallel.DistributedDataParallel over cudalite.distributed."""

    def __init__(
        self,
        module,
        device_ids=None,
        output_device=None,
        dim=0,
        broadcast_buffers=True,
        init_sync=True,
        process_group=None,
        bucket_cap_mb=None,
        find_unused_parameters=False,
        check_reduction=False,
        gradient_as_bucket_view=False,
        static_graph=False,
        delay_all_reduce_named_params=None,
        param_to_hook_all_reduce=None,
        mixed_precision=None,
        device_mesh=None,
        skip_all_reduce_unused_params=False,
    ):
        from cudalite import distributed as dist

        super().__init__()
        self.process_group = process_group if process_group is not None else dist.group.WORLD
        if self.process_group is None:
            raise ValueError(dist._NO_GROUP)
        named = [(n, p) for n, p in module.named_parameters() if p.requires_grad]
        if not named:
            raise RuntimeError(
                "DistributedDataParallel is not needed when a module doesn't have any "
                "parameter that requires a gradient."
            )
        devices = {p.device for _, p in named}
        if len(devices) > 1:
            raise ValueError(
                "DistributedDataParallel's input module must be on the same type of devices, "
                f"but input module parameters locate in {sorted(str(d) for d in devices)}."
            )
        self.device = next(iter(devices))
        self.device_type = self.device.type
        if device_ids is not None and len(device_ids) > 1:
            raise ValueError("device_ids can only be None or contain a single element.")
        if device_ids is not None and self.device_type == "cpu":
            raise ValueError(
                "DistributedDataParallel device_ids and output_device arguments only work "
                "with single-device/multiple-device GPU modules or CPU modules, but got "
                f"device_ids {device_ids}, output_device {output_device}, and module "
                f"parameters { ({p.device for _, p in named}) }."
            )
        self.device_ids = (
            None
            if device_ids is None
            else [
                cudalite.device("cuda", d) if isinstance(d, int) else cudalite.device(d)
                for d in device_ids
            ]
        )
        self.output_device = output_device
        self.module = module
        self.dim = dim
        self.broadcast_buffers = broadcast_buffers
        self.find_unused_parameters = find_unused_parameters
        self.gradient_as_bucket_view = gradient_as_bucket_view
        self.static_graph = static_graph
        self.require_backward_grad_sync = True
        self.require_forward_param_sync = True
        self.bucket_bytes_cap = int((25 if bucket_cap_mb is None else bucket_cap_mb) * 1024 * 1024)
        self._world_size = dist.get_world_size(self.process_group)
        self._rank = dist.get_rank(self.process_group)
        self._names = {id(p): n for n, p in named}
        self._params = [p for _, p in named]
        if init_sync:
            self._sync_module_states()
        self._build_buckets()
        self._hooks = []
        ref = weakref.ref(self)
        for bi, b in enumerate(self._buckets):
            for i, p in enumerate(b.params):
                self._hooks.append(
                    p.register_post_accumulate_grad_hook(
                        lambda param, bi=bi, i=i: _hook(ref, bi, i, param)
                    )
                )
        self._reset()

    # ---- setup ----

    def _sync_module_states(self):
        from cudalite import distributed as dist

        states = list(self.module.parameters()) + list(self.module.buffers())
        if self._world_size == 1 or not states:
            return
        with cudalite.no_grad():
            for chunk in _take_tensors(states, _BROADCAST_BUCKET_BYTES):
                flat = _flatten_dense_tensors([t.detach() for t in chunk])
                dist.broadcast(
                    flat, src=dist.get_global_rank(self.process_group, 0), group=self.process_group
                )
                for t, v in zip(chunk, _unflatten_dense_tensors(flat, chunk), strict=True):
                    t.detach().copy_(v)

    def _build_buckets(self):
        order = list(reversed(self._params))
        groups, cur, size = [], [], 0
        cap = min(_DEFAULT_FIRST_BUCKET_BYTES, self.bucket_bytes_cap)
        for p in order:
            nbytes = p.numel() * p.element_size()
            if cur and (p.dtype != cur[0].dtype or size + nbytes > cap):
                groups.append(cur)
                cur, size = [], 0
                cap = self.bucket_bytes_cap
            cur.append(p)
            size += nbytes
        if cur:
            groups.append(cur)
        self._buckets = [_Bucket(i, g, self.device) for i, g in enumerate(groups)]
        if self.gradient_as_bucket_view:
            for b in self._buckets:
                for i, p in enumerate(b.params):
                    if p.grad is not None:
                        b.view(i).copy_(p.grad)
                    p.grad = b.view(i)

    def _reset(self):
        for b in self._buckets:
            b.pending = len(b.params)
            b.work = None
        self._ready = [[False] * len(b.params) for b in self._buckets]
        self._next = 0
        self._started = False
        self._used = None

    # ---- forward ----

    def forward(self, *inputs, **kwargs):
        if self._started and self._next < len(self._buckets):
            missing = [
                self._names[id(b.params[i])]
                for bi, b in enumerate(self._buckets)
                for i in range(len(b.params))
                if not self._ready[bi][i]
            ]
            raise RuntimeError(_UNFINISHED.format(rank=self._rank, names=", ".join(missing)))
        self._reset()
        # As torch: buffers are re-broadcast only in forwards whose backward synchronises
        # (an evaluation under no_grad on rank 0 alone issues no collective).
        self.require_forward_param_sync = (
            cudalite.is_grad_enabled() and self.require_backward_grad_sync
        )
        if self.broadcast_buffers and self.require_forward_param_sync:
            self._sync_buffers()
        if self.device_ids:
            inputs = _to_device(inputs, self.device_ids[0])
            kwargs = _to_device(kwargs, self.device_ids[0])
        out = self.module(*inputs, **kwargs)
        if cudalite.is_grad_enabled() and self.require_backward_grad_sync:
            if self.find_unused_parameters:
                self._mark_unused(out)
        return out

    def _sync_buffers(self):
        from cudalite import distributed as dist

        bufs = list(self.module.buffers())
        if self._world_size == 1 or not bufs:
            return
        with cudalite.no_grad():
            for chunk in _take_tensors(bufs, _BROADCAST_BUCKET_BYTES):
                flat = _flatten_dense_tensors(chunk)
                dist.broadcast(
                    flat, src=dist.get_global_rank(self.process_group, 0), group=self.process_group
                )
                for t, v in zip(chunk, _unflatten_dense_tensors(flat, chunk), strict=True):
                    t.copy_(v)

    def _mark_unused(self, out):
        """Parameters the output does not depend on are ready now (their bucket slot is
        zero), so their buckets still complete."""
        seen, used = set(), set()
        stack = [t.grad_fn for t in _tensors_in(out, []) if t.grad_fn is not None]
        stack += [t._acc for t in _tensors_in(out, []) if "_acc" in t.__dict__]
        for t in _tensors_in(out, []):
            if t.grad_fn is None and t.requires_grad:
                used.add(id(t))
        while stack:
            node = stack.pop()
            if node is None or id(node) in seen:
                continue
            seen.add(id(node))
            var = getattr(node, "variable", None)
            if var is not None:
                used.add(id(var))
            for nxt, _ in node.next_functions:
                if nxt is not None:
                    stack.append(nxt)
        self._used = used
        for bi, b in enumerate(self._buckets):
            for i, p in enumerate(b.params):
                if id(p) not in used:
                    b.view(i).zero_()
                    self._mark_ready(bi, i)

    # ---- backward ----

    def _on_grad(self, bi, i, param):
        if not self.require_backward_grad_sync:
            return
        b = self._buckets[bi]
        if self._ready[bi][i]:
            return
        self._started = True
        view = b.view(i)
        g = param.grad
        if g is None:
            view.zero_()
        elif g is not view:  # with gradient_as_bucket_view, .grad is usually the slot itself
            view.copy_(g)
            if self.gradient_as_bucket_view:
                param.grad = view
        self._mark_ready(bi, i)

    def _mark_ready(self, bi, i):
        from cudalite import distributed as dist

        self._started = True
        self._ready[bi][i] = True
        b = self._buckets[bi]
        b.pending -= 1
        while self._next < len(self._buckets) and self._buckets[self._next].pending == 0:
            nb = self._buckets[self._next]
            nb.buffer.div_(self._world_size)
            nb.work = dist.all_reduce(nb.buffer, group=self.process_group, async_op=True)
            self._next += 1
        if self._next == len(self._buckets):
            self._finalize()

    def _finalize(self):
        for b in self._buckets:
            b.work.wait()
            for i, p in enumerate(b.params):
                view = b.view(i)
                if self.gradient_as_bucket_view:
                    if p.grad is not view:
                        p.grad = view
                elif p.grad is None:
                    p.grad = view.clone()
                else:
                    p.grad.copy_(view)

    # ---- user controls ----

    @contextlib.contextmanager
    def no_sync(self):
        """Gradients accumulate locally inside the block; the first backward after it
        all-reduces the accumulated ones."""
        old = self.require_backward_grad_sync
        self.require_backward_grad_sync = False
        try:
            yield
        finally:
            self.require_backward_grad_sync = old

    def _get_ddp_logging_data(self):
        return {
            "world_size": self._world_size,
            "bucket_cap_bytes": self.bucket_bytes_cap,
            "num_buckets": len(self._buckets),
            "find_unused_parameters": self.find_unused_parameters,
            "gradient_as_bucket_view": self.gradient_as_bucket_view,
        }


def _hook(ref, bi, i, param):
    ddp = ref()
    if ddp is not None:
        ddp._on_grad(bi, i, param)
