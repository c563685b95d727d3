"""cudalite.amp: autocast regions (torch's op lists per device type) and GradScaler."""

from __future__ import annotations

import importlib.util
import pickle
import warnings

import pytest

import cudalite
import cudalite.nn.functional as F
from cudalite import amp

HAS_TORCH = importlib.util.find_spec("torch") is not None


def _low(device):
    return cudalite.float16 if device == "cuda" else cudalite.bfloat16


def _x(device, *shape, dtype=cudalite.float32):
    g = cudalite.Generator().manual_seed(0)
    return cudalite.randn(*shape, generator=g).to(device=device, dtype=dtype)


# ---- the op lists ----


def test_lower_precision_ops(device):
    a, b = _x(device, 4, 4), _x(device, 4, 4)
    low = _low(device)
    with cudalite.autocast(device, dtype=low):
        assert a.mm(b).dtype == low
        assert cudalite.mm(a, b).dtype == low
        assert (a @ b).dtype == low
        assert cudalite.matmul(a, b).dtype == low
        assert F.linear(a, b).dtype == low
        assert a[None].bmm(b[None]).dtype == low
        assert cudalite.addmm(a, a, b).dtype == low
        # outside the lists: the inputs' own dtypes and promotion
        assert (a + b).dtype == cudalite.float32
    assert a.mm(b).dtype == cudalite.float32  # the region has ended


def test_float32_and_dtype_ops_on_cuda(device):
    if device != "cuda":
        pytest.skip("CUDA's lists (the CPU's are in test_float32_ops_on_cpu)")
    h = _x(device, 4, 4, dtype=cudalite.float16)
    with cudalite.autocast("cuda"):
        assert h.exp().dtype == cudalite.float32
        assert cudalite.log(h.abs()).dtype == cudalite.float32
        assert h.pow(2).dtype == cudalite.float32
        assert (h**2).dtype == cudalite.float32
        assert F.softmax(h, -1).dtype == cudalite.float32
        assert F.log_softmax(h, -1).dtype == cudalite.float32
        assert h.sum().dtype == cudalite.float32
        assert cudalite.sum(h).dtype == cudalite.float32
        assert F.mse_loss(h, h).dtype == cudalite.float32
        assert cudalite.atan2(h, h.float()).dtype == cudalite.float32  # promote
        assert h.sum(dtype=cudalite.float16).dtype == cudalite.float16  # the call's dtype wins


def test_float32_ops_on_cpu(device):
    if device != "cpu":
        pytest.skip("the CPU's lists")
    h = _x(device, 4, 4, dtype=cudalite.bfloat16)
    f = _x(device, 4, 4)
    with cudalite.autocast("cpu"):
        assert h.prod().dtype == cudalite.float32
        assert F.mse_loss(h, h).dtype == cudalite.float32
        assert F.l1_loss(h, f).dtype == cudalite.float32
        assert cudalite.cat([h, f]).dtype == cudalite.float32  # promote
        assert cudalite.stack([h, f]).dtype == cudalite.float32
        # not in the CPU's lists: as without autocast
        assert h.exp().dtype == cudalite.bfloat16
        assert F.softmax(h, -1).dtype == cudalite.bfloat16
        assert h.sum().dtype == cudalite.bfloat16


def test_ineligible_arguments_pass_through(device):
    low = _low(device)
    d = _x(device, 3, 3, dtype=cudalite.float64)
    i = cudalite.ones(3, 3, dtype=cudalite.int64, device=device)
    a = _x(device, 3, 3)
    other = "cpu" if device == "cuda" else "cuda"
    with cudalite.autocast(device, dtype=low):
        assert d.mm(d).dtype == cudalite.float64
        if device == "cpu":  # (integer matmul has no CUDA kernel, in torch either)
            assert i.mm(i).dtype == cudalite.int64
        assert cudalite.atan2(i.float(), i).dtype == cudalite.float32
        out = cudalite.empty(3, 3, device=device)
        assert cudalite.mm(a, a, out=out).dtype == cudalite.float32  # out= is not cast
        c = a.clone()
        c.exp_()  # in place: not cast
        assert c.dtype == cudalite.float32
    if other == "cuda" and not cudalite.cuda.is_available():
        return
    with cudalite.autocast(other, dtype=_low(other)):
        assert a.mm(a).dtype == cudalite.float32  # another device type's region


def test_enabled_false_nesting_and_state(device):
    low = _low(device)
    a = _x(device, 2, 2)
    dt = device
    assert not cudalite.is_autocast_enabled(dt)
    with cudalite.autocast(dt, dtype=low):
        assert cudalite.is_autocast_enabled(dt)
        assert cudalite.get_autocast_dtype(dt) == low
        with cudalite.autocast(dt, enabled=False):
            assert not cudalite.is_autocast_enabled(dt)
            assert a.mm(a).dtype == cudalite.float32
        assert cudalite.is_autocast_enabled(dt)
        assert a.mm(a).dtype == low
    assert not cudalite.is_autocast_enabled(dt)
    assert cudalite.get_autocast_dtype("cuda") == cudalite.float16
    assert cudalite.get_autocast_dtype("cpu") == cudalite.bfloat16


def test_decorator_and_gradients(device):
    low = _low(device)
    w = _x(device, 3, 3).requires_grad_()
    x = _x(device, 2, 3)

    @cudalite.autocast(device, dtype=low)
    def forward(x):
        return F.linear(x, w)

    y = forward(x)
    assert y.dtype == low
    y.float().sum().backward()
    assert w.grad.dtype == cudalite.float32  # the cast is recorded: grads in the leaf's dtype
    expected = x.to(low).float().sum(0).expand(3, 3)
    assert cudalite.allclose(w.grad, expected, rtol=1e-2, atol=1e-2)


def test_weight_cache(device):
    low = _low(device)
    w = _x(device, 3, 3).requires_grad_()
    x = _x(device, 2, 3)
    from cudalite.amp import autocast_mode

    with cudalite.autocast(device, dtype=low):
        F.linear(x, w)
        F.linear(x, w)
        assert len(autocast_mode._state.cache) == 1  # one cast of the weight per region
        F.linear(x, w.detach())  # not a leaf that requires grad: not cached
        assert len(autocast_mode._state.cache) == 1
    assert not autocast_mode._state.cache  # dropped when the outermost region ends
    with cudalite.autocast(device, dtype=low, cache_enabled=False):
        F.linear(x, w)
        assert not autocast_mode._state.cache


def test_bad_device_type():
    with pytest.raises(RuntimeError, match="unsupported autocast device_type 'mps'"):
        cudalite.autocast("mps")
    with pytest.raises(ValueError, match="Expected `device_type` of type `str`"):
        cudalite.autocast(cudalite.device("cpu"))
    assert amp.is_autocast_available("cpu") and not amp.is_autocast_available("mps")


def test_cuda_region_without_cuda_warns():
    if cudalite.cuda.is_available():
        pytest.skip("needs a machine without a GPU")
    with pytest.warns(UserWarning, match="CUDA is not available. Disabling"):
        with cudalite.autocast("cuda"):
            assert not cudalite.is_autocast_enabled("cuda")


def test_deprecated_cuda_amp_spellings():
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        cudalite.cuda.amp.autocast(enabled=False)
        cudalite.cuda.amp.GradScaler(enabled=False)
    msgs = [str(x.message) for x in w if x.category is FutureWarning]
    assert any("`torch.cuda.amp.autocast(args...)` is deprecated" in m for m in msgs)
    assert any("`torch.cuda.amp.GradScaler(args...)` is deprecated" in m for m in msgs)


def test_custom_fwd_casts_inputs(device):
    low = _low(device)

    class Square(cudalite.autograd.Function):
        @staticmethod
        @amp.custom_fwd(device_type=device, cast_inputs=cudalite.float32)
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * x

        @staticmethod
        @amp.custom_bwd(device_type=device)
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return 2 * x * g

    x = _x(device, 3, dtype=low).requires_grad_()
    with cudalite.autocast(device, dtype=low):
        y = Square.apply(x)
    assert y.dtype == cudalite.float32


# ---- GradScaler ----


def _model(device):
    g = cudalite.Generator().manual_seed(1)
    w = cudalite.randn(4, 3, generator=g).to(device).requires_grad_()
    return w, cudalite.optim.SGD([w], lr=0.1)


def _scaler(device, **kw):
    return amp.GradScaler(device, **kw)


def test_scaler_skips_the_step_on_inf_and_backs_off(device):
    w, opt = _model(device)
    s = _scaler(device, init_scale=1024.0, growth_interval=3)
    x = _x(device, 5, 3)
    for step in range(7):
        opt.zero_grad()
        loss = F.linear(x, w).pow(2).mean()
        s.scale(loss).backward()
        if step == 1:
            w.grad[0, 0] = float("inf")
        before = w.detach().clone()
        s.step(opt)
        s.update()
        if step == 1:
            assert cudalite.equal(w.detach(), before)  # skipped, bit for bit
            assert s.get_scale() == 512.0 and s._get_growth_tracker() == 0
        else:
            assert not cudalite.equal(w.detach(), before)
    # steps 2, 3, 4 are clean: the scale doubles once; 5, 6 count towards the next growth
    assert s.get_scale() == 1024.0
    assert s._get_growth_tracker() == 2


def test_scaler_unscales_the_gradients(device):
    w, opt = _model(device)
    s = _scaler(device, init_scale=8.0)
    x = _x(device, 5, 3)
    loss = F.linear(x, w).pow(2).mean()
    s.scale(loss).backward()
    scaled = w.grad.clone()
    s.unscale_(opt)
    assert cudalite.allclose(w.grad, scaled / 8.0)
    with pytest.raises(RuntimeError, match="unscale_\\(\\) has already been called"):
        s.unscale_(opt)
    s.step(opt)
    with pytest.raises(RuntimeError, match="step\\(\\) has already been called"):
        s.step(opt)
    with pytest.raises(RuntimeError, match="unscale_\\(\\) is being called after step"):
        s.unscale_(opt)
    s.update()
    with pytest.raises(RuntimeError, match="Closure use is not currently supported"):
        s.step(opt, closure=lambda: 0)


def test_scaler_errors_and_state(device):
    w, opt = _model(device)
    with pytest.raises(AssertionError, match="growth factor must be > 1.0"):
        _scaler(device, growth_factor=1.0)
    with pytest.raises(AssertionError, match="backoff factor must be < 1.0"):
        _scaler(device, backoff_factor=1.0)
    s = _scaler(device)
    with pytest.raises(AssertionError, match="Attempted step but _scale is None"):
        s.step(opt)
    assert s.state_dict() == {
        "scale": 65536.0,
        "growth_factor": 2.0,
        "backoff_factor": 0.5,
        "growth_interval": 2000,
        "_growth_tracker": 0,
    }
    t = _scaler(device)
    t.load_state_dict(dict(s.state_dict(), scale=4.0, _growth_tracker=3))
    assert t.get_scale() == 4.0 and t._get_growth_tracker() == 3
    with pytest.raises(RuntimeError, match="The source state dict is empty"):
        t.load_state_dict({})
    u = pickle.loads(pickle.dumps(t))
    assert u.get_scale() == 4.0
    # float16 gradients cannot be unscaled in place
    h = cudalite.ones(2, dtype=cudalite.float16, device=device, requires_grad=True)
    hopt = cudalite.optim.SGD([h], lr=0.1)
    s.scale(h.float().sum()).backward()
    with pytest.raises(ValueError, match="Attempting to unscale FP16 gradients."):
        s.unscale_(hopt)


def test_disabled_scaler_is_transparent(device):
    w, opt = _model(device)
    s = _scaler(device, enabled=False)
    loss = w.sum()
    assert s.scale(loss) is loss
    loss.backward()
    s.step(opt)
    s.update()
    assert s.get_scale() == 1.0 and s.state_dict() == {}


# ---- against torch (on machines where torch is installed) ----

_TABLE = [
    ("mm", lambda t, a, b, lo: a.mm(b)),
    ("matmul", lambda t, a, b, lo: t.matmul(a, b)),
    ("linear", lambda t, a, b, lo: t.nn.functional.linear(a, b)),
    ("bmm", lambda t, a, b, lo: a[None].bmm(b[None])),
    ("addmm", lambda t, a, b, lo: t.addmm(a, a, b)),
    ("exp", lambda t, a, b, lo: a.to(lo).exp()),
    ("log", lambda t, a, b, lo: a.to(lo).abs().log()),
    ("pow", lambda t, a, b, lo: a.to(lo).pow(2)),
    ("pow dunder", lambda t, a, b, lo: a.to(lo) ** 2),
    ("softmax", lambda t, a, b, lo: t.softmax(a.to(lo), -1)),
    ("F.softmax", lambda t, a, b, lo: t.nn.functional.softmax(a.to(lo), -1)),
    ("log_softmax", lambda t, a, b, lo: t.nn.functional.log_softmax(a.to(lo), -1)),
    ("sum", lambda t, a, b, lo: a.to(lo).sum()),
    ("sum dim", lambda t, a, b, lo: a.to(lo).sum(0)),
    ("prod", lambda t, a, b, lo: a.to(lo).prod()),
    ("mse_loss", lambda t, a, b, lo: t.nn.functional.mse_loss(a.to(lo), b.to(lo))),
    ("l1_loss", lambda t, a, b, lo: t.nn.functional.l1_loss(a.to(lo), b)),
    ("atan2", lambda t, a, b, lo: t.atan2(a.to(lo), b)),
    ("cross_entropy", lambda t, a, b, lo: t.nn.functional.cross_entropy(a.to(lo), b.argmax(1))),
    ("layer_norm", lambda t, a, b, lo: t.nn.functional.layer_norm(a.to(lo), (4,))),
    ("gelu", lambda t, a, b, lo: t.nn.functional.gelu(a.to(lo))),
    (
        "scaled_dot_product_attention",
        lambda t, a, b, lo: t.nn.functional.scaled_dot_product_attention(a[None], b[None], b[None]),
    ),
    ("cat", lambda t, a, b, lo: t.cat([a.to(lo), b])),
    ("stack", lambda t, a, b, lo: t.stack([a.to(lo), b])),
    ("add", lambda t, a, b, lo: a.to(lo) + b),
    ("mm float64", lambda t, a, b, lo: a.double().mm(b.double())),
]


@pytest.mark.skipif(not HAS_TORCH, reason="compares with torch where it is installed")
@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_output_dtypes_match_torch(device, dtype):
    import numpy as np
    import torch

    if device == "cuda" and not torch.cuda.is_available():
        pytest.skip("torch sees no GPU")
    got = {}
    for lib in (torch, cudalite):
        a = lib.from_numpy(np.arange(16, dtype=np.float32).reshape(4, 4) / 7).to(device)
        b = a.flip(0)
        with lib.autocast(device, dtype=getattr(lib, dtype)):
            lo = getattr(lib, dtype)
            got[lib.__name__] = [str(f(lib, a, b, lo).dtype).split(".")[-1] for _, f in _TABLE]
    assert dict(zip((n for n, _ in _TABLE), got["cudalite"], strict=True)) == dict(
        zip((n for n, _ in _TABLE), got["torch"], strict=True)
    )


@pytest.mark.skipif(not HAS_TORCH, reason="compares with torch where it is installed")
def test_scaler_trajectory_matches_torch(device):
    import numpy as np
    import torch

    if device == "cuda" and not torch.cuda.is_available():
        pytest.skip("torch sees no GPU")
    rng = np.random.default_rng(0)
    w0 = rng.standard_normal((4, 3)).astype(np.float32)
    xs = rng.standard_normal((12, 5, 3)).astype(np.float32)
    runs = {}
    for lib in (torch, cudalite):
        w = lib.from_numpy(w0.copy()).to(device).requires_grad_()
        opt = lib.optim.SGD([w], lr=0.01)
        s = lib.amp.GradScaler(device, init_scale=2.0**10, growth_interval=2)
        trail = []
        for k, x in enumerate(xs):
            opt.zero_grad()
            loss = (lib.from_numpy(x).to(device) @ w.t()).pow(2).mean()
            s.scale(loss).backward()
            if k in (3, 7):
                w.grad[1, 1] = float("nan") if k == 3 else float("inf")
            s.step(opt)
            s.update()
            trail.append((s.get_scale(), s._get_growth_tracker()))
        runs[lib.__name__] = (trail, w.detach().cpu().numpy())
    assert runs["cudalite"][0] == runs["torch"][0]
    np.testing.assert_allclose(runs["cudalite"][1], runs["torch"][1], rtol=1e-5)
