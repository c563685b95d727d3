"""A synthetic allocation trace: 20,000 mixed allocations and frees (torch 2.11's default
allocator: peak reserved / peak allocated = 1.083). Deterministic: the same list of
operations on every machine.

    from synthetic_trace import trace
    for op in trace():      # ("alloc", id, nbytes) or ("free", id)
        ...
"""

import random


def trace(seed=0, steps=20000):
    rnd = random.Random(seed)
    live, ops = [], []
    for i in range(steps):
        if live and rnd.random() < 0.48:
            j = rnd.randrange(len(live)) if rnd.random() < 0.3 else len(live) - 1
            ops.append(("free", live.pop(j)))
        else:
            r = rnd.random()
            if r < 0.6:
                size = rnd.randint(1, 4096) * 512
            elif r < 0.98:
                size = rnd.randint(1, 64) << 20
            else:
                size = rnd.randint(64, 512) << 20
            ops.append(("alloc", i, size))
            live.append(i)
    return ops
