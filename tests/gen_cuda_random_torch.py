"""Records torch's CUDA random streams for test_cuda_random_recorded.py (not collected by
pytest). Run it with torch on the GPU machine whose values the tests will compare with:

    python tests/gen_cuda_random_torch.py

Writes tests/data/cuda_random_torch.json: the GPU (name, SM count, threads per SM: torch's
launch shapes, and so its numbers, depend on them), torch's version, and for every case of
cuda_random_torch_cases.py the dtype, shape, first values, SHA-256 of all values
(cuda_random_torch_cases.canonical_bytes) and the CUDA generator's state after the case.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(__file__))
from cuda_random_torch_cases import CASES, canonical_bytes, head, state_after  # noqa: E402


def main():
    props = torch.cuda.get_device_properties(0)
    out = {
        "torch": torch.__version__,
        "gpu": {
            "name": props.name,
            "multi_processor_count": props.multi_processor_count,
            "max_threads_per_multi_processor": props.max_threads_per_multi_processor,
        },
        "cases": {},
    }
    for name, make in CASES.items():
        v = make(torch)
        torch.cuda.synchronize()
        out["cases"][name] = {
            "dtype": str(v.dtype).removeprefix("torch."),
            "shape": list(v.shape),
            "head": head(v),
            "sha256": hashlib.sha256(canonical_bytes(v)).hexdigest(),
            "state": state_after(torch),
        }
    path = os.path.join(os.path.dirname(__file__), "data", "cuda_random_torch.json")
    with open(path, "w") as f:  # one case per line
        f.write('{"torch": ' + json.dumps(out["torch"]) + ",\n")
        f.write('"gpu": ' + json.dumps(out["gpu"]) + ",\n")
        f.write('"cases": {\n')
        items = sorted(out["cases"].items())
        f.write(",\n".join(f"{json.dumps(k)}: {json.dumps(v)}" for k, v in items))
        f.write("\n}\n}\n")
    print(f"{len(out['cases'])} cases on {props.name} -> {path}")


if __name__ == "__main__":
    main()
