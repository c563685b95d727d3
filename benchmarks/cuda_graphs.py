"""CUDA graphs side by side with torch, on a GPU machine.

Rows (wall time per call, including a synchronize):
- replay of a graph of 100 tiny elementwise ops (cudalite beside torch's replay), and the same
  100 ops run eagerly (cudalite's deferred launches beside torch's eager launches);
- capture + instantiate of those 100 ops;
- a fully captured MLP training step (forward, backward, SGD) replayed, beside torch's, and
  the same step run eagerly.

Targets: replay <= 1.05 x torch's replay and >= 2 x faster than cudalite eager; capture +
instantiate <= torch's; the captured training step <= 1.05 x torch's.

    python benchmarks/cuda_graphs.py [--dump DIR]

``--dump DIR`` also writes each library's captured MLP step as a Graphviz file
(``CUDAGraph.debug_dump``: DIR/mlp_step_cudalite.dot, DIR/mlp_step_torch.dot) and prints the
graphs' nodes side by side: the kernels (by name) and copies each library's step replays, which
is where a difference in replay time comes from. A GPT with graphed blocks is
benchmarks/cuda_graphs_gpt.py.
"""

from __future__ import annotations

import argparse
import collections
import os
import re
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.dirname(__file__))
import cudalite  # noqa: E402
from _harness import Table, optional, paired_tables, per_call_stats  # noqa: E402

torch = optional("torch")

N_OPS = 100
N_ELEMS = 256


def chain(lib, x):
    for i in range(N_OPS):
        x = x * 1.0001 if i % 2 == 0 else x + 0.5
    return x


def graphed_chain(lib):
    static_in = lib.randn(N_ELEMS, device="cuda")
    # Warm-up on a side stream, as torch's docs ask.
    s = lib.cuda.Stream()
    s.wait_stream(lib.cuda.current_stream())
    with lib.cuda.stream(s):
        for _ in range(3):
            chain(lib, static_in)
    lib.cuda.current_stream().wait_stream(s)
    g = lib.cuda.CUDAGraph()
    with lib.cuda.graph(g):
        out = chain(lib, static_in)
    return g, static_in, out


def capture_only(lib, static_in, stream, pool):
    """capture_begin .. capture_end (which instantiates) on a warm side stream; all captures
    share one pool (kept alive by one graph), so that the dropped graphs' memory is reused."""
    g = lib.cuda.CUDAGraph()
    with lib.cuda.stream(stream):
        g.capture_begin(pool=pool)
        chain(lib, static_in)
        g.capture_end()
    return g


class MLP:
    def __init__(self, lib):
        nn = lib.nn
        self.model = nn.Sequential(
            nn.Linear(256, 512), nn.ReLU(), nn.Linear(512, 512), nn.ReLU(), nn.Linear(512, 10)
        ).cuda()
        self.opt = lib.optim.SGD(self.model.parameters(), lr=0.01)
        self.x = lib.randn(64, 256, device="cuda")
        self.y = lib.randn(64, 10, device="cuda")
        self.lib = lib

    def step(self):
        out = self.model(self.x)
        loss = ((out - self.y) ** 2).mean()
        loss.backward()
        self.opt.step()
        return loss

    def captured(self, debug=False):
        lib = self.lib
        s = lib.cuda.Stream()
        s.wait_stream(lib.cuda.current_stream())
        with lib.cuda.stream(s):
            for _ in range(3):
                self.opt.zero_grad(set_to_none=True)
                self.step()
        lib.cuda.current_stream().wait_stream(s)
        g = lib.cuda.CUDAGraph(keep_graph=debug)
        if debug:
            g.enable_debug_mode()
        self.opt.zero_grad(set_to_none=True)
        with lib.cuda.graph(g):
            self.static_loss = self.step()
        return g


_NODE_KINDS = r"\b(KERNEL|MEMSET|MEMCPY|HOST|EMPTY|EVENT_RECORD|WAIT_EVENT|GRAPH)\b"


def graph_nodes(dot_text):
    """Counter of a debug_dump's nodes: kernels by (demangled, shortened) function name, and
    the other node types (MEMSET, MEMCPY, ...) by type."""
    nodes = collections.Counter()
    names = []
    for block in re.split(r"\n(?=\s*\"?[\w]+\"?\s*\[)", dot_text):
        kind = re.search(_NODE_KINDS, block)
        if kind is None:
            continue
        if kind.group(1) == "KERNEL":
            m = re.search(r"(_Z\w+)", block)
            names.append(m.group(1) if m else "?")
        else:
            nodes[kind.group(1)] += 1
    if names and shutil.which("c++filt"):
        out = subprocess.run(["c++filt"], input="\n".join(names), capture_output=True, text=True)
        names = out.stdout.split("\n")[: len(names)]
    for n in names:
        nodes["kernel " + re.sub(r"\(.*", "", n)[:90]] += 1
    return nodes


def dump_mlp_graphs(libs, folder):
    os.makedirs(folder, exist_ok=True)
    counts = {}
    for name, lib in libs.items():
        g = MLP(lib).captured(debug=True)
        path = os.path.join(folder, f"mlp_step_{name}.dot")
        g.debug_dump(path)
        with open(path) as f:
            counts[name] = graph_nodes(f.read())
        print(f"wrote {path}")
    print("\nnodes of the captured MLP step")
    keys = sorted(set().union(*counts.values()))
    print(f"{'node':<96}" + "".join(f"{n:>10}" for n in counts))
    for k in keys:
        print(f"{k:<96}" + "".join(f"{counts[n][k]:>10}" for n in counts))
    print(f"{'total':<96}" + "".join(f"{sum(c.values()):>10}" for c in counts.values()))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--dump", metavar="DIR", help="write and compare the MLP step's graphs")
    args = ap.parse_args()
    if not cudalite.cuda.is_available():
        print("no CUDA GPU visible: nothing to measure")
        return
    libs = {"cudalite": cudalite}
    if torch is not None and torch.cuda.is_available():
        libs["torch"] = torch

    t, best = paired_tables("per call, wall time including synchronize")

    def add(case, fns):
        stats = {lib: per_call_stats(fn, sync=sync, repeat=15) for lib, (fn, sync) in fns.items()}
        t.add(case, **{lib: s[0] for lib, s in stats.items()})
        best.add(case, **{lib: s[1] for lib, s in stats.items()})
        return stats

    graphs = {name: graphed_chain(lib) for name, lib in libs.items()}
    replay = add(
        f"replay: {N_OPS} tiny elementwise ops ({N_ELEMS} floats)",
        {name: (graphs[name][0].replay, lib.cuda.synchronize) for name, lib in libs.items()},
    )
    eager = add(
        f"eager: the same {N_OPS} ops",
        {
            name: ((lambda lib=lib, x=graphs[name][1]: chain(lib, x)), lib.cuda.synchronize)
            for name, lib in libs.items()
        },
    )
    streams = {name: lib.cuda.Stream() for name, lib in libs.items()}
    pools = {name: lib.cuda.graph_pool_handle() for name, lib in libs.items()}
    # One graph kept alive in each pool: a pool whose graphs are all gone is released, and
    # torch asserts when a capture then names it again.
    keepers = {  # noqa: F841
        name: capture_only(lib, graphs[name][1], streams[name], pools[name])
        for name, lib in libs.items()
    }
    add(
        f"capture + instantiate of the {N_OPS} ops",
        {
            name: (
                (
                    lambda lib=lib, x=graphs[name][1], s=streams[name], p=pools[name]: capture_only(
                        lib, x, s, p
                    )
                ),
                lib.cuda.synchronize,
            )
            for name, lib in libs.items()
        },
    )

    mlps = {name: MLP(lib) for name, lib in libs.items()}
    step_graphs = {name: m.captured() for name, m in mlps.items()}
    add(
        "MLP training step (256-512-512-10, batch 64, SGD), captured and replayed",
        {name: (step_graphs[name].replay, lib.cuda.synchronize) for name, lib in libs.items()},
    )
    eager_mlps = {name: MLP(lib) for name, lib in libs.items()}

    def eager_step(m):
        m.opt.zero_grad(set_to_none=True)
        m.step()

    add(
        "MLP training step, eager",
        {
            name: ((lambda m=eager_mlps[name]: eager_step(m)), lib.cuda.synchronize)
            for name, lib in libs.items()
        },
    )

    print(t.render())
    print(best.render())
    if args.dump:
        dump_mlp_graphs(libs, args.dump)
    speed = Table("cudalite replay speed-up over cudalite eager", unit="ratio")
    speed.add(
        f"{N_OPS} tiny ops: eager / replay",
        cudalite=eager["cudalite"][0] / replay["cudalite"][0],
    )
    print(speed.render())


if __name__ == "__main__":
    main()
