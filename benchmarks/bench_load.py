"""Saving and loading a 1 GiB checkpoint, side by side with torch.

The checkpoint is a model-sized state dict: float32 tensors of a few shapes (embedding,
attention and MLP weights, biases, norms) that add up to 1 GiB. Each library saves it to a
file and loads it back with its default ``weights_only=True`` (and with ``mmap=True``); the
file is read from the page cache (it was just written), so the figures are those of the
loader, not of the disk. torch is timed when importable.

    python benchmarks/bench_load.py [--gib 1.0] [--repeat 5] [--dir /dev/shm]

``--dir`` is where the files go (a tmpfs such as /dev/shm keeps the disk out of the
figures); the default is the system's temporary directory.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(__file__))
import numpy as np  # noqa: E402

import cudalite  # noqa: E402
from _harness import Table, optional  # noqa: E402

torch = optional("torch")


def state_dict_arrays(nbytes):
    """{name: float32 array}: layers of a transformer-like model, ``nbytes`` in all."""
    rng = np.random.default_rng(0)
    width = 1024
    shapes = {}
    shapes["embed.weight"] = (8192, width)
    layer = 0
    total = 8192 * width * 4
    while True:
        block = {
            f"layers.{layer}.attn.qkv.weight": (3 * width, width),
            f"layers.{layer}.attn.qkv.bias": (3 * width,),
            f"layers.{layer}.attn.out.weight": (width, width),
            f"layers.{layer}.attn.out.bias": (width,),
            f"layers.{layer}.norm1.weight": (width,),
            f"layers.{layer}.norm1.bias": (width,),
            f"layers.{layer}.mlp.fc1.weight": (4 * width, width),
            f"layers.{layer}.mlp.fc1.bias": (4 * width,),
            f"layers.{layer}.mlp.fc2.weight": (width, 4 * width),
            f"layers.{layer}.mlp.fc2.bias": (width,),
            f"layers.{layer}.norm2.weight": (width,),
            f"layers.{layer}.norm2.bias": (width,),
        }
        size = sum(int(np.prod(s)) * 4 for s in block.values())
        if total + size > nbytes:
            break
        shapes.update(block)
        total += size
        layer += 1
    rest = (nbytes - total) // 4
    if rest:
        shapes["head.weight"] = (rest,)
    return {k: rng.standard_normal(s, dtype=np.float32) for k, s in shapes.items()}


def median_time(fn, repeat):
    fn()  # warm: the file in the page cache, the code paths imported
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def bench(lib, arrays, path, repeat):
    """{case: seconds} for ``lib`` (cudalite or torch)."""
    sd = {k: lib.from_numpy(v) for k, v in arrays.items()}
    out = {"save": median_time(lambda: lib.save(sd, path), repeat)}
    lib.save(sd, path)

    def load():
        lib.load(path, weights_only=True)

    def load_mmap():
        lib.load(path, weights_only=True, mmap=True)

    out["load (weights_only=True)"] = median_time(load, repeat)
    out["load (weights_only=True, mmap=True)"] = median_time(load_mmap, repeat)
    loaded = lib.load(path, weights_only=True)
    for k in ("embed.weight", "layers.0.mlp.fc1.bias"):  # the figures are of a correct load
        np.testing.assert_array_equal(loaded[k].numpy(), arrays[k])
    return out


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--gib", type=float, default=1.0, help="checkpoint size in GiB")
    parser.add_argument("--repeat", type=int, default=5, help="timed runs per case")
    parser.add_argument("--dir", default=None, help="where to write the checkpoints")
    args = parser.parse_args()
    nbytes = int(args.gib * (1 << 30))
    arrays = state_dict_arrays(nbytes)
    total = sum(a.nbytes for a in arrays.values())
    print(f"checkpoint: {len(arrays)} float32 tensors, {total / (1 << 30):.3f} GiB")
    results = {}
    with tempfile.TemporaryDirectory(dir=args.dir) as tmp:
        libs = {"cudalite": cudalite}
        if torch is not None:
            libs["torch"] = torch
        for name, lib in libs.items():
            path = os.path.join(tmp, f"{name}.pt")
            results[name] = bench(lib, arrays, path, args.repeat)
            os.remove(path)
    table = Table(f"save / load of a {total / (1 << 30):.2f} GiB state dict, median")
    for case in results["cudalite"]:
        table.add(case, **{name: r[case] for name, r in results.items()})
    throughput = Table("load throughput", unit="GB/s", higher_is_better=True)
    for case in results["cudalite"]:
        if case.startswith("load"):
            throughput.add(case, **{name: total / r[case] / 1e9 for name, r in results.items()})
    print(table.render())
    print(throughput.render())


if __name__ == "__main__":
    main()
