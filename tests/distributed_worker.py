"""One rank of a multi-process scenario for tests/test_distributed_multiprocess.py and
tests/test_nn_parallel_distributed.py, started by ``python -m cudalite.distributed.run``
(or torchrun): ``distributed_worker.py SCENARIO BACKEND OUTDIR``. Each rank writes what it
saw to OUTDIR/rank<R>.json; the tests compare those with what is expected."""

from __future__ import annotations

import json
import os
import sys
import time
from datetime import timedelta

import cudalite
import cudalite.distributed as dist
import cudalite.nn as nn


def _device(backend):
    if backend == "nccl":
        local = int(os.environ["LOCAL_RANK"])
        cudalite.cuda.set_device(local)
        return cudalite.device("cuda", local)
    return cudalite.device("cpu")


def collectives(backend, out):
    dev = _device(backend)
    dist.init_process_group(backend, device_id=dev if backend == "nccl" else None)
    r, n = dist.get_rank(), dist.get_world_size()
    res = {"rank": r, "world": n, "backend": dist.get_backend()}
    dtypes = [cudalite.float32, cudalite.int64]
    if backend == "nccl":
        dtypes += [cudalite.float16, cudalite.bfloat16]
    for dt in dtypes:
        name = str(dt).split(".")[-1]
        for op in ("SUM", "MAX", "MIN", "PRODUCT") + (("AVG",) if dt.is_floating_point else ()):
            t = cudalite.tensor([r + 1, 2 * r + 3], dtype=dt, device=dev)
            dist.all_reduce(t, op=getattr(dist.ReduceOp, op))
            res[f"all_reduce_{op}_{name}"] = t.float().tolist()
    t = cudalite.tensor([float(r)], device=dev)
    dist.broadcast(t, src=1)
    res["broadcast"] = t.tolist()
    t = cudalite.tensor([float(r + 1)], device=dev)
    dist.reduce(t, dst=0)
    res["reduce"] = t.tolist()
    o = cudalite.empty((2 * n,), device=dev)
    dist.all_gather_into_tensor(o, cudalite.tensor([r, r + 0.5], device=dev))
    res["all_gather_into_tensor"] = o.tolist()
    lst = [cudalite.empty((1,), device=dev) for _ in range(n)]
    dist.all_gather(lst, cudalite.tensor([r * 10.0], device=dev))
    res["all_gather"] = [x.item() for x in lst]
    o = cudalite.empty((1,), device=dev)
    dist.reduce_scatter_tensor(o, cudalite.arange(n, dtype=cudalite.float32, device=dev) + r)
    res["reduce_scatter_tensor"] = o.tolist()
    if r == 0:
        dist.send(cudalite.tensor([42.0], device=dev), dst=1)
    elif r == 1:
        x = cudalite.empty((1,), device=dev)
        res["recv_src"] = dist.recv(x, src=0)
        res["recv"] = x.tolist()
    # async: wait() orders the current stream; a kernel after it reads the reduced value.
    t = cudalite.full((1 << 16,), float(r + 1), device=dev)
    w = dist.all_reduce(t, async_op=True)
    w.wait()
    s = t.sum()
    res["async_sum"] = s.item()
    for _ in range(200):
        if w.is_completed():
            break
        time.sleep(0.01)
    res["async_completed"] = w.is_completed()
    dist.barrier()
    objs = [None] * n
    dist.all_gather_object(objs, {"r": r})
    res["objects"] = objs
    sub = dist.new_group([0, 1])
    t = cudalite.tensor([1.0], device=dev)
    dist.all_reduce(t, group=sub)
    res["subgroup"] = [dist.get_rank(sub), dist.get_world_size(sub), t.item()]
    dist.destroy_process_group()
    res["initialized_after"] = dist.is_initialized()
    return res


def _model(dev):
    cudalite.manual_seed(0)
    return nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 4)).to(dev)


def _data(dev):
    g = cudalite.Generator()
    g.manual_seed(1)
    x = cudalite.randn((8, 8), generator=g).to(dev)
    y = cudalite.randn((8, 4), generator=g).to(dev)
    return x, y


def ddp(backend, out, **opts):
    """A few SGD steps with DDP on each rank's half of the batch; rank 0 also trains the
    same model on the whole batch in one process: the parameters must agree."""
    dev = _device(backend)
    dist.init_process_group(backend)
    r, n = dist.get_rank(), dist.get_world_size()
    from cudalite.nn.parallel import DistributedDataParallel as DDP

    # Each rank starts from different weights: DDP's initial broadcast makes them rank 0's.
    cudalite.manual_seed(100 + r)
    model = _model(dev)
    if r != 0:
        with cudalite.no_grad():
            for p in model.parameters():
                p.add_(1.0)
    ddp_model = DDP(model, device_ids=[dev.index] if backend == "nccl" else None, **opts)
    opt = cudalite.optim.SGD(ddp_model.parameters(), lr=0.1)
    x, y = _data(dev)
    xs, ys = x.chunk(n)[r], y.chunk(n)[r]
    steps = 3
    for _ in range(steps):
        opt.zero_grad()
        loss = ((ddp_model(xs) - ys) ** 2).mean()
        loss.backward()
        opt.step()
    res = {"params": [p.detach().cpu().reshape(-1).tolist() for p in model.parameters()]}
    if r == 0:
        ref = _model(dev)
        ropt = cudalite.optim.SGD(ref.parameters(), lr=0.1)
        for _ in range(steps):
            ropt.zero_grad()
            pairs = zip(x.chunk(n), y.chunk(n), strict=True)
            loss = sum(((ref(xi) - yi) ** 2).mean() for xi, yi in pairs)
            (loss / n).backward()
            ropt.step()
        res["ref"] = [p.detach().cpu().reshape(-1).tolist() for p in ref.parameters()]
    res["buckets"] = ddp_model._get_ddp_logging_data()["num_buckets"]
    dist.destroy_process_group()
    return res


def ddp_no_sync(backend, out):
    """Two micro-batches, the first under no_sync: the same as one step on both."""
    dev = _device(backend)
    dist.init_process_group(backend)
    r, n = dist.get_rank(), dist.get_world_size()
    from cudalite.nn.parallel import DistributedDataParallel as DDP

    model = _model(dev)
    ddp_model = DDP(model, gradient_as_bucket_view=True)
    x, y = _data(dev)
    parts = list(zip(x.chunk(2 * n), y.chunk(2 * n), strict=True))
    mine = parts[2 * r : 2 * r + 2]
    with ddp_model.no_sync():
        ((ddp_model(mine[0][0]) - mine[0][1]) ** 2).mean().backward()
    local_after_no_sync = [p.grad.cpu().reshape(-1).tolist() for p in model.parameters()]
    ((ddp_model(mine[1][0]) - mine[1][1]) ** 2).mean().backward()
    res = {
        "grads": [p.grad.cpu().reshape(-1).tolist() for p in model.parameters()],
        "local": local_after_no_sync,
    }
    if r == 0:
        ref = _model(dev)
        for xi, yi in parts:
            ((ref(xi) - yi) ** 2).mean().backward()
        res["ref"] = [(p.grad / n).cpu().reshape(-1).tolist() for p in ref.parameters()]
    dist.destroy_process_group()
    return res


class _TwoHeads(nn.Module):
    def __init__(self):
        super().__init__()
        self.a = nn.Linear(4, 2)
        self.b = nn.Linear(4, 2)

    def forward(self, x, use_b=False):
        return self.b(x) if use_b else self.a(x)


def ddp_unused(backend, out):
    """A parameter unused in forward: find_unused_parameters lets backward finish; without
    it the next forward raises torch's error."""
    dev = _device(backend)
    dist.init_process_group(backend)
    from cudalite.nn.parallel import DistributedDataParallel as DDP

    cudalite.manual_seed(0)
    res = {}
    m = DDP(_TwoHeads().to(dev), find_unused_parameters=True)
    m(cudalite.ones((3, 4), device=dev)).sum().backward()
    res["unused_grad"] = m.module.b.weight.grad.abs().sum().item()
    res["used_grad"] = m.module.a.weight.grad.abs().sum().item()
    # an evaluation forward on rank 0 alone issues no collective (it would hang otherwise)
    m.module.register_buffer("step", cudalite.zeros((1,), device=dev))
    if dist.get_rank() == 0:
        with cudalite.no_grad():
            m(cudalite.ones((3, 4), device=dev))
    m2 = DDP(_TwoHeads().to(dev))
    m2(cudalite.ones((3, 4), device=dev)).sum().backward()
    try:
        m2(cudalite.ones((3, 4), device=dev))
        res["error"] = None
    except RuntimeError as e:
        res["error"] = str(e)
    dist.destroy_process_group()
    return res


def timeout(backend, out):
    """Rank 1 never joins rank 0's all-reduce: rank 0's ends with the timeout error."""
    dev = _device(backend)
    dist.init_process_group(backend, timeout=timedelta(seconds=2))
    r = dist.get_rank()
    res = {}
    dist.all_reduce(cudalite.ones((4,), device=dev))  # both ranks: the communicator exists
    if backend == "nccl":
        cudalite.cuda.synchronize()
    if r == 0:
        t = cudalite.ones((4,), device=dev)
        start = time.monotonic()
        try:
            dist.all_reduce(t)
            if backend == "nccl":
                cudalite.cuda.synchronize()
            res["error"] = None
        except RuntimeError as e:
            res["error"] = f"{type(e).__name__}: {e}"
        res["seconds"] = time.monotonic() - start
    else:
        time.sleep(6)
    return res


def collectives_one(backend, out):
    """A world of one on one GPU (NCCL refuses two ranks on one GPU)."""
    dev = _device(backend)
    dist.init_process_group(backend, device_id=dev)
    t = cudalite.tensor([1.0, 2.0], device=dev)
    dist.all_reduce(t)
    w = dist.all_reduce(t, op=dist.ReduceOp.MAX, async_op=True)
    w.wait()
    dist.barrier()
    res = {"sum": t.tolist(), "barrier": True}
    dist.destroy_process_group()
    return res


SCENARIOS = {
    "collectives_one": collectives_one,
    "collectives": collectives,
    "ddp": ddp,
    "ddp_bucket_view": lambda b, o: ddp(b, o, gradient_as_bucket_view=True, bucket_cap_mb=0.0001),
    "ddp_no_sync": ddp_no_sync,
    "ddp_unused": ddp_unused,
    "timeout": timeout,
}


if __name__ == "__main__":
    scenario, backend, outdir = sys.argv[1:4]
    result = SCENARIOS[scenario](backend, outdir)
    with open(os.path.join(outdir, f"rank{os.environ['RANK']}.json"), "w") as f:
        json.dump(result, f)
    sys.stdout.flush()
    os._exit(0) if scenario == "timeout" else None
