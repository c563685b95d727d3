"""Records torch's optimizer trajectories (CPU, single-tensor implementations, float32 and
float64) into tests/data/optim_trajectories.json, read by tests/test_optim_trajectories.py:
$TORCH_PYTHON tests/gen_optim_expected.py

Two parameters (shapes (7,) and (2, 3)) start from fixed values and take STEPS steps with
fixed gradients; the second has no gradient on step 3. The values after the first and the
last step are stored as float.hex strings, so that the test can compare bit for bit.

torch's CPU sqrt (MKL's vector sqrt where torch is built with MKL) is not correctly rounded:
about one float32 result in five is one unit in the last place off. cudalite's sqrt is
correctly rounded, on the CPU and on CUDA. So each case is recorded twice: "first"/"last" with
torch's Tensor.sqrt/sqrt_ replaced by a correctly rounded one (every other operation is
torch's own kernel: these pin down the order and rounding of each update bit for bit), and
"last_torch" with torch unchanged (compared to float rounding). Also recorded: the keys of
state_dict()'s param group and, per parameter, each state entry's dtype, shape and device.
"lbfgs": LBFGS on a Rosenbrock function (losses, final point, evaluation counts), compared to
rounding (its dot products are reductions). "swa": swa_utils.AveragedModel's averages of a
Linear model (with a buffer) over six updates, bit for bit. "adafactor": Adafactor's
trajectories as the cases', compared to rounding (it takes norms). "muon": Muon's parameters
after 10 steps (compared to bfloat16 rounding)."""

import json
import math

import numpy as np
import torch

_torch_sqrt, _torch_sqrt_ = torch.Tensor.sqrt, torch.Tensor.sqrt_


def _exact_sqrt(self):
    return torch.from_numpy(np.sqrt(self.detach().numpy())).to(self.dtype)


def _exact_sqrt_(self):
    return self.copy_(_exact_sqrt(self))


def exact_sqrt(on):
    """Replaces torch's Tensor.sqrt and sqrt_ with correctly rounded ones (NumPy's)."""
    torch.Tensor.sqrt = _exact_sqrt if on else _torch_sqrt
    torch.Tensor.sqrt_ = _exact_sqrt_ if on else _torch_sqrt_


STEPS = 20
SHAPES = [(7,), (2, 3)]


def initial(k):
    n = math.prod(SHAPES[k])
    return [math.sin(1.7 * i + k) * 2.0 + 0.25 * k for i in range(n)]


def grad(k, t):
    """The gradient of parameter k at step t (1-based); None where it has none."""
    if k == 1 and t == 3:
        return None
    n = math.prod(SHAPES[k])
    return [math.cos(1.3 * i + 0.7 * t + k) * (1 + 0.1 * t) - 0.01 * i for i in range(n)]


CONFIGS = [
    ("SGD", dict(lr=0.1)),
    ("SGD", dict(lr=0.05, momentum=0.9)),
    ("SGD", dict(lr=0.05, momentum=0.9, dampening=0.1, weight_decay=0.01)),
    ("SGD", dict(lr=0.05, momentum=0.8, nesterov=True, weight_decay=0.1)),
    ("SGD", dict(lr=0.05, momentum=0.5, maximize=True)),
    ("Adam", dict(lr=0.1)),
    ("Adam", dict(lr=0.01, betas=(0.8, 0.99), eps=1e-6, weight_decay=0.1)),
    ("Adam", dict(lr=0.05, amsgrad=True)),
    ("Adam", dict(lr=0.05, maximize=True, weight_decay=0.01, decoupled_weight_decay=True)),
    ("Adam", dict(lr=0.02, betas=(0.3, 0.9))),
    ("AdamW", dict()),
    ("AdamW", dict(lr=0.05, weight_decay=0.1, amsgrad=True)),
    ("AdamW", dict(lr=0.01, betas=(0.5, 0.95), maximize=True)),
    ("RMSprop", dict()),
    ("RMSprop", dict(lr=0.01, alpha=0.9, momentum=0.5, weight_decay=0.1)),
    ("RMSprop", dict(lr=0.01, centered=True)),
    ("RMSprop", dict(lr=0.005, centered=True, momentum=0.9, maximize=True, eps=1e-4)),
    ("Adagrad", dict()),
    ("Adagrad", dict(lr=0.1, lr_decay=0.01, weight_decay=0.05)),
    ("Adagrad", dict(lr=0.1, initial_accumulator_value=0.5, eps=1e-6, maximize=True)),
    ("Adadelta", dict()),
    ("Adadelta", dict(lr=0.5, rho=0.8, weight_decay=0.1)),
    ("Adadelta", dict(lr=2.0, rho=0.95, eps=1e-4, maximize=True)),
    ("Adamax", dict()),
    ("Adamax", dict(lr=0.01, betas=(0.8, 0.9), weight_decay=0.1)),
    ("Adamax", dict(lr=0.05, eps=1e-3, maximize=True)),
    ("NAdam", dict()),
    ("NAdam", dict(lr=0.01, weight_decay=0.1, momentum_decay=0.01)),
    ("NAdam", dict(lr=0.01, weight_decay=0.1, decoupled_weight_decay=True, maximize=True)),
    ("RAdam", dict()),
    ("RAdam", dict(lr=0.01, betas=(0.8, 0.9), weight_decay=0.1)),
    ("RAdam", dict(lr=0.01, weight_decay=0.1, decoupled_weight_decay=True, maximize=True)),
    ("Rprop", dict()),
    ("Rprop", dict(lr=0.05, etas=(0.3, 1.7), step_sizes=(1e-3, 0.2), maximize=True)),
    ("ASGD", dict()),
    ("ASGD", dict(lr=0.05, lambd=0.01, alpha=0.5, t0=5, weight_decay=0.1)),
    ("ASGD", dict(lr=0.02, t0=0, maximize=True)),
]

NO_FOREACH = {
    "SGD",
    "Adam",
    "AdamW",
    "RMSprop",
    "Adagrad",
    "Adadelta",
    "Adamax",
    "NAdam",
    "RAdam",
    "Rprop",
    "ASGD",
    "Adafactor",
}


def run(name, kw, dtype):
    params = [
        torch.nn.Parameter(torch.tensor(initial(k), dtype=dtype).reshape(SHAPES[k]))
        for k in range(len(SHAPES))
    ]
    extra = {"foreach": False} if name in NO_FOREACH else {}
    opt = getattr(torch.optim, name)(params, **extra, **kw)
    first = None
    for t in range(1, STEPS + 1):
        for k, p in enumerate(params):
            g = grad(k, t)
            p.grad = None if g is None else torch.tensor(g, dtype=dtype).reshape(SHAPES[k])
        opt.step()
        if t == 1:
            first = [[v.hex() for v in p.detach().flatten().tolist()] for p in params]
    last = [[v.hex() for v in p.detach().flatten().tolist()] for p in params]
    sd = opt.state_dict()
    layout = {
        "group_keys": list(sd["param_groups"][0]),
        "state": [
            {k: [str(v.dtype), list(v.shape), v.device.type] for k, v in sd["state"][i].items()}
            for i in sorted(sd["state"])
        ],
    }
    return first, last, layout


# Adafactor's steps take norms (reductions): compared to rounding
ADAFACTOR_CONFIGS = [
    dict(),
    dict(lr=0.05, weight_decay=0.1, maximize=True),
    dict(lr=0.02, beta2_decay=-0.5, eps=(1e-20, 1e-2), d=1.5),
]

# Muon (2-D parameters, a wide and a tall one) orthogonalises in bfloat16: compared to
# rounding
MUON_CONFIGS = [
    dict(lr=0.02),
    dict(lr=0.02, nesterov=False, weight_decay=0.0, adjust_lr_fn="match_rms_adamw"),
    dict(lr=0.05, momentum=0.8, ns_steps=3, adjust_lr_fn="original"),
]
MUON_SHAPES = [(3, 4), (5, 2)]
MUON_STEPS = 10


def run_muon(kw, dtype):
    params = [
        torch.nn.Parameter(
            torch.tensor([math.sin(1.3 * i + k) for i in range(math.prod(s))], dtype=dtype).reshape(
                s
            )
        )
        for k, s in enumerate(MUON_SHAPES)
    ]
    opt = torch.optim.Muon(params, **kw)
    for t in range(1, MUON_STEPS + 1):
        for k, p in enumerate(params):
            n = p.numel()
            g = [math.cos(0.9 * i + 0.4 * t + k) for i in range(n)]
            p.grad = torch.tensor(g, dtype=dtype).reshape(p.shape)
        opt.step()
    return {
        "kwargs": kw,
        "dtype": str(dtype).split(".")[-1],
        "params": [p.detach().flatten().tolist() for p in params],
    }


LBFGS_CONFIGS = [
    dict(lr=0.1),  # (lr=1 overshoots to a loss of 36000 on step 3, where 1 ulp changes 1e-5)
    dict(lr=0.5, history_size=3, max_iter=7),
    dict(line_search_fn="strong_wolfe"),
    dict(line_search_fn="strong_wolfe", history_size=2, max_iter=10, tolerance_change=1e-6),
]
LBFGS_STEPS = 4


def rosenbrock(x):
    """A 6-dimensional Rosenbrock function, from the start [-1.2, 1, -1.2, 1, ...]."""
    return (100 * (x[1:] - x[:-1] ** 2) ** 2 + (1 - x[:-1]) ** 2).sum()


def run_lbfgs(kw, dtype):
    x = torch.nn.Parameter(torch.tensor([-1.2, 1.0] * 3, dtype=dtype))
    opt = torch.optim.LBFGS([x], **kw)

    def closure():
        opt.zero_grad()
        loss = rosenbrock(x)
        loss.backward()
        return loss

    losses = [opt.step(closure).item() for _ in range(LBFGS_STEPS)]
    st = opt.state[x]
    return {
        "kwargs": kw,
        "dtype": str(dtype).split(".")[-1],
        "losses": losses,
        "x": x.detach().tolist(),
        "func_evals": st["func_evals"],
        "n_iter": st["n_iter"],
        "state_keys": sorted(st),
    }


SWA_CONFIGS = [
    "{}",
    "{'multi_avg_fn': swa.get_ema_multi_avg_fn(0.9)}",
    "{'avg_fn': swa.get_ema_avg_fn(0.75)}",
    "{'avg_fn': swa.get_swa_avg_fn()}",
    "{'multi_avg_fn': swa.get_swa_multi_avg_fn()}",
    "{'multi_avg_fn': swa.get_ema_multi_avg_fn(0.5), 'use_buffers': True}",
]


def model_values(k):
    """The model's weight, bias and buffer at update k."""
    w = [[math.sin(k + i + 3 * j) for i in range(3)] for j in range(2)]
    b = [math.cos(2 * k + j) for j in range(2)]
    return w, b, [0.5 * k, -1.25 * k]


def run_swa(source, dtype):
    swa = torch.optim.swa_utils
    model = torch.nn.Linear(3, 2).to(dtype)
    model.register_buffer("stat", torch.zeros(2, dtype=dtype))
    averaged = None
    for k in range(6):
        w, b, stat = model_values(k)
        with torch.no_grad():
            model.weight.copy_(torch.tensor(w, dtype=dtype))
            model.bias.copy_(torch.tensor(b, dtype=dtype))
            model.stat.copy_(torch.tensor(stat, dtype=dtype))
        if averaged is None:
            averaged = swa.AveragedModel(model, **eval(source, {"swa": swa}))
        averaged.update_parameters(model)
    return {
        "source": source,
        "dtype": str(dtype).split(".")[-1],
        "n_averaged": averaged.n_averaged.item(),
        "values": {
            k: [float(v).hex() for v in t.flatten().tolist()]
            for k, t in averaged.state_dict().items()
        },
    }


if __name__ == "__main__":
    cases = []
    for name, kw in CONFIGS:
        for dtype in ("float32", "float64"):
            exact_sqrt(False)
            _, last_torch, _ = run(name, kw, getattr(torch, dtype))
            exact_sqrt(True)
            first, last, layout = run(name, kw, getattr(torch, dtype))
            exact_sqrt(False)
            cases.append(
                {
                    "optimizer": name,
                    "kwargs": kw,
                    "dtype": dtype,
                    "first": first,
                    "last": last,
                    "last_torch": last_torch,
                    "state_dict_layout": layout,
                }
            )
    lbfgs = [run_lbfgs(kw, dtype) for kw in LBFGS_CONFIGS for dtype in (torch.float64,)]
    swa = [run_swa(src, dt) for src in SWA_CONFIGS for dt in (torch.float32, torch.float64)]
    muon = [run_muon(kw, dt) for kw in MUON_CONFIGS for dt in (torch.float32, torch.float64)]
    adafactor = []
    for kw in ADAFACTOR_CONFIGS:
        for dtype in ("float32", "float64"):
            first, last, layout = run("Adafactor", kw, getattr(torch, dtype))
            adafactor.append(
                {
                    "optimizer": "Adafactor",
                    "kwargs": kw,
                    "dtype": dtype,
                    "first": first,
                    "last": last,
                    "state_dict_layout": layout,
                }
            )
    out = {
        "torch": torch.__version__,
        "steps": STEPS,
        "cases": cases,
        "lbfgs": lbfgs,
        "swa": swa,
        "adafactor": adafactor,
        "muon": muon,
    }
    with open("tests/data/optim_trajectories.json", "w") as f:
        json.dump(out, f, indent=0)
        f.write("\n")
