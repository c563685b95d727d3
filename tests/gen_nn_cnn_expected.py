"""Records torch's outcome of every case of nn_cnn_cases.py in data/nn_cnn_expected.json
(run by hand with PyTorch 2.11 from tests/: ``$TORCH_PYTHON gen_nn_cnn_expected.py``)."""

import json
import warnings

import torch

from nn_cnn_cases import ERROR_CASES, REPRS, SEEDED, VALUE_CASES, batchnorm_steps, inputs, run

warnings.simplefilter("ignore")
out = {"values": {}, "errors": {}, "reprs": {}, "seeded": {}, "batchnorm": {}, "dropout2d": None}
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
for expr in REPRS:
    out["reprs"][expr] = repr(eval(expr, {"nn": torch.nn}))  # noqa: S307
for expr in SEEDED:
    torch.manual_seed(0)
    m = eval(expr, {"nn": torch.nn})  # noqa: S307
    out["seeded"][expr] = {k: v.double().ravel().tolist() for k, v in m.state_dict().items()}
for momentum in (0.1, None):
    y, rm, rv, n = batchnorm_steps(torch, "cpu", momentum)
    out["batchnorm"][str(momentum)] = [y.ravel().tolist(), rm.tolist(), rv.tolist(), n]
torch.manual_seed(0)
out["dropout2d"] = torch.nn.functional.dropout2d(torch.ones(4, 5, 2, 2), 0.4).reshape(-1).tolist()
with open("data/nn_cnn_expected.json", "w") as f:
    json.dump(out, f, indent=0, sort_keys=True)
    f.write("\n")
print(len(out["values"]), "value cases,", len(out["errors"]), "error cases")
