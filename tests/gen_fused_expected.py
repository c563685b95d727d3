"""Records torch 2.11's results for tests/fused_cases.py (multi-tensor ops, AMP kernels,
foreach/fused optimizers, GradScaler runs, matmul precision switches; all on the CPU) into
tests/data/fused_expected.json, read by tests/test_fused_vs_torch.py:

    CUDA_VISIBLE_DEVICES= $TORCH_PYTHON tests/gen_fused_expected.py
"""

import json
import os
import sys
import warnings

import torch

sys.path.insert(0, os.path.dirname(__file__))
from fused_cases import CASES  # noqa: E402


def main():
    warnings.simplefilter("ignore")
    out = {name: fn(torch) for name, fn in CASES.items()}
    path = os.path.join(os.path.dirname(__file__), "data", "fused_expected.json")
    with open(path, "w") as f:
        json.dump({"torch": torch.__version__, "cases": out}, f, indent=0, sort_keys=True)
        f.write("\n")
    print(f"{len(out)} cases -> {path}")


if __name__ == "__main__":
    main()
