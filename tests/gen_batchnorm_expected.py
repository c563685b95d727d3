"""Records torch's outcome of every case of batchnorm_cases.py in data/batchnorm_expected.json
(run by hand with PyTorch 2.11 from tests/: ``$TORCH_PYTHON gen_batchnorm_expected.py``)."""

import json
import warnings

import torch

from batchnorm_cases import (
    DOUBLE,
    DTYPES,
    ERRORS,
    MIXED,
    RUNS,
    double_backward,
    error_env,
    train_run,
)

warnings.simplefilter("ignore")
out = {"runs": {}, "double": {}, "errors": {}, "mixed": {}}
for name, *_ in RUNS:
    for dtype in DTYPES:
        run = train_run(torch, name, dtype, "cpu")
        digits = 14 if dtype == "float64" else 9  # more than the comparison uses
        run = {k: [float(f"{v:.{digits}g}") for v in vs] for k, vs in run.items()}
        out["runs"][f"{name}/{dtype}"] = run
for name, training in DOUBLE:
    out["double"][name] = double_backward(torch, training, "cpu")
for expr in ERRORS:
    try:
        eval(expr, error_env(torch, "cpu"))  # noqa: S307
    except Exception as e:  # noqa: BLE001 - recorded
        out["errors"][expr] = [type(e).__name__, str(e)]
    else:
        raise SystemExit(f"no error from {expr}")
for expr in MIXED:
    y = eval(expr, error_env(torch, "cpu"))  # noqa: S307
    out["mixed"][expr] = [str(y.dtype), y.double().ravel().tolist()]
with open("data/batchnorm_expected.json", "w") as f:
    json.dump(out, f, sort_keys=True)
    f.write("\n")
print(len(out["runs"]), "runs,", len(out["errors"]), "errors,", len(out["mixed"]), "mixed")
