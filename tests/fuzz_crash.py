"""Crash fuzzer: random calls of cudalite's functions and Tensor methods with hostile arguments.

Run by hand (the long run; tests/test_fuzz_crash.py runs a short one in the suite), with
cudalite installed or PYTHONPATH=python over an in-tree build:

    python tests/fuzz_crash.py [--calls 50000] [--seed 0] [--batch 2000] [--device cuda]

Every call is one of cudalite's public functions or Tensor methods (dunders such as
``__getitem__`` and ``__add__`` included) with 0 to 3 positional arguments and sometimes a
keyword, drawn from: tensors of every dtype in odd layouts (0-dim, 0-size, expanded,
transposed, sliced with a step, with an offset), index tensors of edge integers, edge
integers (0, -1, ±2**31, 2**32, 2**62, 2**63 - 1, -2**63, 2**63, 2**64), edge floats (nan,
±inf, -0.0, 1e308), sizes made of them, dtypes, devices, slices, None and strings.
Exceptions are fine; these are failures:

- a crash: the process dies by a signal (a segfault, an abort from heap corruption);
- a hang: one call runs for more than --call-timeout seconds (SIGALRM ends the process);
- a corrupted result: a returned tensor whose numel disagrees with its sizes, with a negative
  size or stride, or which reaches past the end of its storage;
- memory corruption: a canary tensor made before the calls changes.

Calls run in batches, each batch in a fresh subprocess (with its address space limited to
--memory-gib on the CPU, so that a huge allocation fails instead of swapping); the parent
names the call a failed batch died in and carries on with the call after it. Every call is
drawn from its own seed (``seed``, ``index``), so `--only INDEX` replays one call. Exits 1
when anything failed.
"""

from __future__ import annotations

import argparse
import os
import random
import signal
import subprocess
import sys
import time

INTS = [0, 1, -1, 2, 3, -2, 7, 2**31 - 1, 2**31, -(2**31), 2**32, 2**62, 2**63 - 1, -(2**63)]
HUGE_INTS = [2**63, 2**64, -(2**63) - 1]
FLOATS = [0.0, -0.0, 0.5, -1.5, float("nan"), float("inf"), float("-inf"), 1e308, 2.0**63]
DTYPES = ["float32", "float64", "float16", "bfloat16", "int64", "int32", "int16", "int8", "uint8"]
DTYPES += ["bool"]
SHAPES = [(), (0,), (1,), (3,), (2, 3), (0, 3), (3, 0), (2, 1, 3), (4, 4)]
LAYOUTS = ["contiguous", "expanded", "transposed", "stepped", "offset", "zero_stride"]
EDGE_SIZES = [
    (2**62,),
    (2**62 + 16,),
    (2**63 - 1,),
    (2**32, 2**32),
    (2**31, 2**31),
    (0, 2**62, 2**62),
    (2**62, 0),
    (2**63 - 1, -1, 4),
    (-1,),
    (-1, 2),
    (2, -3),
    (2**31,),
    (1, 2**62),
    (2**40, 2**40),
]
STRINGS = ["cpu", "cuda", "cuda:65536", "", "sum", "mean", "none", "abc", "float32"]
# Functions and methods that change the process for the calls after them (thread pools,
# defaults, files, the interpreter), or wait on something other than the tensors.
SKIP = {
    "compile",
    "load",
    "save",
    "set_default_device",
    "set_default_dtype",
    "set_default_tensor_type",
    "set_num_threads",
    "set_num_interop_threads",
    "set_printoptions",
    "set_grad_enabled",
    "set_rng_state",
    "set_warn_always",
    "use_deterministic_algorithms",
    "set_deterministic_debug_mode",
    "set_float32_matmul_precision",
    "share_memory_",
    "from_file",
    "manual_seed",
    "seed",
    "initial_seed",
    "get_rng_state",
    "set_anomaly_enabled",
    "enable_grad",
    "no_grad",
    "inference_mode",
    "register_hook",
    "register_post_accumulate_grad_hook",
    "backward",
    "_backward_hooks",
}
DUNDERS = [
    "__getitem__",
    "__setitem__",
    "__add__",
    "__sub__",
    "__mul__",
    "__truediv__",
    "__floordiv__",
    "__mod__",
    "__pow__",
    "__matmul__",
    "__and__",
    "__or__",
    "__xor__",
    "__lshift__",
    "__rshift__",
    "__neg__",
    "__abs__",
    "__invert__",
    "__eq__",
    "__lt__",
    "__iadd__",
    "__imul__",
    "__len__",
    "__bool__",
    "__int__",
    "__float__",
    "__index__",
    "__repr__",
    "__format__",
    "__iter__",
    "__contains__",
    "__reversed__",
    "__radd__",
    "__rsub__",
    "__rpow__",
    "__array__",
    "__dlpack__",
]


def _arity(obj, method):
    """(required, most) positional arguments of obj (self not counted), or None."""
    import inspect

    try:
        params = list(inspect.signature(obj).parameters.values())
    except (TypeError, ValueError):
        return None
    if method and params:
        params = params[1:]
    req = most = 0
    for p in params:
        if p.kind == p.VAR_POSITIONAL:
            return req, most + 2
        if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD):
            most += 1
            req += p.default is p.empty
    return req, most


def targets():
    """(kind, name, arity) of every function and method the fuzzer calls, in a fixed order."""
    import cudalite

    out = []
    for name in sorted(dir(cudalite)):
        if name.startswith("_") or name in SKIP:
            continue
        obj = getattr(cudalite, name)
        if callable(obj) and not isinstance(obj, type) and not hasattr(obj, "__path__"):
            out.append(("fn", name, _arity(obj, False)))
    names = [n for n in sorted(dir(cudalite.Tensor)) if not n.startswith("_") and n not in SKIP]
    names += [n for n in DUNDERS if hasattr(cudalite.Tensor, n)]
    for name in names:
        obj = getattr(cudalite.Tensor, name, None)
        if callable(obj):
            out.append(("method", name, _arity(obj, True)))
    return out


# --- Arguments as plain data (specs): printable, and drawn without importing cudalite. ---


def tensor_spec(rng):
    return ("T", rng.choice(DTYPES), rng.choice(SHAPES), rng.choice(LAYOUTS))


def arg_spec(rng, depth=0):
    r = rng.random()
    if r < 0.26:
        return tensor_spec(rng)
    if r < 0.30:  # an index tensor holding edge integers
        return ("IT", tuple(rng.choice(INTS) for _ in range(rng.randint(0, 3))))
    if r < 0.55:
        return ("v", rng.choice(INTS))
    if r < 0.60:
        return ("v", rng.choice(HUGE_INTS))
    if r < 0.68:
        return ("v", rng.choice(FLOATS))
    if r < 0.78:
        return ("v", rng.choice(EDGE_SIZES))
    if r < 0.82:
        return ("v", tuple(rng.choice(INTS) for _ in range(rng.randint(0, 3))))
    if r < 0.85:
        return ("dtype", rng.choice(DTYPES))
    if r < 0.88:
        return ("v", rng.choice([None, True, False, Ellipsis]))
    if r < 0.91:
        return ("v", rng.choice(STRINGS))
    if r < 0.95:
        return ("v", slice(rng.choice(INTS + [None]), rng.choice(INTS + [None]), rng.choice(INTS)))
    if depth == 0:
        return ("list", [arg_spec(rng, 1) for _ in range(rng.randint(0, 3))])
    return ("v", [rng.choice(INTS) for _ in range(rng.randint(0, 3))])


KWARGS = ["dim", "keepdim", "dtype", "out", "size", "device", "alpha", "value", "index"]


def call_spec(seed, index, tgts):
    rng = random.Random(f"{seed}:{index}")
    kind, name, arity = tgts[rng.randrange(len(tgts))]
    self_spec = tensor_spec(rng) if kind == "method" else None
    if arity and rng.random() < 0.85:  # mostly as many arguments as the signature takes
        n = rng.randint(arity[0], min(arity[1], arity[0] + 2))
    else:
        n = rng.choice([0, 1, 1, 2, 2, 3])
    args = [arg_spec(rng) for _ in range(n)]
    if kind == "fn" and args and rng.random() < 0.7:  # most functions take a tensor first
        args[0] = tensor_spec(rng)
    kwargs = {}
    if rng.random() < 0.2:
        kwargs[rng.choice(KWARGS)] = arg_spec(rng)
    return kind, name, self_spec, args, kwargs


def describe(spec):
    kind, name, self_spec, args, kwargs = spec

    def d(a):
        if a is None:
            return "None"
        tag = a[0]
        if tag == "T":
            return f"T({a[1]}, {a[2]}, {a[3]})"
        if tag == "IT":
            return f"cudalite.tensor({list(a[1])})"
        if tag == "dtype":
            return f"cudalite.{a[1]}"
        if tag == "list":
            return "[" + ", ".join(d(x) for x in a[1]) + "]"
        return repr(a[1])

    parts = [d(a) for a in args] + [f"{k}={d(v)}" for k, v in kwargs.items()]
    head = f"{d(self_spec)}.{name}" if kind == "method" else f"cudalite.{name}"
    return f"{head}({', '.join(parts)})"


# --- The worker: materialises specs and makes the calls. ---


def make_tensor(cl, spec, device):
    _, dtype, shape, layout = spec
    dt = getattr(cl, dtype)
    n = 1
    for s in shape:
        n *= s
    base = cl.arange(n * 4 + 8, dtype=cl.float64).remainder(7).sub(3)
    if dtype == "bool":
        base = base.gt(0)
    base = base.to(device=device, dtype=dt)
    if layout == "expanded" and len(shape) > 0:
        return base[:1].reshape([1] * len(shape)).expand(*shape)
    if layout == "transposed" and len(shape) >= 2:
        return base[:n].reshape(tuple(reversed(shape))).t() if len(shape) == 2 else base[:n]
    if layout == "stepped":
        return base[: n * 2 : 2].reshape(shape)
    if layout == "offset":
        return base[3 : 3 + n].reshape(shape)
    if layout == "zero_stride" and n > 0:
        return base[:1].expand(n).reshape(shape) if n == 1 else base[:1].expand(*shape)
    return base[:n].reshape(shape).clone()


def materialise(cl, a, device):
    tag = a[0]
    if tag == "T":
        return make_tensor(cl, a, device)
    if tag == "IT":
        return cl.tensor(list(a[1]), dtype=cl.int64, device=device)
    if tag == "dtype":
        return getattr(cl, a[1])
    if tag == "list":
        return [materialise(cl, x, device) for x in a[1]]
    return a[1]


def check_result(cl, r, depth=0):
    """A description of what is wrong with a returned tensor (or tuple of them), or None."""
    if isinstance(r, (tuple, list)) and depth < 2:
        for x in r[:16]:
            bad = check_result(cl, x, depth + 1)
            if bad:
                return bad
        return None
    if not isinstance(r, cl.Tensor):
        return None
    sizes, strides = list(r.shape), list(r.stride())
    if any(s < 0 for s in sizes):
        return f"negative size {sizes}"
    numel = 1
    for s in sizes:
        numel *= s
    if numel != r.numel():
        return f"numel {r.numel()} but sizes {sizes}"
    if numel == 0 or r.device.type == "meta":
        return None
    if any(s < 0 for s in strides) or r.storage_offset() < 0:
        return f"negative stride {strides} or offset {r.storage_offset()}"
    last = r.storage_offset() + sum((n - 1) * s for n, s in zip(sizes, strides, strict=True))
    need = (last + 1) * r.element_size()
    if need > r._storage_nbytes():
        return (
            f"sizes {sizes}, strides {strides}, offset {r.storage_offset()} reach byte {need} "
            f"of a {r._storage_nbytes()}-byte storage"
        )
    return None


def worker(seed, start, count, device, call_timeout):
    import warnings

    import cudalite as cl

    warnings.simplefilter("ignore")
    tgts = targets()
    canary = cl.arange(256, dtype=cl.float64, device=device)
    expected = canary.tolist()
    out = sys.stdout
    for i in range(start, start + count):
        spec = call_spec(seed, i, tgts)
        out.write(f"{i}\n")
        out.flush()
        kind, name, self_spec, args, kwargs = spec
        signal.alarm(call_timeout)
        try:
            a = [materialise(cl, x, device) for x in args]
            kw = {k: materialise(cl, v, device) for k, v in kwargs.items()}
            if kind == "method":
                fn = getattr(make_tensor(cl, self_spec, device), name)
            else:
                fn = getattr(cl, name)
            r = fn(*a, **kw)
            if hasattr(r, "__next__"):  # an iterator: take a few
                r = [x for _, x in zip(range(4), r, strict=False)]
            bad = check_result(cl, r)
        except Exception:
            bad = None
        except (RecursionError, MemoryError):
            bad = None
        signal.alarm(0)
        if bad:
            out.write(f"CORRUPT {i} {bad}\n")
        if device == "cuda":  # after every call, so that an error names its call
            try:
                cl.cuda.synchronize()
            except Exception as e:  # a sticky CUDA error: this process can do no more
                out.write(f"CORRUPT {i} CUDA error after the call: {e}\n")
                out.flush()
                os._exit(3)
        if canary.tolist() != expected:
            out.write(f"CORRUPT {i} canary changed\n")
            canary = cl.arange(256, dtype=cl.float64, device=device)
    out.write("DONE\n")
    out.flush()


def _limit_memory(gib):
    import resource

    n = int(gib * 2**30)
    resource.setrlimit(resource.RLIMIT_AS, (n, n))


def _package_parent():
    import cudalite

    return os.path.dirname(os.path.dirname(os.path.abspath(cudalite.__file__)))


def run(calls, seed=0, batch=2000, device="cpu", call_timeout=60, memory_gib=2.0, log=print):
    """Runs `calls` calls in batches; returns (calls made, list of failure descriptions)."""
    if device != "cpu":  # an unusable device fails here once, not in every worker
        import cudalite

        cudalite.ones(1, device=device)
    tgts = targets()
    failures, done, start = [], 0, 0
    env = dict(os.environ, PYTHONFAULTHANDLER="0", OMP_NUM_THREADS="1")
    # The workers call the cudalite this process imports (an installed package or the tree).
    env["PYTHONPATH"] = os.pathsep.join([_package_parent(), env.get("PYTHONPATH", "")])
    while start < calls:
        n = min(batch, calls - start)
        cmd = [sys.executable, os.path.abspath(__file__), "--worker", f"--seed={seed}"]
        cmd += [f"--start={start}", f"--batch={n}", f"--device={device}"]
        cmd += [f"--call-timeout={call_timeout}"]
        limit = None if device != "cpu" else (lambda: _limit_memory(memory_gib))
        p = subprocess.run(cmd, capture_output=True, text=True, env=env, preexec_fn=limit)
        lines = p.stdout.splitlines()
        last = start - 1
        for line in lines:
            if line.startswith("CORRUPT"):
                _, idx, what = line.split(" ", 2)
                msg = f"corrupted: {describe(call_spec(seed, int(idx), tgts))}: {what}"
                failures.append(msg)
                log(msg)
            elif line.isdigit():
                last = int(line)
        if p.returncode == 0 and lines and lines[-1] == "DONE":
            done += n
            start += n
            continue
        if p.returncode < 0:
            sig = signal.Signals(-p.returncode).name
            what = "hang (over the per-call timeout)" if sig == "SIGALRM" else f"crash ({sig})"
        else:
            what = f"worker exit {p.returncode}: {p.stderr.strip()[-500:]}"
        if last < start:  # died before its first call: the harness, not a call
            failures.append(f"batch at {start}: {what}")
            log(failures[-1])
            start += n
            continue
        msg = f"{what}: call {last}: {describe(call_spec(seed, last, tgts))}"
        failures.append(msg)
        log(msg)
        done += last - start + 1
        start = last + 1
    return done, failures


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--calls", type=int, default=50000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--batch", type=int, default=2000)
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--call-timeout", type=int, default=60)
    ap.add_argument("--memory-gib", type=float, default=2.0)
    ap.add_argument("--only", type=int, help="print and run the call with this index")
    ap.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--start", type=int, default=0, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.worker:
        worker(args.seed, args.start, args.batch, args.device, args.call_timeout)
        return 0
    if args.only is not None:
        print(describe(call_spec(args.seed, args.only, targets())), flush=True)
        worker(args.seed, args.only, 1, args.device, args.call_timeout)
        return 0
    t0 = time.time()
    done, failures = run(
        args.calls, args.seed, args.batch, args.device, args.call_timeout, args.memory_gib
    )
    print(
        f"{done} calls ({len(targets())} functions and methods) on {args.device}, seed "
        f"{args.seed}, in {time.time() - t0:.0f} s: {len(failures)} failures"
    )
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
