"""A GPT training step with ``make_graphed_callables`` on its blocks, beside the same step run
eagerly, for cudalite and torch on one GPU.

The model is nanoGPT's shakespeare_char GPT (6 layers, 6 heads, 384 wide, block 256,
vocabulary 65, no biases, tied head; batch 64): token and position embeddings, pre-LayerNorm
blocks with causal scaled_dot_product_attention and a GELU MLP, cross_entropy, fused AdamW.
The graphed step replaces each block by its graphed version
(``make_graphed_callables(tuple(blocks), sample_args)``: one graph per block forward and one
per block backward, replayed in order; the embeddings, the head, the loss and the optimizer
stay eager). Rows: float32 (TF32 matmuls, as nanoGPT sets them) and bfloat16 autocast (with
``cache_enabled=False``, which graphing under autocast needs). Each row times both libraries in
alternating rounds and takes the median round.

Goal (issue 27): the graphed step no slower than the eager one for cudalite.

    python benchmarks/cuda_graphs_gpt.py [--layers 6] [--batch 64] [--dropout 0.0] [--small]
"""

from __future__ import annotations

import argparse
import contextlib
import os
import statistics
import sys

sys.path.insert(0, os.path.dirname(__file__))
import cudalite  # noqa: E402
from _harness import Table, optional, per_call  # noqa: E402

torch = optional("torch")

ROUNDS = 3


def build(M, cfg, device="cuda"):
    """The GPT, its fused AdamW and a batch of tokens and targets on ``device``."""
    nn, F = M.nn, M.nn.functional
    n_embd, n_head, vocab, block = cfg.embd, cfg.heads, cfg.vocab, cfg.block
    M.manual_seed(0)

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.ln_1 = nn.LayerNorm(n_embd, bias=False)
            self.c_attn = nn.Linear(n_embd, 3 * n_embd, bias=False)
            self.c_proj = nn.Linear(n_embd, n_embd, bias=False)
            self.ln_2 = nn.LayerNorm(n_embd, bias=False)
            self.c_fc = nn.Linear(n_embd, 4 * n_embd, bias=False)
            self.mlp_proj = nn.Linear(4 * n_embd, n_embd, bias=False)
            self.drop = nn.Dropout(cfg.dropout)

        def forward(self, x):
            B, T, C = x.shape
            q, k, v = self.c_attn(self.ln_1(x)).split(n_embd, dim=2)
            q, k, v = (t.view(B, T, n_head, C // n_head).transpose(1, 2) for t in (q, k, v))
            y = F.scaled_dot_product_attention(
                q, k, v, dropout_p=cfg.dropout if self.training else 0.0, is_causal=True
            )
            y = y.transpose(1, 2).contiguous().view(B, T, C)
            x = x + self.drop(self.c_proj(y))
            return x + self.drop(self.mlp_proj(F.gelu(self.c_fc(self.ln_2(x)))))

    class GPT(nn.Module):
        def __init__(self):
            super().__init__()
            self.wte = nn.Embedding(vocab, n_embd)
            self.wpe = nn.Embedding(block, n_embd)
            self.drop = nn.Dropout(cfg.dropout)
            self.h = nn.ModuleList([Block() for _ in range(cfg.layers)])
            self.ln_f = nn.LayerNorm(n_embd, bias=False)
            self.head = nn.Linear(n_embd, vocab, bias=False)
            self.wte.weight = self.head.weight

        def forward(self, idx, targets):
            pos = M.arange(idx.shape[1], device=idx.device)
            x = self.drop(self.wte(idx) + self.wpe(pos))
            for b in self.h:
                x = b(x)
            logits = self.head(self.ln_f(x))
            return F.cross_entropy(logits.view(-1, vocab), targets.view(-1))

    model = GPT().to(device)
    opt = M.optim.AdamW(model.parameters(), lr=1e-3, fused=True)
    idx = M.randint(0, vocab, (cfg.batch, block), device=device)
    tgt = M.randint(0, vocab, (cfg.batch, block), device=device)
    return model, opt, idx, tgt


def region(M, amp):
    if not amp:
        return contextlib.nullcontext()
    return M.autocast("cuda", dtype=M.bfloat16, cache_enabled=False)


def make_step(M, cfg, amp, graphed):
    """A callable running one training step (zero_grad, forward, backward, AdamW)."""
    model, opt, idx, tgt = build(M, cfg)
    if graphed:
        blocks = tuple(model.h)
        sample = tuple(
            M.randn(cfg.batch, cfg.block, cfg.embd, device="cuda", requires_grad=True)
            for _ in blocks
        )
        with region(M, amp):
            graphed_blocks = M.cuda.make_graphed_callables(blocks, sample)
        for i, g in enumerate(graphed_blocks):
            model.h[i] = g

    def step():
        opt.zero_grad(set_to_none=True)
        with region(M, amp):
            loss = model(idx, tgt)
        loss.backward()
        opt.step()

    for _ in range(3):  # optimizer state, allocator segments, cuBLAS plans
        step()
    return step


def timed(make, libs):
    """{lib: seconds per step}: the median of ROUNDS rounds, the libraries taking turns."""
    runs = {lib: [] for lib in libs}
    names = list(libs)
    for r in range(ROUNDS):
        for lib in names if r % 2 == 0 else names[::-1]:
            M = libs[lib]
            runs[lib].append(per_call(make(M), sync=M.cuda.synchronize, min_time=0.3))
    return {lib: statistics.median(ts) for lib, ts in runs.items()}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--layers", type=int, default=6)
    ap.add_argument("--heads", type=int, default=6)
    ap.add_argument("--embd", type=int, default=384)
    ap.add_argument("--block", type=int, default=256)
    ap.add_argument("--vocab", type=int, default=65)
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--dropout", type=float, default=0.0)
    ap.add_argument("--small", action="store_true", help="batch 8, 2 layers: a quick check")
    cfg = ap.parse_args()
    if cfg.small:
        cfg.batch, cfg.layers = 8, 2
    if not cudalite.cuda.is_available():
        print("no CUDA GPU visible: nothing to measure")
        return
    libs = {"cudalite": cudalite}
    if torch is not None and torch.cuda.is_available():
        libs["torch"] = torch
    for M in libs.values():  # nanoGPT's settings
        M.backends.cuda.matmul.allow_tf32 = True
        M.backends.cudnn.allow_tf32 = True

    shape = (
        f"{cfg.layers} layers, {cfg.heads} heads, {cfg.embd} wide, block {cfg.block}, "
        f"batch {cfg.batch}, dropout {cfg.dropout}"
    )
    steps = Table(f"GPT training step ({shape}), wall time including synchronize")
    own = Table(
        "eager step / step with graphed blocks (> 1: graphing helps)",
        unit="x",
        higher_is_better=True,
    )
    for amp in (False, True):
        kind = "bfloat16 autocast" if amp else "float32 (TF32)"
        eager = timed(lambda M, amp=amp: make_step(M, cfg, amp, graphed=False), libs)
        graphed = timed(lambda M, amp=amp: make_step(M, cfg, amp, graphed=True), libs)
        steps.add(f"{kind}, eager", **eager)
        steps.add(f"{kind}, blocks graphed", **graphed)
        own.add(kind, **{lib: eager[lib] / graphed[lib] for lib in libs})
    print(steps.render())
    print(own.render())


if __name__ == "__main__":
    main()
