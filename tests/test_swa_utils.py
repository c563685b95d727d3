"""optim.swa_utils: AveragedModel's averages against torch's bit for bit
(tests/data/optim_trajectories.json, "swa"), the averaging functions, SWALR's checks,
update_bn."""

from __future__ import annotations

import json
import math
import os
import pickle

import numpy as np
import pytest

import cudalite as torch
from cudalite import nn, optim
from cudalite.optim import swa_utils as swa


def _load():
    with open(os.path.join(os.path.dirname(__file__), "data", "optim_trajectories.json")) as f:
        return json.load(f)["swa"]


def _model_values(k):
    w = [[math.sin(k + i + 3 * j) for i in range(3)] for j in range(2)]
    b = [math.cos(2 * k + j) for j in range(2)]
    return w, b, [0.5 * k, -1.25 * k]


@pytest.mark.parametrize("case", _load(), ids=lambda c: f"{c['source']}-{c['dtype']}")
def test_averaged_model_matches_torch(case, device):
    dtype = getattr(torch, case["dtype"])
    model = nn.Linear(3, 2).to(device, dtype)
    model.register_buffer("stat", torch.zeros(2, dtype=dtype, device=device))
    averaged = None
    for k in range(6):
        w, b, stat = _model_values(k)
        with torch.no_grad():
            model.weight.copy_(torch.tensor(w, dtype=dtype))
            model.bias.copy_(torch.tensor(b, dtype=dtype))
            model.stat.copy_(torch.tensor(stat, dtype=dtype))
        if averaged is None:
            averaged = swa.AveragedModel(model, **eval(case["source"], {"swa": swa}))
        averaged.update_parameters(model)
    assert averaged.n_averaged.item() == case["n_averaged"]
    sd = averaged.state_dict()
    assert list(sd) == list(case["values"])
    for key, values in case["values"].items():
        got = [float(v) for v in sd[key].cpu().flatten().tolist()]
        expected = [float.fromhex(v) for v in values]
        if device == "cpu":
            assert got == expected, key
        else:
            np.testing.assert_allclose(got, expected, rtol=1e-6, atol=1e-6)
    x = torch.ones(1, 3, dtype=dtype, device=device)
    assert averaged(x).tolist() == averaged.module(x).tolist()
    assert averaged.module.weight is not model.weight  # a deep copy


def test_averaged_model_device_and_checks(device):
    model = nn.Linear(2, 2)
    averaged = swa.AveragedModel(model, device=device)
    assert averaged.module.weight.device.type == device
    assert averaged.n_averaged.device.type == device and averaged.n_averaged.dtype == torch.int64
    with pytest.raises(AssertionError, match="Only one of avg_fn and multi_avg_fn should be"):
        swa.AveragedModel(model, avg_fn=swa.get_swa_avg_fn(), multi_avg_fn=lambda *a: None)
    for make in (swa.get_ema_avg_fn, swa.get_ema_multi_avg_fn):
        with pytest.raises(ValueError) as e:
            make(1.5)
        assert str(e.value) == (
            "Invalid decay value 1.5 provided. Please provide a value in [0,1] range."
        )


def test_averaging_functions_on_integers():
    a, c = torch.tensor([10, 20]), torch.tensor([20, 40])
    with pytest.raises(RuntimeError) as e:
        swa.get_swa_multi_avg_fn()([a], [c], 1)  # alpha = 1 / 2 for integers
    assert str(e.value) == (
        "For integral input tensors, argument alpha must not be a floating point number."
    )
    with pytest.raises(RuntimeError, match="^Integer division with addcdiv is no longer"):
        swa.get_swa_multi_avg_fn()([a], [c], torch.tensor(1))
    assert a.tolist() == [10, 20]
    e = torch.tensor([10, 20])
    swa.get_ema_multi_avg_fn(0.5)([e], [torch.tensor([20, 40])], 1)
    assert e.tolist() == [15, 30]
    assert swa.get_swa_avg_fn()(torch.tensor([1.0]), torch.tensor([4.0]), 2).tolist() == [2.0]


def test_swalr():
    p = nn.Parameter(torch.ones(1))
    opt = optim.SGD([p], lr=1.0)
    sched = swa.SWALR(opt, swa_lr=0.1, anneal_epochs=4, anneal_strategy="linear")
    lrs = [opt.param_groups[0]["lr"]]
    for _ in range(6):
        opt.step()
        sched.step()
        lrs.append(opt.param_groups[0]["lr"])
    # linear from 1.0 to 0.1 over 4 epochs, then 0.1
    np.testing.assert_allclose(lrs, [1.0, 0.775, 0.55, 0.325, 0.1, 0.1, 0.1], rtol=1e-12)
    state = pickle.loads(pickle.dumps(sched.state_dict()))
    assert "anneal_func" not in state and state["_anneal_strategy"] == "linear"
    sched2 = swa.SWALR(optim.SGD([p], lr=1.0), swa_lr=0.5)
    sched2.load_state_dict(state)
    assert sched2.anneal_func(0.3) == 0.3
    with pytest.raises(ValueError) as e:
        swa.SWALR(opt, 0.1, anneal_strategy="exp")
    assert str(e.value) == "anneal_strategy must by one of 'cos' or 'linear', instead got exp"
    with pytest.raises(ValueError) as e:
        swa.SWALR(opt, 0.1, anneal_epochs=-1)
    assert str(e.value) == "anneal_epochs must be equal or greater than 0, got -1"
    with pytest.raises(ValueError, match="swa_lr must have the same length as optimizer"):
        swa.SWALR(opt, [0.1, 0.2])


def test_update_bn_without_batchnorm_is_a_no_op():
    model = nn.Sequential(nn.Linear(2, 2))
    model.eval()
    swa.update_bn([torch.ones(1, 2)], model)
    assert not model.training


def test_update_bn_recomputes_running_statistics():
    calls = []

    class _BatchNorm(nn.Module):  # what update_bn looks for (torch's base class's name)
        def __init__(self):
            super().__init__()
            self.momentum = 0.1
            self.register_buffer("running_mean", torch.zeros(2))
            self.register_buffer("num_batches_tracked", torch.tensor(0))

        def reset_running_stats(self):
            self.running_mean.zero_()
            self.num_batches_tracked.zero_()

        def forward(self, x):
            calls.append((self.training, self.momentum))
            n = self.num_batches_tracked.item() + 1
            self.running_mean += (x.mean(0) - self.running_mean) / n  # momentum None: a mean
            self.num_batches_tracked += 1
            return x

    bn = _BatchNorm()
    bn.running_mean.fill_(7.0)
    model = nn.Sequential(nn.Identity(), bn)
    model.eval()
    loader = [(torch.tensor([[1.0, 2.0]]), 0), (torch.tensor([[3.0, 6.0]]), 1)]
    swa.update_bn(loader, model, device="cpu")
    assert calls == [(True, None), (True, None)]
    assert bn.running_mean.tolist() == [2.0, 4.0] and bn.momentum == 0.1
    assert not model.training
