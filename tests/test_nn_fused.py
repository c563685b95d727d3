"""The fused nn kernels (layer_norm, softmax/log_softmax, nll_loss/cross_entropy, gelu):
values and gradients against float64 NumPy references, on every device, over rows of 1, 3,
384, 1000 and 4097 elements (a warp per row up to 1024 on CUDA, a block beyond), other
dims, non-contiguous inputs, missing weight/bias, half types against float32, gradcheck and
gradgradcheck in float64; and TF32 in float32 matmuls on CUDA."""

from __future__ import annotations

import math

import numpy as np
import pytest

import cudalite as torch
from cudalite.autograd import gradcheck, gradgradcheck
from cudalite.nn import functional as F

ROWS = [1, 3, 384, 1000, 4097]
HALF = [torch.float16, torch.bfloat16]
TOL = {torch.float64: 1e-10, torch.float32: 2e-5}


def rand(shape, seed, dtype=torch.float64, device="cpu", scale=1.0):
    a = np.random.default_rng(seed).standard_normal(shape) * scale
    return torch.tensor(a, dtype=dtype, device=device)


def npy(t):
    return t.detach().cpu().double().numpy()


def close(got, ref, tol):
    got = npy(got) if not isinstance(got, np.ndarray) else got
    assert got.shape == ref.shape
    np.testing.assert_allclose(got, ref, rtol=tol, atol=tol)


# ---- layer_norm ----


def ln_ref(x, k, w=None, b=None, eps=1e-5):
    """Forward and the gradients for an output gradient g, in float64 NumPy."""
    axes = tuple(range(x.ndim - k, x.ndim))
    mu = x.mean(axis=axes, keepdims=True)
    rstd = 1.0 / np.sqrt(((x - mu) ** 2).mean(axis=axes, keepdims=True) + eps)
    xhat = (x - mu) * rstd
    y = xhat * (1.0 if w is None else w) + (0.0 if b is None else b)

    def grads(g):
        n = math.prod(x.shape[x.ndim - k :])
        gw = g * (1.0 if w is None else w)
        a = gw.sum(axis=axes, keepdims=True) / n
        c = (gw * xhat).sum(axis=axes, keepdims=True) / n
        lead = tuple(range(x.ndim - k))
        return rstd * (gw - a - xhat * c), (g * xhat).sum(axis=lead), g.sum(axis=lead)

    return y, grads


@pytest.mark.parametrize("n", ROWS)
@pytest.mark.parametrize("dtype", [torch.float64, torch.float32])
@pytest.mark.parametrize("affine", ["none", "weight", "both"])
def test_layer_norm_values_and_gradients(n, dtype, affine, device):
    x = rand((5, n), 1, dtype, device, scale=3.0) + 2.0
    w = rand((n,), 2, dtype, device) if affine != "none" else None
    b = rand((n,), 3, dtype, device) if affine == "both" else None
    x.requires_grad_(True)
    for p in (w, b):
        if p is not None:
            p.requires_grad_(True)
    y = F.layer_norm(x, (n,), w, b)
    assert y.dtype == dtype and y.shape == x.shape
    assert type(y.grad_fn).__name__ == "NativeLayerNormBackward0"
    ref, grads = ln_ref(npy(x), 1, None if w is None else npy(w), None if b is None else npy(b))
    close(y, ref, TOL[dtype])
    g = rand((5, n), 4, dtype, device)
    y.backward(g)
    gx, gw, gb = grads(npy(g))
    close(x.grad, gx, TOL[dtype] * 10)
    if w is not None:
        close(w.grad, gw, TOL[dtype] * 10)
    if b is not None:
        close(b.grad, gb, TOL[dtype] * 10)


def test_layer_norm_many_rows_column_sums(device):
    # 70000 rows: the CUDA column reduction of grad_weight/grad_bias takes chunks of 69 rows
    x = rand((70000, 3), 5, torch.float32, device).requires_grad_(True)
    w = rand((3,), 6, torch.float32, device).requires_grad_(True)
    b = rand((3,), 7, torch.float32, device).requires_grad_(True)
    g = rand((70000, 3), 8, torch.float32, device)
    F.layer_norm(x, (3,), w, b).backward(g)
    _, grads = ln_ref(npy(x), 1, npy(w), npy(b))
    gx, gw, gb = grads(npy(g))
    # rows of 3 can have a tiny variance: rstd amplifies float32 rounding
    np.testing.assert_allclose(npy(x.grad), gx, rtol=1e-3, atol=1e-3)
    np.testing.assert_allclose(npy(w.grad), gw, rtol=1e-4, atol=1e-2)
    np.testing.assert_allclose(npy(b.grad), gb, rtol=1e-4, atol=1e-2)


@pytest.mark.parametrize("n", [9000, 20000])
def test_long_rows_take_wider_blocks(n, device):
    # CUDA: blocks of 512 (rows up to 16384) and 1024 threads per row
    x = rand((3, n), 45, torch.float64, device, scale=2.0).requires_grad_(True)
    w = rand((n,), 46, torch.float64, device).requires_grad_(True)
    g = rand((3, n), 47, torch.float64, device)
    y = F.layer_norm(x, (n,), w)
    ref, grads = ln_ref(npy(x), 1, npy(w))
    close(y, ref, 1e-10)
    y.backward(g)
    gx, gw, _ = grads(npy(g))
    close(x.grad, gx, 1e-9)
    close(w.grad, gw, 1e-9)
    for log in (False, True):
        x.grad = None
        y = (F.log_softmax if log else F.softmax)(x, 1)
        sref = softmax_ref(npy(x), 1, log)
        close(y, sref, 1e-12)
        y.backward(g)
        close(x.grad, softmax_grad_ref(npy(g), sref, 1, log), 1e-10)


def test_layer_norm_several_dims_and_non_contiguous(device):
    base = rand((4, 6, 5), 9, torch.float64, device)
    x = base.transpose(0, 2).requires_grad_(True)  # (5, 6, 4), not contiguous
    assert not x.is_contiguous()
    w = rand((6, 4), 10, torch.float64, device).requires_grad_(True)
    y = F.layer_norm(x, (6, 4), w)
    ref, grads = ln_ref(npy(x), 2, npy(w))
    close(y, ref, 1e-10)
    g = rand((5, 6, 4), 11, torch.float64, device)
    y.backward(g)
    gx, gw, _ = grads(npy(g))
    close(x.grad, gx, 1e-10)
    close(w.grad, gw, 1e-10)


def test_layer_norm_saved_statistics(device):
    x = rand((3, 7), 12, torch.float64, device).requires_grad_(True)
    y = F.layer_norm(x, (7,), eps=1e-3)
    a = npy(x)
    mu = a.mean(-1, keepdims=True)
    close(y.grad_fn.result1, mu, 1e-12)
    close(y.grad_fn.result2, 1 / np.sqrt(a.var(-1, keepdims=True) + 1e-3), 1e-12)
    assert y.grad_fn.next_functions[1] == (None, 0) and y.grad_fn.next_functions[2] == (None, 0)


def test_layer_norm_gradcheck_and_gradgradcheck(device):
    x = rand((3, 4), 13, torch.float64, device).requires_grad_(True)
    w = rand((4,), 14, torch.float64, device).requires_grad_(True)
    b = rand((4,), 15, torch.float64, device).requires_grad_(True)
    assert gradcheck(lambda x, w, b: F.layer_norm(x, (4,), w, b), (x, w, b))
    assert gradgradcheck(lambda x, w, b: F.layer_norm(x, (4,), w, b), (x, w, b))
    assert gradcheck(lambda x: F.layer_norm(x, (4,)), (x,))


@pytest.mark.parametrize("dtype", HALF)
@pytest.mark.parametrize("n", [3, 384, 4097])
def test_layer_norm_half_types_against_float32(dtype, n, device):
    x32 = rand((4, n), 16, torch.float32, device, scale=2.0)
    w32, b32 = rand((n,), 17, torch.float32, device), rand((n,), 18, torch.float32, device)
    g32 = rand((4, n), 19, torch.float32, device)
    outs = {}
    for dt in (torch.float32, dtype):
        x = x32.detach().to(dt).requires_grad_(True)
        w = w32.detach().to(dt).requires_grad_(True)
        b = b32.detach().to(dt).requires_grad_(True)
        y = F.layer_norm(x, (n,), w, b)
        assert y.dtype == dt
        y.backward(g32.to(dt))
        assert x.grad.dtype == dt and w.grad.dtype == dt and b.grad.dtype == dt
        outs[dt] = [npy(t) for t in (y, x.grad, w.grad, b.grad)]
    tol = 2e-2 if dtype == torch.float16 else 8e-2
    for got, ref, scale in zip(outs[dtype], outs[torch.float32], (1, 1, 4, 4), strict=True):
        np.testing.assert_allclose(got, ref, rtol=tol, atol=tol * scale)


def test_layer_norm_empty_and_no_grad(device):
    x = torch.zeros(0, 4, device=device)
    assert F.layer_norm(x, (4,)).shape == (0, 4)
    w = torch.ones(4, device=device, requires_grad=True)
    xe = torch.zeros(0, 4, device=device, requires_grad=True)
    F.layer_norm(xe, (4,), w).sum().backward()
    assert (npy(w.grad) == 0).all() and xe.grad.shape == (0, 4)
    # rows of no elements: mean 0 and rstd NaN, as torch's
    x0 = torch.zeros(2, 0, device=device, requires_grad=True)
    y = F.layer_norm(x0, (0,))
    assert y.shape == (2, 0)
    assert (npy(y.grad_fn.result1) == 0).all() and np.isnan(npy(y.grad_fn.result2)).all()
    y.sum().backward()
    assert x0.grad.shape == (2, 0)
    w = torch.ones(4, device=device, requires_grad=True)
    with torch.no_grad():
        assert F.layer_norm(torch.ones(2, 4, device=device), (4,), w).grad_fn is None


def test_layer_norm_cuda_mixed_parameter_dtype():
    if not torch.cuda.is_available():
        pytest.skip("no CUDA GPU visible")
    x32 = rand((3, 40), 20, torch.float32, "cuda")
    w = rand((40,), 21, torch.float32, "cuda").requires_grad_(True)
    x = x32.to(torch.bfloat16).requires_grad_(True)
    y = F.layer_norm(x, (40,), w)
    assert y.dtype == torch.bfloat16
    ref, grads = ln_ref(npy(x), 1, npy(w))
    np.testing.assert_allclose(npy(y), ref, rtol=3e-2, atol=3e-2)
    y.backward(torch.ones_like(y))
    assert w.grad.dtype == torch.float32 and x.grad.dtype == torch.bfloat16
    np.testing.assert_allclose(npy(w.grad), grads(np.ones((3, 40)))[1], rtol=3e-2, atol=3e-2)


# ---- softmax / log_softmax ----


def softmax_ref(x, dim, log):
    m = x.max(axis=dim, keepdims=True)
    e = np.exp(x - m)
    s = e.sum(axis=dim, keepdims=True)
    return (x - m - np.log(s)) if log else e / s


def softmax_grad_ref(g, y, dim, log):
    if log:
        return g - np.exp(y) * g.sum(axis=dim, keepdims=True)
    return y * (g - (g * y).sum(axis=dim, keepdims=True))


@pytest.mark.parametrize("n", ROWS)
@pytest.mark.parametrize("log", [False, True])
@pytest.mark.parametrize("dtype", [torch.float64, torch.float32])
def test_softmax_last_dim(n, log, dtype, device):
    x = rand((6, n), 22, dtype, device, scale=4.0).requires_grad_(True)
    fn = F.log_softmax if log else F.softmax
    y = fn(x, -1)
    assert type(y.grad_fn).__name__ == ("LogSoftmaxBackward0" if log else "SoftmaxBackward0")
    ref = softmax_ref(npy(x), -1, log)
    close(y, ref, TOL[dtype])
    g = rand((6, n), 23, dtype, device)
    y.backward(g)
    close(x.grad, softmax_grad_ref(npy(g), ref, -1, log), TOL[dtype] * 10)


@pytest.mark.parametrize("dim", [0, 1, 2])
@pytest.mark.parametrize("log", [False, True])
def test_softmax_other_dims_and_non_contiguous(dim, log, device):
    x = rand((5, 7, 3), 24, torch.float64, device).permute(2, 0, 1).requires_grad_(True)
    fn = F.log_softmax if log else F.softmax
    y = fn(x, dim)
    ref = softmax_ref(npy(x), dim, log)
    close(y, ref, 1e-12)
    g = rand(tuple(x.shape), 25, torch.float64, device)
    y.backward(g)
    close(x.grad, softmax_grad_ref(npy(g), ref, dim, log), 1e-11)


@pytest.mark.parametrize("log", [False, True])
def test_softmax_gradcheck_and_gradgradcheck(log, device):
    fn = F.log_softmax if log else F.softmax
    x = rand((3, 5), 26, torch.float64, device).requires_grad_(True)
    for dim in (0, 1):
        assert gradcheck(lambda x, dim=dim: fn(x, dim), (x,))
        assert gradgradcheck(lambda x, dim=dim: fn(x, dim), (x,))


@pytest.mark.parametrize("dtype", HALF)
@pytest.mark.parametrize("log", [False, True])
@pytest.mark.parametrize("n", [3, 1000, 4097])
def test_softmax_half_types(dtype, log, n, device):
    x32 = rand((4, n), 27, torch.float32, device, scale=3.0)
    g32 = rand((4, n), 28, torch.float32, device)
    fn = F.log_softmax if log else F.softmax
    outs = {}
    for dt in (torch.float32, dtype):
        x = x32.detach().to(dt).requires_grad_(True)
        y = fn(x, 1)
        assert y.dtype == dt
        y.backward(g32.to(dt))
        assert x.grad.dtype == dt
        outs[dt] = (npy(y), npy(x.grad))
    tol = 1e-2 if dtype == torch.float16 else 6e-2
    np.testing.assert_allclose(outs[dtype][0], outs[torch.float32][0], rtol=tol, atol=tol)
    np.testing.assert_allclose(outs[dtype][1], outs[torch.float32][1], rtol=tol, atol=tol * 4)
    # dtype=: the input converted first, the result (and the gradient's path) in float32
    x = x32.detach().to(dtype).requires_grad_(True)
    y = fn(x, 1, dtype=torch.float32)
    assert y.dtype == torch.float32
    close(y, softmax_ref(npy(x), 1, log), 1e-5)
    y.sum().backward()
    assert x.grad.dtype == dtype


@pytest.mark.parametrize("n", [50304, 70001])
@pytest.mark.parametrize("log", [False, True])
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_softmax_long_rows(n, log, dtype, device):
    """Rows as long as GPT-2's vocabulary: on CUDA staged in shared memory when they fit (a
    50304-element row), read from global memory when not (70001 float32), from 16-byte
    aligned rows and from rows that start anywhere (a view from column 1)."""
    base = rand((3, n + 1), 29, torch.float32, device, scale=4.0).to(dtype)
    fn = F.log_softmax if log else F.softmax
    tol = 2e-5 if dtype == torch.float32 else 3e-2
    for x in (base[:, :n], base[:, 1:]):
        x = x.detach().requires_grad_(True)
        y = fn(x, -1)
        ref = softmax_ref(npy(x), -1, log)
        np.testing.assert_allclose(npy(y), ref, rtol=tol, atol=tol / (1 if log else n))
        g = rand((3, n), 30, torch.float32, device).to(dtype)
        y.backward(g)
        gref = softmax_grad_ref(npy(g), npy(y), -1, log)
        np.testing.assert_allclose(npy(x.grad), gref, rtol=tol * 10, atol=tol * 10)
    # special values in a long row behave as in a short one
    x = torch.zeros(2, n, dtype=dtype, device=device)
    x[0, 5] = -math.inf
    x[1, 7] = math.nan
    y = npy(fn(x, -1))
    assert (y[0, 5] == (-np.inf if log else 0.0)) and np.isfinite(np.delete(y[0], 5)).all()
    assert np.isnan(y[1]).all()


def test_softmax_special_values(device):
    x = torch.tensor(
        [[0.0, -math.inf, 1.0], [math.inf, 0.0, 1.0], [math.nan, 0.0, 1.0]], device=device
    )
    y = npy(F.softmax(x, 1))
    np.testing.assert_allclose(y[0], softmax_ref(np.array([0.0, -np.inf, 1.0]), 0, False))
    assert np.isnan(y[1]).any() and np.isnan(y[2]).all()
    ly = npy(F.log_softmax(x, 1))
    assert ly[0, 1] == -np.inf and np.isnan(ly[2]).all()
    s = F.softmax(torch.tensor(2.0, device=device), 0)
    assert s.shape == () and s.item() == 1.0


# ---- nll_loss / cross_entropy ----


def ce_ref(x, t, w, ignore, reduction, smoothing):
    """torch's cross_entropy with class indices in float64 NumPy, and its gradient for an
    output gradient of 1 (per element for 'none')."""
    n, c = x.shape
    lp = softmax_ref(x, 1, True)
    w = np.ones(c) if w is None else w
    valid = t != ignore
    tc = np.where(valid, t, 0)
    wt = w[tc] * valid
    nll = -lp[np.arange(n), tc] * wt
    smooth = -(lp * w).sum(1) * valid
    d_nll = np.zeros_like(x)
    d_nll[np.arange(n), tc] = -wt
    d_smooth = -(w[None, :] * valid[:, None]) * np.ones_like(x)
    if reduction == "mean":
        nll, d_nll = nll.sum() / wt.sum(), d_nll / wt.sum()
        smooth, d_smooth = smooth.sum() / wt.sum(), d_smooth / wt.sum()
    elif reduction == "sum":
        nll, smooth = nll.sum(), smooth.sum()
    loss = nll * (1 - smoothing) + smooth * smoothing / c
    dlp = d_nll * (1 - smoothing) + d_smooth * smoothing / c
    # through log_softmax: g - softmax * sum(g)
    dx = dlp - np.exp(lp) * dlp.sum(1, keepdims=True)
    return loss, dx


@pytest.mark.parametrize("classes", [1, 3, 65, 1000, 4097])
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("dtype", [torch.float64, torch.float32])
def test_cross_entropy_class_indices(classes, reduction, dtype, device):
    n = 9
    x = rand((n, classes), 29, dtype, device, scale=2.0).requires_grad_(True)
    t = np.random.default_rng(30).integers(0, classes, n)
    t[[2, 5]] = -100
    tt = torch.tensor(t, device=device)
    loss = F.cross_entropy(x, tt, reduction=reduction)
    assert type(loss.grad_fn).__name__ == "NllLossBackward0"
    ref, dx = ce_ref(npy(x), t, None, -100, reduction, 0.0)
    close(loss, np.asarray(ref), TOL[dtype])
    loss.backward(torch.ones_like(loss))
    close(x.grad, dx, TOL[dtype] * 10)


@pytest.mark.parametrize("smoothing", [0.0, 0.1])
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_cross_entropy_weight_ignore_index_smoothing(smoothing, reduction, device):
    x = rand((7, 5), 31, torch.float64, device).requires_grad_(True)
    w = np.abs(np.random.default_rng(32).standard_normal(5)) + 0.5
    t = np.array([0, 4, 2, 1, 3, 3, 0])
    loss = F.cross_entropy(
        x,
        torch.tensor(t, device=device),
        weight=torch.tensor(w, device=device),
        ignore_index=3,
        reduction=reduction,
        label_smoothing=smoothing,
    )
    ref, dx = ce_ref(npy(x), t, w, 3, reduction, smoothing)
    close(loss, np.asarray(ref), 1e-12)
    loss.backward(torch.ones_like(loss))
    close(x.grad, dx, 1e-11)


def test_nll_loss_all_ignored_and_gradcheck(device):
    x = rand((3, 4), 33, torch.float64, device).requires_grad_(True)
    t = torch.tensor([-100, -100, -100], device=device)
    loss = F.nll_loss(x, t)
    assert math.isnan(loss.item())
    loss.backward()
    assert (npy(x.grad) == 0).all()
    t = torch.tensor([1, 3, 0], device=device)
    w = torch.tensor([1.0, 2.0, 0.5, 3.0], dtype=torch.float64, device=device)
    for red in ("mean", "sum", "none"):
        assert gradcheck(lambda x, red=red: F.nll_loss(x, t, w, reduction=red), (x,))
        assert gradgradcheck(lambda x, red=red: F.cross_entropy(x, t, w, reduction=red), (x,))


def test_nll_loss_higher_dims_and_byte_targets(device):
    x = rand((2, 4, 3), 34, torch.float64, device).requires_grad_(True)
    t = np.array([[0, 3, 1], [2, 2, 0]])
    loss = F.nll_loss(x, torch.tensor(t, device=device), reduction="none")
    a = npy(x)
    ref = -np.take_along_axis(a, t[:, None, :], 1)[:, 0, :]
    close(loss, ref, 1e-12)
    loss.sum().backward()
    exp = np.zeros_like(a)
    for i in range(2):
        for k in range(3):
            exp[i, t[i, k], k] = -1
    close(x.grad, exp, 0)
    x2 = rand((3, 4), 35, torch.float64, device)
    tb = torch.tensor([1, 0, 3], dtype=torch.uint8, device=device)
    close(F.nll_loss(x2, tb), np.asarray(-npy(x2)[[0, 1, 2], [1, 0, 3]].mean()), 1e-12)


@pytest.mark.parametrize("dtype", HALF)
def test_cross_entropy_half_types(dtype, device):
    x32 = rand((64, 65), 36, torch.float32, device, scale=2.0)
    t = torch.tensor(np.random.default_rng(37).integers(0, 65, 64), device=device)
    res = {}
    for dt in (torch.float32, dtype):
        x = x32.detach().to(dt).requires_grad_(True)
        loss = F.cross_entropy(x, t)
        assert loss.dtype == dt
        loss.backward()
        assert x.grad.dtype == dt
        res[dt] = (loss.item(), npy(x.grad))
    assert abs(res[dtype][0] - res[torch.float32][0]) < 5e-2
    np.testing.assert_allclose(res[dtype][1], res[torch.float32][1], atol=2e-4, rtol=5e-2)


def test_nll_loss_target_out_of_bounds_on_the_cpu():
    with pytest.raises(IndexError, match="^Target 7 is out of bounds.$"):
        F.nll_loss(torch.zeros(2, 3), torch.tensor([0, 7]))
    with pytest.raises(IndexError, match="^Target -1 is out of bounds.$"):
        F.cross_entropy(torch.zeros(2, 3), torch.tensor([-1, 0]))


# ---- gelu ----


def gelu_ref(x, approximate):
    if approximate == "tanh":
        k = math.sqrt(2 / math.pi)
        inner = k * (x + 0.044715 * x**3)
        t = np.tanh(inner)
        y = 0.5 * x * (1 + t)
        d = 0.5 * (1 + t) + 0.5 * x * (1 - t * t) * k * (1 + 3 * 0.044715 * x * x)
        return y, d
    erf = np.vectorize(math.erf)
    cdf = 0.5 * (1 + erf(x / math.sqrt(2)))
    return x * cdf, cdf + x * np.exp(-0.5 * x * x) / math.sqrt(2 * math.pi)


@pytest.mark.parametrize("approximate", ["none", "tanh"])
@pytest.mark.parametrize("dtype", [torch.float64, torch.float32])
def test_gelu_values_and_gradients(approximate, dtype, device):
    x = rand((37, 29), 38, dtype, device, scale=3.0).t().requires_grad_(True)  # non-contiguous
    y = F.gelu(x, approximate=approximate)
    assert type(y.grad_fn).__name__ == "GeluBackward0" and y.dtype == dtype
    ref, d = gelu_ref(npy(x), approximate)
    close(y, ref, TOL[dtype])
    g = rand(tuple(x.shape), 39, dtype, device)
    y.backward(g)
    close(x.grad, npy(g) * d, TOL[dtype] * 10)


def test_gelu_keeps_a_dense_layout(device):
    x = rand((5, 7), 48, torch.float64, device).t()
    y = F.gelu(x)
    assert y.stride() == x.stride() == (1, 7)
    close(y, gelu_ref(npy(x), "none")[0], 1e-12)
    z = rand((4, 6), 49, torch.float64, device)[:, ::2]  # not dense: a contiguous result
    assert F.gelu(z).stride() == (3, 1)
    close(F.gelu(z), gelu_ref(npy(z), "none")[0], 1e-12)
    xg = x.detach().requires_grad_(True)
    g = rand((7, 5), 50, torch.float64, device)  # contiguous: another layout than x's
    F.gelu(xg, approximate="tanh").backward(g)
    close(xg.grad, npy(g) * gelu_ref(npy(x), "tanh")[1], 1e-12)


@pytest.mark.parametrize("approximate", ["none", "tanh"])
def test_gelu_gradgradcheck(approximate, device):
    x = rand((4, 3), 40, torch.float64, device).requires_grad_(True)
    assert gradcheck(lambda x: F.gelu(x, approximate=approximate), (x,))
    assert gradgradcheck(lambda x: F.gelu(x, approximate=approximate), (x,))


@pytest.mark.parametrize("dtype", HALF)
@pytest.mark.parametrize("approximate", ["none", "tanh"])
def test_gelu_half_types(dtype, approximate, device):
    x32 = rand((1000,), 41, torch.float32, device, scale=3.0)
    g32 = rand((1000,), 42, torch.float32, device)
    outs = {}
    for dt in (torch.float32, dtype):
        x = x32.detach().to(dt).requires_grad_(True)
        y = F.gelu(x, approximate=approximate)
        y.backward(g32.to(dt))
        assert y.dtype == dt and x.grad.dtype == dt
        outs[dt] = (npy(y), npy(x.grad))
    tol = 1e-2 if dtype == torch.float16 else 4e-2
    for got, ref in zip(outs[dtype], outs[torch.float32], strict=True):
        np.testing.assert_allclose(got, ref, rtol=tol, atol=tol)


# ---- TF32 in float32 matmuls (CUDA) ----


def _matmul_error(fn, a, b):
    ref = fn(a.double(), b.double())
    return ((fn(a, b).double() - ref).abs().max() / ref.abs().max()).item()


@pytest.mark.parametrize(
    "name,fn,shapes",
    [
        ("mm", lambda a, b: a @ b, ((512, 512), (512, 512))),
        ("bmm", lambda a, b: torch.bmm(a, b), ((4, 256, 512), (4, 512, 256))),
        ("linear", lambda a, b: F.linear(a, b, b[:, 0].contiguous()), ((512, 512), (384, 512))),
        ("linear 3d", lambda a, b: F.linear(a, b), ((8, 64, 512), (384, 512))),
    ],
)
def test_float32_matmuls_use_tf32_when_allowed(name, fn, shapes):
    if not torch.cuda.is_available():
        pytest.skip("no CUDA GPU visible")
    a = rand(shapes[0], 43, torch.float32, "cuda")
    b = rand(shapes[1], 44, torch.float32, "cuda")
    matmul = torch.backends.cuda.matmul
    try:
        matmul.allow_tf32 = False
        exact = _matmul_error(fn, a, b)
        matmul.allow_tf32 = True
        tf32 = _matmul_error(fn, a, b)
        torch.set_float32_matmul_precision("highest")
        exact_again = _matmul_error(fn, a, b)
        torch.set_float32_matmul_precision("high")
        tf32_again = _matmul_error(fn, a, b)
    finally:  # torch's defaults (setting allow_tf32 back would leave fp32_precision "ieee")
        torch.set_float32_matmul_precision("highest")
        matmul.fp32_precision = "none"
    assert exact < 1e-5 and exact_again < 1e-5, name
    # TF32 keeps 10 mantissa bits: relative errors around 1e-4 to 1e-3 on these sizes
    assert tf32 > 10 * exact and tf32_again > 10 * exact_again, name
