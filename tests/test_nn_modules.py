"""The nn modules for transformers and CNNs: torch's reprs (the strings torch 2.11 prints,
"torch." written "cudalite."), constructor checks, parameters and their initialisation,
containers, and the modules' forward through nn.functional."""

from __future__ import annotations

import copy
import warnings
from collections import OrderedDict

import numpy as np
import pytest

import cudalite as torch
from cudalite import nn
from cudalite.nn import functional as F

REPRS = [
    (lambda: nn.Embedding(10, 3), "Embedding(10, 3)"),
    (
        lambda: nn.Embedding(
            10, 3, padding_idx=0, max_norm=1.0, norm_type=2.0, scale_grad_by_freq=True, sparse=True
        ),
        "Embedding(10, 3, padding_idx=0, max_norm=1.0, scale_grad_by_freq=True, sparse=True)",
    ),
    (lambda: nn.Embedding(10, 3, norm_type=1.0), "Embedding(10, 3, norm_type=1.0)"),
    (lambda: nn.LayerNorm(4), "LayerNorm((4,), eps=1e-05, elementwise_affine=True)"),
    (
        lambda: nn.LayerNorm((4, 5), eps=1e-6, elementwise_affine=False),
        "LayerNorm((4, 5), eps=1e-06, elementwise_affine=False)",
    ),
    (lambda: nn.LayerNorm(4, bias=False), "LayerNorm((4,), eps=1e-05, elementwise_affine=True)"),
    (lambda: nn.GELU(), "GELU(approximate='none')"),
    (lambda: nn.GELU("tanh"), "GELU(approximate='tanh')"),
    (lambda: nn.SiLU(), "SiLU()"),
    (lambda: nn.SiLU(True), "SiLU(inplace=True)"),
    (lambda: nn.Mish(), "Mish()"),
    (lambda: nn.Mish(True), "Mish(inplace=True)"),
    (lambda: nn.Softplus(), "Softplus(beta=1.0, threshold=20.0)"),
    (lambda: nn.Softplus(2, 10), "Softplus(beta=2, threshold=10)"),
    (lambda: nn.ELU(), "ELU(alpha=1.0)"),
    (lambda: nn.ELU(0.5, True), "ELU(alpha=0.5, inplace=True)"),
    (lambda: nn.LeakyReLU(), "LeakyReLU(negative_slope=0.01)"),
    (lambda: nn.LeakyReLU(0.2, True), "LeakyReLU(negative_slope=0.2, inplace=True)"),
    (lambda: nn.Hardtanh(), "Hardtanh(min_val=-1.0, max_val=1.0)"),
    (lambda: nn.Hardtanh(-2, 3, True), "Hardtanh(min_val=-2, max_val=3, inplace=True)"),
    (lambda: nn.ReLU6(), "ReLU6()"),
    (lambda: nn.ReLU6(True), "ReLU6(inplace=True)"),
    (lambda: nn.Tanh(), "Tanh()"),
    (lambda: nn.Dropout(), "Dropout(p=0.5, inplace=False)"),
    (lambda: nn.Dropout(0.1, True), "Dropout(p=0.1, inplace=True)"),
    (lambda: nn.Flatten(), "Flatten(start_dim=1, end_dim=-1)"),
    (lambda: nn.Flatten(0, 2), "Flatten(start_dim=0, end_dim=2)"),
    (lambda: nn.Unflatten(1, (2, 3)), "Unflatten(dim=1, unflattened_size=(2, 3))"),
    (lambda: nn.Unflatten(1, [2, 3]), "Unflatten(dim=1, unflattened_size=[2, 3])"),
    (lambda: nn.Identity(), "Identity()"),
    (lambda: nn.LazyLinear(3), "LazyLinear(in_features=0, out_features=3, bias=True)"),
    (lambda: nn.LazyLinear(3, bias=False), "LazyLinear(in_features=0, out_features=3, bias=False)"),
    (
        lambda: nn.ModuleDict({"a": nn.ReLU(), "b": nn.Linear(2, 3)}),
        "ModuleDict(\n  (a): ReLU()\n  (b): Linear(in_features=2, out_features=3, bias=True)\n)",
    ),
    (lambda: nn.ModuleDict(), "ModuleDict()"),
    (
        lambda: nn.ParameterList(
            [nn.Parameter(torch.ones(2)), nn.Parameter(torch.ones(2, 3, dtype=torch.float64))]
        ),
        "ParameterList(\n    (0): Parameter containing: [cudalite.float32 of size 2]\n"
        "    (1): Parameter containing: [cudalite.float64 of size 2x3]\n)",
    ),
    (lambda: nn.ParameterList(), "ParameterList()"),
    (
        lambda: nn.ParameterDict({"x": nn.Parameter(torch.ones(2))}),
        "ParameterDict(  (x): Parameter containing: [cudalite.FloatTensor of size 2])",
    ),
    (
        lambda: nn.ParameterDict({"x": torch.ones(2), "y": torch.ones(1, 2)}),
        "ParameterDict(\n    (x): Parameter containing: [cudalite.FloatTensor of size 2]\n"
        "    (y): Parameter containing: [cudalite.FloatTensor of size 1x2]\n)",
    ),
    (lambda: nn.ParameterDict(), "ParameterDict()"),
    (lambda: nn.SmoothL1Loss(beta=0.5), "SmoothL1Loss()"),
    (lambda: nn.HuberLoss(delta=2.0, reduction="sum"), "HuberLoss()"),
    (lambda: nn.BCELoss(weight=torch.ones(2)), "BCELoss()"),
    (lambda: nn.BCEWithLogitsLoss(pos_weight=torch.ones(2)), "BCEWithLogitsLoss()"),
]


@pytest.mark.parametrize("i", range(len(REPRS)))
def test_reprs_are_torchs(i):
    make, expected = REPRS[i]
    assert repr(make()) == expected


def test_repr_of_a_gpt_block():
    block = nn.ModuleDict(
        dict(
            wte=nn.Embedding(65, 8),
            h=nn.ModuleList([nn.LayerNorm(8), nn.Linear(8, 32), nn.GELU(), nn.Dropout(0.0)]),
        )
    )
    assert repr(block) == (
        "ModuleDict(\n"
        "  (wte): Embedding(65, 8)\n"
        "  (h): ModuleList(\n"
        "    (0): LayerNorm((8,), eps=1e-05, elementwise_affine=True)\n"
        "    (1): Linear(in_features=8, out_features=32, bias=True)\n"
        "    (2): GELU(approximate='none')\n"
        "    (3): Dropout(p=0.0, inplace=False)\n"
        "  )\n"
        ")"
    )


def raises(exc, msg, fn):
    with pytest.raises(exc) as e:
        fn()
    assert str(e.value) == msg


# ---- Embedding ----


def test_embedding_module(device):
    torch.manual_seed(0)
    emb = nn.Embedding(10, 3, padding_idx=2, device=device)
    assert emb.weight.shape == (10, 3) and emb.weight.device.type == device
    assert emb.weight[2].tolist() == [0.0, 0.0, 0.0]
    assert 0.3 < emb.weight.std().item() < 2.0  # N(0, 1)
    ids = torch.tensor([[1, 2], [2, 9]], device=device)
    out = emb(ids)
    assert out.shape == (2, 2, 3)
    out.sum().backward()
    assert emb.weight.grad[2].tolist() == [0.0, 0.0, 0.0]
    assert emb.weight.grad[1].tolist() == [1.0, 1.0, 1.0]
    assert nn.Embedding(10, 3, padding_idx=-1).padding_idx == 9
    assert nn.Embedding(4, 2, dtype=torch.float64).weight.dtype == torch.float64


def test_embedding_errors():
    raises(
        AssertionError, "Padding_idx must be within num_embeddings", lambda: nn.Embedding(4, 3, 4)
    )
    raises(
        AssertionError, "Padding_idx must be within num_embeddings", lambda: nn.Embedding(4, 3, -5)
    )
    raises(
        AssertionError,
        "Shape of weight does not match num_embeddings and embedding_dim",
        lambda: nn.Embedding(4, 3, _weight=torch.ones(3, 3)),
    )
    raises(
        AssertionError,
        "Embeddings parameter is expected to be 2-dimensional",
        lambda: nn.Embedding.from_pretrained(torch.ones(3)),
    )
    raises(
        RuntimeError,
        "Expected tensor for argument #1 'indices' to have one of the following scalar types: "
        "Long, Int; but got cudalite.FloatTensor instead (while checking arguments for embedding)",
        lambda: nn.Embedding(4, 3)(torch.tensor([1.0])),
    )
    raises(IndexError, "index out of range in self", lambda: nn.Embedding(4, 3)(torch.tensor([4])))


def test_embedding_from_pretrained_shares_and_freezes():
    w = torch.tensor([[1.0, 2.3, 3.0], [4.0, 5.1, 6.3]])
    emb = nn.Embedding.from_pretrained(w)
    assert repr(emb) == "Embedding(2, 3)"
    assert not emb.weight.requires_grad
    assert emb(torch.tensor([1])).tolist() == [[4.0, 5.099999904632568, 6.300000190734863]]
    w[0, 0] = 7.0
    assert emb.weight[0, 0].item() == 7.0  # the same memory
    assert nn.Embedding.from_pretrained(w, freeze=False).weight.requires_grad


def test_weight_tying_with_a_linear_head(device):
    torch.manual_seed(0)
    wte = nn.Embedding(7, 4, device=device)
    head = nn.Linear(4, 7, bias=False, device=device)
    wte.weight = head.weight
    model = nn.ModuleDict(dict(wte=wte, head=head))
    assert len(list(model.parameters())) == 1  # shared parameters are listed once
    ids = torch.tensor([0, 3, 3], device=device)
    logits = head(wte(ids))
    logits.sum().backward()
    # the gradient sums the lookup's rows and the head's
    g_head = wte(ids).detach().sum(0).unsqueeze(0).expand(7, 4)
    g_emb = torch.zeros(7, 4, device=device)
    g_emb[0] += head.weight.detach().sum(0)
    g_emb[3] += 2 * head.weight.detach().sum(0)
    np.testing.assert_allclose(
        head.weight.grad.cpu().numpy(), (g_head + g_emb).cpu().numpy(), rtol=1e-5, atol=1e-6
    )
    assert list(model.state_dict()) == ["wte.weight", "head.weight"]


# ---- LayerNorm ----


def test_layer_norm_module(device):
    ln = nn.LayerNorm(4, device=device)
    assert ln.weight.tolist() == [1.0] * 4 and ln.bias.tolist() == [0.0] * 4
    x = torch.tensor([[1.0, 2.0, 3.0, 4.0], [2.0, 2.0, 2.0, 2.0]], device=device)
    y = ln(x)
    np.testing.assert_allclose(
        y.detach().cpu().numpy()[0], (np.arange(1, 5) - 2.5) / np.sqrt(1.25 + 1e-5), rtol=1e-6
    )
    assert y.detach().cpu().numpy()[1].tolist() == [0.0] * 4
    y.sum().backward()
    assert ln.weight.grad is not None and ln.bias.grad is not None
    assert nn.LayerNorm(4, bias=False).bias is None
    no_affine = nn.LayerNorm([2, 4], elementwise_affine=False)
    assert no_affine.weight is None and list(no_affine.parameters()) == []
    assert no_affine.normalized_shape == (2, 4)
    assert [n for n, _ in nn.LayerNorm(3).named_parameters()] == ["weight", "bias"]
    raises(
        RuntimeError,
        "Given normalized_shape=[3], expected input with shape [*, 3], but got input of size[2, 4]",
        lambda: nn.LayerNorm(3)(torch.ones(2, 4)),
    )


def test_layer_norm_mixed_dtypes_on_the_cpu():
    raises(
        RuntimeError,
        "mixed dtype (CPU): expect parameter to have scalar type of Float",
        lambda: F.layer_norm(torch.ones(2, 3), (3,), torch.ones(3, dtype=torch.float64)),
    )
    # torch's mixed type: a bfloat16 or float16 input with float32 parameters (what
    # nn.LayerNorm meets in a CPU autocast region), computed in float32 and rounded once
    g = torch.Generator().manual_seed(0)
    x, w, b = (torch.randn(*s, generator=g) for s in ((4, 6), (6,), (6,)))
    for low in (torch.bfloat16, torch.float16):
        y = F.layer_norm(x.to(low), (6,), w, b)
        assert y.dtype == low
        assert torch.equal(y, F.layer_norm(x.to(low).float(), (6,), w, b).to(low))
        assert F.layer_norm(x.to(low), (6,), None, b).dtype == low
        raises(
            RuntimeError,
            "mixed dtype (CPU): expect parameter to have scalar type of Float",
            lambda low=low: F.layer_norm(x.to(low), (6,), w, b.to(low)),
        )
    xl = x.to(torch.bfloat16).requires_grad_()
    wl = w.clone().requires_grad_()
    F.layer_norm(xl, (6,), wl, b).sum().backward()
    assert xl.grad.dtype == torch.bfloat16 and wl.grad.dtype == torch.float32
    raises(
        RuntimeError,
        "mixed dtype (CPU): all inputs must share same datatype.",
        lambda: F.layer_norm(x.double(), (6,), w, b),
    )
    raises(
        RuntimeError,
        "expected scalar type BFloat16 but found Float",
        lambda: F.layer_norm(x.to(torch.bfloat16), (6,), w.to(torch.bfloat16), b),
    )


# ---- activations, Dropout, Flatten ----


def test_activation_modules_call_their_functions(device):
    x = torch.linspace(-3, 3, 13, device=device)
    pairs = [
        (nn.GELU(), F.gelu(x)),
        (nn.GELU("tanh"), F.gelu(x, approximate="tanh")),
        (nn.SiLU(), F.silu(x)),
        (nn.Mish(), F.mish(x)),
        (nn.Softplus(2.0, 3.0), F.softplus(x, 2.0, 3.0)),
        (nn.ELU(0.5), F.elu(x, 0.5)),
        (nn.LeakyReLU(0.1), F.leaky_relu(x, 0.1)),
        (nn.Hardtanh(-2.0, 2.5), F.hardtanh(x, -2.0, 2.5)),
        (nn.ReLU6(), F.relu6(x)),
        (nn.Tanh(), x.tanh()),
    ]
    for m, expected in pairs:
        assert torch.equal(m(x), expected), m
    y = x.clone()
    assert nn.ELU(inplace=True)(y) is y


def test_activation_module_checks():
    raises(
        AssertionError, "max_val (1) must be greater than min_val (2)", lambda: nn.Hardtanh(2, 1)
    )
    with pytest.warns(FutureWarning, match="keyword argument `min_value` is deprecated"):
        m = nn.Hardtanh(min_value=-2.0)
    assert m.min_val == -2.0
    raises(
        RuntimeError,
        "approximate argument must be either none or tanh.",
        lambda: nn.GELU("foo")(torch.ones(2)),
    )


def test_dropout_train_and_eval(device):
    torch.manual_seed(0)
    drop = nn.Dropout(0.25)
    x = torch.ones(1000, device=device)
    y = drop(x)
    kept = (y != 0).sum().item()
    assert 650 < kept < 850
    assert set(np.unique(y.cpu().numpy()).tolist()) <= {0.0, float(np.float32(1 / 0.75))}
    drop.eval()
    assert drop(x) is x
    drop.train()
    assert not torch.equal(drop(x), x)
    assert nn.Dropout(0.0)(x) is x
    raises(
        ValueError,
        "dropout probability has to be between 0 and 1, but got 1.5",
        lambda: nn.Dropout(1.5),
    )


def test_flatten_unflatten(device):
    x = torch.arange(24.0, device=device).view(2, 3, 4)
    assert nn.Flatten()(x).shape == (2, 12)
    assert nn.Flatten(0, 1)(x).shape == (6, 4)
    assert nn.Unflatten(1, (3, 1))(nn.Flatten(1, 1)(x)).shape == (2, 3, 1, 4)
    assert torch.equal(nn.Unflatten(1, (3, 4))(nn.Flatten()(x)), x)
    raises(
        IndexError,
        "Dimension out of range (expected to be in range of [-1, 0], but got 1)",
        lambda: nn.Flatten()(torch.ones(2)),
    )
    raises(
        RuntimeError,
        "unflatten: Provided sizes [2, 2] don't multiply up to the size of dim 1 (3) in the "
        "input tensor",
        lambda: nn.Unflatten(1, (2, 2))(torch.ones(2, 3)),
    )
    raises(
        TypeError,
        "unflattened_size must be tuple of tuples, but found element of type int at pos 0",
        lambda: nn.Unflatten("a", (2, 2)),
    )
    raises(
        TypeError,
        "unflattened_size must be a tuple of ints, but found type int",
        lambda: nn.Unflatten(1, 2),
    )
    raises(TypeError, "invalid argument type for dim parameter", lambda: nn.Unflatten(1.0, (2,)))


# ---- LazyLinear ----


def test_lazy_linear_becomes_linear(device):
    torch.manual_seed(0)
    m = nn.LazyLinear(3, device=device)
    w = m.weight
    assert isinstance(w, nn.UninitializedParameter) and repr(w) == "<UninitializedParameter>"
    out = m(torch.ones(2, 5, device=device))
    assert out.shape == (2, 3) and out.grad_fn.name() == "AddmmBackward0"
    assert type(m) is nn.Linear and m.in_features == 5
    assert repr(m) == "Linear(in_features=5, out_features=3, bias=True)"
    assert m.weight is w and type(w) is nn.Parameter  # materialised in place
    assert w.shape == (3, 5) and w.device.type == device
    bound = 1 / np.sqrt(5)
    assert w.abs().max().item() <= bound and m.bias.abs().max().item() <= bound
    nb = nn.LazyLinear(2, bias=False)
    nb(torch.ones(4, 3))
    assert nb.bias is None and nb.weight.shape == (2, 3)


# ---- containers ----


def test_module_dict():
    d = nn.ModuleDict({"a": nn.ReLU(), "b": nn.Linear(2, 3)})
    assert list(d.keys()) == ["a", "b"] and len(d) == 2 and "a" in d
    d["c"] = nn.Tanh()
    assert list(d) == ["a", "b", "c"]
    assert [n for n, _ in d.named_parameters()] == ["b.weight", "b.bias"]
    assert isinstance(d.pop("a"), nn.ReLU) and "a" not in d
    d.update([("e", nn.GELU()), ("f", nn.SiLU())])
    assert list(d) == ["b", "c", "e", "f"]
    del d["c"]
    assert list(d) == ["b", "e", "f"]
    assert [type(m).__name__ for m in d.values()] == ["Linear", "GELU", "SiLU"]
    assert [k for k, _ in d.items()] == ["b", "e", "f"]
    d.clear()
    assert len(d) == 0
    od = nn.ModuleDict(OrderedDict([("z", nn.ReLU()), ("a", nn.ReLU())]))
    assert list(od) == ["z", "a"]
    raises(TypeError, "int is not a Module subclass", lambda: nn.ModuleDict({"a": 1}))
    raises(
        KeyError,
        "'module name can\\'t contain \".\", got: a.b'",
        lambda: nn.ModuleDict({"a.b": nn.ReLU()}),
    )
    raises(
        TypeError,
        "ModuleDict.update should be called with an iterable of key/value pairs, but got int",
        lambda: nn.ModuleDict(5),
    )
    raises(
        ValueError,
        "ModuleDict update sequence element #0 has length 3; 2 is required",
        lambda: nn.ModuleDict([("a", nn.ReLU(), 1)]),
    )
    raises(KeyError, "'x'", lambda: nn.ModuleDict()["x"])


def test_parameter_list():
    pl = nn.ParameterList([torch.ones(2), nn.Parameter(torch.zeros(3))])
    assert len(pl) == 2 and isinstance(pl[0], nn.Parameter) and pl[0].requires_grad
    pl.append(torch.ones(1))
    pl += [torch.ones(4)]
    assert [p.shape[0] for p in pl] == [2, 3, 1, 4]
    assert pl[-1].shape == (4,)
    assert [n for n, _ in pl.named_parameters()] == ["0", "1", "2", "3"]
    assert len(pl[1:3]) == 2 and type(pl[1:3]) is nn.ParameterList
    pl[0] = torch.zeros(5)
    assert pl[0].shape == (5,) and isinstance(pl[0], nn.Parameter)
    assert "0" not in dir(pl)
    raises(IndexError, "index 4 is out of range", lambda: pl[4])
    raises(
        TypeError,
        "ParameterList.extend should be called with an iterable, but got int",
        lambda: nn.ParameterList(5),
    )
    raises(
        TypeError,
        "ParameterList.extend should be called with an iterable, but got Tensor",
        lambda: nn.ParameterList(torch.ones(2)),
    )
    raises(RuntimeError, "ParameterList should not be called.", lambda: pl(1))
    m = nn.Module()
    m.params = pl
    assert len(list(m.parameters())) == 4
    assert len(copy.deepcopy(pl)) == 4


def test_parameter_dict():
    pd = nn.ParameterDict({"b": torch.ones(2), "a": nn.Parameter(torch.zeros(1))})
    assert list(pd) == ["a", "b"]  # a plain dict is added sorted, as torch
    assert isinstance(pd["b"], nn.Parameter)
    pd["c"] = torch.ones(3)
    assert list(pd.keys()) == ["a", "b", "c"] and len(pd) == 3 and "c" in pd
    assert [n for n, _ in pd.named_parameters()] == ["a", "b", "c"]
    assert pd.get("z") is None and pd.get("a") is pd["a"]
    assert pd.setdefault("d", torch.ones(1)).shape == (1,)
    assert pd.pop("d").shape == (1,) and "d" not in pd
    k, v = pd.popitem()
    assert k == "c" and v.shape == (3,)
    od = nn.ParameterDict(OrderedDict([("z", torch.ones(1)), ("y", torch.ones(1))]))
    assert list(od) == ["z", "y"]
    merged = pd | od
    assert list(merged) == ["a", "b", "z", "y"] and list(pd) == ["a", "b"]
    assert list(pd.copy()) == ["a", "b"]
    assert list(pd.fromkeys(["p", "q"])) == ["p", "q"]
    del pd["a"]
    assert list(pd) == ["b"]
    pd.clear()
    assert len(pd) == 0
    raises(
        TypeError,
        "Index given to ParameterDict cannot be used as a key as it is not a string (type is "
        "'int'). Open an issue on github if you need non-string keys.",
        lambda: pd[1],
    )
    raises(
        TypeError,
        "ParametersDict.update should be called with an iterable of key/value pairs, but got int",
        lambda: nn.ParameterDict(5),
    )
    raises(RuntimeError, "ParameterDict should not be called.", lambda: od(1))


# ---- loss modules ----


def test_loss_modules(device):
    x = torch.tensor([[0.2, -1.5, 3.0], [1.0, 0.5, -0.3]], device=device)
    t = torch.tensor([[0.0, 1.0, 1.0], [0.5, 0.0, 1.0]], device=device)
    p = x.sigmoid()
    assert torch.equal(nn.SmoothL1Loss(beta=0.5)(x, t), F.smooth_l1_loss(x, t, beta=0.5))
    assert torch.equal(
        nn.HuberLoss(reduction="sum", delta=2.0)(x, t),
        F.huber_loss(x, t, reduction="sum", delta=2.0),
    )
    w = torch.tensor([1.0, 2.0, 0.5], device=device)
    assert torch.equal(nn.BCELoss(weight=w)(p, t), F.binary_cross_entropy(p, t, weight=w))
    bce = nn.BCEWithLogitsLoss(weight=w, pos_weight=w * 2, reduction="none")
    assert torch.equal(
        bce(x, t), F.binary_cross_entropy_with_logits(x, t, w, pos_weight=w * 2, reduction="none")
    )
    assert [n for n, _ in bce.named_buffers()] == ["weight", "pos_weight"]
    # the logits form agrees with sigmoid + BCELoss
    np.testing.assert_allclose(
        nn.BCEWithLogitsLoss()(x, t).item(), nn.BCELoss()(p, t).item(), rtol=1e-6
    )
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(UserWarning, match="size_average and reduce args will be deprecated"):
            nn.SmoothL1Loss(size_average=False)


# ---- MultiheadAttention ----


def test_multihead_attention_module(device):
    torch.manual_seed(0)
    m = nn.MultiheadAttention(8, 2, device=device)
    assert repr(m) == (
        "MultiheadAttention(\n"
        "  (out_proj): NonDynamicallyQuantizableLinear(in_features=8, out_features=8, "
        "bias=True)\n)"
    )
    assert [n for n, _ in m.named_parameters()] == [
        "in_proj_weight",
        "in_proj_bias",
        "out_proj.weight",
        "out_proj.bias",
    ]
    assert m.in_proj_bias.abs().sum().item() == 0 and m.out_proj.bias.abs().sum().item() == 0
    x = torch.randn(5, 3, 8, device=device)
    out, w = m(x, x, x)
    assert out.shape == (5, 3, 8) and w.shape == (3, 5, 5)
    np.testing.assert_allclose(w.sum(-1).detach().cpu().numpy(), np.ones((3, 5)), rtol=1e-5)
    out2, none = m(x, x, x, need_weights=False)
    assert none is None
    np.testing.assert_allclose(out2.detach().cpu().numpy(), out.detach().cpu().numpy(), atol=1e-5)
    _, per_head = m(x, x, x, average_attn_weights=False)
    assert per_head.shape == (3, 2, 5, 5)
    bf = nn.MultiheadAttention(8, 2, batch_first=True, device=device)
    bf.load_state_dict(m.state_dict())
    out_bf, _ = bf(x.transpose(0, 1), x.transpose(0, 1), x.transpose(0, 1))
    np.testing.assert_allclose(
        out_bf.transpose(0, 1).detach().cpu().numpy(), out.detach().cpu().numpy(), atol=1e-6
    )
    out.sum().backward()
    assert m.in_proj_weight.grad is not None and m.out_proj.weight.grad is not None


def test_multihead_attention_options():
    m = nn.MultiheadAttention(4, 2, kdim=3, vdim=5, add_bias_kv=True, add_zero_attn=True)
    assert [n for n, _ in m.named_parameters()] == [
        "q_proj_weight",
        "k_proj_weight",
        "v_proj_weight",
        "in_proj_bias",
        "bias_k",
        "bias_v",
        "out_proj.weight",
        "out_proj.bias",
    ]
    q, k, v = torch.randn(2, 1, 4), torch.randn(3, 1, 3), torch.randn(3, 1, 5)
    out, w = m(q, k, v)
    assert out.shape == (2, 1, 4) and w.shape == (1, 2, 5)  # 3 keys + bias_k + a zero key
    nb = nn.MultiheadAttention(4, 1, bias=False)
    assert nb.in_proj_bias is None and nb.out_proj.bias is None
    raises(
        AssertionError,
        "embed_dim must be divisible by num_heads",
        lambda: nn.MultiheadAttention(6, 4),
    )
    raises(
        ValueError,
        "embed_dim and num_heads must be greater than 0, got embed_dim=0 and num_heads=2 instead",
        lambda: nn.MultiheadAttention(0, 2),
    )
