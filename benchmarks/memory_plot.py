"""Time to draw a memory snapshot's active-memory timeline as an SVG
(cudalite.cuda._memory_viz.static_plot), on synthetic histories of a training loop.

Target (issue 29): a 100k-event history plots in <= 2 s and the SVG stays <= 20 MB. torch
has no static plot to compare with; its viewer lays out the same timeline in the browser.

    python benchmarks/memory_plot.py                 # 10k, 100k and 300k events
    python benchmarks/memory_plot.py --events 100000 --out timeline.svg
    python benchmarks/memory_plot.py --trace gpt --backend cuda --out gpt.svg --pickle gpt.pickle
    python benchmarks/memory_plot.py --history-overhead --backend cuda   # beside torch's
"""

import argparse
import random
import time

from cudalite.cuda import _memory_viz

MiB = 1 << 20


def synthetic_snapshot(events, seed=0, shuffle=0.1):
    """A snapshot dict whose history is a training loop: persistent weights, activations
    freed mostly in reverse order (a fraction ``shuffle`` out of order), gradients and
    optimizer temporaries, with segment events that keep reserved >= allocated."""
    rnd = random.Random(seed)
    trace = []
    next_addr = [1 << 40]
    frames = [
        [{"filename": "/home/user/train.py", "line": 40 + k, "name": name}]
        for k, name in enumerate(("forward", "backward", "step", "load_batch", "attention"))
    ]
    reserved = [0]
    live = [0]

    def alloc(size, where):
        if live[0] + size > reserved[0]:
            grow = max(size, 64 * MiB)
            trace.append(
                {
                    "action": "segment_map",
                    "addr": next_addr[0],
                    "size": grow,
                    "stream": 0,
                    "time_us": 0,
                    "frames": [],
                }
            )
            reserved[0] += grow
        addr = next_addr[0]
        next_addr[0] += size + 512
        live[0] += size
        trace.append(
            {
                "action": "alloc",
                "addr": addr,
                "size": size,
                "stream": 0,
                "time_us": 0,
                "frames": frames[where],
            }
        )
        return addr, size

    def free(block):
        addr, size = block
        live[0] -= size
        for action in ("free_requested", "free_completed"):
            trace.append(
                {
                    "action": action,
                    "addr": addr,
                    "size": size,
                    "stream": 0,
                    "time_us": 0,
                    "frames": [],
                }
            )

    weights = [alloc(rnd.choice((4, 8, 16)) * MiB, 2) for _ in range(64)]
    while len(trace) < events:
        batch = rnd.choice((8, 8, 8, 16))
        acts = [alloc(batch * rnd.randint(1, 256) * 4096, rnd.choice((0, 4))) for _ in range(200)]
        order = list(reversed(acts))
        for i in range(len(order)):
            if rnd.random() < shuffle:
                j = rnd.randrange(len(order))
                order[i], order[j] = order[j], order[i]
        grads = []
        for a in order:
            grads.append(alloc(rnd.randint(1, 64) * 4096, 1))
            free(a)
            if len(grads) > 4:
                free(grads.pop(0))
        for g in grads:
            free(g)
        tmp = [alloc(w[1], 2) for w in weights[:8]]
        for t in reversed(tmp):
            free(t)
    del trace[events:]
    reserved[0] = sum(e["size"] for e in trace if e["action"] == "segment_map")
    segment = {
        "device": 0,
        "address": 1 << 40,
        "total_size": reserved[0],
        "allocated_size": 0,
        "active_size": 0,
        "requested_size": 0,
        "stream": 0,
        "segment_type": "large",
        "segment_pool_id": (0, 0),
        "is_expandable": True,
        "frames": [],
        "blocks": [
            {
                "address": 1 << 40,
                "size": reserved[0],
                "requested_size": 0,
                "state": "inactive",
                "frames": [],
            }
        ],
    }
    return {
        "segments": [segment],
        "device_traces": [trace],
        "allocator_settings": {},
        "external_annotations": [],
    }


def recorded_trace(name, backend):
    """Replays a trace of benchmarks/fragmentation.py through cudalite's caching allocator
    (the host backend, or the GPU's) with history recording on; returns the snapshot."""
    import os
    import sys

    here = os.path.dirname(os.path.abspath(__file__))
    sys.path.insert(0, os.path.join(here, "traces"))
    sys.path.insert(0, here)
    from fragmentation import TRACES

    ops = TRACES[name]()
    if backend == "host":
        from cudalite import _C

        h = _C._memory._HostCachingAllocator(256 << 30)
        h.record_memory_history("all", "all", "python", 10_000_000)
        alloc, free, snapshot = h.alloc, h.free, h.snapshot
    else:
        from cudalite.cuda import memory

        memory._record_memory_history(max_entries=10_000_000)

        def alloc(n):
            return memory.caching_allocator_alloc(n)

        free, snapshot = memory.caching_allocator_delete, memory._snapshot
    live = {}
    for op in ops:
        if op[0] == "alloc":
            live[op[1]] = alloc(op[2])
        else:
            free(live.pop(op[1]))
    snap = snapshot()
    for p in live.values():
        free(p)
    return snap


def history_overhead(backend, pairs=20_000):
    """Microseconds per allocation + free pair with history recording off and on
    (stacks="python"), for cudalite (host backend or GPU) and, on a GPU, torch."""
    rows = {}

    def timed(alloc, free):
        t0 = time.perf_counter()
        for _ in range(pairs):
            free(alloc(4096))
        return (time.perf_counter() - t0) / pairs * 1e6

    if backend == "host":
        from cudalite import _C

        h = _C._memory._HostCachingAllocator(1 << 30)
        off = timed(h.alloc, h.free)
        h.record_memory_history("all", "all", "python", pairs * 4)
        rows["cudalite-host"] = (off, timed(h.alloc, h.free))
        h.record_memory_history(None)
        return rows
    from cudalite import _C
    from cudalite.cuda import memory

    m = _C._memory
    memory.caching_allocator_delete(memory.caching_allocator_alloc(1))

    def c_alloc(n):
        return m.raw_alloc(n, 0, 0)

    off = timed(c_alloc, m.raw_delete)
    memory._record_memory_history(stacks="python", max_entries=pairs * 4)
    rows["cudalite"] = (off, timed(c_alloc, m.raw_delete))
    memory._record_memory_history(None)
    try:
        import torch
    except ImportError:
        return rows
    if torch.cuda.is_available():
        stream = torch.cuda.current_stream().cuda_stream

        def t_alloc(n):
            return torch._C._cuda_cudaCachingAllocator_raw_alloc(n, stream)

        t_free = torch._C._cuda_cudaCachingAllocator_raw_delete
        off = timed(t_alloc, t_free)
        torch.cuda.memory._record_memory_history(stacks="python", max_entries=pairs * 4)
        rows["torch"] = (off, timed(t_alloc, t_free))
        torch.cuda.memory._record_memory_history(None)
    return rows


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--events", type=int, nargs="*", default=[10_000, 100_000, 300_000])
    p.add_argument("--out", default=None, help="write the last SVG here")
    p.add_argument(
        "--trace",
        default=None,
        help="instead of synthetic histories, record a trace of fragmentation.py (gpt, "
        "inference, training, kvcache, synthetic) through cudalite's allocator",
    )
    p.add_argument("--backend", choices=("host", "cuda"), default="host")
    p.add_argument("--pickle", default=None, help="with --trace: also dump the snapshot here")
    p.add_argument(
        "--history-overhead",
        action="store_true",
        help="time allocation + free pairs with history recording off and on instead",
    )
    args = p.parse_args()
    if args.history_overhead:
        print(f"{'allocator':>14} {'off us/pair':>12} {'on us/pair':>11} {'cost us/event':>14}")
        for name, (off, on) in history_overhead(args.backend).items():
            # A pair records three events: alloc, free_requested, free_completed.
            print(f"{name:>14} {off:>12.3f} {on:>11.3f} {(on - off) / 3:>14.3f}")
        return
    head = ("events", "layout s", "svg s", "total s", "cpu s", "MB", "peak")
    print(" ".join(f"{h:>{w}}" for h, w in zip(head, (8, 9, 7, 8, 6, 6, 12), strict=True)))
    if args.trace:
        snaps = [recorded_trace(args.trace, args.backend)]
        if args.pickle:
            from cudalite.cuda import memory

            memory._write_snapshot(snaps[0], args.pickle)
    else:
        snaps = [synthetic_snapshot(n) for n in args.events]
    for snap in snaps:
        n = sum(len(t) for t in snap["device_traces"])
        c0 = time.process_time()
        t0 = time.perf_counter()
        tl = _memory_viz.timeline(snap)
        t1 = time.perf_counter()
        svg = _memory_viz._render_svg(tl, 1024, 576, True, 10, None)
        t2 = time.perf_counter()
        cpu = time.process_time() - c0
        print(
            f"{n:>8} {t1 - t0:>9.3f} {t2 - t1:>7.3f} {t2 - t0:>8.3f} {cpu:>6.3f} "
            f"{len(svg) / 1e6:>6.1f} {tl.peak_bytes:>12}"
        )
        if args.out:
            with open(args.out, "w") as f:
                f.write(svg)


if __name__ == "__main__":
    main()
