"""Allocation speed: one allocate + free pair, 512 B to 64 MiB, cache hits.

    c++ host       cudalite's allocator over the host backend, timed in C++ (runs anywhere)
    c++ cuda       cudalite's device allocator, timed in C++
    cudalite raw   cudalite.cuda.caching_allocator_alloc/delete's bindings from a Python loop
    cudalite empty cudalite.empty(n, dtype=uint8, device="cuda") and del, from Python
    torch empty    torch.empty(n, dtype=torch.uint8, device="cuda") and del
    cupy           cupy.empty(n, dtype=uint8) and del (CuPy's memory pool)

Goals: the C++ pair <= 100 ns; empty + free from Python <= 0.8 us (torch 1.45,
CuPy 1.31 on an H200). Medians of 5 rounds.

    python benchmarks/bench_allocator.py
"""

import statistics
import time

SIZES = [512, 4096, 1 << 16, 1 << 20, 16 << 20, 64 << 20]


def per_call_us(fn, iters=20000, rounds=5):
    fn()
    times = []
    for _ in range(rounds):
        t0 = time.perf_counter()
        for _ in range(iters):
            fn()
        times.append((time.perf_counter() - t0) / iters * 1e6)
    return statistics.median(times)


def main():
    from cudalite import _C

    rows = {}
    h = _C._memory._HostCachingAllocator(64 << 30)
    rows["c++ host (ns)"] = [h.time_alloc_free_ns(n) for n in SIZES]
    gpu = _C._cuda.device_count() > 0
    if gpu:
        import cudalite
        from cudalite.cuda import memory

        m = _C._memory
        memory.caching_allocator_delete(memory.caching_allocator_alloc(1))
        rows["c++ cuda (ns)"] = [m._time_device_alloc_free_ns(0, n) for n in SIZES]
        rows["cudalite raw (us)"] = [
            per_call_us(lambda n=n: m.raw_delete(m.raw_alloc(n, 0, 0))) for n in SIZES
        ]
        if hasattr(cudalite, "empty") and hasattr(cudalite, "uint8"):
            rows["cudalite empty (us)"] = [
                per_call_us(lambda n=n: cudalite.empty(n, dtype=cudalite.uint8, device="cuda"))
                for n in SIZES
            ]
        try:
            import torch

            if torch.cuda.is_available():
                torch.empty(1, device="cuda")
                rows["torch empty (us)"] = [
                    per_call_us(lambda n=n: torch.empty(n, dtype=torch.uint8, device="cuda"))
                    for n in SIZES
                ]
        except ImportError:
            pass
        try:
            import cupy

            cupy.empty(1, dtype=cupy.uint8)
            rows["cupy empty (us)"] = [
                per_call_us(lambda n=n: cupy.empty(n, dtype=cupy.uint8)) for n in SIZES
            ]
        except ImportError:
            pass
    print(f"{'':22}" + "".join(f"{n:>11}" for n in SIZES))
    for name, vals in rows.items():
        print(f"{name:22}" + "".join(f"{v:11.3f}" for v in vals))


if __name__ == "__main__":
    main()
