"""A checkpoint fuzzer for cudalite.load: damaged files must load correct values or raise a
clear exception, never crash, and never take more memory than twice the file's tensors.

Each damaged file is one of:

- ``truncate``: the file cut short at a random byte;
- ``flip``: 1 to 8 random bits flipped anywhere (record data, headers, directory);
- ``zipfield``: a size, offset, count or name length of a local header, the central
  directory or its end record set to an edge value (0, 1, 2**16-1, 2**31, 2**32-1, the file's
  size, ...);
- ``name``: a record name in the directory changed (``data/0`` -> ``data/9``, ``../0``...);
- ``pickle``: data.pkl rewritten with one integer (a size, stride, offset or numel) set to an
  edge value (-1, 0, 2**31, 2**32, 2**62, 2**63-1, 2**64...) or one storage type or record
  key swapped, the archive rebuilt with valid CRCs (so the change reaches the unpickler).

Loads run in worker processes (a crashed worker is a failure, and its file is kept), every
other file from its path (records read with ``pread`` into their storages) and the others
from an ``io.BytesIO`` (records read through the stream); each load's peak RSS is measured
(``/proc/self/clear_refs`` resets the high-water mark). A file that loads must hold the
original values (raw damage that the CRCs let through) or, for rewritten pickles, exactly
the values its records hold at the geometry it declares.

    python tests/fuzz_checkpoints.py --files 5000 [--seed 0] [--workers 2] [--torch]
                                     [--device cuda]

It loads the cudalite its interpreter imports: an installed package, or the source tree's
with ``PYTHONPATH=python``.

``--torch`` also loads a sample with torch (when importable) and prints the exception types
of both side by side. tests/test_serialization_fuzz.py runs a short version.
"""

from __future__ import annotations

import argparse
import collections
import io
import json
import os
import pickle
import pickletools
import random
import struct
import subprocess
import sys
import tempfile
import time
import zipfile

HERE = os.path.dirname(os.path.abspath(__file__))
# Clear exceptions a damaged file may raise (torch raises these types on such files).
ALLOWED = {
    "RuntimeError",
    "UnpicklingError",
    "EOFError",
    "ValueError",
    "TypeError",
    "KeyError",
    "IndexError",
    "AssertionError",
    "UnicodeDecodeError",
    "OverflowError",
    "error",  # struct.error
}
EDGE_INTS = [-1, 0, 1, 7, 2**15, 2**31 - 1, 2**31, 2**32 - 1, 2**32, 2**62, 2**63 - 1, 2**64]
STORAGES = ["FloatStorage", "DoubleStorage", "HalfStorage", "ByteStorage", "LongStorage"]
STORAGES += ["BoolStorage", "UntypedStorage", "BFloat16Storage"]


# ---- the checkpoints the damage starts from ----


def base_checkpoints():
    """[(name, bytes, tensor_bytes)]: cudalite's own saves and the files torch wrote."""
    import numpy as np

    import cudalite as C

    C.manual_seed(0)
    big = C.randn(512, 1024)  # 2 MiB
    x = C.arange(24.0).reshape(4, 6)
    objs = {
        "state_dict": {
            "w": big,
            "b": C.randn(1024).to(C.float16),
            "i": C.arange(100),
            "mask": C.arange(10) > 4,
            "bf": C.randn(8).to(C.bfloat16),
        },
        "views": {"x": x, "t": x.t(), "row": x[1], "col": x[:, 2], "off": x[2:, 1:]},
        "nested": [(C.ones(3), {"k": [C.zeros(2, 2, dtype=C.int32)]}), C.nn.Parameter(C.ones(4))],
        "big_float64": {"a": C.from_numpy(np.random.default_rng(0).standard_normal(1 << 19))},
    }
    out = []
    for name, obj in objs.items():
        buf = io.BytesIO()
        C.save(obj, buf)
        out.append((name, buf.getvalue(), _tensor_bytes(buf.getvalue())))
    data = os.path.join(HERE, "data")
    for fname in sorted(os.listdir(data)):
        if fname.endswith(".pt") and "legacy" not in fname:
            with open(os.path.join(data, fname), "rb") as f:
                raw = f.read()
            try:  # the files cudalite reads (not those of dtypes it lacks, or whole modules)
                C.load(io.BytesIO(raw), map_location="cpu")
            except Exception:  # noqa: BLE001
                continue
            out.append((fname, raw, _tensor_bytes(raw)))
    return out


def _tensor_bytes(data):
    zf = zipfile.ZipFile(io.BytesIO(data))
    return sum(i.file_size for i in zf.infolist() if "/data/" in i.filename)


# ---- damage ----


def _rewrite(data, records):
    """The archive ``data`` with records replaced ({name: bytes}), CRCs valid, aligned as
    cudalite writes them."""
    from cudalite import _archive

    zf = zipfile.ZipFile(io.BytesIO(data))
    prefix = zf.infolist()[0].filename.split("/", 1)[0]
    out = io.BytesIO()
    writer = _archive.ArchiveWriter(out, prefix)
    for info in zf.infolist():
        name = info.filename[len(prefix) + 1 :]
        if name in ("version", ".data/serialization_id"):
            continue
        writer.write_record(name, records.get(name, zf.read(info)))
    writer.close()
    return out.getvalue()


def _pickle_edit(data, rng):
    zf = zipfile.ZipFile(io.BytesIO(data))
    info = next(i for i in zf.infolist() if i.filename.endswith("/data.pkl"))
    pkl = zf.read(info)
    ops = list(pickletools.genops(pkl))
    ints = [(op, arg, pos) for op, arg, pos in ops if op.name in ("BININT", "BININT1", "BININT2")]
    globs = [(op, arg, pos) for op, arg, pos in ops if op.name == "GLOBAL" and "Storage" in arg]
    keys = [(op, arg, pos) for op, arg, pos in ops if op.name == "BINUNICODE" and arg.isdigit()]
    choice = rng.random()
    if ints and (choice < 0.6 or not (globs or keys)):
        op, arg, pos = rng.choice(ints)
        value = rng.choice(EDGE_INTS + [arg + 1, arg - 1, -arg])
        size = {"BININT": 5, "BININT1": 2, "BININT2": 3}[op.name]
        body = pickle.encode_long(value)
        new = pkl[:pos] + b"\x8a" + bytes([len(body)]) + body + pkl[pos + size :]
    elif globs and (choice < 0.8 or not keys):
        op, arg, pos = rng.choice(globs)
        module = arg.split(" ")[0]
        old = f"c{module}\n{arg.split(' ')[1]}\n".encode()
        new_glob = f"c{module}\n{rng.choice(STORAGES)}\n".encode()
        new = pkl[:pos] + new_glob + pkl[pos + len(old) :]
    else:
        op, arg, pos = rng.choice(keys)
        key = rng.choice(["0", "1", "9", "", "../0", "0" * 200, "data.pkl"]).encode()
        old = 5 + len(arg.encode())
        new = pkl[:pos] + b"X" + struct.pack("<I", len(key)) + key + pkl[pos + old :]
    return _rewrite(data, {"data.pkl": new})


def _zip_field(data, rng):
    data = bytearray(data)
    sigs = {b"PK\x03\x04": [18, 22, 26, 28], b"PK\x01\x02": [20, 24, 28, 30, 42]}
    sigs[b"PK\x05\x06"] = [8, 10, 12, 16]
    places = []
    for sig, offsets in sigs.items():
        pos = data.find(sig)
        while pos >= 0:
            places += [(pos + o, 2 if (sig, o) in _SHORT else 4) for o in offsets]
            pos = data.find(sig, pos + 4)
    at, width = rng.choice(places)
    values = [0, 1, 2**16 - 1, len(data), len(data) + 1, 2**31, 2**32 - 1, 64]
    value = rng.choice(values) % (1 << (8 * width))
    data[at : at + width] = value.to_bytes(width, "little")
    return bytes(data)


_SHORT = {
    (b"PK\x03\x04", 26),
    (b"PK\x03\x04", 28),
    (b"PK\x01\x02", 28),
    (b"PK\x01\x02", 30),
    (b"PK\x05\x06", 8),
    (b"PK\x05\x06", 10),
}


def _name(data, rng):
    data = bytearray(data)
    hits = []
    pos = data.find(b"PK\x01\x02")
    while pos >= 0:
        n = struct.unpack_from("<H", data, pos + 28)[0]
        hits.append((pos + 46, n))
        pos = data.find(b"PK\x01\x02", pos + 4)
    start, n = rng.choice(hits)
    i = start + rng.randrange(n)
    data[i] = rng.choice(b"09./\x00a")
    return bytes(data)


def damage(data, rng):
    """(kind, damaged bytes)."""
    kind = rng.choice(["truncate", "flip", "flip", "zipfield", "name", "pickle", "pickle"])
    if kind == "truncate":
        return kind, data[: rng.randrange(len(data))]
    if kind == "flip":
        out = bytearray(data)
        for _ in range(rng.randint(1, 8)):
            out[rng.randrange(len(out))] ^= 1 << rng.randrange(8)
        return kind, bytes(out)
    if kind == "zipfield":
        return kind, _zip_field(data, rng)
    if kind == "name":
        return kind, _name(data, rng)
    return kind, _pickle_edit(data, rng)


# ---- checking a load ----


def _tensors(obj, out):
    import cudalite as C

    if isinstance(obj, C.Tensor):
        out.append(obj)
    elif isinstance(obj, dict):
        for k, v in obj.items():
            _tensors(k, out)
            _tensors(v, out)
    elif isinstance(obj, (list, tuple, set)):
        for v in obj:
            _tensors(v, out)
    return out


def _values(obj):
    import numpy as np

    import cudalite

    # The bytes as stored: converting to float on the GPU would canonicalise NaN payloads,
    # which the file keeps (bfloat16 has no NumPy dtype: its bits are compared as int16).
    out = []
    for t in _tensors(obj, []):
        c = t.detach().cpu()
        if "bfloat16" in str(c.dtype):
            c = c.view(cudalite.int16)
        out.append((str(t.dtype), tuple(t.shape), np.asarray(c.numpy()).tobytes()))
    return out


def _consistent(obj):
    """Every loaded tensor shows exactly the bytes of its storage at its geometry."""
    import numpy as np

    for t in _tensors(obj, []):
        storage = t.untyped_storage() if hasattr(t, "untyped_storage") else None
        if storage is None:
            continue
        flat = np.frombuffer(bytes(storage.tolist()), dtype=np.uint8)
        if t.dtype.is_floating_point and t.dtype.itemsize == 2 and "bfloat" in str(t.dtype):
            continue
        item = t.element_size()
        view = np.lib.stride_tricks.as_strided(
            flat[t.storage_offset() * item :].view(
                t.detach().cpu().numpy().dtype if t.numel() else np.uint8
            ),
            shape=tuple(t.shape),
            strides=tuple(s * item for s in t.stride()),
        )
        if t.numel() and not np.array_equal(view, t.detach().cpu().numpy(), equal_nan=True):
            return False
    return True


def _worker():
    """Loads the files named on stdin; one JSON line per file on stdout."""
    import cudalite as C

    def rss():
        with open("/proc/self/status") as f:
            fields = dict(line.split(":", 1) for line in f if line.startswith("Vm"))
        return int(fields["VmRSS"].split()[0]) << 10, int(fields["VmHWM"].split()[0]) << 10

    originals = {}
    for line in sys.stdin:
        job = json.loads(line)
        if not originals and job["device"] != "cpu":
            C.ones(1, device=job["device"])  # the CUDA context, before any load is measured
        if job["base"] not in originals:
            originals[job["base"]] = _values(C.load(job["base_path"], map_location="cpu"))
        source = job["path"]
        if job["source"] == "buffer":
            with open(job["path"], "rb") as f:
                source = io.BytesIO(f.read())
        try:
            with open("/proc/self/clear_refs", "w") as f:
                f.write("5")
        except OSError:
            pass
        before, _ = rss()
        result = {"path": job["path"]}
        try:
            obj = C.load(source, map_location=job["device"])
            _, peak = rss()
            if job["kind"] == "pickle":
                result["ok"] = _consistent(obj)
            else:
                result["ok"] = _values(obj) == originals[job["base"]]
            result["outcome"] = "loaded"
            del obj
        except Exception as e:  # noqa: BLE001 (the fuzzer records every exception)
            _, peak = rss()
            result["outcome"] = type(e).__name__
            result["message"] = str(e)[:200]
        result["peak"] = peak - before
        print(json.dumps(result), flush=True)


# ---- driving ----


def run(n_files, seed=0, workers=2, batch=250, deadline=None, out_dir=None, device="cpu"):
    """Fuzzes ``n_files`` damaged files, loaded onto ``device``; a summary dict
    (``failures`` empty when clean)."""
    if device != "cpu":  # an unusable device fails here once, not in every worker
        import cudalite

        cudalite.ones(1, device=device)
    rng = random.Random(seed)
    bases = base_checkpoints()
    tmp = out_dir or tempfile.mkdtemp(prefix="cl_fuzz_")
    base_paths = {}
    for name, data, _ in bases:
        base_paths[name] = os.path.join(tmp, f"base_{name}")
        with open(base_paths[name], "wb") as f:
            f.write(data)
    jobs = []
    for i in range(n_files):
        name, data, tbytes = bases[i % len(bases)]
        kind, bad = damage(data, rng)
        path = os.path.join(tmp, f"f{i:06d}_{kind}.pt")
        with open(path, "wb") as f:
            f.write(bad)
        jobs.append(
            {
                "path": path,
                "kind": kind,
                "source": "path" if i % 2 else "buffer",
                "base": name,
                "base_path": base_paths[name],
                "device": device,
                "limit": 2 * tbytes + (8 << 20),  # twice the tensors, plus the interpreter's
            }
        )
    import cudalite

    # The workers load the cudalite this process runs (an installed package or the tree).
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(
        [os.path.dirname(os.path.dirname(cudalite.__file__)), env.get("PYTHONPATH", "")]
    )
    results, failures = [], []
    pending = [jobs[i : i + batch] for i in range(0, len(jobs), batch)]
    running = []
    t0 = time.time()
    while pending or running:
        while pending and len(running) < workers:
            chunk = pending.pop(0)
            proc = subprocess.Popen(
                [sys.executable, os.path.abspath(__file__), "--worker"],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                text=True,
                env=env,
            )
            proc.stdin.write("".join(json.dumps(j) + "\n" for j in chunk))
            proc.stdin.close()
            running.append((proc, chunk))
        proc, chunk = running.pop(0)
        lines = proc.stdout.read().splitlines()
        proc.stdout.close()
        proc.wait()
        got = [json.loads(line) for line in lines]
        for job, res in zip(chunk, got, strict=False):
            res["kind"], res["limit"], res["source"] = job["kind"], job["limit"], job["source"]
            results.append(res)
        if len(got) < len(chunk):  # the worker died on chunk[len(got)]
            crashed = chunk[len(got)]
            failures.append({"path": crashed["path"], "why": f"worker exit {proc.returncode}"})
            if chunk[len(got) + 1 :]:
                pending.insert(0, chunk[len(got) + 1 :])
        if deadline is not None and time.time() - t0 > deadline:
            for other, _ in running:  # (its results are not counted)
                other.kill()
                other.stdout.close()
                other.wait()
            break
    for res in results:
        if res["outcome"] == "loaded" and not res["ok"]:
            failures.append({"path": res["path"], "why": "loaded wrong values"})
        elif res["outcome"] not in ("loaded", *ALLOWED):
            failures.append({"path": res["path"], "why": f"raised {res['outcome']}"})
        elif (
            res["outcome"] != "loaded"
            and not res.get("message")
            and res["outcome"]
            not in (
                "EOFError",
                "KeyError",
            )
        ):
            failures.append({"path": res["path"], "why": f"{res['outcome']} without a message"})
        if res["peak"] > res["limit"]:
            failures.append({"path": res["path"], "why": f"peak RSS {res['peak']} bytes"})
    by_kind = collections.Counter((r["kind"], r["outcome"]) for r in results)
    examples = collections.defaultdict(set)
    for r in results:
        if r["outcome"] != "loaded" and len(examples[r["outcome"]]) < 6:
            examples[r["outcome"]].add(r.get("message", "")[:120])
    return {
        "files": len(results),
        "seconds": time.time() - t0,
        "failures": failures,
        "outcomes": dict(collections.Counter(r["outcome"] for r in results)),
        "by_kind": {f"{k}/{o}": n for (k, o), n in sorted(by_kind.items())},
        "examples": {k: sorted(v) for k, v in examples.items()},
        # (over the files of 1 MiB of tensors or more: on smaller ones the interpreter's own
        # allocations are all there is to see)
        "max_peak_ratio": max(
            (
                r["peak"] / ((r["limit"] - (8 << 20)) / 2)
                for r in results
                if r["limit"] - (8 << 20) >= 2 << 20
            ),
            default=0.0,
        ),
        "max_peak_bytes": max((r["peak"] for r in results), default=0),
        "dir": tmp,
        "results": results,
    }


def compare_with_torch(summary, sample=200, seed=0):
    """Exception types of cudalite and torch on a sample of the damaged files."""
    rng = random.Random(seed)
    picks = rng.sample(summary["results"], min(sample, len(summary["results"])))
    code = (
        "import sys, io, json, warnings, torch\nwarnings.simplefilter('ignore')\n"
        "for p in sys.stdin.read().split():\n"
        "    try:\n        torch.load(io.BytesIO(open(p,'rb').read()), map_location='cpu')\n"
        "        r = 'loaded'\n"
        "    except Exception as e:\n        r=type(e).__name__\n"
        "    print(json.dumps([p, r]), flush=True)\n"
    )
    torch_python = os.environ.get("TORCH_PYTHON", sys.executable)
    proc = subprocess.run(
        [torch_python, "-c", code],
        input="\n".join(r["path"] for r in picks),
        capture_output=True,
        text=True,
    )
    theirs = dict(json.loads(line) for line in proc.stdout.splitlines())
    pairs = collections.Counter((r["outcome"], theirs.get(r["path"], "crashed")) for r in picks)
    return {f"cudalite {a} / torch {b}": n for (a, b), n in sorted(pairs.items())}


def main():
    if "--worker" in sys.argv:
        _worker()
        return
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--files", type=int, default=5000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--torch", action="store_true", help="compare with torch on a sample")
    parser.add_argument("--device", default="cpu", help="map_location of the loads (cuda)")
    args = parser.parse_args()
    summary = run(args.files, args.seed, args.workers, device=args.device)
    print(f"{summary['files']} damaged files in {summary['seconds']:.0f} s")
    print("outcomes:", json.dumps(summary["outcomes"], indent=1))
    print("by kind:", json.dumps(summary["by_kind"], indent=1))
    print("messages:", json.dumps(summary["examples"], indent=1))
    print(
        f"largest peak RSS over a load: {summary['max_peak_bytes'] / 2**20:.1f} MiB; "
        f"largest peak / the file's tensors (files of >= 1 MiB of tensors): "
        f"{summary['max_peak_ratio']:.2f}"
    )
    if args.torch:
        print("cudalite vs torch:", json.dumps(compare_with_torch(summary), indent=1))
    print(f"failures: {len(summary['failures'])}")
    for f in summary["failures"][:50]:
        print("  ", f)
    sys.exit(1 if summary["failures"] else 0)


if __name__ == "__main__":
    main()
