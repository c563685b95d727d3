"""The CIFAR-10 classifier of PyTorch's "Deep Learning with PyTorch: A 60 Minute Blitz"
(its ``Net``, ``CrossEntropyLoss`` and ``SGD(lr=0.001, momentum=0.9)``), trained for a few
steps on random CIFAR-shaped batches under cudalite and under torch, with the model code
unchanged: only the module bound to ``torch`` differs. The parameters come from the same
seed (cudalite initialises them as torch does, bit for bit on the CPU) and the batches from
NumPy, so the two columns of losses should agree to float32 rounding on the CPU.

``--model resnet18`` trains torchvision's ResNet-18 instead (its BasicBlock with
``out += identity``, BatchNorm, ``ReLU(inplace=True)``, max pooling, adaptive average pooling
and its initialisation), with SGD (momentum, nesterov, weight decay) and label smoothing.

The models' code is not part of this repository: it is read from fetched copies of the
public sources, in a scratch folder given with ``--source`` (only their class and function
definitions are executed, with ``torch`` bound to the library under test):

    mkdir -p /tmp/cnn_src && cd /tmp/cnn_src
    curl -LO https://raw.githubusercontent.com/pytorch/tutorials/main/beginner_source/blitz/cifar10_tutorial.py
    curl -LO https://raw.githubusercontent.com/pytorch/vision/main/torchvision/models/resnet.py

    python benchmarks/run_cnn_tutorial.py --source /tmp/cnn_src [--steps 20] [--batch 4]
                                          [--device cpu|cuda] [--model blitz|resnet18]
"""

from __future__ import annotations

import argparse
import ast
import importlib
import os
import sys
import time

import numpy as np

# the public sources the models are read from, under --source (a fetched copy of each)
TUTORIAL = "cifar10_tutorial.py"  # github.com/pytorch/tutorials: beginner_source/blitz/
RESNET = "resnet.py"  # github.com/pytorch/vision: torchvision/models/
SOURCE_HELP = f"""run_cnn_tutorial.py reads the models' code from fetched copies of their public
sources; pass --source DIR, a scratch folder holding (anywhere below it):
  {TUTORIAL}  for --model blitz    (pytorch/tutorials, beginner_source/blitz/{TUTORIAL})
  {RESNET}            for --model resnet18 (pytorch/vision, torchvision/models/{RESNET})
for example:
  mkdir -p /tmp/cnn_src && cd /tmp/cnn_src
  curl -LO https://raw.githubusercontent.com/pytorch/tutorials/main/beginner_source/blitz/{TUTORIAL}
  curl -LO https://raw.githubusercontent.com/pytorch/vision/main/torchvision/models/{RESNET}"""


def _find(folder, name):
    for root, _dirs, files in sorted(os.walk(folder)):
        if name in files:
            return os.path.join(root, name)
    sys.exit(f"no {name} under {folder}\n\n{SOURCE_HELP}")


def _definitions(path, names, namespace):
    """Executes the top-level definitions ``names`` of the Python file ``path`` (and nothing
    else of it: no downloads, no training) in ``namespace``."""
    with open(path) as f:
        tree = ast.parse(f.read(), path)
    keep = [
        node
        for node in tree.body
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)) and node.name in names
    ]
    missing = set(names) - {node.name for node in keep}
    if missing:
        sys.exit(f"{path} defines no {', '.join(sorted(missing))}")
    exec(compile(ast.Module(body=keep, type_ignores=[]), path, "exec"), namespace)  # noqa: S102
    return namespace


def _namespace(torch):
    """What the sources import, bound to the library under test."""
    import typing

    ns = {name: getattr(typing, name) for name in typing.__all__}
    ns.update(torch=torch, nn=torch.nn, F=torch.nn.functional, optim=torch.optim)
    ns.update(Tensor=torch.Tensor, _log_api_usage_once=lambda obj: None)
    return ns


def blitz_net(torch, source):
    """The blitz tutorial's ``Net``, from its source."""
    return _definitions(_find(source, TUTORIAL), ["Net"], _namespace(torch))["Net"]()


def resnet18(torch, source, num_classes=10):
    """torchvision's resnet18 (``ResNet(BasicBlock, [2, 2, 2, 2])``), from its source."""
    names = ["conv3x3", "conv1x1", "BasicBlock", "Bottleneck", "ResNet"]
    ns = _definitions(_find(source, RESNET), names, _namespace(torch))
    return ns["ResNet"](ns["BasicBlock"], [2, 2, 2, 2], num_classes=num_classes)


def train(torch, source, steps, batch, device, seed=0, model="blitz"):
    """The blitz's training loop on random data; returns the loss of every step and the
    seconds per step."""
    nn = torch.nn
    optim = torch.optim

    torch.manual_seed(seed)
    if model == "resnet18":
        net = resnet18(torch, source).to(device)
        criterion = nn.CrossEntropyLoss(label_smoothing=0.1)
        optimizer = optim.SGD(
            net.parameters(), lr=0.002, momentum=0.9, nesterov=True, weight_decay=5e-4
        )
    else:
        net = blitz_net(torch, source).to(device)
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
    ap.add_argument("--source", help="folder with the fetched model sources (see below)")
    args = ap.parse_args()
    if args.source is None:
        sys.exit(SOURCE_HELP)
    runs = {}
    for name in ("cudalite", "torch"):
        try:
            mod = importlib.import_module(name)
        except ImportError:
            print(f"{name} is not importable here; skipped")
            continue
        runs[name] = train(mod, args.source, args.steps, args.batch, args.device, model=args.model)
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
