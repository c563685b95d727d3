"""End to end: a 2-layer GPT of nanoGPT's shape, written as nanoGPT's model.py is with only
``import torch`` changed (token and position Embeddings, a LayerNorm built on
F.layer_norm, causal attention through F.scaled_dot_product_attention(is_causal=True) or
the manual masked_fill path, a GELU MLP, the embedding tied to the head, cross_entropy with
ignore_index=-1), trains a few steps with Adam and its loss decreases."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pytest

import cudalite as torch
import cudalite.nn as nn
from cudalite.nn import functional as F


class LayerNorm(nn.Module):
    """LayerNorm with an optional bias (nanoGPT's)."""

    def __init__(self, ndim, bias):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(ndim))
        self.bias = nn.Parameter(torch.zeros(ndim)) if bias else None

    def forward(self, input):
        return F.layer_norm(input, self.weight.shape, self.weight, self.bias, 1e-5)


class CausalSelfAttention(nn.Module):
    def __init__(self, config):
        super().__init__()
        assert config.n_embd % config.n_head == 0
        self.c_attn = nn.Linear(config.n_embd, 3 * config.n_embd, bias=config.bias)
        self.c_proj = nn.Linear(config.n_embd, config.n_embd, bias=config.bias)
        self.attn_dropout = nn.Dropout(config.dropout)
        self.resid_dropout = nn.Dropout(config.dropout)
        self.n_head = config.n_head
        self.n_embd = config.n_embd
        self.dropout = config.dropout
        self.flash = config.flash and hasattr(torch.nn.functional, "scaled_dot_product_attention")
        if not self.flash:
            # nanoGPT: torch.tril(torch.ones(n, n)); the same lower triangle from aranges
            n = config.block_size
            tril = (torch.arange(n).view(n, 1) >= torch.arange(n)).float()
            self.register_buffer("bias", tril.view(1, 1, n, n))

    def forward(self, x):
        B, T, C = x.size()
        q, k, v = self.c_attn(x).split(self.n_embd, dim=2)
        k = k.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        q = q.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        v = v.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        if self.flash:
            y = torch.nn.functional.scaled_dot_product_attention(
                q,
                k,
                v,
                attn_mask=None,
                dropout_p=self.dropout if self.training else 0,
                is_causal=True,
            )
        else:
            att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))
            att = att.masked_fill(self.bias[:, :, :T, :T] == 0, float("-inf"))
            att = F.softmax(att, dim=-1)
            att = self.attn_dropout(att)
            y = att @ v
        y = y.transpose(1, 2).contiguous().view(B, T, C)
        return self.resid_dropout(self.c_proj(y))


class MLP(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.c_fc = nn.Linear(config.n_embd, 4 * config.n_embd, bias=config.bias)
        self.gelu = nn.GELU()
        self.c_proj = nn.Linear(4 * config.n_embd, config.n_embd, bias=config.bias)
        self.dropout = nn.Dropout(config.dropout)

    def forward(self, x):
        return self.dropout(self.c_proj(self.gelu(self.c_fc(x))))


class Block(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.ln_1 = LayerNorm(config.n_embd, bias=config.bias)
        self.attn = CausalSelfAttention(config)
        self.ln_2 = LayerNorm(config.n_embd, bias=config.bias)
        self.mlp = MLP(config)

    def forward(self, x):
        x = x + self.attn(self.ln_1(x))
        return x + self.mlp(self.ln_2(x))


@dataclass
class GPTConfig:
    block_size: int = 16
    vocab_size: int = 37
    n_layer: int = 2
    n_head: int = 2
    n_embd: int = 16
    dropout: float = 0.0
    bias: bool = True
    flash: bool = True


class GPT(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.config = config
        self.transformer = nn.ModuleDict(
            dict(
                wte=nn.Embedding(config.vocab_size, config.n_embd),
                wpe=nn.Embedding(config.block_size, config.n_embd),
                drop=nn.Dropout(config.dropout),
                h=nn.ModuleList([Block(config) for _ in range(config.n_layer)]),
                ln_f=LayerNorm(config.n_embd, bias=config.bias),
            )
        )
        self.lm_head = nn.Linear(config.n_embd, config.vocab_size, bias=False)
        self.transformer.wte.weight = self.lm_head.weight  # weight tying
        self.apply(self._init_weights)
        for pn, p in self.named_parameters():
            if pn.endswith("c_proj.weight"):
                torch.nn.init.normal_(p, mean=0.0, std=0.02 / math.sqrt(2 * config.n_layer))

    def get_num_params(self, non_embedding=True):
        n_params = sum(p.numel() for p in self.parameters())
        if non_embedding:
            n_params -= self.transformer.wpe.weight.numel()
        return n_params

    def _init_weights(self, module):
        if isinstance(module, nn.Linear):
            torch.nn.init.normal_(module.weight, mean=0.0, std=0.02)
            if module.bias is not None:
                torch.nn.init.zeros_(module.bias)
        elif isinstance(module, nn.Embedding):
            torch.nn.init.normal_(module.weight, mean=0.0, std=0.02)

    def forward(self, idx, targets=None):
        device = idx.device
        b, t = idx.size()
        assert t <= self.config.block_size
        pos = torch.arange(0, t, dtype=torch.long, device=device)
        tok_emb = self.transformer.wte(idx)
        pos_emb = self.transformer.wpe(pos)
        x = self.transformer.drop(tok_emb + pos_emb)
        for block in self.transformer.h:
            x = block(x)
        x = self.transformer.ln_f(x)
        if targets is not None:
            logits = self.lm_head(x)
            loss = F.cross_entropy(
                logits.view(-1, logits.size(-1)), targets.view(-1), ignore_index=-1
            )
        else:
            logits = self.lm_head(x[:, [-1], :])
            loss = None
        return logits, loss

    def configure_optimizers(self, weight_decay, learning_rate, betas):
        param_dict = {pn: p for pn, p in self.named_parameters() if p.requires_grad}
        decay = [p for n, p in param_dict.items() if p.dim() >= 2]
        nodecay = [p for n, p in param_dict.items() if p.dim() < 2]
        groups = [
            {"params": decay, "weight_decay": weight_decay},
            {"params": nodecay, "weight_decay": 0.0},
        ]
        return torch.optim.Adam(groups, lr=learning_rate, betas=betas, decoupled_weight_decay=True)


def batch(config, seed=0):
    rng = np.random.default_rng(seed)
    data = rng.integers(0, config.vocab_size, (4, config.block_size + 1))
    x = torch.tensor(data[:, :-1])
    y = torch.tensor(data[:, 1:])
    y[:, :3] = -1  # ignored positions
    return x, y


@pytest.mark.parametrize("flash", [True, False])
def test_gpt_trains_and_its_loss_decreases(flash):
    torch.manual_seed(0)
    config = GPTConfig(flash=flash, dropout=0.1)
    model = GPT(config)
    assert model.transformer.wte.weight is model.lm_head.weight
    n = config.n_embd
    per_block = (
        2 * 2 * n + (3 * n * n + 3 * n) + (n * n + n) + (4 * n * n + 4 * n) + (4 * n * n + n)
    )
    expected = config.vocab_size * n + config.block_size * n + 2 * per_block + 2 * n
    assert model.get_num_params(non_embedding=False) == expected
    opt = model.configure_optimizers(0.1, 1e-2, (0.9, 0.95))
    x, y = batch(config)
    model.train()
    losses = []
    for _ in range(10):
        _, loss = model(x, y)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        losses.append(loss.item())
    assert losses[0] == pytest.approx(math.log(config.vocab_size), rel=0.05)  # near uniform
    assert losses[-1] < losses[0] - 0.5
    assert all(math.isfinite(v) for v in losses)
    model.eval()
    logits, loss = model(x)
    assert loss is None and logits.shape == (4, 1, config.vocab_size)


def test_flash_and_manual_attention_agree():
    torch.manual_seed(0)
    flash = GPT(GPTConfig(flash=True))
    manual = GPT(GPTConfig(flash=False))
    manual.load_state_dict(flash.state_dict(), strict=False)
    manual.lm_head.weight = manual.transformer.wte.weight
    x, y = batch(GPTConfig(), seed=1)
    lf, loss_f = flash(x, y)
    lm, loss_m = manual(x, y)
    np.testing.assert_allclose(lf.detach().numpy(), lm.detach().numpy(), rtol=1e-5, atol=1e-6)
    loss_f.backward()
    loss_m.backward()
    for (name, pf), (_, pm) in zip(
        flash.named_parameters(), manual.named_parameters(), strict=True
    ):
        np.testing.assert_allclose(
            pf.grad.numpy(), pm.grad.numpy(), rtol=1e-4, atol=1e-6, err_msg=name
        )
