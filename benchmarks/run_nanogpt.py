"""nanoGPT's shakespeare_char training and sampling, under torch and under cudalite, with only
the imports changed.

Takes a checkout of https://github.com/karpathy/nanoGPT (never copied into this repository),
copies it into a scratch folder per library, and for cudalite rewrites only its import lines
(``import torch`` -> ``import cudalite as torch`` and the like; the rewritten lines are
printed). The data is ``benchmarks/data/shakespeare.txt`` (the first 300 kB of the
tinyshakespeare text, Shakespeare's plays, public domain), encoded per character as
nanoGPT's ``data/shakespeare_char/prepare.py`` does (that script downloads, this one does
not). Then it runs ``train.py config/train_shakespeare_char.py --compile=False`` for a few
iterations and ``sample.py`` on the checkpoint, and prints the loss curves and the median
step time of both libraries side by side.

    python benchmarks/run_nanogpt.py --nanogpt /path/to/nanoGPT [--iters 200]
        [--device cuda] [--dtype bfloat16|float16|float32] [--libs torch,cudalite] [--small]
        [--nproc N [--launcher cudalite|torchrun]] [--grad-accum G]

With ``--nproc N`` train.py runs with DistributedDataParallel on N GPUs (nanoGPT's own DDP
path: init_process_group("nccl"), DDP(model, device_ids=[local_rank])), launched by
``python -m cudalite.distributed.run`` or torch's ``torchrun`` with the same flags, for either
library. train.py divides ``--gradient_accumulation_steps`` (G, default N) by N, so a run on
one GPU with the same G sees the same global batch: compare ``--nproc 1 --grad-accum 2`` with
``--nproc 2``. NCCL_NVLS_ENABLE=0 is set.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import pickle
import re
import shutil
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))

# The only lines that change: torch's imports become cudalite's.
IMPORTS = [
    (r"^import torch$", "import cudalite as torch"),
    (r"^import torch\.nn as nn$", "import cudalite.nn as nn"),
    (r"^from torch\.nn import functional as F$", "from cudalite.nn import functional as F"),
    (r"^from torch\.nn\.parallel import ", "from cudalite.nn.parallel import "),
    (r"^from torch\.distributed import ", "from cudalite.distributed import "),
]


def rewrite_imports(folder):
    for name in ("model.py", "train.py", "sample.py"):
        path = os.path.join(folder, name)
        with open(path) as f:
            lines = f.read().split("\n")
        for i, line in enumerate(lines):
            for pattern, repl in IMPORTS:
                new = re.sub(pattern, repl, line)
                if new != line:
                    print(f"  {name}:{i + 1}: {line!r} -> {new!r}")
                    lines[i] = new
                    break
        with open(path, "w") as f:
            f.write("\n".join(lines))


def prepare(folder):
    """train.bin, val.bin and meta.pkl in nanoGPT's format from the shipped text."""
    import numpy as np

    with open(os.path.join(HERE, "data", "shakespeare.txt")) as f:
        data = f.read()
    chars = sorted(set(data))
    stoi = {ch: i for i, ch in enumerate(chars)}
    itos = dict(enumerate(chars))
    n = len(data)
    out = os.path.join(folder, "data", "shakespeare_char")
    os.makedirs(out, exist_ok=True)
    for part, text in (("train", data[: int(n * 0.9)]), ("val", data[int(n * 0.9) :])):
        np.array([stoi[c] for c in text], dtype=np.uint16).tofile(os.path.join(out, f"{part}.bin"))
    with open(os.path.join(out, "meta.pkl"), "wb") as f:
        pickle.dump({"vocab_size": len(chars), "itos": itos, "stoi": stoi}, f)


def run(cmd, cwd, log):
    env = dict(os.environ, NCCL_NVLS_ENABLE="0")
    r = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, env=env)
    with open(log, "w") as f:
        f.write(r.stdout + r.stderr)
    return r.returncode, r.stdout, r.stderr


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--nanogpt", required=True)
    ap.add_argument("--iters", type=int, default=200)
    ap.add_argument("--device", default="cuda")
    ap.add_argument("--dtype", default="bfloat16")
    ap.add_argument("--libs", default="torch,cudalite")
    ap.add_argument("--small", action="store_true", help="a 2-layer model (a CPU smoke run)")
    ap.add_argument("--out", default=os.environ.get("OUT", tempfile.gettempdir()))
    ap.add_argument("--nproc", type=int, default=1, help="GPUs (processes) for DDP")
    ap.add_argument("--launcher", default="cudalite", choices=["cudalite", "torchrun"])
    ap.add_argument("--grad-accum", type=int, default=None, help="gradient_accumulation_steps")
    args = ap.parse_args()
    results = {}
    for lib in args.libs.split(","):
        folder = tempfile.mkdtemp(prefix=f"nanogpt_{lib}_")
        shutil.rmtree(folder)
        shutil.copytree(args.nanogpt, folder, ignore=shutil.ignore_patterns(".git"))
        print(f"### {lib}: {folder}")
        if lib == "cudalite":
            rewrite_imports(folder)
        prepare(folder)
        if importlib.util.find_spec("tiktoken") is None:
            # sample.py imports tiktoken at the top but uses it only without meta.pkl (GPT-2
            # tokens); prepare() writes meta.pkl, so a module that refuses to be used will do.
            with open(os.path.join(folder, "tiktoken.py"), "w") as f:
                f.write(
                    "def get_encoding(name):\n    raise ImportError('tiktoken is not installed')\n"
                )
        launch = [sys.executable]
        if args.nproc > 1:
            module = {"cudalite": "cudalite.distributed", "torchrun": "torch.distributed"}
            module = module[args.launcher] + ".run"
            launch += ["-m", module, "--standalone", f"--nproc_per_node={args.nproc}"]
        train = [
            *launch, "train.py", "config/train_shakespeare_char.py", "--compile=False",
            f"--device={args.device}", f"--dtype={args.dtype}", f"--max_iters={args.iters}",
            f"--lr_decay_iters={args.iters}", f"--eval_interval={args.iters}",
            f"--warmup_iters={max(1, min(100, args.iters // 10))}",
            "--eval_iters=20", "--log_interval=10", "--always_save_checkpoint=True",
        ]  # fmt: skip
        if args.grad_accum or args.nproc > 1:
            train += [f"--gradient_accumulation_steps={args.grad_accum or args.nproc}"]
        if args.small:
            train += ["--n_layer=2", "--n_head=2", "--n_embd=64", "--block_size=64",
                      "--batch_size=8", "--eval_iters=2"]  # fmt: skip
        rc, out, err = run(train, folder, os.path.join(args.out, f"nanogpt_train_{lib}.log"))
        found = re.findall(r"iter (\d+): loss ([\d.]+), time ([\d.]+)ms", out)
        losses = [(int(i), float(loss), float(t)) for i, loss, t in found]
        evals = re.findall(r"step (\d+): train loss ([\d.]+), val loss ([\d.]+)", out)
        print(f"train.py rc={rc}")
        if rc:
            print(err[-3000:])
        sample = [
            sys.executable, "sample.py", "--out_dir=out-shakespeare-char",
            f"--device={args.device}", f"--dtype={args.dtype}", "--compile=False",
            "--num_samples=1", "--max_new_tokens=200",
        ]  # fmt: skip
        src, sout, serr = (
            (1, "", "no checkpoint")
            if rc
            else run(sample, folder, os.path.join(args.out, f"nanogpt_sample_{lib}.log"))
        )
        print(f"sample.py rc={src}")
        print((sout if not src else serr)[-800:])
        results[lib] = (losses, evals)
    gpus = f", DDP on {args.nproc} GPUs ({args.launcher})" if args.nproc > 1 else ""
    title = f"nanoGPT shakespeare_char, {args.device}, {args.dtype}, {args.iters} iterations"
    print(f"\n== {title}{gpus} ==")
    libs = list(results)
    print("iter " + "".join(f"{lib + ' loss':>16}" for lib in libs))
    steps = sorted({i for lib in libs for i, _, _ in results[lib][0]})
    for i in steps:
        row = [dict((s, loss) for s, loss, _ in results[lib][0]).get(i) for lib in libs]
        print(f"{i:4d} " + "".join(f"{v:16.4f}" if v is not None else f"{'-':>16}" for v in row))
    for lib in libs:
        times = [t for i, _, t in results[lib][0] if i > 0]  # iteration 0 includes warm-up
        med = statistics.median(times) if times else float("nan")
        print(f"{lib}: median step {med:.2f} ms; eval {results[lib][1]}")
    if len(libs) == 2 and all(results[lib][0] for lib in libs):
        a, b = (statistics.median([t for i, _, t in results[lib][0] if i > 0]) for lib in libs)
        print(f"step time {libs[1]} / {libs[0]}: {b / a:.2f}x")


if __name__ == "__main__":
    main()
