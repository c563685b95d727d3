"""Saving and loading a 1 GiB checkpoint, side by side with torch.

The checkpoint is a model-sized state dict: float32 tensors of a few shapes (embedding,
attention and MLP weights, biases, norms) that add up to 1 GiB. Each library saves it to a
file and loads it back with its default ``weights_only=True`` (and with ``mmap=True``); the
file is read from the page cache (it was just written), so the figures are those of the
loader, not of the disk. torch is timed when importable; the libraries take turns run by
run, and the CPU time of the process is printed beside the wall time (a busy machine moves
it least).

    python benchmarks/bench_load.py [--gib 1.0] [--repeat 7] [--dir /dev/shm] [--cuda]

``--cuda`` adds loads with ``map_location="cuda"`` (timed until the copies are done).

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


CASES = ("save", "load (weights_only=True)", "load (weights_only=True, mmap=True)")


CUDA_CASE = "load (weights_only=True, map_location=cuda)"


def run_case(lib, case, sd, path):
    if case == "save":
        lib.save(sd, path)
    elif case == CUDA_CASE:
        lib.load(path, weights_only=True, map_location="cuda")
        lib.cuda.synchronize()
    else:
        lib.load(path, weights_only=True, mmap="mmap" in case)


def timed(fn):
    """(wall seconds, CPU seconds of the process) of one call: the CPU time (user + system,
    page faults included) is what a busy machine disturbs least."""
    w0, c0 = time.perf_counter(), time.process_time()
    fn()
    return time.perf_counter() - w0, time.process_time() - c0


def bench(libs, arrays, tmp, repeat, cases):
    """{case: {lib: [(wall, cpu)] per run}}: the libraries take turns, case by case and run
    by run, so that a change in the machine's load affects them alike."""
    dicts = {name: {k: lib.from_numpy(v) for k, v in arrays.items()} for name, lib in libs.items()}
    paths = {name: os.path.join(tmp, f"{name}.pt") for name in libs}
    runs = {case: {name: [] for name in libs} for case in cases}
    for name, lib in libs.items():  # warm: the files in the page cache, the code imported
        for case in cases:
            run_case(lib, case, dicts[name], paths[name])
    for _ in range(repeat):
        for case in cases:
            for name, lib in libs.items():
                runs[case][name].append(
                    timed(lambda: run_case(lib, case, dicts[name], paths[name]))  # noqa: B023
                )
    for name, lib in libs.items():  # the figures are of a correct load
        loaded = lib.load(paths[name], weights_only=True)
        for k in list(arrays)[:2] + list(arrays)[-1:]:
            np.testing.assert_array_equal(loaded[k].numpy(), arrays[k])
    return runs


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--gib", type=float, default=1.0, help="checkpoint size in GiB")
    parser.add_argument("--repeat", type=int, default=7, help="timed runs per case")
    parser.add_argument("--dir", default=None, help="where to write the checkpoints")
    parser.add_argument("--cuda", action="store_true", help="also load with map_location=cuda")
    args = parser.parse_args()
    cases = CASES + ((CUDA_CASE,) if args.cuda else ())
    nbytes = int(args.gib * (1 << 30))
    arrays = state_dict_arrays(nbytes)
    total = sum(a.nbytes for a in arrays.values())
    gib = total / (1 << 30)
    print(f"checkpoint: {len(arrays)} float32 tensors, {gib:.3f} GiB")
    libs = {"cudalite": cudalite}
    if torch is not None:
        libs["torch"] = torch
    with tempfile.TemporaryDirectory(dir=args.dir) as tmp:
        runs = bench(libs, arrays, tmp, args.repeat, cases)

    def stat(case, name, which, how):
        return how(r[which] for r in runs[case][name])

    for title, which, how in [
        ("wall time, median of runs", 0, statistics.median),
        ("wall time, best run", 0, min),
        ("CPU time of the process, median of runs", 1, statistics.median),
    ]:
        table = Table(f"save / load of a {gib:.2f} GiB state dict, {title}")
        for case in cases:
            table.add(case, **{name: stat(case, name, which, how) for name in libs})
        print(table.render())
    throughput = Table("load throughput, median wall time", unit="GB/s", higher_is_better=True)
    for case in cases[1:]:
        throughput.add(
            case, **{name: total / stat(case, name, 0, statistics.median) / 1e9 for name in libs}
        )
    print(throughput.render())
    print("\nevery run, wall seconds (interleaved):")
    for case in cases:
        for name in libs:
            print(f"  {case:42s} {name:9s} " + " ".join(f"{w:.3f}" for w, _ in runs[case][name]))


if __name__ == "__main__":
    main()
