"""Generates tests/data/shape_ops_expected.json, torch's outcome of each case in
tests/shape_ops_cases.py (one case a line), with the reference torch (CPU):

    cd tests && $TORCH_PYTHON gen_shape_ops_expected.py
"""

import json

import torch

from shape_ops_cases import CASES, inputs, outcome

if __name__ == "__main__":
    lines = []
    for expr in CASES:
        out = outcome(torch, inputs(torch, "cpu"), expr)
        lines.append(f"{json.dumps(expr)}: {json.dumps(out)}")
    with open("data/shape_ops_expected.json", "w") as f:
        f.write("{\n" + ",\n".join(lines) + "\n}\n")
