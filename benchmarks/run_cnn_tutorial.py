"""The CIFAR-10 classifier of PyTorch's "Deep Learning with PyTorch: A 60 Minute Blitz"
(its ``Net``, ``CrossEntropyLoss`` and ``SGD(lr=0.001, momentum=0.9)``), trained for a few
steps on random CIFAR-shaped batches under cudalite and under torch, with the model code
unchanged: only the module bound to ``torch`` differs. The parameters come from the same
seed (cudalite initialises them as torch does, bit for bit on the CPU) and the batches from
NumPy, so the two columns of losses should agree to float32 rounding on the CPU.

    python benchmarks/run_cnn_tutorial.py [--steps 20] [--batch 4] [--device cpu|cuda]
"""

from __future__ import annotations

import argparse
import importlib
import time

import numpy as np


def train(torch, steps, batch, device, seed=0):
    """The blitz's training loop on random data; returns the loss of every step and the
    seconds per step."""
    nn = torch.nn
    F = torch.nn.functional
    optim = torch.optim

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv1 = nn.Conv2d(3, 6, 5)
            self.pool = nn.MaxPool2d(2, 2)
            self.conv2 = nn.Conv2d(6, 16, 5)
            self.fc1 = nn.Linear(16 * 5 * 5, 120)
            self.fc2 = nn.Linear(120, 84)
            self.fc3 = nn.Linear(84, 10)

        def forward(self, x):
            x = self.pool(F.relu(self.conv1(x)))
            x = self.pool(F.relu(self.conv2(x)))
            x = torch.flatten(x, 1)  # flatten all dimensions except batch
            x = F.relu(self.fc1(x))
            x = F.relu(self.fc2(x))
            x = self.fc3(x)
            return x

    torch.manual_seed(seed)
    net = Net().to(device)
    criterion = nn.CrossEntropyLoss()
    optimizer = optim.SGD(net.parameters(), lr=0.001, momentum=0.9)
    rng = np.random.default_rng(seed)
    losses = []
    t0 = time.perf_counter()
    for _ in range(steps):
        images = rng.standard_normal((batch, 3, 32, 32)).astype(np.float32)
        labels = rng.integers(0, 10, batch)
        inputs = torch.from_numpy(images).to(device)
        targets = torch.from_numpy(labels).to(device)
        optimizer.zero_grad()
        outputs = net(inputs)
        loss = criterion(outputs, targets)
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    return losses, (time.perf_counter() - t0) / steps


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=20)
    ap.add_argument("--batch", type=int, default=4)
    ap.add_argument("--device", choices=["cpu", "cuda"], default="cpu")
    args = ap.parse_args()
    runs = {}
    for name in ("cudalite", "torch"):
        try:
            mod = importlib.import_module(name)
        except ImportError:
            print(f"{name} is not importable here; skipped")
            continue
        runs[name] = train(mod, args.steps, args.batch, args.device)
    print(f"blitz Net on random CIFAR-shaped data, batch {args.batch}, {args.device}")
    print("step " + "".join(f"{n:>14}" for n in runs))
    for i in range(args.steps):
        print(f"{i:4d} " + "".join(f"{runs[n][0][i]:14.7f}" for n in runs))
    print("s/step " + "".join(f"{runs[n][1]:12.5f}  " for n in runs))
    if len(runs) == 2:
        a, b = (np.array(runs[n][0]) for n in runs)
        print(f"largest loss difference: {np.abs(a - b).max():.3g}")


if __name__ == "__main__":
    main()
