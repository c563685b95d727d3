"""Copies between two GPUs and CUDA IPC, side by side with torch in one process (issue 28).

Goals on two H100s joined by NVLink (next_wave.md §1.12, §5.3):
- ``x.to("cuda:1")`` of 1 GiB fp32 >= 0.97 x torch's bandwidth (and of 256 MiB);
- ``y.copy_(x)`` of 256 MiB, cuda:0 -> cuda:1 and back, >= 0.97 x torch;
- a 4-byte ``x.to("cuda:1")``: wall time no slower than torch's;
- CUDA IPC: one-way latency of a 1-element tensor through a Queue <= torch's, and sharing
  1 GiB costs the same as sharing 4 bytes (no copy) with cudaMalloc segments; expandable
  segments (cudalite's default) are shown too: they send a descriptor per page.

Bandwidths are bytes over host wall time from the call to both devices synchronised.

    python benchmarks/multi_gpu_copy.py
"""

from __future__ import annotations

import os
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(__file__))
import cudalite  # noqa: E402
from _harness import Table, optional, per_call  # noqa: E402

torch = optional("torch")
GiB = 1 << 30


def libs():
    out = {"cudalite": cudalite}
    if torch is not None and torch.cuda.device_count() >= 2:
        out["torch"] = torch
    return out


def sync_both(lib):
    lib.cuda.synchronize(0)
    lib.cuda.synchronize(1)


def gbps(lib, nbytes, fn):
    seconds = per_call(fn, sync=lambda: sync_both(lib), repeat=9)
    return nbytes / seconds / 1e9


def bandwidth_table():
    t = Table("copies between cuda:0 and cuda:1", unit="GB/s", higher_is_better=True)
    rows = {}
    for name, lib in libs().items():
        for nbytes in (GiB, 256 << 20):
            x = lib.rand(nbytes // 4, device="cuda:0")
            label = f"x.to('cuda:1'), {nbytes >> 20} MiB"
            rows.setdefault(label, {})[name] = gbps(lib, nbytes, lambda x=x: x.to("cuda:1"))
            del x
        n = (256 << 20) // 4
        a, b = lib.rand(n, device="cuda:0"), lib.empty(n, device="cuda:1")
        rows.setdefault("b.copy_(a), 256 MiB, 0 -> 1", {})[name] = gbps(
            lib, 4 * n, lambda a=a, b=b: b.copy_(a)
        )
        rows.setdefault("a.copy_(b), 256 MiB, 1 -> 0", {})[name] = gbps(
            lib, 4 * n, lambda a=a, b=b: a.copy_(b)
        )
        a = b = None
        lib.cuda.empty_cache()
    for case, vals in rows.items():
        t.add(case, **vals)
    return t


def small_copy_table():
    t = Table("4-byte x.to('cuda:1'), wall time to both devices synchronised")
    vals = {}
    for name, lib in libs().items():
        x = lib.ones(1, device="cuda:0")
        vals[name] = per_call(lambda x=x: x.to("cuda:1"), sync=lambda lib=lib: sync_both(lib))
    t.add("4 bytes", **vals)
    return t


# ---- CUDA IPC ----


def _echo(lib_name, inbox, outbox):
    """The consumer: maps each tensor it receives and answers with one byte."""
    lib = cudalite if lib_name == "cudalite" else __import__("torch")
    lib.cuda.init()
    while True:
        t = inbox.get()
        if t is None:
            return
        outbox.put(1)
        del t


def ipc_latency(name, lib, nbytes, reps=50):
    mp = cudalite.multiprocessing if name == "cudalite" else lib.multiprocessing
    ctx = mp.get_context("spawn")
    inbox, outbox = ctx.Queue(), ctx.Queue()
    p = ctx.Process(target=_echo, args=(name, inbox, outbox))
    p.start()
    x = lib.ones(nbytes // 4, device="cuda:0")
    for _ in range(5):  # warm up: process start, first mapping
        inbox.put(x)
        outbox.get()
    times = []
    for _ in range(reps):
        t0 = time.perf_counter()
        inbox.put(x)
        outbox.get()
        times.append(time.perf_counter() - t0)
    inbox.put(None)
    p.join()
    del x
    lib.cuda.ipc_collect()
    return statistics.median(times)


def ipc_table():
    t = Table("CUDA IPC: a tensor through a Queue and back (one byte), round trip")
    # cudalite's default expandable segments travel page by page (docs/multi_gpu.md); torch's
    # default is cudaMalloc segments, the rows below.
    for nbytes, label in ((4, "1 element"), (GiB, "1 GiB")):
        t.add(f"{label}, expandable segments", cudalite=ipc_latency("cudalite", cudalite, nbytes))
    cudalite.cuda.empty_cache()
    cudalite.cuda.memory._set_allocator_settings("expandable_segments:False")
    for nbytes, label in ((4, "1 element"), (GiB, "1 GiB")):
        vals = {name: ipc_latency(name, lib, nbytes) for name, lib in libs().items()}
        t.add(f"{label}, cudaMalloc segments", **vals)
    return t


def main():
    if cudalite.cuda.device_count() < 2:
        print("needs two CUDA GPUs: nothing to measure")
        return
    print(f"devices: {cudalite.cuda.get_device_name(0)} x {cudalite.cuda.device_count()}")
    print(
        "peer access 0->1:",
        cudalite.cuda.can_device_access_peer(0, 1),
        " CUDALITE_DISABLE_P2P:",
        os.environ.get("CUDALITE_DISABLE_P2P", "unset"),
    )
    for table in (bandwidth_table, small_copy_table, ipc_table):
        print(table().render())


if __name__ == "__main__":
    main()
