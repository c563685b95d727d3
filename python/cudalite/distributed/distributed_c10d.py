"""Process groups and collectives: the torch.distributed subset that training scripts use.

``init_process_group`` makes the default group (rendezvous through a store, see
rendezvous.py); collectives dispatch on the tensor's device to the group's backend for it:
NCCL for CUDA tensors (_backend_nccl.py), the store-based CPU backend named "gloo" for CPU
tensors (_backend_store.py). ``backend=None`` gives both, as torch's "cpu:gloo,cuda:nccl".
"""

from __future__ import annotations

import io
import os
import pickle
import time
from datetime import timedelta

import cudalite
from cudalite.distributed import _backend_nccl as _nb
from cudalite.distributed._backend_store import ProcessGroupStore
from cudalite.distributed._store import PrefixStore, Store
from cudalite.distributed._work import RedOpType, ReduceOp, Work, _as_op
from cudalite.distributed.rendezvous import rendezvous

__all__ = [
    "Backend",
    "GroupMember",
    "ProcessGroup",
    "all_gather",
    "all_gather_into_tensor",
    "all_gather_object",
    "all_reduce",
    "barrier",
    "broadcast",
    "broadcast_object_list",
    "destroy_process_group",
    "get_backend",
    "get_global_rank",
    "get_group_rank",
    "get_node_local_rank",
    "get_process_group_ranks",
    "get_rank",
    "get_world_size",
    "group",
    "init_process_group",
    "irecv",
    "is_available",
    "is_gloo_available",
    "is_initialized",
    "is_mpi_available",
    "is_nccl_available",
    "is_torchelastic_launched",
    "is_ucc_available",
    "isend",
    "new_group",
    "recv",
    "reduce",
    "reduce_scatter",
    "reduce_scatter_tensor",
    "send",
]

_NO_GROUP = (
    "Default process group has not been initialized, please make sure to call init_process_group."
)
default_pg_timeout = timedelta(minutes=30)
default_pg_nccl_timeout = timedelta(minutes=10)


class Backend(str):
    """A backend name: ``Backend("NCCL") == "nccl"``."""

    UNDEFINED = "undefined"
    GLOO = "gloo"
    NCCL = "nccl"
    backend_list = [UNDEFINED, GLOO, NCCL]

    def __new__(cls, name: str):
        if not isinstance(name, str):
            raise ValueError(f"Backend constructor parameter must be string-ish, got {name!r}")
        value = name.lower()
        if value not in (cls.GLOO, cls.NCCL, cls.UNDEFINED) and ":" not in value:
            raise ValueError(f"Invalid backend: '{name}'")
        return super().__new__(cls, value)


class ProcessGroup:
    """A group of ranks with its backends (per device type) and its store."""

    def __init__(self, store, rank, size, global_ranks, backends, name, backend_name):
        self._store = store
        self._rank = rank
        self._size = size
        self._global_ranks = global_ranks  # group rank -> global rank
        self._backends = backends  # "cpu" / "cuda" -> backend object
        self._name = name
        self._backend_name = backend_name

    def rank(self) -> int:
        return self._rank

    def size(self) -> int:
        return self._size

    def name(self) -> str:
        return self._name

    @property
    def group_name(self) -> str:
        return self._name

    def _get_backend_name(self) -> str:
        return self._backend_name

    def _backend_for(self, device_type: str):
        b = self._backends.get(device_type)
        if b is None:
            if device_type == "cpu" and "cuda" in self._backends:
                raise ValueError("Tensors must be CUDA and dense")
            b = self._backends.get("cpu")
        if b is None:
            raise RuntimeError(f"No backend type associated with device type {device_type}")
        return b

    def __repr__(self):
        return f"<cudalite.distributed.ProcessGroup {self._name} rank {self._rank}/{self._size}>"


class _NonGroupMember:
    def __repr__(self):
        return "<object object at NON_GROUP_MEMBER>"


class _World:
    default_pg: ProcessGroup | None = None
    groups: list[ProcessGroup] = []
    group_count = 0


_world = _World()


class _GroupNamespace:
    """``dist.group.WORLD``: the default group (None before init_process_group)."""

    @property
    def WORLD(self):  # noqa: N802 (torch's name)
        return _world.default_pg


class GroupMember(_GroupNamespace):
    NON_GROUP_MEMBER = _NonGroupMember()


group = _GroupNamespace()
GroupMember.WORLD = property(lambda self: _world.default_pg)  # type: ignore[assignment]


def is_available() -> bool:
    return True


def is_nccl_available() -> bool:
    from cudalite.cuda import nccl

    return nccl._loaded()


def is_gloo_available() -> bool:
    return True


def is_torchelastic_launched() -> bool:
    return os.environ.get("TORCHELASTIC_RUN_ID") is not None


def is_mpi_available() -> bool:
    return False


def is_ucc_available() -> bool:
    return False


def get_node_local_rank(fallback_rank: int | None = None) -> int:
    """This process's rank on its node: LOCAL_RANK (set by the launchers), else
    ``fallback_rank``."""
    if "LOCAL_RANK" in os.environ:
        return int(os.environ["LOCAL_RANK"])
    if fallback_rank is not None:
        return int(fallback_rank)
    raise RuntimeError(
        "LOCAL_RANK is not in the environment. Consider passing fallback_rank to allow "
        "`get_node_local_rank` to work, assuming you are not running in a multi-device "
        "context and want the code to run locally instead."
    )


def is_initialized() -> bool:
    return _world.default_pg is not None


def _default_pg() -> ProcessGroup:
    if _world.default_pg is None:
        raise ValueError(_NO_GROUP)
    return _world.default_pg


def _group(g) -> ProcessGroup | None:
    if g is None:
        return _default_pg()
    if g is GroupMember.NON_GROUP_MEMBER:
        return None
    return g


def _make_backends(name, store, rank, size, timeout, device_id):
    if name is None:  # torch's default: NCCL for CUDA tensors where it can run
        usable = cudalite.cuda.is_available() and is_nccl_available()
        name = "cpu:gloo,cuda:nccl" if usable else "gloo"
    name = str(name).lower()
    backends = {}
    made = {}  # one backend object per kind: its collectives are numbered in one sequence
    for part in name.split(","):
        dev, _, b = part.rpartition(":")
        if b not in (Backend.NCCL, Backend.GLOO):
            raise ValueError(f"Invalid backend: '{b}'")
        if b not in made:
            if b == Backend.NCCL:
                made[b] = _nb.ProcessGroupNCCL(
                    PrefixStore("nccl", store),
                    rank,
                    size,
                    timeout or default_pg_nccl_timeout,
                    device_id,
                )
            else:
                made[b] = ProcessGroupStore(
                    PrefixStore("gloo", store), rank, size, timeout or default_pg_timeout
                )
        devs = [dev] if dev else (["cuda"] if b == Backend.NCCL else ["cpu", "cuda"])
        for d in devs:
            backends.setdefault(d, made[b])
    backend_name = name if "," in name else name.rpartition(":")[2]
    return backends, backend_name


def init_process_group(
    backend=None,
    init_method=None,
    timeout=None,
    world_size=-1,
    rank=-1,
    store=None,
    group_name="",
    pg_options=None,
    device_id=None,
):
    """Makes the default process group: backend "nccl" (CUDA tensors), "gloo" (CPU tensors,
    through the store) or None (both); rendezvous through ``init_method`` ("env://" by
    default: RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT, as torchrun sets them), or a
    ``store`` with ``rank`` and ``world_size``."""
    if _world.default_pg is not None:
        raise ValueError("trying to initialize the default process group twice!")
    if store is not None and init_method is not None:
        raise ValueError("Cannot specify both init_method and store.")
    if timeout is not None and not isinstance(timeout, timedelta):
        raise TypeError(
            f"Expected timeout argument to be of type datetime.timedelta, got {timeout}"
        )
    if device_id is not None:
        device_id = (
            cudalite.device(device_id)
            if not isinstance(device_id, int)
            else (cudalite.device("cuda", device_id))
        )
        if device_id.type != "cuda" or device_id.index is None:
            raise ValueError(
                "init_process_group device_id parameter must be a device with an index"
            )
    if store is not None:
        if world_size <= 0:
            raise ValueError("world_size must be positive if using store")
        if rank < 0:
            raise ValueError("rank must be non-negative if using store")
    else:
        if init_method is None:
            init_method = "env://"
        store, rank, world_size = rendezvous(
            init_method, rank, world_size, timeout=timeout or default_pg_timeout
        )
    store = PrefixStore("default_pg", store)
    if timeout is not None:
        store.set_timeout(timeout)
    backends, name = _make_backends(backend, store, rank, world_size, timeout, device_id)
    pg = ProcessGroup(store, rank, world_size, list(range(world_size)), backends, "0", name)
    pg.bound_device_id = device_id
    _world.default_pg = pg
    _world.groups = [pg]
    _world.group_count = 1


def destroy_process_group(group=None):
    """Destroys ``group`` (every group, with the default one, when None)."""
    if group is None:
        if _world.default_pg is None:
            raise AssertionError("Process group cannot be None")
        for g in _world.groups:
            _shutdown(g)
        _leave(_world.default_pg)
        _world.default_pg = None
        _world.groups = []
        _world.group_count = 0
        return
    if group is GroupMember.NON_GROUP_MEMBER:
        return
    if group not in _world.groups:
        raise ValueError("Invalid process group specified")
    _shutdown(group)
    _world.groups.remove(group)
    if group is _world.default_pg:
        _world.default_pg = None


def _leave(pg: ProcessGroup) -> None:
    """Every rank checks out of the store; rank 0, which serves it, waits (a while) for the
    others, so that none loses the store in the middle of its last collective."""
    try:
        pg._store.add("destroyed", 1)
        if pg.rank() == 0:
            deadline = time.monotonic() + 30
            while int(pg._store.add("destroyed", 0)) < pg.size() and time.monotonic() < deadline:
                time.sleep(0.005)
    except Exception:
        pass


def _shutdown(pg: ProcessGroup) -> None:
    seen = set()
    for b in pg._backends.values():
        if id(b) not in seen:
            seen.add(id(b))
            b.shutdown()


def get_rank(group=None) -> int:
    pg = _group(group)
    return -1 if pg is None else pg.rank()


def get_world_size(group=None) -> int:
    pg = _group(group)
    return -1 if pg is None else pg.size()


def get_backend(group=None) -> str:
    pg = _group(group)
    if pg is None:
        raise ValueError("Invalid process group specified")
    return Backend(pg._backend_name) if ":" not in pg._backend_name else pg._backend_name


def get_process_group_ranks(group) -> list[int]:
    pg = _group(group)
    return list(pg._global_ranks)


def get_global_rank(group, group_rank: int) -> int:
    pg = _group(group)
    if pg is _world.default_pg:
        return group_rank
    if not 0 <= group_rank < pg.size():
        raise ValueError(f"Group rank {group_rank} is not part of group {pg}")
    return pg._global_ranks[group_rank]


def get_group_rank(group, global_rank: int) -> int:
    pg = _group(group)
    if pg is _world.default_pg:
        return global_rank
    try:
        return pg._global_ranks.index(global_rank)
    except ValueError:
        raise ValueError(f"Global rank {global_rank} is not part of group {pg}") from None


def new_group(
    ranks=None,
    timeout=None,
    backend=None,
    pg_options=None,
    use_local_synchronization=False,
    group_desc=None,
    device_id=None,
):
    """A group of some ranks. Every rank of the default group must call it (in the same
    order as the other new_group calls); ranks outside ``ranks`` get NON_GROUP_MEMBER."""
    world = _default_pg()
    global_rank = world.rank()
    ranks = sorted(range(world.size()) if ranks is None else ranks)
    for r in ranks:
        if not 0 <= r < world.size():
            raise ValueError(
                "The new group's rank should be within the world_size set by init_process_group"
            )
    gid = _world.group_count
    _world.group_count += 1
    if global_rank not in ranks:
        return GroupMember.NON_GROUP_MEMBER
    store = PrefixStore(str(gid), world._store)
    rank = ranks.index(global_rank)
    if backend is None:
        backend = world._backend_name
    device_id = device_id or getattr(world, "bound_device_id", None)
    backends, name = _make_backends(backend, store, rank, len(ranks), timeout, device_id)
    pg = ProcessGroup(store, rank, len(ranks), ranks, backends, str(gid), name)
    pg.bound_device_id = device_id
    _world.groups.append(pg)
    return pg


# ---- collectives ----


def _check_tensor(t, name="tensor"):
    if not isinstance(t, cudalite.Tensor):
        raise TypeError(
            f"Invalid function argument. Expected parameter `{name}` of type torch.Tensor\n"
            f"             but got {type(t)} instead."
        )


def _check_list(ts, name):
    if not isinstance(ts, list) or not all(isinstance(t, cudalite.Tensor) for t in ts):
        raise TypeError(
            f"Invalid function argument. Expected parameter `{name}` of type "
            "List[torch.Tensor]\n             but got "
            f"{type(ts)} instead."
        )


def _done(pg, async_op, tensors=()):
    """The value a collective returns: None, or a completed Work for async_op."""
    if not async_op:
        return None
    return Work(None, None, tuple(tensors), None)


def _cuda_ordered_work(backend, device, tensors):
    """A Work for an NCCL call already queued on the current stream of ``device``."""
    ev = cudalite.cuda.Event()
    ev.record(cudalite.cuda.current_stream(device))
    return Work(ev, device, tuple(tensors), backend)


def _src_in_group(pg, src, group_src, what="src"):
    if group_src is not None:
        if src is not None:
            raise ValueError(f"Can not specify both group_{what} and {what}")
        return group_src
    if src is None:
        return 0
    return get_group_rank(pg, src) if pg is not _world.default_pg else src


def all_reduce(tensor, op=ReduceOp.SUM, group=None, async_op=False):
    """Reduces ``tensor`` across the group in place (every rank gets the result)."""
    _check_tensor(tensor)
    pg = _group(group)
    if pg is None:
        return None
    op = _as_op(op)
    b = pg._backend_for("cuda" if tensor.is_cuda else "cpu")
    if b.backend == "nccl":  # the binding checks the tensor is dense (torch's messages)
        return b.launch(_nb.ALL_REDUCE, tensor, tensor, _nb.nccl_op(op), 0, async_op, (tensor,))
    b.all_reduce(tensor, op)
    return _done(pg, async_op, (tensor,))


def reduce(tensor, dst=None, op=ReduceOp.SUM, group=None, async_op=False, group_dst=None):
    """Reduces ``tensor`` across the group into rank ``dst``'s tensor."""
    _check_tensor(tensor)
    pg = _group(group)
    if pg is None:
        return None
    root = _src_in_group(pg, dst, group_dst, "dst")
    op = _as_op(op)
    b = pg._backend_for("cuda" if tensor.is_cuda else "cpu")
    if isinstance(b, _nb.ProcessGroupNCCL):
        _nb.check_tensor(tensor)
        return b.launch(_nb.REDUCE, tensor, tensor, _nb.nccl_op(op), root, async_op, (tensor,))
    b.reduce(tensor, root, op)
    return _done(pg, async_op, (tensor,))


def broadcast(tensor, src=None, group=None, async_op=False, group_src=None):
    """Copies rank ``src``'s ``tensor`` into every rank's."""
    _check_tensor(tensor)
    pg = _group(group)
    if pg is None:
        return None
    root = _src_in_group(pg, src, group_src)
    b = pg._backend_for("cuda" if tensor.is_cuda else "cpu")
    if b.backend == "nccl":  # the binding checks the tensor is dense (torch's messages)
        return b.launch(_nb.BROADCAST, tensor, tensor, 0, root, async_op, (tensor,))
    b.broadcast(tensor, root)
    return _done(pg, async_op, (tensor,))


def all_gather_into_tensor(output_tensor, input_tensor, group=None, async_op=False):
    """``output_tensor`` = the ranks' ``input_tensor`` concatenated in rank order."""
    _check_tensor(output_tensor, "output_tensor")
    _check_tensor(input_tensor, "input_tensor")
    pg = _group(group)
    if pg is None:
        return None
    if output_tensor.dtype != input_tensor.dtype:
        raise TypeError("output tensor must have the same type as input tensor")
    if output_tensor.numel() != input_tensor.numel() * pg.size():
        raise ValueError("output tensor size must be equal to world_size times input tensor size")
    b = pg._backend_for("cuda" if input_tensor.is_cuda else "cpu")
    if isinstance(b, _nb.ProcessGroupNCCL):
        _nb.check_tensor(input_tensor)
        _nb.check_tensor(output_tensor)
        keep = (output_tensor, input_tensor)
        return b.launch(_nb.ALL_GATHER, input_tensor, output_tensor, 0, 0, async_op, keep)
    flat = output_tensor.view(-1)
    n = input_tensor.numel()
    b.all_gather(
        [flat.narrow(0, i * n, n).view(input_tensor.shape) for i in range(pg.size())], input_tensor
    )
    return _done(pg, async_op, (output_tensor,))


def all_gather(tensor_list, tensor, group=None, async_op=False):
    """``tensor_list[i]`` = rank i's ``tensor``."""
    _check_list(tensor_list, "tensor_list")
    _check_tensor(tensor)
    pg = _group(group)
    if pg is None:
        return None
    if len(tensor_list) != pg.size():
        raise ValueError(
            f"tensor_list must have {pg.size()} tensors (the group's size), got {len(tensor_list)}"
        )
    b = pg._backend_for("cuda" if tensor.is_cuda else "cpu")
    if isinstance(b, _nb.ProcessGroupNCCL):
        _nb.check_tensor(tensor)
        flat = cudalite.empty(
            (pg.size() * tensor.numel(),), dtype=tensor.dtype, device=tensor.device
        )
        b.launch(_nb.ALL_GATHER, tensor.contiguous(), flat, 0, 0, False)
        n = tensor.numel()
        for i, out in enumerate(tensor_list):
            out.copy_(flat.narrow(0, i * n, n).view(out.shape))
        if async_op:
            return _cuda_ordered_work(b, tensor.get_device(), tensor_list)
        return None
    b.all_gather(tensor_list, tensor)
    return _done(pg, async_op, tensor_list)


def reduce_scatter_tensor(output, input, op=ReduceOp.SUM, group=None, async_op=False):
    """``output`` = the rank's 1/size of the reduction of every rank's ``input``."""
    _check_tensor(output, "output")
    _check_tensor(input, "input")
    pg = _group(group)
    if pg is None:
        return None
    if output.dtype != input.dtype:
        raise TypeError("input tensor must be the same type as the output tensor.")
    if input.numel() != output.numel() * pg.size():
        raise ValueError("input tensor must be the same size as output size times world size")
    op = _as_op(op)
    b = pg._backend_for("cuda" if input.is_cuda else "cpu")
    if isinstance(b, _nb.ProcessGroupNCCL):
        _nb.check_tensor(input)
        _nb.check_tensor(output)
        keep = (output, input)
        return b.launch(_nb.REDUCE_SCATTER, input, output, _nb.nccl_op(op), 0, async_op, keep)
    flat = input.reshape(-1)
    n = output.numel()
    b.reduce_scatter(output, [flat.narrow(0, i * n, n) for i in range(pg.size())], op)
    return _done(pg, async_op, (output,))


def reduce_scatter(output, input_list, op=ReduceOp.SUM, group=None, async_op=False):
    """``output`` = the reduction of every rank's ``input_list[rank]``."""
    _check_tensor(output, "output")
    _check_list(input_list, "input_list")
    pg = _group(group)
    if pg is None:
        return None
    if len(input_list) != pg.size():
        raise ValueError(
            f"input_list must have {pg.size()} tensors (the group's size), got {len(input_list)}"
        )
    b = pg._backend_for("cuda" if output.is_cuda else "cpu")
    if isinstance(b, _nb.ProcessGroupNCCL):
        flat = cudalite.cat([t.reshape(-1) for t in input_list])
        return reduce_scatter_tensor(output, flat, op, group, async_op)
    b.reduce_scatter(output, input_list, _as_op(op))
    return _done(pg, async_op, (output,))


def barrier(group=None, async_op=False, device_ids=None):
    """Waits until every rank of the group has reached the barrier. On NCCL it all-reduces
    one element on the group's device and (as torch) waits for it on the host."""
    pg = _group(group)
    if pg is None:
        return None
    b = pg._backends.get("cuda")
    if isinstance(b, _nb.ProcessGroupNCCL) and (pg._backends.get("cpu") is None or device_ids):
        device = b.guess_device(device_ids)
        t = cudalite.zeros((1,), device=f"cuda:{device}")
        work = b.launch(_nb.ALL_REDUCE, t, t, 0, 0, async_op, (t,))
        if async_op:
            return work
        cudalite.cuda.synchronize(device)
        if b._error is not None:
            raise b._error
        return None
    pg._backend_for("cpu").barrier()
    return _done(pg, async_op)


def send(tensor, dst=None, group=None, tag=0, group_dst=None):
    """Sends ``tensor`` to rank ``dst`` (which calls recv)."""
    _check_tensor(tensor)
    isend(tensor, dst, group, tag, group_dst)


def isend(tensor, dst=None, group=None, tag=0, group_dst=None):
    _check_tensor(tensor)
    pg = _group(group)
    if pg is None:
        return None
    peer = _src_in_group(pg, dst, group_dst, "dst")
    if peer == pg.rank():
        raise ValueError(
            "Invalid destination rank: should not be the same as the rank of the current process."
        )
    b = pg._backend_for("cuda" if tensor.is_cuda else "cpu")
    if isinstance(b, _nb.ProcessGroupNCCL):
        _nb.check_tensor(tensor)
        return b.launch(_nb.SEND, tensor, None, 0, peer, True, (tensor,))
    b.send(tensor, peer)
    return _done(pg, True, (tensor,))


def recv(tensor, src=None, group=None, tag=0, group_src=None):
    """Receives into ``tensor`` from rank ``src``; returns the sender's rank."""
    _check_tensor(tensor)
    pg = _group(group)
    if pg is None:
        return -1
    work = irecv(tensor, src, group, tag, group_src)
    if work is not None:
        work.wait()
    return src if src is not None else get_global_rank(pg, group_src)


def irecv(tensor, src=None, group=None, tag=0, group_src=None):
    _check_tensor(tensor)
    pg = _group(group)
    if pg is None:
        return None
    if src is None and group_src is None:
        raise RuntimeError("ProcessGroupNCCL does not support recvAnysource")
    peer = _src_in_group(pg, src, group_src)
    if peer == pg.rank():
        raise ValueError(
            "Invalid source rank: should not be the same as the rank of the current process."
        )
    b = pg._backend_for("cuda" if tensor.is_cuda else "cpu")
    if isinstance(b, _nb.ProcessGroupNCCL):
        _nb.check_tensor(tensor)
        return b.launch(_nb.RECV, None, tensor, 0, peer, True, (tensor,))
    b.recv(tensor, peer)
    return _done(pg, True, (tensor,))


# ---- Python objects, pickled through the group's CPU path (the store) ----


def _object_exchange(pg, data: bytes | None, src: int | None):
    b = pg._backends.get("cpu")
    if b is None:  # an NCCL-only group: a CPU path over the same store
        b = pg._object_backend = getattr(pg, "_object_backend", None) or ProcessGroupStore(
            PrefixStore("objects", pg._store), pg.rank(), pg.size(), default_pg_timeout
        )
    return b.exchange(data, "object collective", src)


def all_gather_object(object_list, obj, group=None):
    """``object_list[i]`` = rank i's ``obj`` (pickled)."""
    pg = _group(group)
    if pg is None:
        return
    buf = io.BytesIO()
    pickle.Pickler(buf).dump(obj)
    parts = _object_exchange(pg, buf.getvalue(), None)
    for i, p in enumerate(parts):
        object_list[i] = pickle.loads(p)


def broadcast_object_list(object_list, src=None, group=None, device=None, group_src=None):
    """Every rank's ``object_list`` becomes rank ``src``'s (pickled)."""
    pg = _group(group)
    if pg is None:
        return
    root = _src_in_group(pg, src, group_src)
    data = pickle.dumps(list(object_list)) if pg.rank() == root else None
    (part,) = _object_exchange(pg, data, root)
    if pg.rank() != root:
        object_list[:] = pickle.loads(part)


RedOpType = RedOpType
Store = Store
