"""The ops of autocast's lists (docs/amp.md) in float16 and bfloat16, on cpu and cuda: each
runs in the 16-bit type and returns it, agrees with the float32 op on the same (already
rounded) inputs to a few units of the 16-bit rounding, and the reductions and products
accumulate in float32 as torch's do (a float16 accumulator could not count past 2048 ones,
a bfloat16 one past 256)."""

import numpy as np
import pytest

import cudalite
import cudalite.nn.functional as F
from conftest import to_np

HALF = ["float16", "bfloat16"]
EPS = {"float16": 2.0**-10, "bfloat16": 2.0**-7}


def _t(device, *shape, lo=0.1, hi=1.0, seed=0):
    rng = np.random.default_rng(seed + len(shape))
    return cudalite.tensor(rng.uniform(lo, hi, shape).tolist(), device=device)


def _target(device):
    return cudalite.tensor([0, 1, 2, 3, 4, 0, 1, 2], device=device)


# name -> fn(device) returning float32 inputs and the op over a list of inputs
CASES = {
    "mm": (lambda d: [_t(d, 8, 16), _t(d, 16, 4)], lambda x: cudalite.mm(*x)),
    "matmul": (lambda d: [_t(d, 2, 8, 16), _t(d, 16, 4)], lambda x: cudalite.matmul(*x)),
    "bmm": (lambda d: [_t(d, 2, 8, 16), _t(d, 2, 16, 4)], lambda x: cudalite.bmm(*x)),
    "addmm": (lambda d: [_t(d, 4), _t(d, 8, 16), _t(d, 16, 4)], lambda x: cudalite.addmm(*x)),
    "mv": (lambda d: [_t(d, 8, 16), _t(d, 16)], lambda x: cudalite.mv(*x)),
    "linear": (lambda d: [_t(d, 8, 16), _t(d, 4, 16), _t(d, 4)], lambda x: F.linear(*x)),
    "einsum": (lambda d: [_t(d, 8, 16), _t(d, 16, 4)], lambda x: cudalite.einsum("ij,jk->ik", *x)),
    "sdpa": (
        lambda d: [_t(d, 1, 2, 8, 16, seed=i) for i in range(3)],
        lambda x: F.scaled_dot_product_attention(*x, is_causal=True),
    ),
    "exp": (lambda d: [_t(d, 64)], lambda x: cudalite.exp(x[0])),
    "expm1": (lambda d: [_t(d, 64)], lambda x: cudalite.expm1(x[0])),
    "log": (lambda d: [_t(d, 64)], lambda x: cudalite.log(x[0])),
    "log2": (lambda d: [_t(d, 64)], lambda x: cudalite.log2(x[0])),
    "log10": (lambda d: [_t(d, 64)], lambda x: cudalite.log10(x[0])),
    "log1p": (lambda d: [_t(d, 64)], lambda x: cudalite.log1p(x[0])),
    "reciprocal": (lambda d: [_t(d, 64)], lambda x: cudalite.reciprocal(x[0])),
    "rsqrt": (lambda d: [_t(d, 64)], lambda x: cudalite.rsqrt(x[0])),
    "acos": (lambda d: [_t(d, 64, hi=0.9)], lambda x: cudalite.acos(x[0])),
    "asin": (lambda d: [_t(d, 64, hi=0.9)], lambda x: cudalite.asin(x[0])),
    "cosh": (lambda d: [_t(d, 64)], lambda x: cudalite.cosh(x[0])),
    "sinh": (lambda d: [_t(d, 64)], lambda x: cudalite.sinh(x[0])),
    "tan": (lambda d: [_t(d, 64)], lambda x: cudalite.tan(x[0])),
    "erfinv": (lambda d: [_t(d, 64, hi=0.9)], lambda x: cudalite.erfinv(x[0])),
    "pow": (lambda d: [_t(d, 64)], lambda x: cudalite.pow(x[0], 2.5)),
    "softplus": (lambda d: [_t(d, 64)], lambda x: F.softplus(x[0])),
    "layer_norm": (
        lambda d: [_t(d, 4, 4096), _t(d, 4096, seed=1), _t(d, 4096, seed=2)],
        lambda x: F.layer_norm(x[0], (4096,), x[1], x[2]),
    ),
    "logsumexp": (lambda d: [_t(d, 4, 4096)], lambda x: cudalite.logsumexp(x[0], 1)),
    "norm": (lambda d: [_t(d, 64, 64)], lambda x: cudalite.norm(x[0])),
    "nll_loss": (lambda d: [_t(d, 8, 5)], lambda x: F.nll_loss(x[0].log(), _target(x[0].device))),
    "cross_entropy": (
        lambda d: [_t(d, 8, 5)],
        lambda x: F.cross_entropy(x[0], _target(x[0].device)),
    ),
    "mse_loss": (lambda d: [_t(d, 4096), _t(d, 4096, seed=1)], lambda x: F.mse_loss(*x)),
    "l1_loss": (lambda d: [_t(d, 4096), _t(d, 4096, seed=1)], lambda x: F.l1_loss(*x)),
    "smooth_l1_loss": (lambda d: [_t(d, 64), _t(d, 64, seed=1)], lambda x: F.smooth_l1_loss(*x)),
    "huber_loss": (lambda d: [_t(d, 64), _t(d, 64, seed=1)], lambda x: F.huber_loss(*x)),
    "bce_with_logits": (
        lambda d: [_t(d, 64), _t(d, 64, seed=1)],
        lambda x: F.binary_cross_entropy_with_logits(*x),
    ),
    "softmax": (lambda d: [_t(d, 4, 4096)], lambda x: cudalite.softmax(x[0], 1)),
    "log_softmax": (lambda d: [_t(d, 4, 4096)], lambda x: cudalite.log_softmax(x[0], 1)),
    "sum": (lambda d: [_t(d, 4096)], lambda x: cudalite.sum(x[0])),
    "prod": (lambda d: [_t(d, 64, lo=0.95, hi=1.05)], lambda x: cudalite.prod(x[0])),
    "cumsum": (lambda d: [_t(d, 4096)], lambda x: cudalite.cumsum(x[0], 0)),
    "cumprod": (lambda d: [_t(d, 64, lo=0.95, hi=1.05)], lambda x: cudalite.cumprod(x[0], 0)),
    "atan2": (lambda d: [_t(d, 64), _t(d, 64, seed=1)], lambda x: cudalite.atan2(*x)),
    "dot": (lambda d: [_t(d, 4096), _t(d, 4096, seed=1)], lambda x: cudalite.dot(*x)),
    "scatter_add": (
        lambda d: [_t(d, 8), _t(d, 2, seed=1)],
        lambda x: x[0].scatter_add(0, cudalite.tensor([1, 2], device=x[0].device), x[1]),
    ),
    "var": (lambda d: [_t(d, 4096)], lambda x: cudalite.var(x[0])),
    "mean": (lambda d: [_t(d, 4096)], lambda x: cudalite.mean(x[0])),
}


@pytest.mark.parametrize("dtype", HALF)
@pytest.mark.parametrize("name", sorted(CASES))
def test_runs_in_half_near_float32(device, dtype, name):
    make, op = CASES[name]
    dt = getattr(cudalite, dtype)
    xs = [x.to(dt) for x in make(device)]
    got = op(xs)
    assert got.dtype == dt and got.device.type == device
    want = op([x.float() for x in xs])  # the same rounded inputs, in float32
    g, w = to_np(got).astype(np.float64), to_np(want).astype(np.float64)
    scale = max(np.abs(w).max(), 1e-30)
    # the result's own rounding, plus the rounding of intermediates torch also rounds
    assert np.abs(g - w).max() <= 4 * EPS[dtype] * scale, (np.abs(g - w).max(), scale)


ACCUMULATE = {
    "sum": lambda o: cudalite.sum(o),
    "mean_times_n": lambda o: cudalite.mean(o) * o.numel(),
    "cumsum_last": lambda o: cudalite.cumsum(o, 0)[-1],
    "dot": lambda o: cudalite.dot(o, o),
    "mm": lambda o: cudalite.mm(o.reshape(1, -1), o.reshape(-1, 1))[0, 0],
    "mv": lambda o: cudalite.mv(o.reshape(1, -1), o)[0],
    "linear": lambda o: F.linear(o.reshape(1, -1), o.reshape(1, -1))[0, 0],
    "norm_squared": lambda o: cudalite.norm(o) ** 2,
    "var_of_pattern": lambda o: (
        cudalite.var((cudalite.arange(o.numel(), device=o.device) % 2).to(o.dtype)) * 4
    ),
}


@pytest.mark.parametrize("dtype", HALF)
@pytest.mark.parametrize("name", sorted(ACCUMULATE))
def test_accumulates_in_float32(device, dtype, name):
    n = 4096
    ones = cudalite.ones(n, dtype=getattr(cudalite, dtype), device=device)
    got = ACCUMULATE[name](ones).float().item()
    # exact in float32 accumulation; a 16-bit accumulator stops at 2048 (float16) / 256
    # (bfloat16). The variance of the 0/1 pattern is n / (4 (n - 1)) * 4 ~ 1.
    want = n / (n - 1) if name == "var_of_pattern" else float(n)
    assert got == pytest.approx(want, rel=EPS[dtype])
