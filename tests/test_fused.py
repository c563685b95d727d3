"""torch's fused kernels in cudalite._fused on cpu and cuda:
_amp_foreach_non_finite_check_and_unscale_, _amp_update_scale_, _fused_adam_/_fused_adamw_
and _fused_sgd_ (their recorded torch results on the CPU are in test_fused_vs_torch.py); and
GradScaler driving them, with a fused optimizer as with a plain one."""

import math

import numpy as np
import pytest

import cudalite
from conftest import to_np

F32 = np.float32


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16"])
def test_unscale_many(device, dtype):
    dt = getattr(cudalite, dtype)
    grads = [cudalite.full((i % 7 + 1, 3), float(i), dtype=dt, device=device) for i in range(100)]
    grads.append(cudalite.ones(70000, dtype=dt, device=device))  # more than one chunk
    found = cudalite.zeros((), device=device)
    inv = cudalite.tensor(0.5, device=device)
    cudalite._amp_foreach_non_finite_check_and_unscale_(grads, found, inv)
    assert found.item() == 0.0
    for i, g in enumerate(grads[:100]):
        assert cudalite.all(g == i * 0.5).item()
    assert cudalite.all(grads[100] == 0.5).item()
    grads[57][1, 2] = float("nan")
    cudalite._amp_foreach_non_finite_check_and_unscale_(grads, found, inv)
    assert found.item() == 1.0
    # found_inf is only ever set: a clean pass leaves it at 1
    cudalite._amp_foreach_non_finite_check_and_unscale_(grads[:3], found, inv)
    assert found.item() == 1.0


def test_unscale_inv_one_and_layouts(device):
    g = cudalite.tensor([[1.0, float("inf")], [3.0, float("nan")]], device=device).t()
    h = cudalite.arange(8.0, device=device)[::2]
    found = cudalite.zeros((), device=device)
    cudalite._amp_foreach_non_finite_check_and_unscale_(
        [g, h], found, cudalite.tensor(1.0, device=device)
    )
    assert found.item() == 1.0
    got = to_np(g)
    assert got[0, 0] == 1.0 and math.isinf(got[1, 0]) and math.isnan(got[1, 1])
    cudalite._amp_foreach_non_finite_check_and_unscale_(
        [h], found, cudalite.tensor(0.25, device=device)
    )
    assert h.tolist() == [0.0, 0.5, 1.0, 1.5]
    assert not h.is_contiguous()


def test_unscale_errors(device):
    g = [cudalite.ones(2, device=device)]
    f, inv = cudalite.zeros((), device=device), cudalite.ones((), device=device)
    with pytest.raises(RuntimeError, match="^inv_scale must be a 1-element tensor.$"):
        cudalite._amp_foreach_non_finite_check_and_unscale_(g, f, cudalite.ones(2, device=device))
    with pytest.raises(RuntimeError, match="^found_inf must be a float tensor.$"):
        cudalite._amp_foreach_non_finite_check_and_unscale_(g, f.double(), inv)
    with pytest.raises(NotImplementedError, match="not implemented for 'Long'"):
        cudalite._amp_foreach_non_finite_check_and_unscale_(
            [cudalite.ones(2, dtype=cudalite.int64, device=device)], f, inv
        )
    cudalite._amp_foreach_non_finite_check_and_unscale_([], f, inv)  # nothing to do
    if device == "cuda":
        with pytest.raises(RuntimeError, match="^found_inf must be a CUDA tensor.$"):
            cudalite._amp_foreach_non_finite_check_and_unscale_(g, f.cpu(), inv)
        with pytest.raises(RuntimeError, match="^inv_scale must be a CUDA tensor.$"):
            cudalite._amp_foreach_non_finite_check_and_unscale_(g, f, inv.cpu())
        with pytest.raises(RuntimeError, match="^one of scaled_grads was not a CUDA tensor.$"):
            cudalite._amp_foreach_non_finite_check_and_unscale_([g[0], g[0].cpu()], f, inv)
        with pytest.raises(RuntimeError, match="^inv_scale must be a CPU tensor.$"):
            cudalite._amp_foreach_non_finite_check_and_unscale_([g[0].cpu()], f.cpu(), inv)


def _update_reference(scale, tracker, found, growth, backoff, interval):
    if found:
        return F32(np.float64(scale) * backoff), 0
    tracker += 1
    if tracker == interval:
        with np.errstate(over="ignore"):
            grown = F32(np.float64(scale) * growth)
        return (grown if np.isfinite(grown) else scale), 0
    return scale, tracker


@pytest.mark.parametrize(
    "growth,backoff,interval", [(2.0, 0.5, 3), (1.0001, 0.3, 2), (2.0, 0.125, 1)]
)
def test_update_scale(device, growth, backoff, interval):
    scale = cudalite.tensor(3e37, device=device)
    tracker = cudalite.zeros((), dtype=cudalite.int32, device=device)
    want_scale, want_tracker = F32(3e37), 0
    for found in [0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 1, 1, 0, 0, 0]:
        r = cudalite._amp_update_scale_(
            scale, tracker, cudalite.tensor(float(found), device=device), growth, backoff, interval
        )
        assert r is scale
        want_scale, want_tracker = _update_reference(
            want_scale, want_tracker, found, growth, backoff, interval
        )
        assert scale.item() == float(want_scale) and tracker.item() == want_tracker


def _adam_inputs(device, dtype, amsgrad):
    rng = np.random.default_rng(5)
    dt = getattr(cudalite, dtype)
    shapes = [(3, 5), (70000,), (1,)]

    def mk(lo, hi):
        return [cudalite.tensor(rng.uniform(lo, hi, s).tolist(), dtype=dt, device=device)
                for s in shapes]  # fmt: skip

    lists = [mk(-1, 1), mk(-1, 1), mk(-0.1, 0.1), mk(0, 0.01)]
    if amsgrad:
        lists.append(mk(0, 0.02))
    steps = [cudalite.tensor(float(i + 3), device=device) for i in range(len(shapes))]
    return lists, steps


@pytest.mark.parametrize("adamw", [False, True])
@pytest.mark.parametrize("amsgrad", [False, True])
@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
def test_fused_adam_cuda_matches_cpu(device, adamw, amsgrad, dtype):
    # the CPU loop and the CUDA kernel run the same per-element arithmetic
    fn = cudalite._fused_adamw_ if adamw else cudalite._fused_adam_
    kw = dict(lr=0.01, beta1=0.9, beta2=0.99, weight_decay=0.1, eps=1e-8, amsgrad=amsgrad,
              maximize=False)  # fmt: skip
    results = {}
    for dev in ["cpu", device]:
        lists, steps = _adam_inputs(dev, dtype, amsgrad)
        scale = cudalite.tensor(2.0, device=dev)
        fn(*lists[:4], lists[4] if amsgrad else [], steps, grad_scale=scale, **kw)
        results[dev] = [[to_np(t).astype(np.float64) for t in lst] for lst in lists]
    tol = 1e-6 if dtype == "float32" else 1e-2
    for a, b in zip(results["cpu"], results[device], strict=True):
        for x, y in zip(a, b, strict=True):
            np.testing.assert_allclose(y, x, rtol=tol, atol=tol)
    if device == "cpu":
        lists, steps = _adam_inputs("cpu", dtype, amsgrad)
        grads_before = [g.clone() for g in lists[1]]
        fn(*lists[:4], lists[4] if amsgrad else [], steps, **kw)
        for g, b in zip(lists[1], grads_before, strict=True):  # no grad_scale: grads untouched
            np.testing.assert_array_equal(to_np(g), to_np(b))


def test_fused_adam_tensor_lr(device):
    lists, steps = _adam_inputs(device, "float32", False)
    ref_lists, ref_steps = _adam_inputs(device, "float32", False)
    kw = dict(beta1=0.9, beta2=0.99, weight_decay=0.0, eps=1e-8, amsgrad=False, maximize=True)
    cudalite._fused_adam_(*lists, [], steps, lr=cudalite.tensor(0.01, device=device), **kw)
    cudalite._fused_adam_(*ref_lists, [], ref_steps, lr=0.01, **kw)
    for a, b in zip(lists[0], ref_lists[0], strict=True):
        np.testing.assert_array_equal(to_np(a), to_np(b))


def test_fused_errors(device):
    lists, steps = _adam_inputs(device, "float32", False)
    kw = dict(lr=0.01, beta1=0.9, beta2=0.99, weight_decay=0.0, eps=1e-8, amsgrad=False,
              maximize=False)  # fmt: skip
    with pytest.raises(RuntimeError, match="Tensor lists must have the same number of tensors"):
        cudalite._fused_adam_(*lists, [], steps[:2], **kw)
    with pytest.raises(RuntimeError, match="^grad_scale must be a 1-element tensor.$"):
        cudalite._fused_adam_(*lists, [], steps, grad_scale=cudalite.ones(2, device=device), **kw)
    bad = [lists[0], [g.double() for g in lists[1]], lists[2], lists[3]]
    with pytest.raises(RuntimeError, match="must be dense floating tensors of one dtype"):
        cudalite._fused_adam_(*bad, [], steps, **kw)


@pytest.mark.parametrize("nesterov", [False, True])
def test_fused_sgd(device, nesterov):
    p = cudalite.tensor([1.0, -2.0, 3.0], device=device)
    g = cudalite.tensor([0.5, 0.25, -1.0], device=device)
    buf = cudalite.empty(3, device=device)
    kw = dict(weight_decay=0.1, momentum=0.9, lr=0.1, dampening=0.0, nesterov=nesterov,
              maximize=False)  # fmt: skip
    cudalite._fused_sgd_([p], [g], [buf], is_first_step=True, **kw)
    d = np.array([0.5, 0.25, -1.0]) + 0.1 * np.array([1.0, -2.0, 3.0])
    step = d + 0.9 * d if nesterov else d
    np.testing.assert_allclose(to_np(buf), d, rtol=1e-6)
    np.testing.assert_allclose(to_np(p), np.array([1.0, -2.0, 3.0]) - 0.1 * step, rtol=1e-6)
    # no momentum: an empty buffer list
    q = cudalite.tensor([1.0, 2.0], device=device)
    cudalite._fused_sgd_([q], [cudalite.ones(2, device=device)], [], weight_decay=0.0,
                         momentum=0.0, lr=0.5, dampening=0.0, nesterov=False, maximize=True,
                         is_first_step=False)  # fmt: skip
    assert q.tolist() == [1.5, 2.5]


def _scaler_run(device, fused, inf_steps=(1, 4)):
    w = cudalite.tensor([[0.5, -0.25], [0.75, 1.0]], device=device).requires_grad_()
    opt = cudalite.optim.SGD([w], lr=0.01, momentum=0.5, fused=fused)
    scaler = cudalite.amp.GradScaler(device, init_scale=256.0, growth_interval=2)
    x = cudalite.tensor([[1.0, 2.0], [-1.0, 0.5]], device=device)
    log = []
    for s in range(7):
        opt.zero_grad()
        scaler.scale((x @ w).pow(2).sum()).backward()
        if s in inf_steps:
            w.grad[1, 1] = float("inf")
        before = w.detach().clone()
        scaler.step(opt)
        scaler.update()
        log.append((scaler.get_scale(), bool(cudalite.any(w.detach() != before).item())))
    assert not hasattr(opt, "grad_scale") and not hasattr(opt, "found_inf")
    return log, to_np(w.detach())


def test_grad_scaler_fused_optimizer(device):
    log_plain, w_plain = _scaler_run(device, fused=False)
    log_fused, w_fused = _scaler_run(device, fused=True)
    assert log_fused == log_plain
    assert [ran for _, ran in log_plain] == [True, False, True, True, False, True, True]
    assert [s for s, _ in log_plain] == [256.0, 128.0, 128.0, 256.0, 128.0, 128.0, 256.0]
    np.testing.assert_allclose(w_fused, w_plain, rtol=1e-6)


def test_grad_scaler_unscale_then_fused_step(device):
    # unscale_ first (e.g. to clip): the fused step then gets no grad_scale, only found_inf
    w = cudalite.tensor([1.0, 2.0], device=device).requires_grad_()
    opt = cudalite.optim.Adam([w], lr=0.1, fused=True)
    scaler = cudalite.amp.GradScaler(device, init_scale=4.0)
    scaler.scale((w * w).sum()).backward()
    scaler.unscale_(opt)
    np.testing.assert_allclose(to_np(w.grad), [2.0, 4.0])
    seen = {}
    orig = opt.step

    def spy(*a, **k):
        seen["grad_scale"] = opt.grad_scale
        seen["found_inf"] = opt.found_inf.item()
        return orig(*a, **k)

    opt.step = spy
    scaler.step(opt)
    assert seen == {"grad_scale": None, "found_inf": 0.0}
    np.testing.assert_allclose(to_np(w.detach()), [0.9, 1.9], rtol=1e-5)
