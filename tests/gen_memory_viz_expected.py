"""Records torch's readings of a cudalite snapshot for test_cuda_memory_viz.py (not collected
by pytest). Run with the torch interpreter and the source tree (both are Python 3.11):

    PYTHONPATH=python CUDA_VISIBLE_DEVICES= /work/torchref/bin/python \\
        tests/gen_memory_viz_expected.py

Writes tests/data/memory_viz_snapshot.pickle (a history recorded on cudalite's host-backend
allocator, with out-of-memory and pending-free events) and tests/data/memory_viz_torch.json:
what torch.cuda._memory_viz's functions return for it (the flame-graph functions with the
folded lines they would hand to flamegraph.pl).
"""

import json
import os
import pickle
import sys

import torch.cuda._memory_viz as tmv

sys.path.insert(0, os.path.dirname(__file__))
from _alloc_helpers import GiB, H, MiB  # noqa: E402
from cudalite import _C  # noqa: E402

DATA = os.path.join(os.path.dirname(__file__), "data")


def weights(h):
    return [h.alloc(n) for n in (24 * MiB, 3 * MiB, 40 * MiB)]


def activations(h):
    return [h.alloc(n) for n in (7 * MiB + 100, 512, 3000, 21 * MiB)]


def record():
    h = H(160 * MiB)
    h.record_memory_history("all", "all", "python", 10_000)
    w = weights(h)
    a = activations(h)
    h.record_stream(a[0], 7)
    h.launch(7)
    for p in a:
        h.free(p)  # a[0] waits for stream 7
    try:
        h.alloc(GiB)
    except _C.OutOfMemoryError:
        pass
    h.complete(7)
    b = activations(h)
    h.free(b[1])
    h.free(w[1])
    snap = h.snapshot()
    # No development machine's paths in the data: file names relative to the repository.
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep
    for frames in [e["frames"] for e in snap["device_traces"][0]] + [
        b["frames"] for s in snap["segments"] for b in s["blocks"]
    ]:
        for f in frames:
            f["filename"] = f["filename"].replace(root, "")
    return snap


def main():
    snap = record()
    with open(os.path.join(DATA, "memory_viz_snapshot.pickle"), "wb") as f:
        pickle.dump(snap, f, protocol=4)
    with open(os.path.join(DATA, "memory_viz_snapshot.pickle"), "rb") as f:
        snap = pickle.load(f)
    folded = lambda lines: lines  # noqa: E731
    out = {
        "segsum": tmv.segsum(snap),
        "trace": tmv.trace(snap),
        "segments": tmv.segments(snap, format_flamegraph=folded),
        "memory": tmv.memory(snap, format_flamegraph=folded),
        "trace_plot": tmv.trace_plot(snap),
        "trace_plot_segments": tmv.trace_plot(snap, plot_segments=True),
        "segment_plot": tmv.segment_plot(snap),
    }
    with open(os.path.join(DATA, "memory_viz_torch.json"), "w") as f:
        json.dump(out, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
