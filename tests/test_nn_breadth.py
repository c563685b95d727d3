"""The breadth of nn.functional and nn (activations, distances, rms / local response norms,
divergence, likelihood, margin and embedding losses, shuffles, bilinear, padding modules,
Fold / Unfold) against torch 2.11's values, gradients, errors and module reprs recorded in
nn_breadth_expected.json (cases in nn_breadth_cases.py), on every device, in float64 and
float32; gradcheck in float64; half precision forward; in-place forms, rrelu's training
slopes, PReLU's parameters, the legacy size_average / reduce arguments."""

from __future__ import annotations

import json
import pathlib
import warnings

import numpy as np
import pytest

import cudalite as torch
from _recorded_nn import check_values_and_gradients, on_device
from cudalite import nn
from cudalite.autograd import gradcheck
from cudalite.nn import functional as F
from nn_breadth_cases import ERROR_CASES, REPR_CASES, VALUE_CASES, evaluate, inputs, run

EXPECTED = json.loads((pathlib.Path(__file__).parent / "nn_breadth_expected.json").read_text())


@pytest.mark.parametrize("name", [n for n, _ in VALUE_CASES])
@pytest.mark.parametrize("dtype", [torch.float64, torch.float32])
def test_values_and_gradients_match_torch(name, dtype, device):
    expr = dict(VALUE_CASES)[name]
    exp = EXPECTED["values"][name]
    check_values_and_gradients(torch, run, expr, exp, dtype, device)


# torch's CUDA kernels' names in their dtype errors (the recorded messages are the CPU's)
CUDA_NAMES = {
    '"elu_cpu"': '"elu_cuda"',
    '"hardsigmoid_cpu"': '"hardsigmoid_cuda"',
    '"threshold_cpu"': '"threshold_cuda"',
    '"adaptive_max_pool3d_cpu"': '"adaptive_max_pool3d_cuda"',
    '"leaky_relu_cpu"': '"leaky_relu_cuda"',
    "torch.LongTensor{}": "torch.cuda.LongTensor{}",
    "got torch.DoubleTensor instead": "got torch.cuda.DoubleTensor instead",
}


@pytest.mark.parametrize("expr", ERROR_CASES)
def test_errors_match_torch(expr, device):
    etype, msg = EXPECTED["errors"][expr]
    msg = on_device(msg, CUDA_NAMES, device)
    env = inputs(torch, torch.float64, device)
    with pytest.raises(Exception) as e, warnings.catch_warnings():  # noqa: PT011
        warnings.simplefilter("ignore")  # TransformerEncoder's nested-tensor warning
        evaluate(torch, expr, env)
    assert type(e.value).__name__ == etype
    assert str(e.value) == msg.replace("torch.", "cudalite.")


@pytest.mark.parametrize("expr", REPR_CASES)
def test_module_reprs_match_torch(expr):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # TransformerEncoder's nested-tensor warning
        assert repr(evaluate(torch, expr, {})) == EXPECTED["reprs"][expr]


# gradcheck (finite differences) in float64, away from the kinks of the piecewise functions
GRADCHECK = [
    "F.celu(x, alpha=0.7)",
    "F.selu(x)",
    "F.glu(x, 0)",
    "F.hardshrink(x, 0.5)",
    "F.softshrink(x, 0.5)",
    "F.hardsigmoid(x * 2)",
    "F.hardswish(x * 2)",
    "F.logsigmoid(x)",
    "F.softmin(x, 1)",
    "F.softsign(x)",
    "F.tanhshrink(x)",
    "F.threshold(x, 0.1, -1.0)",
    "F.prelu(x, y[0, :1])",
    "F.prelu(x, y[1])",
    "F.normalize(x, dim=0)",
    "F.cosine_similarity(x, y)",
    "F.pairwise_distance(x, y, p=3.0)",
    "F.pdist(x)",
    "F.pdist(y.t(), p=1.5)",
    "F.rms_norm(x, (3,), y[0])",
    "F.local_response_norm(x.unsqueeze(0), 2, alpha=0.5)",
    "F.kl_div(x, y.softmax(1), reduction='batchmean')",
    "F.kl_div(x, y, log_target=True, reduction='sum')",
    "F.poisson_nll_loss(x, y.abs(), full=True)",
    "F.poisson_nll_loss(x.abs(), y.abs(), log_input=False)",
    "F.gaussian_nll_loss(x, y, (x * y).abs() + 0.1)",
    "F.margin_ranking_loss(x, y, M.sign(x - y * 0.3))",
    "F.soft_margin_loss(x, M.sign(y).detach())",
    "F.multilabel_soft_margin_loss(x, y.sigmoid())",
    "F.multi_margin_loss(x, M.tensor([2, 0], device=x.device), p=2)",
    "F.multilabel_margin_loss(x, M.tensor([[2, -1, 0], [0, 1, -1]], device=x.device))",
    "F.cosine_embedding_loss(x, y, M.tensor([1.0, -1.0], device=x.device))",
    "F.triplet_margin_loss(x[:1], y[:1], x[1:], margin=4.0, swap=True)",
    "F.pixel_shuffle(M.cat([x, y]).reshape(1, 4, 1, 3), 2)",
    "F.channel_shuffle(M.cat([x, y]).reshape(1, 4, 3), 2)",
    "F.bilinear(x, y, M.cat([x, y]).reshape(2, 3, 2)[:, :, :1].expand(2, 3, 3), y[0, :2])",
    "F.max_pool3d(M.cat([x, y]).reshape(1, 1, 2, 2, 3), (1, 2, 2), 1)",
    "F.avg_pool3d(M.cat([x, y]).reshape(1, 2, 3, 2), 2, 1, 1, count_include_pad=False)",
    "F.adaptive_avg_pool3d(M.cat([x, y]).reshape(1, 1, 2, 2, 3), (1, 2, 2))",
    "F.adaptive_max_pool3d(M.cat([x, y]).reshape(1, 2, 2, 3), (2, 1, 2))",
    "F.max_unpool2d(x.reshape(1, 1, 2, 3), M.tensor([[[[1, 3, 4], [7, 9, 10]]]], "
    "device=x.device), 2)",
    "F.lp_pool2d(x.abs().reshape(1, 1, 2, 3) + 0.2, 2.0, (2, 2), 1)",
    "F.lp_pool1d(y.abs() + 0.2, 3.0, 2)",
    "F.embedding_bag(M.tensor([0, 2, 1, 2], device=x.device), x.t(), "
    "M.tensor([0, 1], device=x.device), per_sample_weights=y.reshape(-1)[:4], mode='sum')",
    "F.embedding_bag(M.tensor([[0, 2], [1, 2]], device=x.device), x.t(), mode='max')",
    "F.embedding_bag(M.tensor([[0, 2], [1, 2]], device=x.device), x.t(), padding_idx=1)",
    "F.grid_sample(x.reshape(1, 1, 2, 3), F.affine_grid(y[None], (1, 1, 3, 2), False) * 0.7, "
    "align_corners=False)",
    "F.grid_sample(x.reshape(1, 1, 2, 3), F.affine_grid(y[None], (1, 1, 3, 2), True) * 0.9, "
    "padding_mode='reflection', align_corners=True)",
    "F.affine_grid(x.reshape(1, 2, 3), (1, 1, 2, 3), align_corners=False)",
]


@pytest.mark.parametrize("expr", GRADCHECK)
def test_gradcheck(expr, device):
    x = torch.tensor(
        [[0.3, -1.2, 2.1], [-0.4, 0.9, 1.7]], dtype=torch.float64, device=device, requires_grad=True
    )
    y = torch.tensor(
        [[1.1, 0.2, -0.6], [0.5, -2.0, 0.8]], dtype=torch.float64, device=device, requires_grad=True
    )

    def fn(x, y):
        return eval(expr, {"M": torch, "F": F, "x": x, "y": y})  # noqa: S307

    assert gradcheck(fn, (x, y))


HALF = [
    "F.celu(x)",
    "F.selu(x)",
    "F.glu(x, 0)",
    "F.hardshrink(x)",
    "F.softshrink(x)",
    "F.hardsigmoid(x)",
    "F.hardswish(x)",
    "F.logsigmoid(x)",
    "F.softsign(x)",
    "F.tanhshrink(x)",
    "F.threshold(x, 0.5, 2.0)",
    "F.rrelu(x)",
    "F.normalize(x)",
    "F.rms_norm(x, (3,))",
    "F.pixel_shuffle(x.reshape(1, 4, 1, 3), 2)",
    "F.max_pool3d(x.reshape(1, 2, 2, 3), (1, 2, 2), 1, return_indices=True)[0]",
    "F.avg_pool3d(x.reshape(1, 2, 2, 3), 2, 1, 1)",
    "F.adaptive_avg_pool3d(x.reshape(1, 2, 2, 3), (1, 1, 2))",
    "F.adaptive_max_pool3d(x.reshape(1, 2, 2, 3), (1, 2, 2))",
]


@pytest.mark.parametrize("expr", HALF)
@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_half_precision_forward(expr, dtype, device):
    x64 = torch.tensor(
        [[0.3, -1.2, 2.1], [-0.4, 0.9, 1.7], [3.5, -3.2, 0.6], [-0.1, 0.7, -2.6]],
        dtype=torch.float64,
        device=device,
    )
    ref = eval(expr, {"M": torch, "F": F, "x": x64})  # noqa: S307
    out = eval(expr, {"M": torch, "F": F, "x": x64.to(dtype)})  # noqa: S307
    assert out.dtype == dtype
    tol = 1e-2 if dtype == torch.float16 else 4e-2
    np.testing.assert_allclose(out.double().cpu().numpy(), ref.cpu().numpy(), rtol=tol, atol=tol)


def test_inplace_forms_write_their_input(device):
    base = torch.tensor([[0.3, -1.2, 2.1], [-0.4, 0.9, 1.7]], dtype=torch.float64, device=device)
    for inplace, ref in [
        (F.celu_, F.celu),
        (lambda t: F.celu(t, 0.5, True), lambda t: F.celu(t, 0.5)),
        (F.selu_, F.selu),
        (lambda t: F.threshold_(t, 0.5, -3.0), lambda t: F.threshold(t, 0.5, -3.0)),
        (lambda t: F.hardswish(t, True), F.hardswish),
        (lambda t: F.hardsigmoid(t, True), F.hardsigmoid),
        (F.rrelu_, F.rrelu),
        (lambda t: nn.CELU(inplace=True)(t), F.celu),
        (lambda t: nn.Threshold(0.0, 5.0, inplace=True)(t), lambda t: F.threshold(t, 0.0, 5.0)),
    ]:
        x = base.clone()
        out = inplace(x)
        assert out is x
        np.testing.assert_allclose(x.cpu().numpy(), ref(base).cpu().numpy())


def test_rrelu_training_draws_slopes_between_the_bounds(device):
    torch.manual_seed(0)
    x = -torch.rand(4000, dtype=torch.float64, device=device) - 0.5
    x = torch.cat([x, torch.rand(10, dtype=torch.float64, device=device)])
    x.requires_grad_(True)
    y = F.rrelu(x, 0.1, 0.3, training=True)
    slopes = (y / x).detach().cpu().numpy()
    neg, pos = slopes[:4000], slopes[4000:]
    assert neg.min() >= 0.1 and neg.max() <= 0.3
    assert neg.std() > 0.03  # random, not the mean slope
    assert abs(neg.mean() - 0.2) < 0.01
    np.testing.assert_array_equal(pos, 1.0)
    y.sum().backward()  # the gradient is the drawn slope
    np.testing.assert_allclose(x.grad.cpu().numpy(), slopes, rtol=1e-12)
    m = nn.RReLU(0.1, 0.3)
    m.eval()
    np.testing.assert_allclose((m(x) / x).detach().cpu().numpy()[:4000], 0.2, rtol=1e-12)


def test_prelu_module_parameters_and_gradient(device):
    m = nn.PReLU(3, init=0.1).to(device)
    assert [tuple(p.shape) for p in m.parameters()] == [(3,)]
    np.testing.assert_allclose(m.weight.detach().cpu().numpy(), 0.1)
    x = torch.tensor([[-1.0, 2.0, -3.0]], device=device)
    m(x).sum().backward()
    np.testing.assert_allclose(m.weight.grad.cpu().numpy(), [-1.0, 0.0, -3.0])


def test_rmsnorm_module_default_eps_is_the_dtypes_epsilon(device):
    m = nn.RMSNorm(3).to(device)
    assert m.eps is None
    x = torch.tensor([[1e-4, -2e-4, 3e-4]], device=device)
    eps = torch.finfo(torch.float32).eps
    ref = x / torch.sqrt((x * x).mean(-1, keepdim=True) + eps)
    np.testing.assert_allclose(m(x).detach().cpu().numpy(), ref.cpu().numpy(), rtol=1e-6)
    assert [n for n, _ in nn.RMSNorm(3, elementwise_affine=False).named_parameters()] == []


def test_bilinear_module_shapes_and_init(device):
    torch.manual_seed(0)
    m = nn.Bilinear(3, 4, 5).to(device)
    assert tuple(m.weight.shape) == (5, 3, 4) and tuple(m.bias.shape) == (5,)
    assert m.weight.abs().max().item() <= 1 / 3**0.5
    y = m(torch.randn(7, 3, device=device), torch.randn(7, 4, device=device))
    assert tuple(y.shape) == (7, 5)
    assert nn.Bilinear(3, 4, 5, bias=False).bias is None


def test_loss_modules_match_functional(device):
    env = inputs(torch, torch.float64, device)
    a, b, x2, y2, z2 = env["a"], env["b"], env["x2"], env["y2"], env["z2"]
    sgn, sgn4, cls, ml, pos = env["sgn"], env["sgn4"], env["cls"], env["ml"], env["pos"]
    pairs = [
        (nn.KLDivLoss(reduction="sum")(a, pos), F.kl_div(a, pos, reduction="sum")),
        (nn.PoissonNLLLoss(full=True)(a, pos), F.poisson_nll_loss(a, pos, full=True)),
        (nn.GaussianNLLLoss(full=True)(a, b, pos), F.gaussian_nll_loss(a, b, pos, full=True)),
        (nn.MarginRankingLoss(0.3)(a, b, sgn), F.margin_ranking_loss(a, b, sgn, 0.3)),
        (nn.HingeEmbeddingLoss(2.0)(a, sgn), F.hinge_embedding_loss(a, sgn, 2.0)),
        (nn.SoftMarginLoss()(a, sgn), F.soft_margin_loss(a, sgn)),
        (
            nn.MultiLabelSoftMarginLoss()(x2, env["bin"]),
            F.multilabel_soft_margin_loss(x2, env["bin"]),
        ),
        (nn.MultiLabelMarginLoss()(x2, ml), F.multilabel_margin_loss(x2, ml)),
        (nn.MultiMarginLoss(p=2)(x2, cls), F.multi_margin_loss(x2, cls, p=2)),
        (nn.CosineEmbeddingLoss(0.1)(x2, y2, sgn4), F.cosine_embedding_loss(x2, y2, sgn4, 0.1)),
        (nn.TripletMarginLoss(swap=True)(x2, y2, z2), F.triplet_margin_loss(x2, y2, z2, swap=True)),
        (
            nn.TripletMarginWithDistanceLoss(margin=2.0)(x2, y2, z2),
            F.triplet_margin_with_distance_loss(x2, y2, z2, margin=2.0),
        ),
    ]
    for m, f in pairs:
        assert m.item() == pytest.approx(f.item(), rel=1e-12)


def test_legacy_size_average_and_reduce(device):
    env = inputs(torch, torch.float64, device)
    a, b, sgn = env["a"], env["b"], env["sgn"]
    with pytest.warns(UserWarning, match="size_average and reduce args will be deprecated"):
        none = F.margin_ranking_loss(a, b, sgn, reduce=False)
    assert tuple(none.shape) == (2, 3, 4)
    with pytest.warns(UserWarning, match="reduction='sum'"):
        m = nn.SoftMarginLoss(size_average=False)
    assert m.reduction == "sum"
    with pytest.warns(UserWarning, match="reduction='none'"):
        k = F.kl_div(a, b.softmax(-1), reduce=False)
    assert tuple(k.shape) == (2, 3, 4)


def test_kl_div_mean_warns_as_torch(device):
    env = inputs(torch, torch.float64, device)
    with pytest.warns(UserWarning, match="'batchmean' divides only by the batch size"):
        F.kl_div(env["a"], env["prob"])


def test_functional_names_exist():
    for name in [
        "celu",
        "celu_",
        "selu",
        "selu_",
        "glu",
        "hardshrink",
        "softshrink",
        "hardsigmoid",
        "hardswish",
        "logsigmoid",
        "softmin",
        "softsign",
        "tanhshrink",
        "threshold",
        "threshold_",
        "rrelu",
        "rrelu_",
        "prelu",
        "normalize",
        "cosine_similarity",
        "pairwise_distance",
        "pdist",
        "rms_norm",
        "local_response_norm",
        "kl_div",
        "poisson_nll_loss",
        "gaussian_nll_loss",
        "margin_ranking_loss",
        "hinge_embedding_loss",
        "soft_margin_loss",
        "multilabel_soft_margin_loss",
        "multilabel_margin_loss",
        "multi_margin_loss",
        "cosine_embedding_loss",
        "triplet_margin_loss",
        "triplet_margin_with_distance_loss",
        "pixel_shuffle",
        "pixel_unshuffle",
        "channel_shuffle",
        "bilinear",
    ]:
        assert callable(getattr(F, name)) and name in F.__all__


def test_transformer_encoder_warns_as_torch_and_clones_its_layer():
    layer = nn.TransformerEncoderLayer(4, 2, 8)
    with pytest.warns(UserWarning, match=r"self_attn.batch_first was not True\(use batch_first"):
        enc = nn.TransformerEncoder(layer, 2)
    assert enc.layers[0] is not layer and enc.layers[0] is not enc.layers[1]
    w0, w1 = enc.layers[0].linear1.weight, enc.layers[1].linear1.weight
    assert w0 is not w1 and bool((w0 == w1).all())  # clones start from the same parameters
    assert len(list(enc.parameters())) == 2 * len(list(layer.parameters()))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        nn.TransformerEncoder(nn.TransformerEncoderLayer(4, 2, 8, batch_first=True), 1)


def test_transformer_trains(device):
    torch.manual_seed(0)
    model = nn.Transformer(8, 2, 1, 1, 16, dropout=0.1, batch_first=True).to(device)
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    src = torch.randn(3, 5, 8, device=device)
    tgt = torch.randn(3, 4, 8, device=device)
    mask = nn.Transformer.generate_square_subsequent_mask(4, device=device)
    losses = []
    for _ in range(15):
        opt.zero_grad()
        loss = F.mse_loss(model(src, tgt, tgt_mask=mask), tgt)
        loss.backward()
        opt.step()
        losses.append(loss.item())
    assert losses[-1] < losses[0]
    assert all(p.grad is not None for p in model.parameters())


def test_gumbel_softmax_samples_and_straight_through_gradient(device):
    torch.manual_seed(0)
    logits = torch.tensor(
        [[2.0, 0.5, -1.0], [0.0, 0.0, 3.0]], dtype=torch.float64, device=device
    ).requires_grad_(True)
    soft = F.gumbel_softmax(logits, tau=0.5)
    np.testing.assert_allclose(soft.sum(-1).detach().cpu().numpy(), 1.0, rtol=1e-12)
    hard = F.gumbel_softmax(logits, hard=True)
    h = hard.detach().cpu().numpy()
    assert set(np.unique(h)) <= {0.0, 1.0} and (h.sum(-1) == 1).all()
    (hard * torch.arange(3.0, dtype=torch.float64, device=device)).sum().backward()
    assert logits.grad is not None and logits.grad.abs().sum().item() > 0
    with pytest.warns(UserWarning, match="`eps` parameter is deprecated"):
        F.gumbel_softmax(logits.detach(), eps=1e-3)
    # the noise's argmax follows the logits: a dominant class is nearly always drawn
    draws = F.gumbel_softmax(
        torch.tensor([[8.0, 0.0, 0.0]], device=device).expand(200, 3), hard=True
    )
    assert draws[:, 0].sum().item() >= 195


def test_alpha_dropout_keeps_mean_and_variance(device):
    torch.manual_seed(0)
    x = torch.randn(200000, device=device)
    for fn in (F.alpha_dropout, lambda t, p, tr: F.feature_alpha_dropout(t.view(-1, 40), p, tr)):
        y = fn(x, 0.2, True).reshape(-1)
        assert abs(y.mean().item()) < 0.02 and abs(y.std().item() - 1) < 0.02
        assert fn(x, 0.2, False).reshape(-1).equal(x)
    m = nn.AlphaDropout(0.5)
    assert m.eval()(x) is x


def test_upsample_deprecated_names_warn(device):
    x = torch.arange(4.0, device=device).view(1, 1, 2, 2)
    with pytest.warns(UserWarning, match="upsample_nearest` is deprecated"):
        y = F.upsample_nearest(x, scale_factor=2)
    assert y.equal(F.interpolate(x, scale_factor=2))
    with pytest.warns(UserWarning, match="upsample_bilinear` is deprecated"):
        y = F.upsample_bilinear(x, size=3)
    assert y.equal(F.interpolate(x, size=3, mode="bilinear", align_corners=True))


def test_affine_grid_and_grid_sample_warn_without_align_corners(device):
    theta = torch.tensor([[[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]]], device=device)
    with pytest.warns(UserWarning, match="Default grid_sample and affine_grid behavior"):
        grid = F.affine_grid(theta, (1, 1, 2, 3))
    x = torch.arange(6.0, device=device).view(1, 1, 2, 3)
    with pytest.warns(UserWarning, match="Default grid_sample and affine_grid behavior"):
        y = F.grid_sample(x, grid)
    np.testing.assert_allclose(y.cpu().numpy(), x.cpu().numpy(), rtol=1e-6)  # the identity
