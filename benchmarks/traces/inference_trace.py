"""An inference server mixing prefill and decode over requests of random lengths.

An 8-layer decoder (d=2048, bf16 weights, vocabulary 32000) serves batches of requests as
Hugging Face's generate() does: a batch of 1-16 requests with random prompt lengths is
prefilled at once (padded to the longest prompt; every layer's activations live only while
the layer runs, and its keys and values are cached), then decoded token by token until the
longest request is done, each step growing every layer's key and value caches by one token
with torch.cat (a new buffer one token longer, then the old one freed), with the step's
activations and logits. Then the next batch arrives, of another size and other lengths:
prefill makes large short-lived activations between long-lived caches of every size.
Deterministic:

    from inference_trace import trace
    for op in trace():      # ("alloc", id, nbytes) or ("free", id)
        ...
"""

import random


def trace(seed=0, batches=6, layers=8, d=2048, vocab=32000, max_batch=16, max_new=160):
    rnd = random.Random(seed)
    ops = []
    next_id = [0]

    def alloc(nbytes):
        i = next_id[0]
        next_id[0] += 1
        ops.append(("alloc", i, int(nbytes)))
        return i

    def free(*ids):
        for i in ids:
            ops.append(("free", i))

    bf16, fp32, i64 = 2, 4, 8
    for _ in range(layers):
        for n in (3 * d * d, d * d, 4 * d * d, 4 * d * d, d, d):  # qkv, out, up, down, norms
            alloc(n * bf16)  # weights, live for the whole run
    alloc(vocab * d * bf16)  # embedding
    alloc(vocab * d * bf16)  # lm_head

    def layer_step(tokens, ctx, caches, layer, batch):
        """One layer over `tokens` new tokens (batch-wide); grows its key/value caches."""
        ln = alloc(tokens * d * bf16)
        qkv = alloc(tokens * 3 * d * bf16)
        free(ln)
        for j in (0, 1):  # keys, values: torch.cat([cache, new], dim=-2)
            grown = alloc(batch * ctx * d * bf16)
            if caches[layer][j] is not None:
                free(caches[layer][j])
            caches[layer][j] = grown
        attn = alloc(tokens * d * bf16)
        free(qkv)
        out = alloc(tokens * d * bf16)
        free(attn)
        ln2 = alloc(tokens * d * bf16)
        up = alloc(tokens * 4 * d * bf16)
        free(ln2)
        act = alloc(tokens * 4 * d * bf16)
        free(up)
        down = alloc(tokens * d * bf16)
        free(act)
        res = alloc(tokens * d * bf16)
        free(out, down)
        return res

    for _ in range(batches):
        batch = rnd.randint(1, max_batch)
        prompts = [rnd.randint(16, 1024) for _ in range(batch)]
        new_tokens = [rnd.randint(16, max_new) for _ in range(batch)]
        ctx = max(prompts)
        ids = alloc(batch * ctx * i64)
        mask = alloc(batch * ctx * i64)
        caches = [[None, None] for _ in range(layers)]
        # Prefill: the whole padded prompt at once.
        x = alloc(batch * ctx * d * bf16)
        for layer in range(layers):
            y = layer_step(batch * ctx, ctx, caches, layer, batch)
            free(x)
            x = y
        logits = alloc(batch * vocab * fp32)  # last position only
        free(x, logits)
        # Decode: one token per request per step until the longest is done.
        for _ in range(max(new_tokens)):
            ctx += 1
            grown_mask = alloc(batch * ctx * i64)
            free(mask)
            mask = grown_mask
            x = alloc(batch * d * bf16)
            for layer in range(layers):
                y = layer_step(batch, ctx, caches, layer, batch)
                free(x)
                x = y
            logits = alloc(batch * vocab * fp32)
            probs = alloc(batch * vocab * fp32)
            token = alloc(batch * i64)
            free(x, logits, probs, token)
        for kv in caches:
            free(*kv)
        free(ids, mask)
    return ops
