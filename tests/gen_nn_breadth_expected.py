"""Records torch's outcome of every case of nn_breadth_cases.py in nn_breadth_expected.json
(run by hand with PyTorch 2.11 from tests/: ``$TORCH_PYTHON gen_nn_breadth_expected.py``)."""

import json
import warnings

import torch

from nn_breadth_cases import ERROR_CASES, REPR_CASES, VALUE_CASES, evaluate, inputs, run

warnings.simplefilter("ignore")
out = {"values": {}, "errors": {}, "reprs": {}}
for name, expr in VALUE_CASES:
    vals, grads = run(torch, expr, torch.float64, "cpu")
    out["values"][name] = {
        "shape": list(vals.shape),
        "dtype": str(vals.dtype),
        "values": vals.ravel().tolist(),
        "grads": {k: g.ravel().tolist() for k, g in grads.items()},
    }
for expr in ERROR_CASES:
    env = inputs(torch, torch.float64, "cpu")
    try:
        evaluate(torch, expr, env)
    except Exception as e:  # noqa: BLE001 - recorded
        out["errors"][expr] = [type(e).__name__, str(e)]
    else:
        raise SystemExit(f"no error from {expr}")
for expr in REPR_CASES:
    out["reprs"][expr] = repr(evaluate(torch, expr, {}))
with open("nn_breadth_expected.json", "w") as f:
    json.dump(out, f, indent=0, sort_keys=True)
    f.write("\n")
print(
    len(out["values"]),
    "value cases,",
    len(out["errors"]),
    "error cases,",
    len(out["reprs"]),
    "reprs",
)
