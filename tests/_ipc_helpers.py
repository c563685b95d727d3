"""What the processes of tests/test_multiprocessing.py run: spawned children import this
module by name, so their functions live here rather than in the test module. Producers run
as ``python -c "import _ipc_helpers as h; h.producer_...()"`` in a fresh interpreter (the
allocator's settings are per process), and each starts its consumer with ``spawn``."""

from __future__ import annotations

import os
import signal
import subprocess
import sys

import cudalite

HERE = os.path.dirname(os.path.abspath(__file__))
# The folder holding the cudalite under test (the source tree, or site-packages when installed).
PYTHON_DIR = os.path.dirname(os.path.dirname(os.path.abspath(cudalite.__file__)))
TIMEOUT = 120


def run_producer(name, *args, **env):
    """Runs ``producer_<name>(*args)`` in a fresh interpreter; returns (stdout, stderr)."""
    full_env = dict(os.environ, **env)
    full_env["PYTHONPATH"] = os.pathsep.join([HERE, PYTHON_DIR, full_env.get("PYTHONPATH", "")])
    code = f"import _ipc_helpers as h; h.producer_{name}(*{args!r})"
    r = subprocess.run(
        [sys.executable, "-c", code], env=full_env, capture_output=True, text=True, timeout=300
    )
    assert r.returncode == 0, r.stdout + r.stderr
    return r.stdout, r.stderr


def _start(target, *args):
    import cudalite.multiprocessing as mp

    ctx = mp.get_context("spawn")
    to_child, from_child = ctx.Queue(), ctx.Queue()
    p = ctx.Process(target=target, args=(to_child, from_child, *args))
    p.start()
    return p, to_child, from_child


# ---- §5.3.1 and §5.3.3: values, writes seen by the producer, one mapping per storage ----


def consumer_values(inbox, outbox):
    import cudalite
    from cudalite import _C

    t, s = inbox.get(timeout=TIMEOUT)
    seen = (t.cpu().tolist(), s.cpu().tolist(), s.storage_offset(), _C._cuda._ipc_open_calls())
    s.mul_(-1)  # write through the slice
    cudalite.cuda.synchronize()
    outbox.put(seen)
    again = inbox.get(timeout=TIMEOUT)  # the same storage, sent a second time
    outbox.put((again.cpu().tolist(), _C._cuda._ipc_open_calls(), _C._cuda._ipc_open_handles()))
    del t, s, again
    outbox.put(_C._cuda._ipc_open_handles())
    inbox.get(timeout=TIMEOUT)


def producer_values(expandable):
    import cudalite

    p, to_child, from_child = _start(consumer_values)
    x = cudalite.arange(10.0, device="cuda")
    assert _is_expandable(x) == expandable
    to_child.put((x, x[3:7]))
    values, sliced, offset, calls = from_child.get(timeout=TIMEOUT)
    assert values == [float(i) for i in range(10)], values
    assert sliced == [3.0, 4.0, 5.0, 6.0] and offset == 3, (sliced, offset)
    # The tensor and its slice: one segment, one cudaIpcOpenMemHandle (pages: none).
    assert calls == (0 if expandable else 1), calls
    assert x.cpu().tolist() == [0, 1, 2, -3, -4, -5, -6, 7, 8, 9], x.cpu().tolist()
    to_child.put(x)
    again, calls, handles = from_child.get(timeout=TIMEOUT)
    assert again == [0, 1, 2, -3, -4, -5, -6, 7, 8, 9]
    assert calls == handles == (0 if expandable else 1), (calls, handles)
    assert from_child.get(timeout=TIMEOUT) == 0  # released: the mapping is closed
    to_child.put("done")
    p.join(TIMEOUT)
    assert p.exitcode == 0
    print("ok")


def _is_expandable(t):
    """Whether ``t`` lives in an expandable segment (from the allocator's snapshot)."""
    import cudalite

    ptr = t.untyped_storage().data_ptr()
    for seg in cudalite.cuda.memory_snapshot():
        if seg["address"] <= ptr < seg["address"] + seg["total_size"]:
            return seg["is_expandable"]
    raise AssertionError("no segment holds the tensor")


# ---- §5.3.2: memory held for the consumer, released by ipc_collect ----


def consumer_hold(inbox, outbox):
    t = inbox.get(timeout=TIMEOUT)
    outbox.put("got")
    assert inbox.get(timeout=TIMEOUT) == "check"
    outbox.put(t.sum().item())
    assert inbox.get(timeout=TIMEOUT) == "drop"
    del t
    outbox.put("dropped")
    inbox.get(timeout=TIMEOUT)


def producer_hold(expandable):
    import cudalite

    n = 1 << 20
    p, to_child, from_child = _start(consumer_hold)
    x = cudalite.full((n,), 7.0, device="cuda")
    assert _is_expandable(x) == expandable
    ptr = x.data_ptr()
    to_child.put(x)
    assert from_child.get(timeout=TIMEOUT) == "got"
    held = cudalite.cuda.memory_allocated()
    del x
    cudalite.cuda.ipc_collect()
    assert cudalite.cuda.memory_allocated() == held  # the consumer still holds it
    y = cudalite.full((n,), 1.0, device="cuda")
    assert y.data_ptr() != ptr
    to_child.put("check")
    assert from_child.get(timeout=TIMEOUT) == 7.0 * n  # intact
    del y
    to_child.put("drop")
    assert from_child.get(timeout=TIMEOUT) == "dropped"
    cudalite.cuda.ipc_collect()
    assert cudalite.cuda.memory_allocated() == held - 4 * n, (
        cudalite.cuda.memory_allocated(),
        held,
    )
    to_child.put("done")
    p.join(TIMEOUT)
    assert p.exitcode == 0
    print("ok")


def consumer_drop(inbox, outbox):
    t = inbox.get(timeout=TIMEOUT)
    del t
    outbox.put("dropped")
    inbox.get(timeout=TIMEOUT)


def producer_released_first(expandable):
    """The consumer lets go before the producer: the memory is freed with the producer's
    tensor, without ipc_collect."""
    import cudalite

    n = 1 << 20
    p, to_child, from_child = _start(consumer_drop)
    x = cudalite.ones(n, device="cuda")
    assert _is_expandable(x) == expandable
    to_child.put(x)
    assert from_child.get(timeout=TIMEOUT) == "dropped"
    held = cudalite.cuda.memory_allocated()
    del x
    assert cudalite.cuda.memory_allocated() == held - 4 * n
    assert cudalite._C._cuda._ipc_limbo_size() == 0
    to_child.put("done")
    p.join(TIMEOUT)
    assert p.exitcode == 0
    print("ok")


# ---- §5.3.4: the consumer killed while it holds a tensor ----


def producer_killed_consumer(expandable):
    import cudalite
    from cudalite.multiprocessing import _cuda_ipc

    p, to_child, from_child = _start(consumer_hold)
    x = cudalite.ones(1000, device="cuda")
    assert _is_expandable(x) == expandable
    to_child.put(x)
    assert from_child.get(timeout=TIMEOUT) == "got"
    os.kill(p.pid, signal.SIGKILL)
    p.join(TIMEOUT)
    assert p.exitcode == -signal.SIGKILL
    del x
    cudalite.cuda.ipc_collect()
    cudalite.cuda.ipc_collect()
    assert _cuda_ipc.pending() == 1  # never released: kept until exit
    assert cudalite._C._cuda._ipc_limbo_size() == 1
    z = cudalite.ones(1000, device="cuda") * 3
    assert z.sum().item() == 3000.0
    print("ok")


# ---- §5.3.5: a CUDA tensor as a Process argument (its descriptors travel at start) ----


def consumer_argument(inbox, outbox, t):
    outbox.put(t.sum().item())
    del t
    inbox.get(timeout=TIMEOUT)


def producer_argument(expandable):
    import cudalite

    x = cudalite.full((1000,), 2.0, device="cuda")
    assert _is_expandable(x) == expandable
    p, to_child, from_child = _start(consumer_argument, x)
    assert from_child.get(timeout=TIMEOUT) == 2000.0
    to_child.put("done")
    p.join(TIMEOUT)
    assert p.exitcode == 0
    print("ok")


def producer_reports_expandable():
    import cudalite

    print(_is_expandable(cudalite.ones(4, device="cuda")))


# ---- §5.3.6: producer on cuda:0, consumer moves the tensor to cuda:1 ----


def consumer_other_gpu(inbox, outbox):
    t = inbox.get(timeout=TIMEOUT)
    u = t.to("cuda:1") * 2
    outbox.put((u.device.index, u.cpu().tolist()))
    del t, u
    inbox.get(timeout=TIMEOUT)


def producer_other_gpu(expandable):
    import cudalite

    p, to_child, from_child = _start(consumer_other_gpu)
    x = cudalite.arange(5.0, device="cuda:0")
    assert _is_expandable(x) == expandable
    to_child.put(x)
    device, values = from_child.get(timeout=TIMEOUT)
    assert device == 1 and values == [0.0, 2.0, 4.0, 6.0, 8.0], (device, values)
    to_child.put("done")
    p.join(TIMEOUT)
    assert p.exitcode == 0
    print("ok")


# ---- CPU tensors in shared memory ----


def consumer_cpu(inbox, outbox):
    t = inbox.get(timeout=TIMEOUT)
    seen = t.tolist()
    t.neg_()
    outbox.put(seen)
    inbox.get(timeout=TIMEOUT)


# ---- spawn ----


def write_index(i, folder):
    with open(os.path.join(folder, f"{i}.txt"), "w") as f:
        f.write(str(i * 10))


def raise_in_one(i):
    if i == 1:
        raise ValueError("boom from process 1")


def exit_with(i, code):
    if i == 0:
        sys.exit(code)


def kill_self(i):
    os.kill(os.getpid(), signal.SIGKILL)


def producer_parameter_after_multiprocessing():
    from multiprocessing.reduction import ForkingPickler

    import cudalite.multiprocessing as mp  # before cudalite.nn
    from cudalite.nn import Parameter

    assert ForkingPickler._extra_reducers[Parameter] is mp.reductions.reduce_tensor
    print("ok")
