"""Records torch's outcome of every case of nn_layers_cases.py in nn_layers_expected.json
(run by hand with PyTorch 2.11 from tests/: ``$TORCH_PYTHON gen_nn_layers_expected.py``)."""

import json
import warnings

import torch

from nn_layers_cases import ERROR_CASES, VALUE_CASES, inputs, run

warnings.simplefilter("ignore")
out = {"values": {}, "errors": {}}
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
        eval(expr, {"M": torch, "F": torch.nn.functional}, env)  # noqa: S307
    except Exception as e:  # noqa: BLE001 - recorded
        out["errors"][expr] = [type(e).__name__, str(e)]
    else:
        raise SystemExit(f"no error from {expr}")
with open("nn_layers_expected.json", "w") as f:
    json.dump(out, f, indent=0, sort_keys=True)
    f.write("\n")
print(len(out["values"]), "value cases,", len(out["errors"]), "error cases")
