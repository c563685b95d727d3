"""Records torch's CPU random streams for test_random_torch.py (not collected by pytest).

    CUDA_VISIBLE_DEVICES= /work/torchref/bin/python tests/gen_random_torch.py

Writes tests/data/random_torch.json: for every case of random_torch_cases.py the dtype, the
shape, the first values and the SHA-256 of all of them (random_torch_cases.canonical_bytes),
and for the generator states the bytes of a few states torch saved.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(__file__))
from random_torch_cases import CASES, STATE_SCRIPTS, canonical_bytes, head  # noqa: E402


def main():
    out = {"torch": torch.__version__, "cases": {}, "states": {}}
    for name, make in CASES.items():
        v = make(torch)
        out["cases"][name] = {
            "dtype": "list" if isinstance(v, list) else str(v.dtype).removeprefix("torch."),
            "shape": [len(v)] if isinstance(v, list) else list(v.shape),
            "head": head(torch, v),
            "sha256": hashlib.sha256(canonical_bytes(torch, v)).hexdigest(),
        }
    for name, script in STATE_SCRIPTS.items():
        state, after = script(torch)
        out["states"][name] = {
            "state": base64.b64encode(bytes(state.tolist())).decode(),
            "after": hashlib.sha256(canonical_bytes(torch, after)).hexdigest(),
        }
    path = os.path.join(os.path.dirname(__file__), "data", "random_torch.json")
    with open(path, "w") as f:  # one case per line
        f.write('{"torch": ' + json.dumps(out["torch"]) + ",\n")
        for key in ("cases", "states"):
            items = sorted(out[key].items())
            f.write(f'"{key}": {{\n')
            f.write(",\n".join(f"{json.dumps(k)}: {json.dumps(v)}" for k, v in items))
            f.write("\n}" + ("," if key == "cases" else "") + "\n")
        f.write("}\n")
    print(f"{len(out['cases'])} cases, {len(out['states'])} states -> {path}")


if __name__ == "__main__":
    main()
