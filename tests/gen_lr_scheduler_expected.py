"""Records torch's learning-rate schedules into tests/data/lr_scheduler_expected.json, read
by tests/test_lr_scheduler.py: $TORCH_PYTHON tests/gen_lr_scheduler_expected.py

Each case is Python source building a scheduler from an optimizer `opt`, the module `S`
(torch.optim.lr_scheduler here, cudalite's in the test) and `swa` (optim.swa_utils, for
SWALR). The optimizer is SGD (or Adam, for the beta1 cycling) with two param groups (lr 0.1
and 0.05); each epoch runs opt.step() and then sched.step() (ReduceLROnPlateau:
sched.step(METRICS[epoch])). Recorded per epoch, as float.hex strings: get_last_lr() and,
for the schedulers that cycle it, each group's momentum (or beta1); and the keys of
state_dict() at the end."""

import json

import torch

EPOCHS = 60
METRICS = [1.0 / (1 + e) if e < 15 else 0.07 + 0.001 * (e % 3) for e in range(EPOCHS)]

CASES = [
    ("SGD", "S.LambdaLR(opt, lambda e: 0.95 ** e)"),
    ("SGD", "S.LambdaLR(opt, [lambda e: 1 / (e + 1), lambda e: 0.5 + 0.01 * e])"),
    ("SGD", "S.MultiplicativeLR(opt, lambda e: 0.97)"),
    ("SGD", "S.StepLR(opt, step_size=7)"),
    ("SGD", "S.StepLR(opt, step_size=3, gamma=0.7)"),
    ("SGD", "S.MultiStepLR(opt, milestones=[5, 12, 12, 30], gamma=0.3)"),
    ("SGD", "S.ConstantLR(opt)"),
    ("SGD", "S.ConstantLR(opt, factor=0.3, total_iters=9)"),
    ("SGD", "S.LinearLR(opt)"),
    ("SGD", "S.LinearLR(opt, start_factor=0.1, end_factor=0.9, total_iters=17)"),
    ("SGD", "S.ExponentialLR(opt, gamma=0.93)"),
    ("SGD", "S.CosineAnnealingLR(opt, T_max=10)"),
    ("SGD", "S.CosineAnnealingLR(opt, T_max=13, eta_min=0.001)"),
    ("SGD", "S.CosineAnnealingWarmRestarts(opt, T_0=7)"),
    ("SGD", "S.CosineAnnealingWarmRestarts(opt, T_0=3, T_mult=2, eta_min=0.002)"),
    ("SGD", "S.OneCycleLR(opt, max_lr=1.0, total_steps=61)"),
    (
        "SGD",
        "S.OneCycleLR(opt, max_lr=[0.5, 0.2], epochs=6, steps_per_epoch=11, "
        "pct_start=0.25, anneal_strategy='linear', three_phase=True)",
    ),
    (
        "Adam",
        "S.OneCycleLR(opt, max_lr=0.01, total_steps=70, div_factor=10.0, final_div_factor=100.0)",
    ),
    ("SGD", "S.CyclicLR(opt, base_lr=0.01, max_lr=0.1, step_size_up=5)"),
    (
        "SGD",
        "S.CyclicLR(opt, base_lr=[0.01, 0.02], max_lr=0.3, step_size_up=4, "
        "step_size_down=7, mode='triangular2')",
    ),
    (
        "Adam",
        "S.CyclicLR(opt, base_lr=0.001, max_lr=0.01, step_size_up=6, mode='exp_range', gamma=0.97)",
    ),
    (
        "SGD",
        "S.CyclicLR(opt, base_lr=0.01, max_lr=0.1, step_size_up=5, "
        "scale_fn=lambda x: 0.8 ** x, scale_mode='iterations', cycle_momentum=False)",
    ),
    ("SGD", "S.PolynomialLR(opt)"),
    ("SGD", "S.PolynomialLR(opt, total_iters=25, power=2.5)"),
    (
        "SGD",
        "S.SequentialLR(opt, [S.LinearLR(opt, start_factor=0.2, total_iters=4), "
        "S.ExponentialLR(opt, gamma=0.9)], milestones=[4])",
    ),
    (
        "SGD",
        "S.SequentialLR(opt, [S.ConstantLR(opt, factor=0.5, total_iters=3), "
        "S.CosineAnnealingLR(opt, T_max=8), S.StepLR(opt, 4, 0.5)], milestones=[5, 20])",
    ),
    (
        "SGD",
        "S.ChainedScheduler([S.ConstantLR(opt, factor=0.1, total_iters=2), "
        "S.ExponentialLR(opt, gamma=0.9)])",
    ),
    (
        "SGD",
        "S.ChainedScheduler([S.StepLR(opt, 5, 0.5), S.CosineAnnealingLR(opt, T_max=9)], "
        "optimizer=opt)",
    ),
    ("SGD", "S.ReduceLROnPlateau(opt)"),
    ("SGD", "S.ReduceLROnPlateau(opt, factor=0.5, patience=2, cooldown=3, min_lr=0.004)"),
    (
        "SGD",
        "S.ReduceLROnPlateau(opt, mode='max', threshold=0.01, threshold_mode='abs', "
        "patience=1, min_lr=[0.01, 0.001])",
    ),
    ("SGD", "swa.SWALR(opt, swa_lr=0.05, anneal_epochs=7)"),
    ("SGD", "swa.SWALR(opt, swa_lr=[0.01, 0.2], anneal_epochs=0, anneal_strategy='linear')"),
    ("Adam", "swa.SWALR(opt, swa_lr=0.3, anneal_epochs=90, anneal_strategy='linear')"),
]


def make_optimizer(optim, kind):
    p1 = torch.nn.Parameter(torch.ones(2))
    p2 = torch.nn.Parameter(torch.ones(3))
    groups = [{"params": [p1]}, {"params": [p2], "lr": 0.05}]
    if kind == "Adam":
        return optim.Adam(groups, lr=0.1), (p1, p2)
    return optim.SGD(groups, lr=0.1, momentum=0.9), (p1, p2)


def momentum(group):
    return group["betas"][0] if "betas" in group else group["momentum"]


def run(kind, source):
    opt, params = make_optimizer(torch.optim, kind)
    namespace = {"S": torch.optim.lr_scheduler, "swa": torch.optim.swa_utils, "opt": opt}
    sched = eval(source, namespace)
    plateau = isinstance(sched, torch.optim.lr_scheduler.ReduceLROnPlateau)
    lrs = [[float(v).hex() for v in sched.get_last_lr()]]
    moms = [[float(momentum(g)).hex() for g in opt.param_groups]]
    for epoch in range(EPOCHS):
        for p in params:
            p.grad = torch.ones_like(p)
        opt.step()
        if plateau:
            sched.step(METRICS[epoch])
        else:
            sched.step()
        lrs.append([float(v).hex() for v in sched.get_last_lr()])
        moms.append([float(momentum(g)).hex() for g in opt.param_groups])
    return {
        "optimizer": kind,
        "source": source,
        "lrs": lrs,
        "momentums": moms if "Cyclic" in source or "OneCycle" in source else None,
        "state_dict_keys": list(sched.state_dict()),
    }


if __name__ == "__main__":
    out = {
        "torch": torch.__version__,
        "epochs": EPOCHS,
        "metrics": METRICS,
        "cases": [run(kind, source) for kind, source in CASES],
    }
    with open("tests/data/lr_scheduler_expected.json", "w") as f:
        json.dump(out, f, indent=0)
        f.write("\n")
