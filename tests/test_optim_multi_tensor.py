"""optim's foreach=True and fused=True paths (cudalite.optim._multi_tensor) for Adam, AdamW and
SGD against the for-loop path, on cpu and cuda: bit for bit for foreach on the CPU (both run
the same per-tensor ops in torch's multi-tensor order), to float rounding elsewhere (the
multi-tensor kernels and the fused update round in their own order, as torch's do); the
defaults torch picks, capturable state, and the fused kernels' skip on found_inf."""

import numpy as np
import pytest

import cudalite
from conftest import to_np as _to_np
from cudalite import optim

CONFIGS = [
    ("Adam", {"lr": 0.1}),
    ("Adam", {"lr": 0.05, "weight_decay": 0.1, "amsgrad": True}),
    ("Adam", {"lr": 0.05, "maximize": True, "betas": (0.8, 0.9)}),
    ("AdamW", {"lr": 0.1}),
    ("AdamW", {"lr": 0.02, "amsgrad": True, "weight_decay": 0.3, "maximize": True}),
    ("SGD", {"lr": 0.1}),
    ("SGD", {"lr": 0.1, "momentum": 0.9, "nesterov": True, "weight_decay": 0.01}),
    ("SGD", {"lr": 0.05, "momentum": 0.5, "dampening": 0.2, "maximize": True}),
    ("SGD", {"lr": 0.05, "weight_decay": 0.2, "maximize": True}),
]


def to_np(t):
    return _to_np(t.detach())


@pytest.fixture(autouse=True, params=["torch_path", "multi_tensor_path"])
def path(request):
    """Each test as it is, and on the CPU also with the foreach ops' multi-tensor path forced
    (the core's CPU loop behind the Python glue that CUDA takes)."""
    if request.param == "multi_tensor_path":
        if "device" not in request.fixturenames or request.getfixturevalue("device") != "cpu":
            pytest.skip("only the CPU tests change with the multi-tensor path forced")
        from cudalite import _foreach

        mp = pytest.MonkeyPatch()
        mp.setattr(_foreach, "_multi_tensor_device", lambda t: True)
        yield request.param
        mp.undo()
    else:
        yield request.param


TOL = {"float32": 2e-5, "float64": 1e-12, "bfloat16": 5e-2, "float16": 2e-2}


def _params(device, dtype):
    rng = np.random.default_rng(3)
    shapes = [(5, 7), (13,), (1,), (2, 3, 4)]
    dt = getattr(cudalite, dtype)
    return [
        cudalite.tensor(rng.uniform(-1, 1, s).tolist(), dtype=dt, device=device).requires_grad_()
        for s in shapes
    ]


def _run(device, dtype, name, kw, steps=5, **mode):
    ps = _params(device, dtype)
    opt = getattr(optim, name)(ps, **kw, **mode)
    for s in range(steps):
        for i, p in enumerate(ps):
            if s == 2 and i == 1:
                p.grad = None  # a parameter without a gradient this step
                continue
            p.grad = cudalite.sin(p.detach() * (s + 1) + i) * (0.5 + s)
        opt.step()
    return ps, opt


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("cfg", CONFIGS, ids=lambda c: f"{c[0]}-{sorted(c[1])}")
def test_foreach_matches_for_loop(device, dtype, cfg, path):
    name, kw = cfg
    want, _ = _run(device, dtype, name, kw, foreach=False)
    got, opt = _run(device, dtype, name, kw, foreach=True)
    exact = device == "cpu" and path == "torch_path"
    for g, w in zip(got, want, strict=True):
        if exact:
            np.testing.assert_array_equal(to_np(g), to_np(w))
        else:
            np.testing.assert_allclose(to_np(g), to_np(w), rtol=TOL[dtype], atol=TOL[dtype])
    if name != "SGD":
        assert opt.state[got[0]]["step"].device.type == "cpu"


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize(
    "cfg", [c for c in CONFIGS if c[0] != "SGD"], ids=lambda c: f"{c[0]}-{sorted(c[1])}"
)
def test_foreach_adam_in_one_pass(dtype, cfg, monkeypatch):
    """CUDA's foreach Adam (one fused pass per group, host steps handed to the kernel on the
    device, one tensor per distinct step) taken on the CPU: the for-loop's update to rounding,
    the steps still on the host."""
    from cudalite.optim import _multi_tensor

    monkeypatch.setattr(_multi_tensor, "_one_pass", lambda *lists: True)
    name, kw = cfg
    want, _ = _run("cpu", dtype, name, kw, foreach=False)
    got, opt = _run("cpu", dtype, name, kw, foreach=True)
    for g, w in zip(got, want, strict=True):
        np.testing.assert_allclose(to_np(g), to_np(w), rtol=TOL[dtype], atol=TOL[dtype])
    steps = [opt.state[p]["step"] for p in got]
    assert [s.item() for s in steps] == [5, 4, 5, 5]  # the second skipped one step
    assert all(s.device.type == "cpu" for s in steps)


@pytest.mark.parametrize("dtype", ["float32", "float64", "bfloat16", "float16"])
@pytest.mark.parametrize("cfg", CONFIGS, ids=lambda c: f"{c[0]}-{sorted(c[1])}")
def test_fused_matches_for_loop(device, dtype, cfg):
    name, kw = cfg
    # the reference in float32 for the 16-bit types (their for-loop path rounds every op)
    ref_dtype = dtype if dtype in ("float32", "float64") else "float32"
    want, _ = _run(device, ref_dtype, name, kw)
    got, opt = _run(device, dtype, name, kw, fused=True)
    assert opt._step_supports_amp_scaling
    for g, w in zip(got, want, strict=True):
        assert g.dtype == getattr(cudalite, dtype)
        np.testing.assert_allclose(
            to_np(g).astype(np.float64), to_np(w), rtol=TOL[dtype], atol=TOL[dtype]
        )
    if name != "SGD":
        st = opt.state[got[0]]
        assert st["step"].device == got[0].device and st["step"].dtype == cudalite.float32
        assert st["step"].item() == 5


@pytest.mark.parametrize("name", ["Adam", "AdamW", "SGD"])
def test_fused_skips_on_found_inf(device, name):
    kw = {"lr": 0.1, "momentum": 0.9} if name == "SGD" else {"lr": 0.1}
    ps = _params(device, "float32")
    opt = getattr(optim, name)(ps, fused=True, **kw)
    for p in ps:
        p.grad = cudalite.ones_like(p) * 8.0
    opt.grad_scale = cudalite.tensor(4.0, device=device)
    opt.found_inf = cudalite.tensor(0.0, device=device)
    opt.step()
    for p in ps:  # the kernel wrote the unscaled gradient back
        assert cudalite.all(p.grad == 2.0).item()
    before = [p.detach().clone() for p in ps]
    state_before = {k: v.clone() for k, v in opt.state[ps[0]].items()}
    for p in ps:
        p.grad = cudalite.full_like(p, 8.0)
    opt.found_inf = cudalite.tensor(1.0, device=device)
    opt.step()
    for p, b in zip(ps, before, strict=True):
        np.testing.assert_array_equal(to_np(p), to_np(b))
        assert cudalite.all(p.grad == 8.0).item()  # not unscaled either
    for k, v in opt.state[ps[0]].items():  # the step count is taken back too
        np.testing.assert_array_equal(to_np(v), to_np(state_before[k]))


def test_defaults_like_torch(device):
    ps = _params(device, "float32")
    for p in ps:
        p.grad = cudalite.ones_like(p)
    opt = optim.Adam(ps)
    assert opt.defaults["foreach"] is None and opt.defaults["fused"] is None
    assert not hasattr(opt, "_step_supports_amp_scaling")
    opt.step()
    # torch keeps Adam's step on the CPU unless capturable or fused, foreach or not
    assert opt.state[ps[0]]["step"].device.type == "cpu"
    from cudalite.optim import _multi_tensor as MT

    assert MT.default_to_foreach(ps, differentiable=False) is (device == "cuda")
    assert MT.default_to_foreach(ps, differentiable=True) is False


def test_errors():
    p = [cudalite.ones(2, requires_grad=True)]
    with pytest.raises(RuntimeError, match="^`fused` and `foreach` cannot be `True` together.$"):
        optim.Adam(p, fused=True, foreach=True)
    with pytest.raises(RuntimeError, match="^`fused` does not support `differentiable`$"):
        optim.SGD(p, fused=True, differentiable=True)
    with pytest.raises(
        ValueError, match="^lr as a Tensor is not supported for capturable=False and foreach=True$"
    ):
        optim.Adam(p, lr=cudalite.tensor(0.1), foreach=True)
    q = cudalite.ones(2, dtype=cudalite.int64)
    opt = optim.Adam([cudalite.ones(1, requires_grad=True)], fused=True)
    opt.param_groups[0]["params"] = [q]
    q.grad = cudalite.ones(2, dtype=cudalite.int64)
    with pytest.raises(RuntimeError, match="^`fused=True` requires all the params to be floating"):
        opt.step()


@pytest.mark.parametrize("amsgrad", [False, True])
def test_capturable_foreach(device, amsgrad):
    if device == "cpu":
        ps = _params(device, "float32")
        opt = optim.Adam(ps, capturable=True, foreach=True)
        for p in ps:
            p.grad = cudalite.ones_like(p)
        with pytest.raises(AssertionError, match="If capturable=True, params and state_steps"):
            opt.step()
        return
    want, _ = _run(device, "float32", "Adam", {"lr": 0.1, "amsgrad": amsgrad}, foreach=False)
    got, opt = _run(
        device, "float32", "Adam", {"lr": 0.1, "amsgrad": amsgrad}, foreach=True, capturable=True
    )
    assert opt.state[got[0]]["step"].device == got[0].device
    # torch's capturable update divides by step_size tensors (other roundings than the
    # for-loop's): the foreach tolerance, as in test_foreach_matches_for_loop
    for g, w in zip(got, want, strict=True):
        np.testing.assert_allclose(to_np(g), to_np(w), rtol=TOL["float32"], atol=TOL["float32"])


def test_mixed_dtypes_in_one_group(device):
    # the parameters are split by device and dtype, each part updated on its own
    ps = [
        cudalite.ones(3, device=device, requires_grad=True),
        cudalite.ones(2, device=device, dtype=cudalite.float64, requires_grad=True),
    ]
    for p in ps:
        p.grad = cudalite.full_like(p, 0.5)
    for mode in ({"foreach": True}, {"fused": True}):
        qs = [p.detach().clone().requires_grad_() for p in ps]
        for q, p in zip(qs, ps, strict=True):
            q.grad = p.grad.clone()
        optim.AdamW(qs, lr=0.1, **mode).step()
        for q in qs:
            assert q.dtype in (cudalite.float32, cudalite.float64)
            np.testing.assert_allclose(to_np(q), 1 - 0.1 * 0.01 - 0.1, rtol=1e-6)
