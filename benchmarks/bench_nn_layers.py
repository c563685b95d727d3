"""Transformer layers side by side with torch, on CUDA when available, else CPU: forward and
forward + backward of gelu, layer_norm, embedding and causal scaled_dot_product_attention
at GPT-2-small-like widths, and one training step (forward, cross_entropy, backward, Adam) of
a 2-layer GPT of nanoGPT's shape. Then the fused kernels (layer_norm, softmax,
log_softmax, cross_entropy, gelu) forward + backward at nanoGPT's shapes, in float32 and
bfloat16, as time and as GB/s of the bytes each must move (forward: read x, write y;
backward: read the gradient and the saved tensor, write grad_input).

    python benchmarks/bench_nn_layers.py [--device cpu|cuda] [--small] [--fused-only]

layer_norm, softmax, nll_loss and gelu are one kernel forward and one backward each, as
torch's; attention still materialises the scores matrix. Run with an interpreter that has
both cudalite and torch importable.
"""

from __future__ import annotations

import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(__file__))
import cudalite  # noqa: E402
from _harness import Table, optional, per_call  # noqa: E402

torch = optional("torch")


def _sync(mod, device):
    if device != "cuda":
        return None
    if mod is cudalite:
        return lambda: cudalite._C._cuda.synchronize(cudalite._C._cuda.current_device())
    return mod.cuda.synchronize


def _layer(M, device, fn, shape, backward):
    """A callable running ``fn`` on a random input (and its backward when asked)."""
    M.manual_seed(0)
    x = M.randn(*shape, device=device, requires_grad=backward)

    def run():
        y = fn(M, x)
        if backward:
            y.sum().backward()
            x.grad = None

    return run


def _gelu(M, x):
    return M.nn.functional.gelu(x)


def _layer_norm(M, x):
    return M.nn.functional.layer_norm(x, (x.shape[-1],))


def _sdpa(M, x):
    return M.nn.functional.scaled_dot_product_attention(x, x, x, is_causal=True)


def _embedding_step(M, device, vocab, dim, tokens):
    M.manual_seed(0)
    emb = M.nn.Embedding(vocab, dim).to(device)
    idx = M.randint(0, vocab, (tokens,), device=device)

    def run():
        emb(idx).sum().backward()
        emb.weight.grad = None

    return run


def _gpt_step(M, device, n_embd, n_head, n_layer, vocab, block, batch):
    """One Adam step of a nanoGPT-shaped model: token and position embeddings, pre-LayerNorm
    blocks with causal attention and a GELU MLP, a head tied to the token embedding."""
    nn, F = M.nn, M.nn.functional
    M.manual_seed(0)

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.ln_1, self.ln_2 = nn.LayerNorm(n_embd), nn.LayerNorm(n_embd)
            self.c_attn = nn.Linear(n_embd, 3 * n_embd)
            self.c_proj = nn.Linear(n_embd, n_embd)
            self.mlp = nn.Sequential(
                nn.Linear(n_embd, 4 * n_embd), nn.GELU(), nn.Linear(4 * n_embd, n_embd)
            )

        def forward(self, x):
            B, T, C = x.shape
            q, k, v = self.c_attn(self.ln_1(x)).split(n_embd, dim=2)
            q, k, v = (t.view(B, T, n_head, C // n_head).transpose(1, 2) for t in (q, k, v))
            y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
            x = x + self.c_proj(y.transpose(1, 2).contiguous().view(B, T, C))
            return x + self.mlp(self.ln_2(x))

    class GPT(nn.Module):
        def __init__(self):
            super().__init__()
            self.wte, self.wpe = nn.Embedding(vocab, n_embd), nn.Embedding(block, n_embd)
            self.h = nn.ModuleList([Block() for _ in range(n_layer)])
            self.ln_f = nn.LayerNorm(n_embd)
            self.head = nn.Linear(n_embd, vocab, bias=False)
            self.wte.weight = self.head.weight

        def forward(self, idx, targets):
            x = self.wte(idx) + self.wpe(M.arange(idx.shape[1], device=idx.device))
            for b in self.h:
                x = b(x)
            logits = self.head(self.ln_f(x))
            return F.cross_entropy(logits.view(-1, vocab), targets.view(-1), ignore_index=-1)

    model = GPT().to(device)
    opt = M.optim.Adam(model.parameters(), lr=1e-4)
    idx = M.randint(0, vocab, (batch, block), device=device)
    tgt = M.randint(0, vocab, (batch, block), device=device)

    def run():
        opt.zero_grad(set_to_none=True)
        model(idx, tgt).backward()
        opt.step()

    return run


def _fused_step(M, device, dtype, fn, shape, grad_shape=None, extra=None):
    """Forward + backward of ``fn(M, x)`` with a fixed output gradient."""
    M.manual_seed(0)
    dt = getattr(M, dtype)
    x = M.randn(*shape, device=device, dtype=dt).requires_grad_(True)
    args = extra(M) if extra else ()
    g = M.randn(*(grad_shape or shape), device=device, dtype=dt) if grad_shape != () else None

    def run():
        y = fn(M, x, *args)
        y.backward(g)
        x.grad = None

    return run


def _ln_affine(M, x, w, b):
    return M.nn.functional.layer_norm(x, (x.shape[-1],), w, b)


def _fused_cases(device, small):
    """(name, dtype, make(M) -> run, bytes moved by one forward + backward)."""
    rows = 1024 if small else 16384  # nanoGPT: batch 64 x block 256 tokens
    attn = (8, 6, 128, 128) if small else (64, 6, 256, 256)
    ce = (rows, 65)
    ce_big = (256, 8192) if small else (4096, 50304)
    gelu_shape = (rows, 1536)
    out = []
    for dtype, size in (("float32", 4), ("bfloat16", 2)):

        def params(M, dtype=dtype, n=384):
            dt = getattr(M, dtype)
            w = M.ones(n, device=device, dtype=dt).requires_grad_(True)
            return (w, M.zeros(n, device=device, dtype=dt).requires_grad_(True))

        def ce_target(M, shape):
            M.manual_seed(1)
            return (M.randint(0, shape[1], (shape[0],), device=device),)

        n_ln = rows * 384
        n_attn = attn[0] * attn[1] * attn[2] * attn[3]
        cases = [
            (f"layer_norm ({rows}x384, affine)", _ln_affine, (rows, 384), None, params, n_ln * 5),
            (
                f"softmax {attn}, last dim",
                lambda M, x: M.nn.functional.softmax(x, -1),
                attn,
                None,
                None,
                n_attn * 5,
            ),
            (
                f"log_softmax {attn}, last dim",
                lambda M, x: M.nn.functional.log_softmax(x, -1),
                attn,
                None,
                None,
                n_attn * 5,
            ),
            (
                f"gelu {gelu_shape}",
                lambda M, x: M.nn.functional.gelu(x),
                gelu_shape,
                None,
                None,
                gelu_shape[0] * gelu_shape[1] * 5,
            ),
            (
                f"gelu tanh {gelu_shape}",
                lambda M, x: M.nn.functional.gelu(x, approximate="tanh"),
                gelu_shape,
                None,
                None,
                gelu_shape[0] * gelu_shape[1] * 5,
            ),
        ]
        for shape in (ce, ce_big):
            cases.append(
                (
                    f"cross_entropy {shape}",
                    lambda M, x, t: M.nn.functional.cross_entropy(x, t),
                    shape,
                    (),
                    lambda M, shape=shape: ce_target(M, shape),
                    shape[0] * shape[1] * 6,
                )
            )
        for name, fn, shape, gshape, extra, elems in cases:
            out.append(
                (
                    f"{name} {dtype}",
                    lambda M, fn=fn, shape=shape, gshape=gshape, extra=extra, dtype=dtype: (
                        _fused_step(M, device, dtype, fn, shape, gshape, extra)
                    ),
                    elems * size,
                )
            )
    return out


def fused_tables(device, libs, small, repeat):
    times = Table(f"fused nn kernels on {device}, forward + backward (time per call)")
    rates = Table(
        f"fused nn kernels on {device}, forward + backward", unit="GB/s", higher_is_better=True
    )
    for name, make, nbytes in _fused_cases(device, small):
        t = {}
        for lib_name, M in libs.items():
            t[lib_name] = per_call(make(M), repeat=repeat, sync=_sync(M, device), min_time=0.3)
        times.add(name, **t)
        rates.add(name, **{k: nbytes / v / 1e9 for k, v in t.items() if v})
    print(times.render())
    print(rates.render())


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--device", choices=["cpu", "cuda"], default=None)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--small", action="store_true", help="smaller shapes (a 2-core CPU)")
    ap.add_argument("--fused-only", action="store_true", help="only the fused kernels' tables")
    args = ap.parse_args()
    has_cuda = cudalite._C._cuda.device_count() > 0
    device = args.device or ("cuda" if has_cuda else "cpu")
    libs = {"cudalite": cudalite}
    if torch is not None and (device == "cpu" or torch.cuda.is_available()):
        libs["torch"] = torch
    if args.fused_only:
        fused_tables(device, libs, args.small, args.repeat)
        return
    if args.small:
        rows, width, heads, emb = 512, 768, (4, 6, 128, 64), (4096, 256, 2048)
        gpt = dict(n_embd=128, n_head=4, n_layer=2, vocab=512, block=64, batch=4)
    else:
        rows, width, heads, emb = 8192, 768, (8, 12, 512, 64), (50304, 768, 8192)
        gpt = dict(n_embd=384, n_head=6, n_layer=2, vocab=4096, block=256, batch=8)
    table = Table(f"nn layers on {device} (time per call)")
    cases = []
    for name, fn, shape in [
        (f"gelu ({rows}x{width})", _gelu, (rows, width)),
        (f"layer_norm ({rows}x{width})", _layer_norm, (rows, width)),
        (f"causal sdpa {heads}", _sdpa, heads),
    ]:
        cases.append((name + " forward", lambda M, f=fn, s=shape: _layer(M, device, f, s, False)))
        cases.append((name + " fwd+bwd", lambda M, f=fn, s=shape: _layer(M, device, f, s, True)))
    cases.append(
        (f"embedding {emb} fwd+bwd", lambda M: _embedding_step(M, device, *emb)),
    )
    cases.append(
        (
            "GPT {n_layer}x{n_embd}, T={block}, B={batch}: Adam step".format(**gpt),
            lambda M: _gpt_step(M, device, **gpt),
        )
    )
    for name, make in cases:
        row = {}
        for lib_name, M in libs.items():
            row[lib_name] = per_call(
                make(M), repeat=args.repeat, sync=_sync(M, device), min_time=0.3
            )
        table.add(name, **row)
    print(table.render())
    fused_tables(device, libs, args.small, args.repeat)


if __name__ == "__main__":
    main()
