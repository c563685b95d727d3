"""The CIFAR-10 classifier of PyTorch's "Deep Learning with PyTorch: A 60 Minute Blitz"
(its ``Net``, ``CrossEntropyLoss`` and ``SGD(lr=0.001, momentum=0.9)``), trained for a few
steps on random CIFAR-shaped batches under cudalite and under torch, with the model code
unchanged: only the module bound to ``torch`` differs. The parameters come from the same
seed (cudalite initialises them as torch does, bit for bit on the CPU) and the batches from
NumPy, so the two columns of losses should agree to float32 rounding on the CPU.

``--model resnet18`` trains torchvision's ResNet-18 instead (its BasicBlock with
``out += identity``, BatchNorm, ``ReLU(inplace=True)``, max pooling, adaptive average pooling
and its initialisation), with SGD (momentum, nesterov, weight decay) and label smoothing.

    python benchmarks/run_cnn_tutorial.py [--steps 20] [--batch 4] [--device cpu|cuda]
                                          [--model blitz|resnet18]
"""

from __future__ import annotations

import argparse
import importlib
import time

import numpy as np


def resnet18(torch, num_classes=10):
    """torchvision's resnet18 (BasicBlock, layers [2, 2, 2, 2]), written out."""
    nn = torch.nn

    class BasicBlock(nn.Module):
        def __init__(self, inplanes, planes, stride=1, downsample=None):
            super().__init__()
            self.conv1 = nn.Conv2d(inplanes, planes, 3, stride, 1, bias=False)
            self.bn1 = nn.BatchNorm2d(planes)
            self.relu = nn.ReLU(inplace=True)
            self.conv2 = nn.Conv2d(planes, planes, 3, 1, 1, bias=False)
            self.bn2 = nn.BatchNorm2d(planes)
            self.downsample = downsample

        def forward(self, x):
            identity = x
            out = self.relu(self.bn1(self.conv1(x)))
            out = self.bn2(self.conv2(out))
            if self.downsample is not None:
                identity = self.downsample(x)
            out += identity
            return self.relu(out)

    class ResNet(nn.Module):
        def __init__(self):
            super().__init__()
            self.inplanes = 64
            self.conv1 = nn.Conv2d(3, 64, 7, 2, 3, bias=False)
            self.bn1 = nn.BatchNorm2d(64)
            self.relu = nn.ReLU(inplace=True)
            self.maxpool = nn.MaxPool2d(kernel_size=3, stride=2, padding=1)
            self.layer1 = self._make_layer(64, 2)
            self.layer2 = self._make_layer(128, 2, 2)
            self.layer3 = self._make_layer(256, 2, 2)
            self.layer4 = self._make_layer(512, 2, 2)
            self.avgpool = nn.AdaptiveAvgPool2d((1, 1))
            self.fc = nn.Linear(512, num_classes)
            for m in self.modules():
                if isinstance(m, nn.Conv2d):
                    nn.init.kaiming_normal_(m.weight, mode="fan_out", nonlinearity="relu")
                elif isinstance(m, nn.BatchNorm2d):
                    nn.init.constant_(m.weight, 1)
                    nn.init.constant_(m.bias, 0)

        def _make_layer(self, planes, blocks, stride=1):
            downsample = None
            if stride != 1 or self.inplanes != planes:
                downsample = nn.Sequential(
                    nn.Conv2d(self.inplanes, planes, 1, stride, bias=False),
                    nn.BatchNorm2d(planes),
                )
            layers = [BasicBlock(self.inplanes, planes, stride, downsample)]
            self.inplanes = planes
            layers += [BasicBlock(planes, planes) for _ in range(1, blocks)]
            return nn.Sequential(*layers)

        def forward(self, x):
            x = self.maxpool(self.relu(self.bn1(self.conv1(x))))
            x = self.layer4(self.layer3(self.layer2(self.layer1(x))))
            return self.fc(torch.flatten(self.avgpool(x), 1))

    return ResNet()


def train(torch, steps, batch, device, seed=0, model="blitz"):
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
    if model == "resnet18":
        net = resnet18(torch).to(device)
        criterion = nn.CrossEntropyLoss(label_smoothing=0.1)
        optimizer = optim.SGD(
            net.parameters(), lr=0.002, momentum=0.9, nesterov=True, weight_decay=5e-4
        )
    else:
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
    ap.add_argument("--model", choices=["blitz", "resnet18"], default="blitz")
    args = ap.parse_args()
    runs = {}
    for name in ("cudalite", "torch"):
        try:
            mod = importlib.import_module(name)
        except ImportError:
            print(f"{name} is not importable here; skipped")
            continue
        runs[name] = train(mod, args.steps, args.batch, args.device, model=args.model)
    print(f"{args.model} on random CIFAR-shaped data, batch {args.batch}, {args.device}")
    print("step " + "".join(f"{n:>14}" for n in runs))
    for i in range(args.steps):
        print(f"{i:4d} " + "".join(f"{runs[n][0][i]:14.7f}" for n in runs))
    print("s/step " + "".join(f"{runs[n][1]:12.5f}  " for n in runs))
    if len(runs) == 2:
        a, b = (np.array(runs[n][0]) for n in runs)
        print(f"largest loss difference: {np.abs(a - b).max():.3g}")


if __name__ == "__main__":
    main()
