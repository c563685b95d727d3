"""Records torch's output dtypes for the autocast table (tests/_autocast_cases.py) into
tests/data/autocast_dtypes.json; tests/test_autocast_lists.py compares cudalite with it.

Run with torch 2.11 and the tests directory on the path, no GPU needed:

    CUDA_VISIBLE_DEVICES= /work/torchref/bin/python tests/gen_autocast_table.py

The CPU rows run torch.autocast("cpu") for real. The CUDA rows run torch's CUDA autocast on
fake CUDA tensors (torch._subclasses.fake_tensor: tensors with CUDA's dispatch keys, and so
CUDA's autocast kernels, but no data), which gives the dtypes CUDA gives without a GPU; the
GPU test also compares with torch live where torch sees one.
"""

from __future__ import annotations

import json
import logging
import sys
import warnings
import zlib
from pathlib import Path

import torch
from torch._subclasses.fake_tensor import FakeTensor, FakeTensorMode

sys.path.insert(0, str(Path(__file__).parent))
from _autocast_cases import CASES, VARIANTS, Ctx, summarize  # noqa: E402

# fake tensors log the meta kernels' failures (dtype checks torch makes on real tensors too)
logging.getLogger("torch._subclasses.fake_tensor").setLevel(logging.CRITICAL)

OUT = Path(__file__).parent / "data" / "autocast_dtypes.json"


def outcome(fn, ctx):
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return summarize(fn(ctx))
    except Exception as e:  # noqa: BLE001 (the table records which error torch raises)
        msg = str(e)
        if "not implemented for" in msg or type(e).__module__.startswith("torch._subclasses"):
            return "unsupported"  # torch lacks a kernel for the dtype, or fake tensors can't run it
        return "error:" + type(e).__name__


def run_cpu(low):
    rows = {}
    for name, fn in CASES:
        seed = zlib.crc32(name.encode())
        with torch.autocast("cpu", dtype=low):
            rows[name] = {v: outcome(fn, Ctx(torch, "cpu", low, v, seed)) for v in VARIANTS}
    return rows


def run_fake_cuda(low):
    mode = FakeTensorMode(allow_non_fake_inputs=True)
    cuda = torch.device("cuda", 0)

    def wrap(a, dtype):
        return FakeTensor(mode, torch.empty(a.shape, dtype=dtype, device="meta"), cuda)

    rows = {}
    with mode:
        for name, fn in CASES:
            torch.set_autocast_dtype("cuda", low)
            torch.set_autocast_enabled("cuda", True)
            torch.autocast_increment_nesting()
            try:
                rows[name] = {
                    v: outcome(fn, Ctx(torch, "cuda", low, v, 0, wrap=wrap)) for v in VARIANTS
                }
            finally:
                torch.set_autocast_enabled("cuda", False)
                if torch.autocast_decrement_nesting() == 0:
                    torch.clear_autocast_cache()
    return rows


def main():
    table = {
        "torch": torch.__version__,
        "cpu": {n: run_cpu(getattr(torch, n)) for n in ("bfloat16", "float16")},
        "cuda": {n: run_fake_cuda(getattr(torch, n)) for n in ("float16", "bfloat16")},
    }
    OUT.write_text(json.dumps(table, indent=1, sort_keys=True) + "\n")
    print(f"wrote {OUT}")


if __name__ == "__main__":
    main()
