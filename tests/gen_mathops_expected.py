"""Generates tests/data/mathops_expected.json, torch's outcome of each case in
tests/mathops_cases.py, with the reference torch (CPU):

    cd tests && $TORCH_PYTHON gen_mathops_expected.py
"""

import json

import torch

from mathops_cases import CASES, inputs, outcome

if __name__ == "__main__":
    lines = []
    for expr in CASES:
        out = outcome(torch, inputs(torch, "cpu"), expr)
        lines.append(f"{json.dumps(expr)}: {json.dumps(out)}")
    with open("data/mathops_expected.json", "w") as f:
        f.write("{\n" + ",\n".join(lines) + "\n}\n")
