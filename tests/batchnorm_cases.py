"""BatchNorm training runs, shared by tests/test_nn_batchnorm.py and its generator
(``gen_batchnorm_expected.py``, run by hand with PyTorch 2.11), which records torch's outcome
of each in ``data/batchnorm_expected.json``.

A run builds a module (``M`` is torch or cudalite), gives it seeded parameters, trains it
for three steps on scaled and shifted copies of one input (each step: forward, the sum of the
output times a fixed upstream gradient, backward), then evaluates it once in eval mode (with
a backward). It records the last step's output and input gradient, every step's parameter
gradients, the running statistics and ``num_batches_tracked``. Float64 runs convert the
module; float16/bfloat16 runs keep it in float32 (the mixed types of an autocast model)
unless the case converts it. Also here: double backward through ``F.batch_norm`` and the
errors torch raises.
"""

from __future__ import annotations

import numpy as np

DTYPES = ("float64", "float32", "float16", "bfloat16")

# (name, module expression, input shape, input scale, input offset, module converted to the
# input's dtype)
RUNS = [
    ("bn2d", "nn.BatchNorm2d(3)", (4, 3, 3, 4), 1.0, 0.0, False),
    ("bn2d_momentum_none", "nn.BatchNorm2d(3, momentum=None)", (4, 3, 3, 4), 2.0, 1.0, False),
    (
        "bn2d_momentum_eps",
        "nn.BatchNorm2d(3, momentum=0.5, eps=1e-2)",
        (2, 3, 4, 6),
        1.0,
        0.0,
        False,
    ),
    ("bn2d_not_affine", "nn.BatchNorm2d(3, affine=False)", (4, 3, 3, 4), 1.0, -2.0, False),
    (
        "bn2d_no_running",
        "nn.BatchNorm2d(3, track_running_stats=False)",
        (4, 3, 3, 4),
        1.0,
        0.0,
        False,
    ),
    (
        "bn2d_bare",
        "nn.BatchNorm2d(3, affine=False, track_running_stats=False)",
        (3, 3, 2, 5),
        1.0,
        0.0,
        False,
    ),
    ("bn2d_one_channel", "nn.BatchNorm2d(1)", (6, 1, 3, 3), 1.0, 0.0, False),
    ("bn2d_batch_one", "nn.BatchNorm2d(3)", (1, 3, 4, 4), 1.0, 0.0, False),
    ("bn2d_large_mean", "nn.BatchNorm2d(2)", (4, 2, 4, 4), 0.1, 100.0, False),
    ("bn2d_long_runs", "nn.BatchNorm2d(1)", (2, 1, 16, 32), 1.0, 0.5, False),
    ("bn2d_odd_runs", "nn.BatchNorm2d(5)", (3, 5, 3, 3), 1.0, 0.0, False),
    ("bn1d_rows", "nn.BatchNorm1d(5)", (7, 5), 1.0, 0.0, False),
    ("bn1d_two_rows", "nn.BatchNorm1d(3)", (2, 3), 1.0, 0.0, False),
    ("bn1d_sequences", "nn.BatchNorm1d(4, momentum=0.2)", (3, 4, 6), 1.0, 0.0, False),
    ("bn3d", "nn.BatchNorm3d(2, momentum=0.3, eps=1e-3)", (2, 2, 3, 4, 5), 1.0, 0.0, False),
    ("bn2d_converted", "nn.BatchNorm2d(3)", (4, 3, 3, 4), 1.0, 0.0, True),
]


def _arr(shape, phase, scale=1.0):
    n = int(np.prod(shape))
    return (np.sin(np.arange(n) * 1.37 + phase) * scale).reshape(shape)


def _np(t):
    return t.detach().double().cpu().numpy().ravel().tolist()


def train_run(M, name, dtype, device):
    """The recorded outcome of run ``name`` with inputs of ``dtype`` (a name) on ``device``:
    a dict of lists of floats."""
    _, expr, shape, scale, offset, convert = next(r for r in RUNS if r[0] == name)
    dt = getattr(M, dtype)
    mod = eval(expr, {"nn": M.nn}).to(device)  # noqa: S307
    c = shape[1]
    if mod.affine:
        with M.no_grad():
            mod.weight.copy_(M.tensor(_arr((c,), 0.9, 0.5) + 1.0))
            mod.bias.copy_(M.tensor(_arr((c,), 2.6, 0.5)))
    if convert or dtype == "float64":
        mod = mod.to(dt)
    base = _arr(shape, 0.1, scale) + offset
    gy = M.tensor(_arr(shape, 1.7, 1.0), dtype=dt, device=device)
    out = {}
    for step in range(3):
        x = M.tensor(base * (1 + 0.5 * step) + 0.25 * step, dtype=dt, device=device)
        x.requires_grad_(True)
        y = mod(x)
        (y * gy).sum().backward()
        if step == 2:
            out["y"] = _np(y)
            out["gx"] = _np(x.grad)
        if mod.affine:
            out[f"gw{step}"] = _np(mod.weight.grad)
            out[f"gb{step}"] = _np(mod.bias.grad)
            mod.weight.grad = None
            mod.bias.grad = None
    if mod.track_running_stats:
        out["running_mean"] = _np(mod.running_mean)
        out["running_var"] = _np(mod.running_var)
        out["num_batches_tracked"] = [float(mod.num_batches_tracked)]
    mod.eval()
    x = M.tensor(base * 0.5 - 0.1, dtype=dt, device=device)
    x.requires_grad_(True)
    y = mod(x)
    (y * gy).sum().backward()
    out["y_eval"] = _np(y)
    out["gx_eval"] = _np(x.grad)
    return out


# (name, training): second derivatives through F.batch_norm
DOUBLE = [("double_backward_train", True), ("double_backward_eval", False)]


def double_backward(M, training, device):
    """x, weight and bias gradients of sum(dL/dx ** 2) + sum(dL/dw) for
    L = sum(batch_norm(x) * gy), float64."""
    F = M.nn.functional
    shape = (3, 2, 4)
    x = M.tensor(_arr(shape, 0.3, 1.5), dtype=M.float64, device=device, requires_grad=True)
    w = M.tensor(_arr((2,), 0.9, 0.5) + 1.0, dtype=M.float64, device=device, requires_grad=True)
    b = M.tensor(_arr((2,), 2.6, 0.5), dtype=M.float64, device=device, requires_grad=True)
    rm = M.tensor([0.2, -0.1], dtype=M.float64, device=device)
    rv = M.tensor([1.5, 0.7], dtype=M.float64, device=device)
    gy = M.tensor(_arr(shape, 1.7, 1.0), dtype=M.float64, device=device)
    y = F.batch_norm(x, rm, rv, w, b, training)
    gx, gw = M.autograd.grad((y * gy).sum(), [x, w], create_graph=True)
    ((gx * gx).sum() + gw.sum()).backward()
    return {
        "gx": _np(gx),
        "gw": _np(gw),
        "x_grad": _np(x.grad),
        "w_grad": _np(w.grad),
        "b_grad": [] if b.grad is None else _np(b.grad),
    }


# Calls that raise (evaluated with M, F, x: float32 (2, 3, 4), r: float32 (3,)); the CPU's
# dtype rules are torch's CPU kernels'.
ERRORS = [
    "F.batch_norm(x[:1, :, :1], r, r.clone(), training=True)",
    "F.batch_norm(x, r[:2], r.clone(), training=True)",
    "M.nn.BatchNorm1d(3)(x[:1, :, 0])",
    "F.batch_norm(x.double(), r, r.clone(), training=True)",
    "F.batch_norm(x, r.double(), r.double(), training=True)",
    "F.batch_norm(x, r, r.clone(), r.double(), training=True)",
    "F.batch_norm(x.half(), r, r.clone(), r.half(), training=True)",
    "F.batch_norm(x.bfloat16(), r, r.clone(), r.half(), training=True)",
    "F.batch_norm(x.long(), r, r.clone(), training=True)",
    "F.batch_norm(x, r, r.clone(), momentum=None)",
]

# Calls that work: float16/bfloat16 x beside float32 parameters and statistics.
MIXED = [
    "F.batch_norm(x.half(), r, r.clone() + 1, r, r * 2, training=True)",
    "F.batch_norm(x.bfloat16(), r, r.clone() + 1, r, None, training=False)",
    "F.batch_norm(x.half(), r.half(), r.half() + 1, r.half(), r.half(), training=True)",
]


def error_env(M, device):
    return {
        "M": M,
        "F": M.nn.functional,
        "x": M.tensor(_arr((2, 3, 4), 0.5), dtype=M.float32, device=device),
        "r": M.tensor(_arr((3,), 1.1, 0.5) + 1.0, dtype=M.float32, device=device),
    }


def load_expected():
    import json
    import pathlib

    path = pathlib.Path(__file__).parent / "data" / "batchnorm_expected.json"
    return json.loads(path.read_text())
