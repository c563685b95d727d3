"""A small training script written for torch, type-checked against cudalite's stubs
(tests/test_stubs.py runs mypy on it)."""

from __future__ import annotations

import cudalite as torch
from cudalite import nn
from cudalite.nn import functional as F


def batch(n: int, device: torch.device) -> tuple[torch.Tensor, torch.Tensor]:
    x = torch.randn(n, 4, device=device)
    y = torch.hypot(x[:, :1], x[:, 1:2]) + x.erfc().sum(dim=1, keepdim=True)
    return x, y


def train(steps: int = 5) -> float:
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    model = nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Linear(16, 1)).to(device)
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    loss = torch.zeros(())
    for _ in range(steps):
        x, y = batch(32, device)
        loss = F.mse_loss(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
    with torch.no_grad():
        w: torch.Tensor = model[0].weight
        w.clamp_(-1.0, 1.0).mul_(0.5)
    scale: torch.dtype = torch.float32
    return float(loss.to(scale).item())


if __name__ == "__main__":
    print(train())
