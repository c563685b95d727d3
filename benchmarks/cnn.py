"""CNN training steps side by side with torch (issue 25), on CUDA when available, else CPU:

1. The 60-minute blitz's CIFAR-10 ``Net`` (conv 5x5, max pool, conv 5x5, max pool, three
   Linear layers): one SGD step (zero_grad, forward, cross-entropy, backward, step).
2. A ResNet basic block stack on CIFAR-shaped input: conv 3x3 stem + BatchNorm + ReLU, two
   basic blocks (conv3x3-BN-ReLU-conv3x3-BN + identity, ReLU; the second with stride 2 and a
   1x1 projection), adaptive average pool and a Linear head; SGD with momentum and weight
   decay, label smoothing.
3. ResNet-18 of torchvision's shape (7x7 stem with stride 2, max pool, four stages of two
   basic blocks, 64-512 channels, 1x1 projections; run_cnn_tutorial.py runs torchvision's own
   code) on 32x32 inputs: one SGD step (nesterov momentum, weight decay, label smoothing),
   the issue's ResNet-18 figure at batch 256 on the GPU.
4. The single ops: conv2d 3x3 forward, forward + backward and backward alone, max_pool2d,
   batch_norm forward (training, evaluation) and forward + backward.

    python benchmarks/cnn.py [--device cpu|cuda] [--batch N] [--width C] [--only SUBSTR]

On CUDA both libraries use cuDNN with their defaults (``backends.cudnn.benchmark`` off,
TF32 allowed for convolutions); ``--benchmark`` turns cudnn.benchmark on in both. Run with an
interpreter that has both cudalite and torch importable to get the ratios.
"""

from __future__ import annotations

import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(__file__))
import cudalite  # noqa: E402
from _harness import Table, optional, per_call  # noqa: E402

torch = optional("torch")


def _has_cuda():
    return cudalite._C._cuda.device_count() > 0


class Lib:
    def __init__(self, mod, device):
        self.mod, self.device = mod, device
        self.sync = mod.cuda.synchronize if device == "cuda" else None


def blitz_net(t):
    nn, F = t.nn, t.nn.functional

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
            x = t.flatten(x, 1)
            x = F.relu(self.fc1(x))
            x = F.relu(self.fc2(x))
            return self.fc3(x)

    return Net()


def resnet_ish(t, width):
    nn = t.nn

    class Block(nn.Module):
        def __init__(self, cin, cout, stride):
            super().__init__()
            self.conv1 = nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
            self.bn1 = nn.BatchNorm2d(cout)
            self.conv2 = nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
            self.bn2 = nn.BatchNorm2d(cout)
            self.relu = nn.ReLU(inplace=True)
            self.shortcut = nn.Sequential()
            if stride != 1 or cin != cout:
                self.shortcut = nn.Sequential(
                    nn.Conv2d(cin, cout, 1, stride, bias=False), nn.BatchNorm2d(cout)
                )

        def forward(self, x):
            out = self.relu(self.bn1(self.conv1(x)))
            out = self.bn2(self.conv2(out))
            return self.relu(out + self.shortcut(x))

    return nn.Sequential(
        nn.Conv2d(3, width, 3, 1, 1, bias=False),
        nn.BatchNorm2d(width),
        nn.ReLU(inplace=True),
        Block(width, width, 1),
        Block(width, 2 * width, 2),
        nn.AdaptiveAvgPool2d((1, 1)),
        nn.Flatten(),
        nn.Linear(2 * width, 10),
    )


def resnet18(t, num_classes=10):
    """ResNet-18's layers as torchvision builds them (BasicBlock, [2, 2, 2, 2])."""
    nn = t.nn

    class BasicBlock(nn.Module):
        def __init__(self, cin, cout, stride):
            super().__init__()
            self.conv1 = nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
            self.bn1 = nn.BatchNorm2d(cout)
            self.relu = nn.ReLU(inplace=True)
            self.conv2 = nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
            self.bn2 = nn.BatchNorm2d(cout)
            self.downsample = None
            if stride != 1 or cin != cout:
                self.downsample = nn.Sequential(
                    nn.Conv2d(cin, cout, 1, stride, bias=False), nn.BatchNorm2d(cout)
                )

        def forward(self, x):
            identity = x if self.downsample is None else self.downsample(x)
            out = self.relu(self.bn1(self.conv1(x)))
            out = self.bn2(self.conv2(out))
            out += identity
            return self.relu(out)

    layers = [
        nn.Conv2d(3, 64, 7, 2, 3, bias=False),
        nn.BatchNorm2d(64),
        nn.ReLU(inplace=True),
        nn.MaxPool2d(3, 2, 1),
    ]
    cin = 64
    for cout, stride in ((64, 1), (128, 2), (256, 2), (512, 2)):
        layers += [BasicBlock(cin, cout, stride), BasicBlock(cout, cout, 1)]
        cin = cout
    layers += [nn.AdaptiveAvgPool2d((1, 1)), nn.Flatten(), nn.Linear(512, num_classes)]
    return nn.Sequential(*layers)


def train_step(lib, make, batch, **opt_kw):
    t = lib.mod
    t.manual_seed(0)
    model = make(t).to(lib.device)
    x = t.randn(batch, 3, 32, 32, device=lib.device)
    y = t.randint(0, 10, (batch,), device=lib.device)
    opt = t.optim.SGD(model.parameters(), lr=0.01, **opt_kw)
    loss_fn = t.nn.CrossEntropyLoss(label_smoothing=0.1 if opt_kw else 0.0)

    def step():
        opt.zero_grad()
        loss_fn(model(x), y).backward()
        opt.step()

    return step


def op_case(lib, kind, batch, width):
    t, F = lib.mod, lib.mod.nn.functional
    t.manual_seed(0)
    dev = lib.device
    grad = kind in ("conv_fb", "conv_b", "bn_fb")
    x = t.randn(batch, width, 32, 32, device=dev, requires_grad=grad)
    w = t.randn(width, width, 3, 3, device=dev, requires_grad=grad)
    if kind == "conv_f":
        return lambda: F.conv2d(x, w, padding=1)
    if kind == "conv_fb":
        return lambda: F.conv2d(x, w, padding=1).sum().backward()
    if kind == "conv_b":
        y = F.conv2d(x, w, padding=1)
        gy = t.ones_like(y)
        return lambda: t.autograd.grad(y, [x, w], gy, retain_graph=True)
    if kind == "pool":
        return lambda: F.max_pool2d(x, 2)
    rm, rv = t.zeros(width, device=dev), t.ones(width, device=dev)
    wb, bb = t.ones(width, device=dev), t.zeros(width, device=dev)
    if kind == "bn_eval":
        return lambda: F.batch_norm(x, rm, rv, wb, bb, training=False)
    if kind == "bn_fb":
        wb.requires_grad_(True)
        bb.requires_grad_(True)
        return lambda: F.batch_norm(x, rm, rv, wb, bb, training=True).sum().backward()
    return lambda: F.batch_norm(x, rm, rv, wb, bb, training=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--device", choices=["cpu", "cuda"], default=None)
    ap.add_argument("--batch", type=int, default=None)
    ap.add_argument("--width", type=int, default=None)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--benchmark", action="store_true", help="cudnn.benchmark = True in both")
    ap.add_argument("--only", default=None, help="run the cases whose name has this text")
    args = ap.parse_args()
    device = args.device or ("cuda" if _has_cuda() else "cpu")
    batch = args.batch or (256 if device == "cuda" else 32)
    width = args.width or (64 if device == "cuda" else 16)
    libs = {"cudalite": Lib(cudalite, device)}
    if torch is not None and (device == "cpu" or torch.cuda.is_available()):
        torch.set_num_threads(os.cpu_count() or 1)
        libs["torch"] = Lib(torch, device)
    for lib in libs.values():
        lib.mod.backends.cudnn.benchmark = args.benchmark

    table = Table(f"CNN training on {device}, batch {batch}, width {width} (time per call)")
    cases = [
        ("blitz Net: one SGD step", lambda lib: train_step(lib, blitz_net, batch)),
        (
            "ResNet-ish blocks: one SGD step",
            lambda lib: train_step(
                lib,
                lambda t: resnet_ish(t, width),
                batch,
                momentum=0.9,
                nesterov=True,
                weight_decay=5e-4,
            ),
        ),
        (
            "ResNet-18: one SGD step",
            lambda lib: train_step(
                lib, resnet18, batch, momentum=0.9, nesterov=True, weight_decay=5e-4
            ),
        ),
        ("conv2d 3x3 forward", lambda lib: op_case(lib, "conv_f", batch, width)),
        ("conv2d 3x3 forward + backward", lambda lib: op_case(lib, "conv_fb", batch, width)),
        ("conv2d 3x3 backward", lambda lib: op_case(lib, "conv_b", batch, width)),
        ("max_pool2d 2x2", lambda lib: op_case(lib, "pool", batch, width)),
        ("batch_norm (training)", lambda lib: op_case(lib, "bn", batch, width)),
        ("batch_norm (evaluation)", lambda lib: op_case(lib, "bn_eval", batch, width)),
        ("batch_norm forward + backward", lambda lib: op_case(lib, "bn_fb", batch, width)),
    ]
    if args.only:
        cases = [c for c in cases if args.only.lower() in c[0].lower()]
    for name, make in cases:
        row = {}
        for lib_name, lib in libs.items():
            fn = make(lib)
            row[lib_name] = per_call(fn, repeat=args.repeat, sync=lib.sync, min_time=0.2)
        table.add(name, **row)
    print(table.render())
    if "torch" in libs:
        print("\nratio = torch time / cudalite time; goal on the GPU: ResNet-18 step >= 0.95x")


if __name__ == "__main__":
    main()
