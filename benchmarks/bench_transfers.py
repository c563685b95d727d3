"""Host <-> GPU transfers, pinned memory and streams, side by side with torch (issue 5).

Goals on an H200 (torch 2.11 figures in brackets):
- 256 MiB pinned H2D / D2H, non_blocking: >= 0.98 x torch (55.4 / 55.3 GB/s);
- 256 MiB pageable H2D >= 2 x torch (9.8 GB/s), pageable D2H >= 1.5 x torch (18.6 GB/s);
- pin_memory() of 256 MiB, first and repeated call: <= torch (94 ms / 5.8 ms);
- a 256 MiB copy on a side stream overlapping a matmul on the default stream: at least
  torch's overlap (7.5 ms serial -> 4.9 ms overlapped);
- Stream(), Event().record() + query(): per call <= torch.

Issue 29's rows (H100: torch 2,969 GB/s, 110.4 ms, 0.9 us): a same-device copy_ of 1 GiB under
each allocator setting beside an elementwise kernel moving the same bytes (copy_table), and
pin_memory() with cudaHostAlloc and with cudaHostRegister (pin_register_table).

GPU work is timed with events or after a synchronize.

    python benchmarks/bench_transfers.py
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
NBYTES = 256 << 20
N = NBYTES // 4


def libs():
    out = {"cudalite": cudalite}
    if torch is not None and torch.cuda.is_available():
        out["torch"] = torch
    return out


def gbps_events(lib, fn, reps=10):
    """GB/s of `fn` (queues one 256 MiB transfer) timed with events around `reps` calls."""
    fn()
    lib.cuda.synchronize()
    start = lib.cuda.Event(enable_timing=True)
    end = lib.cuda.Event(enable_timing=True)
    rates = []
    for _ in range(5):
        start.record()
        for _ in range(reps):
            fn()
        end.record()
        end.synchronize()
        rates.append(NBYTES * reps / (start.elapsed_time(end) / 1e3) / 1e9)
    return statistics.median(rates)


def gbps_wall(lib, fn, reps=5):
    """GB/s of a blocking transfer `fn`, timed on the host."""
    fn()
    lib.cuda.synchronize()
    rates = []
    for _ in range(7):
        t0 = time.perf_counter()
        for _ in range(reps):
            fn()
        lib.cuda.synchronize()
        rates.append(NBYTES * reps / (time.perf_counter() - t0) / 1e9)
    return statistics.median(rates)


def empty_host_cache(lib):
    lib.cuda.synchronize()
    if lib is cudalite:
        cudalite.cuda.host_empty_cache()
    else:
        torch._C._host_emptyCache()


def _bandwidths(lib):
    src_pinned = lib.rand(N).pin_memory()
    dst_pinned = lib.empty(N, pin_memory=True)
    pageable = lib.rand(N)
    pageable_dst = lib.empty(N)
    pageable_dst.fill_(0)  # touch its pages: page faults are not the link's speed
    gpu = lib.empty(N, device="cuda")
    gpu.copy_(pageable)
    return {
        "pinned H2D": gbps_events(lib, lambda: gpu.copy_(src_pinned, non_blocking=True)),
        "pinned D2H": gbps_events(lib, lambda: dst_pinned.copy_(gpu, non_blocking=True)),
        "pageable H2D": gbps_wall(lib, lambda: gpu.copy_(pageable)),
        "pageable D2H": gbps_wall(lib, lambda: pageable_dst.copy_(gpu)),
    }


def bandwidth_table():
    t = Table("256 MiB transfers", unit="GB/s", higher_is_better=True)
    rows = {}
    for name, lib in libs().items():
        for case, v in _bandwidths(lib).items():
            rows.setdefault(case, {})[name] = v
        empty_host_cache(lib)
    for case, vals in rows.items():
        t.add(case, **vals)
    return t


def pin_memory_table():
    t = Table("pin_memory() of 256 MiB")
    first, repeated = {}, {}
    for name, lib in libs().items():
        x = lib.rand(N)
        times = []
        for _ in range(5):
            empty_host_cache(lib)
            t0 = time.perf_counter()
            y = x.pin_memory()
            times.append(time.perf_counter() - t0)
            del y
        first[name] = statistics.median(times)
        y = x.pin_memory()
        del y  # cached now: the repeated call reuses the block

        def again(x=x):
            x.pin_memory()

        repeated[name] = per_call(again, repeat=7, min_time=0.2)
        empty_host_cache(lib)
    t.add("first call (empty cache)", **first)
    t.add("repeated call (cached block)", **repeated)
    return t


def _overlap(lib):
    a = lib.randn(4096, 4096, device="cuda")
    src = lib.rand(N).pin_memory()
    dst = lib.empty(N, device="cuda")
    side = lib.cuda.Stream()

    def run_serial():
        a @ a
        dst.copy_(src, non_blocking=True)
        lib.cuda.synchronize()

    def run_overlapped():
        side.wait_stream(lib.cuda.current_stream())
        with lib.cuda.stream(side):
            dst.copy_(src, non_blocking=True)
        a @ a
        lib.cuda.synchronize()

    return (
        per_call(run_serial, repeat=9, min_time=0.2),
        per_call(run_overlapped, repeat=9, min_time=0.2),
    )


def overlap_table():
    t = Table("256 MiB pinned H2D on a side stream + 4096^2 matmul on the default stream")
    serial, overlapped = {}, {}
    for name, lib in libs().items():
        serial[name], overlapped[name] = _overlap(lib)
        empty_host_cache(lib)
    t.add("serial (one stream)", **serial)
    t.add("overlapped (copy on a side stream)", **overlapped)
    return t


def per_call_table():
    t = Table("per call (median)")
    rows = {"Stream()": {}, "Event().record() + query()": {}, "current_stream()": {}}
    for name, lib in libs().items():
        lib.cuda.Stream()  # the pools exist

        def rec(lib=lib):
            e = lib.cuda.Event()
            e.record()
            e.query()

        rows["Stream()"][name] = per_call(lib.cuda.Stream)
        rows["Event().record() + query()"][name] = per_call(rec, sync=lib.cuda.synchronize)
        rows["current_stream()"][name] = per_call(lib.cuda.current_stream)
    for case, vals in rows.items():
        t.add(case, **vals)
    return t


# ---- issue 29's rows: same-device copies, and pinning with cudaHostRegister ----
# Each allocator setting runs in its own process, so that it applies from the start.
COPY_BYTES = 1 << 30
SETTINGS = {
    "default": {},
    "classic": {"CUDALITE_ALLOC_CONF": "expandable_segments:False"},
    "4MiB pages": {"CUDALITE_ALLOC_CONF": "page_lending:True"},
    "20MiB pages": {"CUDALITE_ALLOC_CONF": "page_lending:True,large_segment_size_mb:20"},
    "expandable": {"PYTORCH_CUDA_ALLOC_CONF": "expandable_segments:True"},
    "register x8": {
        "CUDALITE_ALLOC_CONF": "pinned_use_cuda_host_register:True,pinned_num_register_threads:8",
        "PYTORCH_CUDA_ALLOC_CONF": "pinned_use_cuda_host_register:True,"
        "pinned_num_register_threads:8",
    },
}


def _copy_figures(lib):
    """GB/s (bytes read + written) of a same-device 1 GiB copy_, and of an elementwise kernel
    moving the same bytes (mul by one into a preallocated output) on the same memory."""
    n = COPY_BYTES // 4
    x = lib.rand(n, device="cuda")
    y = lib.empty(n, device="cuda")
    moved = 2 * COPY_BYTES

    def rate(fn, reps=10):
        fn()
        lib.cuda.synchronize()
        start = lib.cuda.Event(enable_timing=True)
        end = lib.cuda.Event(enable_timing=True)
        rates = []
        for _ in range(5):
            start.record()
            for _ in range(reps):
                fn()
            end.record()
            end.synchronize()
            rates.append(moved * reps / (start.elapsed_time(end) / 1e3) / 1e9)
        return statistics.median(rates)

    return {
        "same-device copy_ 1 GiB": rate(lambda: y.copy_(x)),
        "mul(x, 1, out=y) 1 GiB (kernel, same bytes)": rate(lambda: lib.mul(x, 1, out=y)),
    }


def _pin_first(lib):
    x = lib.rand(N)
    times = []
    for _ in range(5):
        empty_host_cache(lib)
        t0 = time.perf_counter()
        y = x.pin_memory()
        times.append(time.perf_counter() - t0)
        del y
    empty_host_cache(lib)
    return {"pin_memory() 256 MiB, first call": statistics.median(times)}


def _child(which, setting):
    """Runs in a subprocess: prints the figures of `which` for both libraries as JSON."""
    import json

    out = {}
    for name, lib in libs().items():
        figures = _copy_figures(lib) if which == "copy" else _pin_first(lib)
        for case, v in figures.items():
            out.setdefault(case, {})[name] = v
    print(json.dumps({"setting": setting, "rows": out}))


def _run_child(which, setting):
    import json
    import subprocess

    env = dict(os.environ, **SETTINGS[setting])
    r = subprocess.run(
        [sys.executable, __file__, "--child", which, setting],
        env=env,
        capture_output=True,
        text=True,
    )
    if r.returncode != 0:
        print(r.stderr)
        return {}
    return json.loads(r.stdout.strip().splitlines()[-1])["rows"]


def copy_table():
    t = Table("same-device copies (GB/s read + written)", unit="GB/s", higher_is_better=True)
    for setting in ("default", "classic", "4MiB pages", "20MiB pages", "expandable"):
        for case, vals in _run_child("copy", setting).items():
            if setting in ("classic", "4MiB pages", "20MiB pages"):
                vals.pop("torch", None)  # cudalite's settings: torch's run is the default one
            if setting == "expandable":
                vals.pop("cudalite", None)
            t.add(f"{case} [{setting}]", **vals)
    return t


def pin_register_table():
    t = Table("pin_memory() first call: cudaHostAlloc vs cudaHostRegister")
    for setting in ("default", "register x8"):
        for case, vals in _run_child("pin", setting).items():
            t.add(f"{case} [{setting}]", **vals)
    return t


def main():
    if len(sys.argv) == 4 and sys.argv[1] == "--child":
        _child(sys.argv[2], sys.argv[3])
        return
    if not cudalite.cuda.is_available():
        print("no CUDA GPU visible: nothing to measure")
        return
    print(f"device: {cudalite.cuda.get_device_name()}")
    tables = (bandwidth_table, pin_memory_table, overlap_table, per_call_table)
    tables += (copy_table, pin_register_table)
    for table in tables:
        print(table().render())


if __name__ == "__main__":
    main()
