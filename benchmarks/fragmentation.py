"""Fragmentation suite: replays allocation traces through several caching allocators and
prints, per trace, peak reserved / peak allocated memory and the time per allocator operation
of a cold replay (from an empty cache: first iterations, every new shape) and of warm ones
(the trace again on the cache the previous pass left), with the ratios to the better of
torch's two allocators.

Traces (benchmarks/traces/): a synthetic trace of mixed sizes, a training loop whose batch
and sequence length change every step, an inference server whose key/value buffers grow
by reallocation, nanoGPT's shakespeare_char training loop with its evaluations at another
batch size (gpt), and a server mixing prefill and decode over batches of requests of random
lengths, growing its key/value caches with torch.cat (inference). Allocators, each in its
own subprocess so that its environment variables apply from the start:

    cudalite                default settings (one physical allocation per arena growth)
    cudalite-lending        page_lending:True (4 MiB pages lent from holes; ~2 % less memory)
    cudalite-2MiB           page_lending:True,large_segment_size_mb:2
    cudalite-20MiB          page_lending:True,large_segment_size_mb:20
    cudalite-classic        expandable_segments:False (torch's segment sizes)
    torch                   PyTorch's default caching allocator
    torch-expandable        PyTorch with expandable_segments:True
    cupy                    CuPy's default memory pool
    cudalite-host           cudalite's allocator over the host backend (no GPU needed), each
                            backend call lasting what the driver's call costs on a GPU
                            (Note [Driver costs] in csrc/core/host_backend.cpp)
    cudalite-host-lending   the same with page_lending:True
    cudalite-host-classic   the same with expandable_segments:False: torch's default
                            algorithm, its cudaMalloc and cudaFree priced the same way

Each replay runs in its process first cold from an empty cache (peaks are measured there),
then three times warm; "warm" is the median of the warm replays. GPU allocators are timed
from Python, each library's raw allocate/free entry points called in the same loop; "c++" is
cudalite's warm replay without Python. The host allocators are timed in C++ (their times
compare with each other, not with the GPU rows). "x cold" and "x warm" divide by the faster
of torch and torch-expandable (by cudalite-host-classic for the host rows); "vs torch" divides
the ratio by the lower of theirs. "drv" columns count driver calls (num_device_alloc +
num_device_free: cudaMalloc, cudaFree, cuMemMap, cuMemUnmap) made by the cold replay and by
each warm one; a cache in steady state makes none. The issue's goal on every trace: x cold
and x warm <= 1.2 and vs torch <= 1.

    python benchmarks/fragmentation.py                 # everything available
    python benchmarks/fragmentation.py --allocators cudalite,torch --traces synthetic
"""

import argparse
import json
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "traces"))

import gpt_trace  # noqa: E402
import inference_trace  # noqa: E402
import kvcache_trace  # noqa: E402
import synthetic_trace  # noqa: E402
import training_trace  # noqa: E402

TRACES = {
    "synthetic": synthetic_trace.trace,
    "training": training_trace.trace,
    "kvcache": kvcache_trace.trace,
    "gpt": gpt_trace.trace,
    "inference": inference_trace.trace,
}
ENV = {
    "cudalite": {},
    "cudalite-lending": {"CUDALITE_ALLOC_CONF": "page_lending:True"},
    "cudalite-2MiB": {"CUDALITE_ALLOC_CONF": "page_lending:True,large_segment_size_mb:2"},
    "cudalite-20MiB": {"CUDALITE_ALLOC_CONF": "page_lending:True,large_segment_size_mb:20"},
    "cudalite-classic": {"CUDALITE_ALLOC_CONF": "expandable_segments:False"},
    "torch": {},
    "torch-expandable": {
        "PYTORCH_CUDA_ALLOC_CONF": "expandable_segments:True",
        "PYTORCH_ALLOC_CONF": "expandable_segments:True",
    },
    "cupy": {},
    "cudalite-host": {},
    "cudalite-host-lending": {},
    "cudalite-host-classic": {},
}
HOST_SETTINGS = {
    "cudalite-host": "",
    "cudalite-host-lending": "page_lending:True",
    "cudalite-host-classic": "expandable_segments:False",
}
GiB = 1 << 30
WARM_REPLAYS = 3


def peak_live(ops):
    live, cur, peak = {}, 0, 0
    for op in ops:
        if op[0] == "alloc":
            live[op[1]] = op[2]
            cur += op[2]
            peak = max(peak, cur)
        else:
            cur -= live.pop(op[1])
    return peak


def counter(memory_stats):
    """Driver calls (allocations and frees) made since the previous call."""
    last = [0]

    def calls():
        st = memory_stats()
        total = st.get("num_device_alloc", 0) + st.get("num_device_free", 0)
        delta, last[0] = total - last[0], total
        return delta

    calls()
    return calls


def kind_counter(backend_calls):
    """The host backend's virtual-memory calls by kind since the previous call."""
    last = backend_calls()

    def calls():
        now = backend_calls()
        delta = {k: now[k] - last[k] for k in now}
        last.update(now)
        return delta

    return calls


def timed_replay(ops, alloc, free):
    live = {}
    t0 = time.perf_counter()
    for op in ops:
        if op[0] == "alloc":
            live[op[1]] = alloc(op[2])
        else:
            free(live.pop(op[1]))
    t1 = time.perf_counter()
    for p in live.values():
        free(p)
    return (t1 - t0) / len(ops) * 1e6


def median(xs):
    xs = sorted(x for x in xs if x == x)  # NaN (a failed replay) left out
    return xs[len(xs) // 2] if xs else float("nan")


def worker(allocator, trace_name):
    ops = TRACES[trace_name]()
    out = {"allocator": allocator, "trace": trace_name, "requested_peak": peak_live(ops)}
    if allocator in HOST_SETTINGS:
        from cudalite import _C

        h = _C._memory._HostCachingAllocator(256 * GiB, HOST_SETTINGS[allocator])
        h.driver_costs = True
        calls = counter(h.memory_stats)
        kinds = kind_counter(h.backend_calls)
        r = h.replay(ops)
        out["calls_by_kind"] = [kinds()]
        out.update(reserved=r["peak_reserved"], allocated=r["peak_allocated"])
        out["cold_us"] = r["seconds"] / len(ops) * 1e6
        out["device_calls"] = calls()
        out["warm_calls"], warm_us = [], []
        for _ in range(WARM_REPLAYS):
            try:
                warm_us.append(h.replay(ops)["seconds"] / len(ops) * 1e6)
            except RuntimeError:  # the host's limit on memory mappings (vm.max_map_count)
                warm_us.append(float("nan"))
            out["warm_calls"].append(calls())
            out["calls_by_kind"].append(kinds())
        out["warm_us"] = median(warm_us)
    elif allocator.startswith("cudalite"):
        from cudalite import _C
        from cudalite.cuda import memory

        m = _C._memory
        memory.caching_allocator_delete(memory.caching_allocator_alloc(1))  # init
        memory.reset_peak_memory_stats()
        calls = counter(memory.memory_stats)
        out["cold_us"] = timed_replay(ops, lambda n: m.raw_alloc(n, 0, 0), m.raw_delete)
        out["reserved"] = memory.max_memory_reserved()
        out["allocated"] = memory.max_memory_allocated()
        out["device_calls"] = calls()
        out["warm_calls"], warm_us = [], []
        for _ in range(WARM_REPLAYS):
            warm_us.append(timed_replay(ops, lambda n: m.raw_alloc(n, 0, 0), m.raw_delete))
            out["warm_calls"].append(calls())
        out["warm_us"] = median(warm_us)
        out["cpp_warm_us"] = m._replay_device(ops, 0)["seconds"] / len(ops) * 1e6
    elif allocator.startswith("torch"):
        import torch

        c = torch._C
        torch.cuda.init()
        stream = torch.cuda.current_stream().cuda_stream
        torch.cuda.reset_peak_memory_stats()

        def alloc(n):
            return c._cuda_cudaCachingAllocator_raw_alloc(n, stream)

        calls = counter(torch.cuda.memory_stats)
        out["cold_us"] = timed_replay(ops, alloc, c._cuda_cudaCachingAllocator_raw_delete)
        out["reserved"] = torch.cuda.max_memory_reserved()
        out["allocated"] = torch.cuda.max_memory_allocated()
        out["device_calls"] = calls()
        out["warm_calls"], warm_us = [], []
        for _ in range(WARM_REPLAYS):
            warm_us.append(timed_replay(ops, alloc, c._cuda_cudaCachingAllocator_raw_delete))
            out["warm_calls"].append(calls())
        out["warm_us"] = median(warm_us)
    elif allocator == "cupy":
        import cupy

        pool = cupy.get_default_memory_pool()
        # Peaks are sampled in an untimed pass: CuPy keeps no peak statistics.
        live, peak_used, peak_total = {}, 0, 0
        for op in ops:
            if op[0] == "alloc":
                live[op[1]] = cupy.cuda.alloc(op[2])
                peak_used = max(peak_used, pool.used_bytes())
                peak_total = max(peak_total, pool.total_bytes())
            else:
                del live[op[1]]
        live.clear()
        out.update(reserved=peak_total, allocated=peak_used)
        pool.free_all_blocks()
        out["cold_us"] = timed_replay(ops, cupy.cuda.alloc, lambda p: None)
        out["warm_us"] = median(
            [timed_replay(ops, cupy.cuda.alloc, lambda p: None) for _ in range(WARM_REPLAYS)]
        )
    print(json.dumps(out))


def available(allocator):
    if allocator in HOST_SETTINGS:
        return True
    probe = {
        "cupy": "import cupy; assert cupy.cuda.runtime.getDeviceCount() > 0",
        "torch": "import torch; assert torch.cuda.is_available()",
        "torch-expandable": "import torch; assert torch.cuda.is_available()",
    }.get(allocator, "from cudalite import _C; assert _C._cuda.device_count() > 0")
    r = subprocess.run([sys.executable, "-c", probe], capture_output=True, timeout=300)
    return r.returncode == 0


def run(allocator, trace_name):
    env = dict(os.environ, **ENV[allocator])
    cmd = [sys.executable, __file__, "--worker", allocator, "--trace", trace_name]
    r = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=1800)
    if r.returncode != 0:
        return {"allocator": allocator, "trace": trace_name, "error": r.stderr.strip()[-300:]}
    return json.loads(r.stdout.strip().splitlines()[-1])


def references(rows, host):
    """The faster cold and warm times and the lower ratio of the reference allocators (torch
    and torch-expandable; cudalite-host-classic for the host rows), or None each."""
    names = ("cudalite-host-classic",) if host else ("torch", "torch-expandable")
    refs = [r for r in rows if r["allocator"] in names and "error" not in r]
    if not refs:
        return None, None, None
    return (
        min(r["cold_us"] for r in refs),
        min(r["warm_us"] for r in refs),
        min(r["reserved"] / r["allocated"] for r in refs),
    )


def fmt(value, width, spec):
    return f"{value:{width}{spec}}" if value is not None else " " * width


def print_trace(t, rows):
    for r in rows:
        if "error" in r:
            print(f"{t:10} {r['allocator']:21} failed: {r['error']}")
            continue
        host = r["allocator"] in HOST_SETTINGS
        cold_ref, warm_ref, ratio_ref = references(rows, host)
        ratio = r["reserved"] / r["allocated"]
        vs = ratio / ratio_ref if ratio_ref else None
        xc = r["cold_us"] / cold_ref if cold_ref else None
        xw = r["warm_us"] / warm_ref if warm_ref else None
        calls = fmt(r.get("device_calls"), 8, "d")
        warm = r.get("warm_calls", [])
        calls += "".join(f" {c:7d}" for c in warm) + " " * 8 * (WARM_REPLAYS - len(warm))
        res, alc = r["reserved"] / GiB, r["allocated"] / GiB
        print(
            f"{t:10} {r['allocator']:21} {res:9.3f}G {alc:9.3f}G {ratio:7.4f} {fmt(vs, 8, '.3f')}"
            f" {r['cold_us']:10.3f} {r['warm_us']:10.3f} {fmt(xc, 7, '.2f')} {fmt(xw, 7, '.2f')}"
            f" {fmt(r.get('cpp_warm_us'), 9, '.3f')} {calls}"
        )


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--allocators", default=",".join(ENV))
    ap.add_argument("--traces", default=",".join(TRACES))
    ap.add_argument("--json", help="also write the results here")
    ap.add_argument("--worker")
    ap.add_argument("--trace")
    args = ap.parse_args()
    if args.worker:
        worker(args.worker, args.trace)
        return
    allocators = [a for a in args.allocators.split(",") if available(a)]
    results = []
    hdr = f"{'trace':10} {'allocator':21} {'reserved':>10} {'allocated':>10} {'ratio':>7}"
    hdr += f" {'vs torch':>8} {'cold us/op':>10} {'warm us/op':>10} {'x cold':>7} {'x warm':>7}"
    hdr += f" {'c++ warm':>9} {'drv cold':>8}"
    hdr += "".join(f" {f'drv w{i + 1}':>7}" for i in range(WARM_REPLAYS))
    print(hdr, flush=True)
    for t in args.traces.split(","):
        rows = [run(a, t) for a in allocators]
        results += rows
        print_trace(t, rows)
        sys.stdout.flush()
    kinds = [r for r in results if "calls_by_kind" in r]
    if kinds:
        print(
            "\nhost backend: virtual-memory calls by kind, cold and last warm replay: creates,"
            " maps (2 MiB pages mapped), access settings, unmaps, releases, stream syncs;"
            " the driver-cost model's microseconds"
        )
        keys = ("create", "map", "set_access", "unmap", "release", "synchronize")
        for r in kinds:
            cells = []
            for c in (r["calls_by_kind"][0], r["calls_by_kind"][-1]):
                v = [str(c[k]) for k in keys]
                v[1] += f" ({c['mapped_pages']})"
                cells.append(" / ".join(v) + f"; {c['driver_us'] / 1e3:.1f} ms")
            print(f"{r['trace']:10} {r['allocator']:21} cold {cells[0]};  warm {cells[1]}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=1)


if __name__ == "__main__":
    main()
