"""An inference server whose per-request buffers grow by reallocation.

64 requests decode concurrently. Each request's key/value buffer grows by one token per step;
when it is full it is reallocated 25% larger (allocate the bigger buffer, copy, free the old
one), the way `torch.cat` growth or a naive KV cache behaves. Requests finish after a random
number of tokens and new ones take their place with a random prompt length, and every step
allocates short-lived activations sized by the number of live tokens. Growing buffers leave
holes just too small for their own next size: the classic worst case for best-fit caching.
Deterministic:

    from kvcache_trace import trace
    for op in trace():      # ("alloc", id, nbytes) or ("free", id)
        ...
"""

import random


def trace(seed=0, steps=3000, slots=64, token_bytes=2 * 16 * 1024 * 2):
    rnd = random.Random(seed)
    ops = []
    next_id = [0]

    def alloc(nbytes):
        i = next_id[0]
        next_id[0] += 1
        ops.append(("alloc", i, int(nbytes)))
        return i

    def new_request():
        prompt = rnd.randint(16, 2048)
        budget = prompt + rnd.randint(16, 2048)
        cap = prompt + 64
        return {"len": prompt, "end": budget, "cap": cap, "buf": alloc(cap * token_bytes)}

    live = [new_request() for _ in range(slots)]
    for _ in range(steps):
        total = sum(r["len"] for r in live)
        tmp = [alloc(total * 4096), alloc(len(live) * 32000 * 4)]
        for i, r in enumerate(live):
            r["len"] += 1
            if r["len"] >= r["end"]:
                ops.append(("free", r["buf"]))
                live[i] = new_request()
            elif r["len"] > r["cap"]:
                r["cap"] = int(r["cap"] * 1.25) + 1
                new = alloc(r["cap"] * token_bytes)
                ops.append(("free", r["buf"]))
                r["buf"] = new
        for t in reversed(tmp):
            ops.append(("free", t))
    return ops
