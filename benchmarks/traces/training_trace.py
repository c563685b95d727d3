"""A training loop whose batch and sequence length change every step.

A 16-layer transformer-shaped model (d=1024, 8 heads, bf16) with fp32 master weights and Adam state:
the parameters, gradients and optimizer state live for the whole run; each step allocates the
activations of every layer on the way forward, frees them in reverse on the way back while
allocating temporaries and gradient buffers, then runs the optimizer with per-parameter
temporaries. Tokens per step change as (batch, seq) change: the sizes that made the caching
allocator's segments last step rarely fit this step's tensors, which is what fragments
memory in real runs with variable-length batches. Deterministic:

    from training_trace import trace
    for op in trace():      # ("alloc", id, nbytes) or ("free", id)
        ...
"""

import random


def trace(seed=0, steps=40, layers=16, d=1024, heads=8, max_tokens=8192):
    rnd = random.Random(seed)
    ops = []
    next_id = [0]

    def alloc(nbytes):
        i = next_id[0]
        next_id[0] += 1
        ops.append(("alloc", i, int(nbytes)))
        return i

    def free(i):
        ops.append(("free", i))

    bf16, fp32 = 2, 4
    layer_params = [4 * d * d, 8 * d * d, 2 * d]  # attention, MLP, norms (elements)
    params = [alloc(n * fp32) for _ in range(layers) for n in layer_params]
    adam = [alloc(n * fp32) for _ in range(2) for _ in range(layers) for n in layer_params]
    grads = [alloc(n * fp32) for _ in range(layers) for n in layer_params]
    del params, adam, grads  # live for the whole run

    for _ in range(steps):
        seq = rnd.randrange(128, 2049, 64)
        batch = rnd.randint(1, max(1, max_tokens // seq))
        tokens = batch * seq
        saved = []
        x = alloc(tokens * d * bf16)
        for _ in range(layers):
            ln = alloc(tokens * d * bf16)
            qkv = alloc(tokens * 3 * d * bf16)
            scores = alloc(batch * heads * seq * seq * bf16)
            probs = alloc(batch * heads * seq * seq * bf16)
            free(scores)
            attn = alloc(tokens * d * bf16)
            h = alloc(tokens * d * bf16)
            up = alloc(tokens * 4 * d * bf16)
            act = alloc(tokens * 4 * d * bf16)
            out = alloc(tokens * d * bf16)
            free(ln)
            saved.append([qkv, probs, attn, h, up, act, x])
            x = out
        loss = alloc(tokens * fp32)
        grad = alloc(tokens * d * bf16)
        free(x)
        free(loss)
        for layer in reversed(saved):
            qkv, probs, attn, h, up, act, x_in = layer
            g_act = alloc(tokens * 4 * d * bf16)
            g_up = alloc(tokens * 4 * d * bf16)
            free(act)
            free(up)
            free(g_act)
            g_h = alloc(tokens * d * bf16)
            free(g_up)
            free(h)
            g_probs = alloc(batch * heads * seq * seq * bf16)
            free(probs)
            g_qkv = alloc(tokens * 3 * d * bf16)
            free(g_probs)
            free(attn)
            free(qkv)
            g_x = alloc(tokens * d * bf16)
            free(g_qkv)
            free(g_h)
            free(grad)
            free(x_in)
            grad = g_x
        free(grad)
        # Adam: one fp32 temporary per parameter tensor, freed right away.
        for _ in range(layers):
            for n in layer_params:
                free(alloc(n * fp32))
    return ops
