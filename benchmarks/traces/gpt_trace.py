"""nanoGPT's shakespeare_char training loop (the real-models issue's GPT), tensor by tensor.

The model of config/train_shakespeare_char.py (6 layers, 6 heads, n_embd 384, block 256,
batch 64, vocabulary 65, dropout 0.2) trained as train.py trains it on a GPU: bfloat16
autocast (fp32 weights cast once per forward and cached until the region ends, layer norms
and the loss in fp32), flash attention (output and log-sum-exp saved), dropout masks saved
for the backward, the fused AdamW (its state made at the first step), gradients freed by
zero_grad(set_to_none=True) and made again by every backward, and the next batch fetched to
the GPU while the current one is still in use. Every `eval_interval` steps estimate_loss()
runs `eval_iters` forward passes per split under no_grad with another batch size (nothing is
saved, so intermediates die as soon as they are read; the last batch of each split is
partial), then the checkpoint is written: torch.save copies each tensor to the host, which
makes no device allocations. Deterministic:

    from gpt_trace import trace
    for op in trace():      # ("alloc", id, nbytes) or ("free", id)
        ...
"""

import random


def trace(
    seed=0,
    steps=120,
    layers=6,
    d=384,
    block=256,
    batch=64,
    vocab=65,
    eval_interval=40,
    eval_iters=10,
    eval_batch=128,
):
    rnd = random.Random(seed)
    ops = []
    next_id = [0]

    size_of = {}

    def alloc(nbytes):
        i = next_id[0]
        next_id[0] += 1
        ops.append(("alloc", i, int(nbytes)))
        size_of[i] = int(nbytes)
        return i

    def free(*ids):
        for i in ids:
            ops.append(("free", i))

    bf16, fp32, i64, u8 = 2, 4, 8, 1
    # Parameters (fp32), in the order nanoGPT's GPT.__init__ makes them; wte is tied to lm_head.
    shapes = [vocab * d, block * d]
    for _ in range(layers):
        shapes += [d, d, 3 * d * d, 3 * d, d * d, d, d, d, 4 * d * d, 4 * d, 4 * d * d, d]
    shapes += [d, d]
    for n in shapes:
        alloc(n * fp32)  # live for the whole run
    adam_state = []

    def batch_pair(b):
        return alloc(b * block * i64), alloc(b * block * i64)

    def forward(b, train):
        """One forward pass under autocast; returns (saved tensors, loss id, cast weights)."""
        n = b * block  # tokens
        saved = []

        def keep(t):
            saved.append(t)

        def done(*ts):  # read by the next op: saved for the backward, or dead at once
            for t in ts:
                keep(t) if train else free(t)

        casts = []  # autocast's cache of bf16 weights, freed when the region ends

        def cast(elems):
            c = alloc(elems * bf16)
            casts.append(c)
            return c

        tok = alloc(n * d * fp32)
        pos = alloc(block * d * fp32)
        x0 = alloc(n * d * fp32)
        free(tok, pos)
        mask = alloc(n * d * u8) if train else None
        x = alloc(n * d * fp32) if train else x0
        if train:
            keep(mask)
            free(x0)
        for _ in range(layers):
            # ln_1 (fp32, mean and rstd saved), attention in bf16.
            ln = alloc(n * d * fp32)
            stats = alloc(2 * n * fp32)
            ln16 = alloc(n * d * bf16)
            cast(3 * d * d), cast(3 * d)
            qkv = alloc(n * 3 * d * bf16)
            done(ln)
            done(ln16)
            done(stats)
            y = alloc(n * d * bf16)
            lse = alloc(b * 6 * block * fp32)
            done(qkv)
            done(lse)
            yc = alloc(n * d * bf16)  # transpose(1, 2).contiguous()
            done(y)
            cast(d * d), cast(d)
            proj = alloc(n * d * bf16)
            done(yc)
            if train:
                m1 = alloc(n * d * u8)
                drop1 = alloc(n * d * bf16)
                free(proj)
                keep(m1)
                proj = drop1
            x1 = alloc(n * d * fp32)  # x + attn(...)
            free(proj)
            if not train:
                free(x)
            # ln_2 and the MLP.
            ln2 = alloc(n * d * fp32)
            stats2 = alloc(2 * n * fp32)
            ln2_16 = alloc(n * d * bf16)
            cast(4 * d * d), cast(4 * d)
            up = alloc(n * 4 * d * bf16)
            done(ln2)
            done(ln2_16)
            done(stats2)
            act = alloc(n * 4 * d * bf16)
            done(up)
            cast(4 * d * d), cast(d)
            down = alloc(n * d * bf16)
            done(act)
            if train:
                m2 = alloc(n * d * u8)
                drop2 = alloc(n * d * bf16)
                free(down)
                keep(m2)
                down = drop2
            x2 = alloc(n * d * fp32)
            free(down)
            if train:
                keep(x)
            else:
                free(x1)
            x = x2
            if train:
                keep(x1)
        lnf = alloc(n * d * fp32)
        statsf = alloc(2 * n * fp32)
        lnf16 = alloc(n * d * bf16)
        cast(vocab * d)
        logits = alloc(n * vocab * bf16)
        logits32 = alloc(n * vocab * fp32)
        logp = alloc(n * vocab * fp32)
        loss = alloc(fp32)
        free(logits32)
        done(lnf, statsf, lnf16, logits)
        done(logp)
        done(x)
        return saved, loss, casts

    def backward(saved, loss, b, grads_made):
        """Frees what the forward saved, in reverse, making activation gradients on the way
        and each parameter's gradient the first time it is reached."""
        n = b * block
        g = alloc(n * vocab * fp32)  # d(log_softmax)
        free(loss)
        grad_params = iter(reversed(range(len(shapes))))
        for t in reversed(saved):
            # A gradient the size of what is freed, then the parameter gradients it feeds.
            gt = alloc(min(size_of[t], n * 4 * d * bf16))
            free(t, g)
            g = gt
            if rnd.random() < 0.35:
                k = next(grad_params, None)
                if k is not None and k not in grads_made:
                    grads_made[k] = alloc(shapes[k] * fp32)
        for k in grad_params:
            if k not in grads_made:
                grads_made[k] = alloc(shapes[k] * fp32)
        free(g)

    x_b, y_b = batch_pair(batch)
    for step in range(steps):
        if step % eval_interval == 0 and step > 0:
            # estimate_loss(): model.eval(), no_grad, both splits, a partial last batch.
            for _ in ("train", "val"):
                for k in range(eval_iters):
                    b = eval_batch if k < eval_iters - 1 else rnd.randint(1, eval_batch)
                    xe, ye = batch_pair(b)
                    saved, loss, casts = forward(b, train=False)
                    free(*casts)
                    free(loss, xe, ye)
            # The checkpoint: torch.save copies to the host (no device allocation).
        saved, loss, casts = forward(batch, train=True)
        free(*casts)
        x_next, y_next = batch_pair(batch)  # prefetched while this step still runs
        grads = {}
        backward(saved, loss, batch, grads)
        free(x_b, y_b)
        x_b, y_b = x_next, y_next
        # Fused AdamW: its state (exp_avg, exp_avg_sq) is made at the first step.
        if not adam_state:
            adam_state = [alloc(n * fp32) for n in shapes for _ in range(2)]
        free(*grads.values())  # zero_grad(set_to_none=True)
    free(x_b, y_b)
    return ops
