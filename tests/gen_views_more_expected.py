"""Generates tests/views_more_expected.json, torch's outcome of each case in
tests/views_more_cases.py (one case a line), with the reference torch (CPU):

    cd tests && $TORCH_PYTHON gen_views_more_expected.py
"""

import json

import torch

from views_more_cases import CASES, inputs, outcome

if __name__ == "__main__":
    lines = []
    for expr in CASES:
        out = outcome(torch, inputs(torch, "cpu"), expr)
        lines.append(f"{json.dumps(expr)}: {json.dumps(out)}")
    with open("views_more_expected.json", "w") as f:
        f.write("{\n" + ",\n".join(lines) + "\n}\n")
