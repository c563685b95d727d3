"""nn: the seeds' models, Module registration and traversal, state_dict, moves and casts,
printing, Linear, Sequential, activations, losses against torch's values, and training."""

from __future__ import annotations

import copy
import math
import warnings
from collections import OrderedDict

import numpy as np
import pytest

import cudalite as torch
from conftest import HAS_CUDA, to_np
from cudalite import nn
from cudalite.nn import functional as F
from nn_loss_expected import LOSS_REF

# ---- the seeds ----


def test_seed_sequential_forward(device):
    x = torch.ones(2, 3, device=device)
    net = nn.Sequential(nn.Linear(3, 1))
    net = net.to(device=device)
    out = net(x)
    assert out.shape == (2, 1) and type(out.grad_fn).__name__ == "AddmmBackward0"
    assert repr(out).endswith("grad_fn=<AddmmBackward0>)")
    assert net[0].weight.data.device.type == torch.device(device).type  # cuda:0 != cuda
    assert out[0].item() == out[1].item()  # identical rows, as the seed prints


def test_seed_parameters_device():
    net = nn.Linear(3, 1)
    assert type(net.parameters()).__name__ == "generator"
    assert str(list(net.parameters())[0].device) == "cpu"


class LinearRegression(nn.Module):
    def __init__(self):
        super(LinearRegression, self).__init__()  # noqa: UP008 - the seed's spelling
        self.linear = nn.Linear(1, 1)

    def forward(self, x):
        return self.linear(x)


def test_seed_linear_regression_module(device):
    regression = LinearRegression().to(device=torch.device(device))
    params = list(regression.parameters())
    assert [tuple(p.shape) for p in params] == [(1, 1), (1,)]
    assert all(p.device.type == device and p.requires_grad for p in params)
    text = str(params[0])
    assert text.startswith("Parameter containing:\ntensor([[") and "requires_grad=True" in text
    assert repr(regression) == (
        "LinearRegression(\n  (linear): Linear(in_features=1, out_features=1, bias=True)\n)"
    )


def test_seed_int_input_error():
    net = nn.Linear(3, 1)
    with pytest.raises(RuntimeError) as e:
        net(torch.tensor([1, 2, 3]))
    assert str(e.value) == "mat1 and mat2 must have the same dtype, but got Long and Float"
    with pytest.raises(RuntimeError, match="but got Double and Float"):
        net(torch.ones(2, 3, dtype=torch.float64))
    with pytest.raises(RuntimeError, match=r"shapes cannot be multiplied \(2x4 and 3x1\)"):
        net(torch.ones(2, 4))


def test_device_mismatch_message():
    cpu, cuda = torch.device("cpu"), torch.device("cuda", 0)

    class Fake:
        def __init__(self, d):
            self.device = d

        def dim(self):
            return 2

    with pytest.raises(RuntimeError) as e:
        F._check_devices(
            [("self", Fake(cuda)), ("mat1", Fake(cpu)), ("mat2", Fake(cuda))],
            "wrapper_CUDA_addmm",
        )
    assert str(e.value) == (
        "Expected all tensors to be on the same device, but got mat1 is on cpu, different from "
        "other tensors on cuda:0 (when checking argument in method wrapper_CUDA_addmm)"
    )


@pytest.mark.skipif(not HAS_CUDA, reason="no CUDA GPU visible")
def test_cuda_model_on_cpu_input():
    net = nn.Linear(3, 1).cuda()
    with pytest.raises(RuntimeError) as e:
        net(torch.ones(2, 3))
    assert str(e.value).startswith(
        "Expected all tensors to be on the same device, but got mat1 is on cpu, different from "
        "other tensors on cuda:0"
    )


# ---- Module ----


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(4, 3)
        self.act = nn.ReLU()
        self.head = nn.Sequential(nn.Linear(3, 2), nn.Sigmoid())
        self.scale = nn.Parameter(torch.ones(1))
        self.register_buffer("steps", torch.zeros(1))
        self.register_buffer("tmp", torch.zeros(1), persistent=False)

    def forward(self, x):
        return self.head(self.act(self.fc1(x))) * self.scale


def test_registration_and_traversal():
    net = Net()
    names = [n for n, _ in net.named_parameters()]
    assert names == ["scale", "fc1.weight", "fc1.bias", "head.0.weight", "head.0.bias"]
    assert len(list(net.parameters())) == 5
    assert [n for n, _ in net.named_children()] == ["fc1", "act", "head"]
    assert [n for n, _ in net.named_modules()] == ["", "fc1", "act", "head", "head.0", "head.1"]
    assert [n for n, _ in net.named_buffers()] == ["steps", "tmp"]
    assert list(net.parameters(recurse=False)) == [net.scale]
    assert net.get_submodule("head.0") is net.head[0]
    assert net.get_parameter("head.0.bias") is net.head[0].bias
    shared = nn.Sequential(net.fc1, net.fc1)
    assert len(list(shared.parameters())) == 2
    assert len(list(shared.modules())) == 2 and len(list(shared.modules(False))) == 3
    assert len(list(shared.modules(remove_duplicate=False))) == 3


def test_setattr_rules():
    net = Net()
    with pytest.raises(TypeError) as e:
        net.fc1.weight = torch.zeros(3, 4)
    assert str(e.value) == (
        "cannot assign 'cudalite.FloatTensor' as parameter 'weight' "
        "(cudalite.nn.Parameter or None expected)"
    )
    with pytest.raises(TypeError, match="as child module 'fc1'"):
        net.fc1 = 3
    net.fc1.bias = None
    assert net.fc1.bias is None and "fc1.bias" not in dict(net.named_parameters())
    net.steps = torch.ones(1)
    assert net._buffers["steps"].item() == 1
    with pytest.raises(AttributeError, match="'Net' object has no attribute 'nope'"):
        _ = net.nope
    with pytest.raises(KeyError, match="attribute 'fc1' already exists"):
        net.register_parameter("fc1", None)
    with pytest.raises(TypeError, match="cannot assign 'cudalite.FloatTensor' object to parameter"):
        net.register_parameter("p", torch.ones(1))
    del net.scale
    assert "scale" not in dict(net.named_parameters())


def test_module_requires_init():
    class Bad(nn.Module):
        def __init__(self):
            self.fc = nn.Linear(1, 1)

    with pytest.raises(AttributeError, match="cannot assign module before Module.__init__"):
        Bad()
    with pytest.raises(NotImplementedError, match=r"Module \[Module\] is missing the required"):
        nn.Module()(1)


def test_state_dict_roundtrip():
    a, b = Net(), Net()
    sd = a.state_dict()
    assert list(sd) == ["scale", "steps", "fc1.weight", "fc1.bias", "head.0.weight", "head.0.bias"]
    assert not sd["fc1.weight"].requires_grad and sd["fc1.weight"]._is_same_storage(a.fc1.weight)
    assert repr(b.load_state_dict(sd)) == "<All keys matched successfully>"
    np.testing.assert_array_equal(to_np(b.fc1.weight.detach()), to_np(a.fc1.weight.detach()))
    assert b.fc1.weight.requires_grad and b.fc1.weight.is_leaf


def test_state_dict_positional_args():
    lin, dest = nn.Linear(3, 1), {}
    with pytest.warns(FutureWarning) as rec:
        out = lin.state_dict(dest, "p.")
    assert str(rec[0].message) == (
        "Positional args are being deprecated, use kwargs instead. Refer to https://pytorch.org/"
        "docs/main/generated/torch.nn.Module.html#torch.nn.Module.state_dict for details."
    )
    assert rec[0].filename == __file__ and out is dest and list(dest) == ["p.weight", "p.bias"]
    with pytest.warns(FutureWarning):
        kept = nn.Sequential(lin).state_dict(None, "m.", True)
    assert list(kept) == ["m.0.weight", "m.0.bias"] and kept["m.0.weight"] is lin.weight
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert list(lin.state_dict(destination={}, prefix="k.")) == ["k.weight", "k.bias"]


def test_load_state_dict_errors():
    lin = nn.Linear(3, 1)
    sd = lin.state_dict()
    with pytest.raises(RuntimeError) as e:
        lin.load_state_dict({"weight": sd["weight"], "foo": torch.zeros(1)})
    assert str(e.value) == (
        'Error(s) in loading state_dict for Linear:\n\tMissing key(s) in state_dict: "bias". '
        '\n\tUnexpected key(s) in state_dict: "foo". '
    )
    with pytest.raises(RuntimeError) as e:
        lin.load_state_dict({"weight": torch.zeros(2, 3), "bias": sd["bias"]})
    assert str(e.value) == (
        "Error(s) in loading state_dict for Linear:\n\tsize mismatch for weight: copying a param "
        "with shape cudalite.Size([2, 3]) from checkpoint, the shape in current model is "
        "cudalite.Size([1, 3])."
    )
    r = lin.load_state_dict({"weight": sd["weight"], "foo": torch.zeros(1)}, strict=False)
    assert r.missing_keys == ["bias"] and r.unexpected_keys == ["foo"]


def test_to_moves_in_place(device):
    net = Net()
    params = list(net.parameters())
    net.fc1.weight.grad = torch.ones(3, 4)
    assert net.double() is net
    assert [p is q for p, q in zip(params, net.parameters(), strict=True)] == [True] * 5
    assert all(p.dtype == torch.float64 and p.is_leaf and p.requires_grad for p in params)
    assert net.fc1.weight.grad.dtype == torch.float64
    net.to(device, torch.float32)
    assert all(p.dtype == torch.float32 and p.device.type == device for p in params)
    net.half().float()
    with pytest.raises(TypeError, match="nn.Module.to only accepts floating point"):
        net.to(torch.int64)


def test_modes_zero_grad_requires_grad():
    net = Net()
    assert net.training and net.head[1].training
    net.eval()
    assert not net.training and not net.head[1].training
    net.train()
    assert net.head[0].training
    net(torch.randn(2, 4)).sum().backward()
    assert all(p.grad is not None for p in net.parameters())
    net.zero_grad(set_to_none=False)
    assert all(p.grad is not None and p.grad.abs().sum().item() == 0 for p in net.parameters())
    net.zero_grad()
    assert all(p.grad is None for p in net.parameters())
    net.requires_grad_(False)
    assert not net(torch.randn(2, 4)).requires_grad


def test_forward_hooks():
    lin = nn.Linear(2, 2)
    calls = []
    h = lin.register_forward_hook(lambda m, args, out: calls.append(out.shape) or out * 0)
    lin.register_forward_pre_hook(lambda m, args: (args[0] * 2,))
    assert lin(torch.ones(1, 2)).abs().sum().item() == 0 and calls == [(1, 2)]
    h.remove()
    assert lin(torch.ones(1, 2)).abs().sum().item() != 0


def test_forward_hooks_with_kwargs_and_prepend():
    class Scale(nn.Module):
        def forward(self, x, scale=1.0):
            return x * scale

    m, seen = Scale(), []
    m.register_forward_pre_hook(lambda mod, args: seen.append("pre"))
    m.register_forward_pre_hook(lambda mod, args: seen.append("pre0"), prepend=True)
    h = m.register_forward_pre_hook(
        lambda mod, args, kwargs: (args, {"scale": kwargs["scale"] * 3}), with_kwargs=True
    )
    m.register_forward_hook(lambda mod, args, out: seen.append("fwd"))
    m.register_forward_hook(lambda mod, args, out: seen.append("fwd0"), prepend=True)
    m.register_forward_hook(
        lambda mod, args, kwargs, out: seen.append(kwargs) or out + 1, with_kwargs=True
    )
    assert m(torch.ones(1), scale=2.0).item() == 7.0
    assert seen == ["pre0", "pre", "fwd0", "fwd", {"scale": 6.0}]
    h.remove()
    assert h.id not in m._forward_pre_hooks_with_kwargs and m(torch.ones(1), scale=2.0) == 3
    with m.register_forward_pre_hook(lambda mod, a, k: 5, with_kwargs=True):
        with pytest.raises(RuntimeError) as e:
            m(torch.ones(1))
    assert str(e.value) == (
        "forward pre-hook must return None or a tuple of (new_args, new_kwargs), but got 5."
    )
    assert m(torch.ones(1)).item() == 2.0  # the context manager removed it


def test_forward_hook_always_call():
    lin, seen = nn.Linear(2, 1), []
    lin.register_forward_hook(lambda m, a, out: seen.append(("always", out)), always_call=True)
    lin.register_forward_hook(
        lambda m, a, k, out: seen.append(k), always_call=True, with_kwargs=True
    )
    lin.register_forward_hook(lambda m, a, out: seen.append("normal"))
    with pytest.raises(RuntimeError, match="shapes cannot be multiplied"):
        lin(torch.ones(1, 3))
    assert seen == [("always", None), {}]

    def bad(m, a, out):
        raise ValueError("hook failed")

    lin.register_forward_hook(bad, always_call=True)
    with pytest.warns(UserWarning) as rec:
        with pytest.raises(RuntimeError, match="shapes cannot be multiplied"):
            lin(torch.ones(1, 3))
    assert str(rec[0].message) == (
        "module forward hook with ``always_call=True`` raised an exception that was silenced "
        "as another error was raised in forward: hook failed"
    )
    seen.clear()
    with pytest.raises(ValueError, match="hook failed"):  # forward worked: not silenced
        lin(torch.ones(1, 2))
    assert [x if isinstance(x, (str, dict)) else x[0] for x in seen] == ["always", {}, "normal"]


def test_deepcopy_module():
    net = Net()
    c = copy.deepcopy(net)
    assert isinstance(c.fc1.weight, nn.Parameter) and c.fc1.weight.requires_grad
    assert not c.fc1.weight._is_same_storage(net.fc1.weight)


# ---- printing ----


def test_reprs():
    net = nn.Sequential(
        nn.Linear(3, 4),
        nn.ReLU(),
        nn.Linear(4, 1, bias=False),
        nn.Sigmoid(),
        nn.Tanh(),
        nn.Identity(),
        nn.MSELoss(),
        nn.L1Loss(),
        nn.CrossEntropyLoss(),
    )
    assert repr(net) == (
        "Sequential(\n"
        "  (0): Linear(in_features=3, out_features=4, bias=True)\n"
        "  (1): ReLU()\n"
        "  (2): Linear(in_features=4, out_features=1, bias=False)\n"
        "  (3): Sigmoid()\n"
        "  (4): Tanh()\n"
        "  (5): Identity()\n"
        "  (6): MSELoss()\n"
        "  (7): L1Loss()\n"
        "  (8): CrossEntropyLoss()\n"
        ")"
    )
    assert repr(nn.Module()) == "Module()"
    assert repr(nn.ReLU(inplace=True)) == "ReLU(inplace=True)"
    assert repr(Net()).startswith("Net(\n  (fc1): Linear(in_features=4, out_features=3, bias=True)")
    assert "  (head): Sequential(\n    (0): Linear" in repr(Net())
    p = nn.Parameter(torch.ones(2))
    assert repr(p) == "Parameter containing:\ntensor([1., 1.], requires_grad=True)"
    assert repr(nn.Parameter(torch.ones(2), requires_grad=False)) == (
        "Parameter containing:\ntensor([1., 1.])"
    )


# ---- Parameter, Linear, Sequential ----


def test_parameter_aliases_data():
    t = torch.ones(3, dtype=torch.float64)
    p = nn.Parameter(t)
    assert isinstance(p, torch.Tensor) and p._is_same_storage(t) and p.dtype == torch.float64
    assert p.is_leaf and p.requires_grad and t.grad_fn is None
    assert type(p * 2) is torch.Tensor
    p.data = torch.zeros(2)
    assert p.shape == (2,) and isinstance(p, nn.Parameter)
    assert nn.Parameter().shape == (0,)


def test_linear_init_bounds():
    torch.manual_seed(0)
    lin = nn.Linear(100, 50)
    bound = 1 / math.sqrt(100)
    w, b = to_np(lin.weight.detach()), to_np(lin.bias.detach())
    assert w.shape == (50, 100) and np.abs(w).max() <= bound and np.abs(w).max() > 0.9 * bound
    assert np.abs(b).max() <= bound and abs(w.mean()) < 0.01
    assert nn.Linear(3, 2, dtype=torch.float64).weight.dtype == torch.float64


@pytest.mark.parametrize("shape", [(3,), (5, 3), (2, 4, 3), (2, 2, 2, 3)])
def test_linear_shapes_match_matmul(shape, device):
    lin = nn.Linear(3, 2).to(device)
    x = torch.randn(*shape, device=device)
    ref = x.matmul(lin.weight.detach().t()) + lin.bias.detach()
    out = lin(x)
    assert out.shape == (*shape[:-1], 2)
    np.testing.assert_allclose(to_np(out.detach()), to_np(ref), rtol=1e-5, atol=1e-6)
    out.sum().backward()
    np.testing.assert_allclose(to_np(lin.bias.grad), [float(np.prod(shape[:-1]))] * 2, rtol=1e-6)


def test_linear_grad_fn_chains():
    lin = nn.Linear(3, 2)
    out = lin(torch.ones(4, 3))
    names = [type(n).__name__ if n else None for n, _ in out.grad_fn.next_functions]
    assert names == ["AccumulateGrad", None, "TBackward0"]
    assert type(lin(torch.ones(3)).grad_fn).__name__ == "ViewBackward0"
    assert type(nn.Linear(3, 2, bias=False)(torch.ones(4, 3)).grad_fn).__name__ == "MmBackward0"
    assert lin.weight.grad is None


def test_sequential_container():
    a, b, c = nn.Linear(2, 2), nn.ReLU(), nn.Linear(2, 1)
    s = nn.Sequential(a, b, c)
    assert len(s) == 3 and s[0] is a and s[-1] is c and list(s) == [a, b, c]
    sub = s[1:]
    assert isinstance(sub, nn.Sequential) and list(sub._modules) == ["1", "2"]
    with pytest.raises(IndexError, match="index 3 is out of range"):
        s[3]
    s.append(nn.Sigmoid())
    assert len(s) == 4
    d = nn.Sequential(OrderedDict([("lin", a), ("act", b)]))
    assert d.lin is a and [n for n, _ in d.named_children()] == ["lin", "act"]
    del s[1]
    assert list(s._modules) == ["0", "1", "2"] and s[1] is c
    assert s(torch.ones(3, 2)).shape == (3, 1)


def test_module_list():
    ml = nn.ModuleList([nn.Linear(1, 1) for _ in range(3)])
    assert len(ml) == 3 and len(list(ml.parameters())) == 6 and ml[-1] is list(ml)[2]
    relu, tanh = nn.ReLU(), nn.Tanh()
    assert ml.insert(0, relu) is None and ml[0] is relu and len(ml) == 4
    ml.insert(4, tanh)
    assert list(ml._modules) == ["0", "1", "2", "3", "4"] and ml[4] is tanh
    assert repr(nn.ModuleList([tanh]).insert(1, relu)) == "None"
    ml2 = nn.ModuleList([relu])
    ml2.insert(0, tanh)
    assert repr(ml2) == "ModuleList(\n  (0): Tanh()\n  (1): ReLU()\n)"
    with pytest.raises(KeyError, match="'-1'"):  # torch's loop does not wrap negative indices
        ml2.insert(-1, relu)


# ---- functional ----


X = [[0.2, -1.0, 0.5, 1.5], [1.0, 0.0, -0.5, 0.3], [-0.7, 0.8, 0.1, 0.0]]
W = [1.0, 2.0, 0.5, 1.5]
LOSSES = {
    "ce": lambda x, t: F.cross_entropy(x, t),
    "ce_sum": lambda x, t: F.cross_entropy(x, t, reduction="sum"),
    "ce_none": lambda x, t: nn.CrossEntropyLoss(reduction="none")(x, t),
    "ce_w": lambda x, t: F.cross_entropy(x, t, weight=torch.tensor(W, device=x.device)),
    "ce_ignore": lambda x, t: F.cross_entropy(x, torch.tensor([2, -100, 3], device=x.device)),
    "ce_ls": lambda x, t: F.cross_entropy(x, t, label_smoothing=0.1),
    "ce_ls_w": lambda x, t: F.cross_entropy(
        x, t, weight=torch.tensor(W, device=x.device), label_smoothing=0.2
    ),
    "ce_prob": lambda x, t: F.cross_entropy(x, x.detach().softmax(1).flip(0)),
    "nll": lambda x, t: nn.NLLLoss()(x.log_softmax(1), t),
    "mse": lambda x, t: nn.MSELoss()(x, x.detach().flip(0)),
    "l1": lambda x, t: nn.L1Loss(reduction="sum")(x, x.detach().flip(0)),
    "ce_3d": lambda x, t: F.cross_entropy(
        x.reshape(1, 3, 4).transpose(1, 2), torch.tensor([[2, 0, 1]], device=x.device)
    ),
}


@pytest.mark.parametrize("name", sorted(LOSSES))
def test_losses_match_torch(name, device):
    x = torch.tensor(X, device=device, requires_grad=True)
    t = torch.tensor([2, 0, 3], device=device)
    loss = LOSSES[name](x, t)
    loss.sum().backward()
    value, grad = LOSS_REF[name]
    np.testing.assert_allclose(to_np(loss.detach()), value, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(to_np(x.grad), grad, rtol=1e-4, atol=1e-5)


def test_loss_node_names():
    x = torch.tensor(X, requires_grad=True)
    t = torch.tensor([2, 0, 3])
    assert type(F.mse_loss(x, x * 2).grad_fn).__name__ == "MseLossBackward0"
    ce = F.cross_entropy(x, t)
    assert type(ce.grad_fn).__name__ == "NllLossBackward0"
    assert type(ce.grad_fn.next_functions[0][0]).__name__ == "LogSoftmaxBackward0"
    assert type(F.l1_loss(x, x * 2).grad_fn).__name__ == "MeanBackward0"


def test_loss_errors_and_warnings():
    x = torch.tensor(X)
    with pytest.raises(IndexError, match="^Target 5 is out of bounds.$"):
        F.cross_entropy(x, torch.tensor([0, 1, 5]))
    with pytest.raises(ValueError, match="Expected input batch_size \\(3\\) to match target"):
        F.cross_entropy(x, torch.tensor([0, 1]))
    with pytest.raises(ValueError, match="foo is not a valid value for reduction"):
        F.mse_loss(x, x, reduction="foo")
    with pytest.warns(UserWarning, match=r"Using a target size \(cudalite.Size\(\[3\]\)\)"):
        F.mse_loss(torch.randn(3, 1), torch.randn(3))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        F.mse_loss(x, x)


def test_activations(device):
    x = torch.tensor([[-1.0, 0.0, 2.0]], device=device)
    np.testing.assert_allclose(to_np(nn.ReLU()(x)), [[0.0, 0.0, 2.0]])
    np.testing.assert_allclose(to_np(F.sigmoid(x)), 1 / (1 + np.exp([[1.0, 0.0, -2.0]])), 1e-6)
    np.testing.assert_allclose(to_np(nn.Tanh()(x)), np.tanh([[-1.0, 0.0, 2.0]]), 1e-6)
    sm = to_np(nn.Softmax(dim=1)(x))
    np.testing.assert_allclose(sm, np.exp(x.tolist()) / np.exp(x.tolist()).sum(), rtol=1e-6)
    np.testing.assert_allclose(to_np(F.log_softmax(x, 1)), np.log(sm), rtol=1e-5)
    y = x.clone()
    assert nn.ReLU(inplace=True)(y) is y and y.min().item() == 0
    assert nn.Identity(3, foo=1)(x) is x
    d = nn.Dropout(0.5)
    out = d(torch.ones(1000, device=device))
    assert set(np.unique(to_np(out)).tolist()) <= {0.0, 2.0} and 300 < out.sum().item() / 2 < 700
    assert d.eval()(x) is x


def test_regression_converges(device):
    torch.manual_seed(0)
    x = torch.linspace(-1, 1, 256, device=device).reshape(256, 1)
    y = 3 * x + 0.5
    model = LinearRegression().to(device)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    loss_fn = nn.MSELoss()
    for _ in range(300):
        opt.zero_grad()
        loss = loss_fn(model(x), y)
        loss.backward()
        opt.step()
    assert loss.item() < 1e-4
    assert abs(model.linear.weight.item() - 3) < 1e-2 and abs(model.linear.bias.item() - 0.5) < 1e-2


def test_mlp_classifier_trains(device):
    torch.manual_seed(1)
    x = torch.randn(64, 2, device=device)
    labels = ((x[:, 0] * x[:, 1]) > 0).long()
    net = nn.Sequential(nn.Linear(2, 16), nn.Tanh(), nn.Linear(16, 2)).to(device)
    opt = torch.optim.Adam(net.parameters(), lr=0.05)
    for _ in range(150):
        opt.zero_grad()
        loss = nn.CrossEntropyLoss()(net(x), labels)
        loss.backward()
        opt.step()
    acc = (net(x).argmax(1) == labels).float().mean().item()
    assert loss.item() < 0.2 and acc > 0.95


# ---- losses at the edges, as torch (found by tests/fuzz_nn_vs_torch.py) ----


def test_cross_entropy_with_probabilities_averages_over_every_position(device):
    x = torch.tensor([[[0.1, 0.5], [0.2, 0.1], [0.3, 0.9]]], dtype=torch.float64, device=device)
    p = torch.tensor([[[0.2, 1.0], [0.3, 0.0], [0.5, 0.0]]], dtype=torch.float64, device=device)
    total = torch.nn.functional.cross_entropy(x, p, reduction="sum").item()
    mean = torch.nn.functional.cross_entropy(x, p).item()
    assert abs(mean - total / 2) < 1e-12  # one sample, two positions
    with pytest.raises(
        RuntimeError, match="^ignore_index is not supported for floating point target$"
    ):
        torch.nn.functional.cross_entropy(x, p, ignore_index=1)


@pytest.mark.parametrize("smoothing", [0.0, 0.1])
def test_every_target_ignored_gives_a_nan_loss_and_zero_gradients(smoothing, device):
    x = torch.tensor([[0.1, 0.2, 0.3, 0.4]], dtype=torch.float64, device=device, requires_grad=True)
    t = torch.tensor([1], device=device)
    y = torch.nn.functional.cross_entropy(x, t, ignore_index=1, label_smoothing=smoothing)
    assert math.isnan(y.item())
    y.backward()
    assert x.grad.tolist() == [[0.0, 0.0, 0.0, 0.0]]
    assert all(math.copysign(1.0, v) == 1.0 for v in x.grad.flatten().tolist())  # +0, not -0


def test_nll_loss_ignores_minus_inf_in_other_classes(device):
    logp = torch.tensor([[float("-inf"), -0.5]], dtype=torch.float64, device=device)
    assert torch.nn.functional.nll_loss(logp, torch.tensor([1], device=device)).item() == 0.5
