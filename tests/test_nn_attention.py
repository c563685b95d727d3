"""scaled_dot_product_attention's fused path (kernels/flash_attention.cu) and its switches
(cudalite.backends.cuda's *_sdp functions, cudalite.nn.attention).

The kernels' algorithm (tiles, causal tile skipping, online softmax, log-sum-exp, the
backward's recurrences, rounding to 16 bits) is checked everywhere through its NumPy model
(flash_attention_model.py) against the composition in float64; the kernels themselves are
checked on CUDA against the composition, with tolerances derived as torch's
test_transformers derives them: a multiple of the error of the composition run in the same
low precision, against a float64 reference."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

import cudalite as torch
import flash_attention_model as model
from conftest import requires_cuda
from cudalite.nn import functional as F
from cudalite.nn.attention import SDPBackend, sdpa_kernel

# (B, H, L, S, D, causal) as the kernels meet them: one row, tails of tiles, several tiles,
# a long sequence with head dim 128, L != S both ways.
SHAPES = [
    (1, 1, 1, 1, 64, False),
    (1, 1, 1, 1, 64, True),
    (2, 3, 17, 17, 64, False),
    (2, 3, 17, 17, 64, True),
    (1, 2, 128, 128, 64, False),
    (1, 2, 128, 128, 64, True),
    (2, 6, 256, 256, 64, True),
    (1, 1, 1000, 1000, 128, False),
    (1, 1, 1000, 1000, 128, True),
    (1, 2, 5, 300, 64, False),
    (1, 2, 100, 300, 64, True),
    (1, 2, 300, 100, 64, True),
    (1, 2, 70, 130, 32, False),
    (1, 2, 130, 70, 96, True),
]
# the model runs every (batch, head) in Python: a smaller set of the same kinds of shapes
MODEL_SHAPES = [s for s in SHAPES if s[0] * s[1] * s[2] * s[3] <= 1_000_000]


def _ref(q, k, v, do, causal, scale):
    """float64 composition on the CPU: out, lse and the three gradients (NumPy arrays)."""
    t = [torch.tensor(x, dtype=torch.float64, requires_grad=True) for x in (q, k, v)]
    with sdpa_kernel(SDPBackend.MATH):
        out = F.scaled_dot_product_attention(*t, is_causal=causal, scale=scale)
    out.backward(torch.tensor(do, dtype=torch.float64))
    s = np.einsum("bhld,bhsd->bhls", q.astype(np.float64), k.astype(np.float64)) * scale
    if causal:
        L, S = s.shape[-2:]
        s = np.where(np.arange(S)[None, :] <= np.arange(L)[:, None], s, -np.inf)
    mx = s.max(-1, keepdims=True)
    lse = (mx + np.log(np.exp(s - mx).sum(-1, keepdims=True)))[..., 0]
    return out.detach().numpy(), lse, *(x.grad.numpy() for x in t)


def _inputs(B, H, L, S, D, dtype, seed=0):
    rng = np.random.default_rng(seed)
    rnd = model.rounder(dtype)
    q = rnd(rng.standard_normal((B, H, L, D)).astype(np.float32))
    k = rnd(rng.standard_normal((B, H, S, D)).astype(np.float32))
    v = rnd(rng.standard_normal((B, H, S, D)).astype(np.float32))
    do = rnd(rng.standard_normal((B, H, L, D)).astype(np.float32))
    return q, k, v, do


# model tolerances: float32 (the tiling alone), then the 16-bit roundings of P, dS and the
# results (bfloat16 keeps 8 bits, float16 11)
MODEL_TOL = {"float32": 2e-5, "float16": 4e-3, "bfloat16": 3e-2}


@pytest.mark.parametrize("dtype", ["float32", "bfloat16", "float16"])
@pytest.mark.parametrize("shape", MODEL_SHAPES, ids=str)
def test_model_of_the_kernels_matches_the_composition(shape, dtype):
    B, H, L, S, D, causal = shape
    q, k, v, do = _inputs(B, H, L, S, D, dtype)
    scale = 1.0 / math.sqrt(D)
    out, lse = model.forward(q, k, v, causal, scale, dtype)
    dq, dk, dv = model.backward(do, q, k, v, out, lse, causal, scale, dtype)
    r_out, r_lse, r_dq, r_dk, r_dv = _ref(q, k, v, do, causal, scale)
    tol = MODEL_TOL[dtype]
    np.testing.assert_allclose(lse, r_lse, rtol=1e-5, atol=1e-5)
    for name, got, want in (
        ("out", out, r_out),
        ("dq", dq, r_dq),
        ("dk", dk, r_dk),
        ("dv", dv, r_dv),
    ):
        scale_of = max(1.0, float(np.abs(want).max()))
        np.testing.assert_allclose(got, want, rtol=tol, atol=tol * scale_of, err_msg=name)


def _growing_inputs(dtype, S=512):
    """Keys whose norms grow along the sequence: later tiles' scores pass a row's running max
    by far more than the slack, so the accumulators are rescaled on later tiles too."""
    q, k, v, do = _inputs(1, 2, 64, S, 64, dtype, seed=7)
    ramp = np.linspace(0.5, 8.0, S, dtype=np.float32)[None, None, :, None]
    return q, model.rounder(dtype)(k * ramp), v, do


@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
def test_model_rescales_when_later_tiles_have_larger_scores(dtype):
    q, k, v, do = _growing_inputs(dtype)
    stats = {}
    out, lse = model.forward_head(q[0, 0], k[0, 0], v[0, 0], False, 0.125, dtype, stats)
    assert stats["rescales"] > 64  # rows rescaled after their first tile
    r_out, r_lse, *_ = _ref(q[:, :1], k[:, :1], v[:, :1], do[:, :1], False, 0.125)
    tol = MODEL_TOL[dtype]
    np.testing.assert_allclose(lse, r_lse[0, 0], rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(out, r_out[0, 0], rtol=tol, atol=tol * np.abs(r_out).max())


def test_model_takes_the_given_scale():
    q, k, v, do = _inputs(1, 1, 70, 90, 32, "float32", seed=3)
    out, lse = model.forward(q, k, v, True, 0.3, "float32")
    r_out, r_lse, *_ = _ref(q, k, v, do, True, 0.3)
    np.testing.assert_allclose(out, r_out, rtol=2e-5, atol=2e-5)
    np.testing.assert_allclose(lse, r_lse, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("L,S", [(1, 1), (64, 64), (65, 65), (100, 300), (300, 100), (1000, 1000)])
def test_causal_tile_bounds_skip_only_fully_masked_tiles(L, S):
    """Every (query tile, key tile) pair that the forward's kv_end or the backward's q_begin
    leaves out has no visible key; every pair they read has one (no wasted tile)."""
    for q0 in range(0, L, model.BQ):
        fwd = set(model.kv_tiles(q0, S, True))
        for k0 in range(0, S, model.BK):
            bwd = q0 in set(model.q_tiles(k0, L, True))
            rows = q0 + np.arange(model.BQ) < L
            seen = (model._mask(q0, k0, L, S, True) & rows[:, None]).any()
            assert (k0 in fwd) == bwd
            assert seen == bwd, (q0, k0)


def test_round_bf16_rounds_to_nearest_even():
    x = np.array([1.0, 1.00390625, 1.005859375, -2.0000001, 3.1415927], dtype=np.float32)
    # 1 + 2^-8 is halfway between 1 and 1 + 2^-7: to even (1); 1 + 1.5 * 2^-8 rounds up
    np.testing.assert_array_equal(
        model.round_bf16(x), np.array([1.0, 1.0, 1.0078125, -2.0, 3.140625], dtype=np.float32)
    )


# ---- switches ----


@pytest.fixture(autouse=True)
def _flash_on():
    """The fused kernel is on by default; each test starts with it on and leaves the switches
    as it found them."""
    from cudalite.backends.cuda import _sdp

    saved = dict(_sdp._enabled)
    torch.backends.cuda.enable_flash_sdp(True)
    yield
    _sdp._enabled.update(saved)


def test_every_backend_is_on_by_default():
    from cudalite.backends.cuda import _sdp

    assert _sdp._DEFAULTS == {"flash": True, "mem_efficient": True, "math": True, "cudnn": True}


def test_sdp_switches_default_on_and_toggle():
    cb = torch.backends.cuda
    for get, put in (
        (cb.flash_sdp_enabled, cb.enable_flash_sdp),
        (cb.math_sdp_enabled, cb.enable_math_sdp),
        (cb.mem_efficient_sdp_enabled, cb.enable_mem_efficient_sdp),
        (cb.cudnn_sdp_enabled, cb.enable_cudnn_sdp),
    ):
        assert get() is True
        put(False)
        try:
            assert get() is False
        finally:
            put(True)
        assert get() is True


def test_sdpa_kernel_sets_and_restores_the_flags():
    cb = torch.backends.cuda
    with sdpa_kernel(SDPBackend.MATH) as ctx:
        assert ctx == {}
        assert cb.math_sdp_enabled() and not cb.flash_sdp_enabled()
        assert not cb.mem_efficient_sdp_enabled() and not cb.cudnn_sdp_enabled()
        with sdpa_kernel([SDPBackend.FLASH_ATTENTION, SDPBackend.FLASH_ATTENTION]):
            assert cb.flash_sdp_enabled() and not cb.math_sdp_enabled()
        assert cb.math_sdp_enabled() and not cb.flash_sdp_enabled()
    assert cb.flash_sdp_enabled() and cb.math_sdp_enabled()


def test_sdpa_kernel_rejects_other_types():
    with pytest.raises(AssertionError, match="got int"):
        with sdpa_kernel(1):
            pass


def test_sdp_backend_names_and_values():
    assert str(SDPBackend.MATH) == "SDPBackend.MATH"
    assert repr(SDPBackend.FLASH_ATTENTION) == "<SDPBackend.FLASH_ATTENTION: 1>"
    assert [int(b) for b in SDPBackend] == [-1, 0, 1, 2, 3, 4]


def test_sdp_kernel_is_deprecated_and_restores():
    cb = torch.backends.cuda
    with pytest.warns(FutureWarning, match="sdp_kernel\\(\\)` is deprecated"):
        with cb.sdp_kernel(enable_flash=False):
            assert not cb.flash_sdp_enabled() and cb.math_sdp_enabled()
    assert cb.flash_sdp_enabled()


def test_no_backend_enabled_raises(device):
    q = torch.randn(1, 1, 4, 8, device=device)
    with sdpa_kernel([]):
        with pytest.raises(RuntimeError, match="No viable backend for scaled_dot_product"):
            F.scaled_dot_product_attention(q, q, q)


def test_composition_runs_on_cpu_with_flash_only():
    q = torch.randn(1, 1, 4, 8)
    ref = F.scaled_dot_product_attention(q, q, q)
    with sdpa_kernel(SDPBackend.FLASH_ATTENTION):
        assert torch.equal(F.scaled_dot_product_attention(q, q, q), ref)


# ---- the kernels on CUDA ----

# torch's default tolerances per dtype, the floors of the derived ones
FLOOR = {torch.float16: (1e-3, 1e-3), torch.bfloat16: (1.6e-2, 1e-2)}
# how many times the low-precision composition's error the kernel may make (torch's
# test_flash_attention_vs_math_ref_grads uses such fudge factors)
FUDGE = {"out": 3.0, "dq": 8.0, "dk": 8.0, "dv": 4.0}


def _close(name, got, ref, lp, dtype):
    """got (the kernel) within FUDGE x |lp - ref| of ref, lp the composition in dtype."""
    rtol, floor = FLOOR[dtype]
    got, ref, lp = (t.detach() for t in (got, ref, lp))  # the outputs require grad
    ref64 = ref.double().cpu().numpy()
    err_lp = float(np.abs(lp.double().cpu().numpy() - ref64).max())
    atol = max(floor, FUDGE[name] * err_lp)
    np.testing.assert_allclose(
        got.double().cpu().numpy(), ref64, rtol=rtol, atol=atol, err_msg=name
    )


def _run(q, k, v, do, causal, math_only=False, scale=None):
    q, k, v = (t.detach().requires_grad_() for t in (q, k, v))
    if math_only:
        with sdpa_kernel(SDPBackend.MATH):
            out = F.scaled_dot_product_attention(q, k, v, is_causal=causal, scale=scale)
    else:
        out = F.scaled_dot_product_attention(q, k, v, is_causal=causal, scale=scale)
    out.backward(do)
    return out, q.grad, k.grad, v.grad


def _check_against_composition(q, k, v, do, causal, scale=None):
    dtype = q.dtype
    got = _run(q, k, v, do, causal, scale=scale)
    ref = _run(*(t.double() for t in (q, k, v, do)), causal, scale=scale)
    lp = _run(q, k, v, do, causal, math_only=True, scale=scale)
    for name, g, r, low in zip(("out", "dq", "dk", "dv"), got, ref, lp, strict=True):
        assert g.dtype is dtype and g.shape == r.shape
        _close(name, g, r, low, dtype)
    return got


@requires_cuda
@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16], ids=str)
@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_fused_matches_composition(shape, dtype):
    B, H, L, S, D, causal = shape
    torch.manual_seed(0)
    q = torch.randn(B, H, L, D, device="cuda", dtype=dtype)
    k = torch.randn(B, H, S, D, device="cuda", dtype=dtype)
    v = torch.randn(B, H, S, D, device="cuda", dtype=dtype)
    do = torch.randn(B, H, L, D, device="cuda", dtype=dtype)
    out = _check_against_composition(q, k, v, do, causal)[0]
    assert out.grad_fn.name() == "ScaledDotProductFlashAttentionBackward0"


@requires_cuda
@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16], ids=str)
@pytest.mark.parametrize("causal", [False, True])
def test_fused_takes_transposed_inputs_as_nanogpt_makes_them(dtype, causal):
    """q, k, v as (B, L, H, D) views transposed to (B, H, L, D); the gradient arrives through
    the transpose back, so it is strided too."""
    torch.manual_seed(1)
    B, T, H, D = 2, 200, 3, 64
    qkv = torch.randn(B, T, 3 * H * D, device="cuda", dtype=dtype)
    q, k, v = (t.view(B, T, H, D).transpose(1, 2) for t in qkv.split(H * D, dim=2))
    assert not q.is_contiguous()
    do = torch.randn(B, T, H, D, device="cuda", dtype=dtype).transpose(1, 2)
    _check_against_composition(q, k, v, do, causal)


@requires_cuda
def test_fused_takes_an_unaligned_row_stride():
    """Rows that don't start on 16 bytes take the element-wise tile loads."""
    torch.manual_seed(2)
    base = torch.randn(1, 2, 50, 65, device="cuda", dtype=torch.bfloat16)
    q = base[..., 1:]  # rows start 2 bytes in, stride 65
    k = torch.randn(1, 2, 70, 64, device="cuda", dtype=torch.bfloat16)
    v = torch.randn(1, 2, 70, 64, device="cuda", dtype=torch.bfloat16)
    do = torch.randn(1, 2, 50, 64, device="cuda", dtype=torch.bfloat16)
    _check_against_composition(q, k, v, do, True)


@requires_cuda
@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16], ids=str)
def test_fused_rescales_when_later_tiles_have_larger_scores(dtype):
    name = "bfloat16" if dtype is torch.bfloat16 else "float16"
    q, k, v, do = (torch.tensor(x, device="cuda").to(dtype) for x in _growing_inputs(name))
    _check_against_composition(q, k, v, do, False, scale=0.125)
    _check_against_composition(q, k, v, do, True, scale=0.125)


@requires_cuda
def test_fused_takes_a_scale():
    torch.manual_seed(3)
    q, k, v, do = (torch.randn(1, 2, 90, 64, device="cuda", dtype=torch.float16) for _ in range(4))
    _check_against_composition(q, k, v, do, True, scale=0.05)


@requires_cuda
def test_fused_gradients_of_some_inputs_only():
    torch.manual_seed(4)
    q, k, v = (torch.randn(1, 2, 40, 64, device="cuda", dtype=torch.bfloat16) for _ in range(3))
    k.requires_grad_()
    out = F.scaled_dot_product_attention(q, k, v, is_causal=True)
    assert out.grad_fn.name() == "ScaledDotProductFlashAttentionBackward0"
    out.sum().backward()
    assert q.grad is None and v.grad is None and k.grad is not None
    kr = k.detach().double().requires_grad_()
    F.scaled_dot_product_attention(q.double(), kr, v.double(), is_causal=True).sum().backward()
    np.testing.assert_allclose(
        k.grad.double().cpu().numpy(), kr.grad.cpu().numpy(), rtol=2e-2, atol=5e-2
    )


@requires_cuda
def test_fused_without_grad_records_nothing():
    q = torch.randn(1, 1, 10, 64, device="cuda", dtype=torch.float16)
    assert F.scaled_dot_product_attention(q, q, q).grad_fn is None
    q.requires_grad_()
    with torch.no_grad():
        assert F.scaled_dot_product_attention(q, q, q).grad_fn is None


@requires_cuda
def test_fused_with_gqa_repeats_heads():
    torch.manual_seed(5)
    q = torch.randn(1, 4, 30, 64, device="cuda", dtype=torch.bfloat16)
    k, v, do = (torch.randn(1, 2, 30, 64, device="cuda", dtype=torch.bfloat16) for _ in range(3))
    do = torch.randn(1, 4, 30, 64, device="cuda", dtype=torch.bfloat16)
    out = F.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=True)
    assert out.grad_fn is None
    ref = F.scaled_dot_product_attention(
        q.double(), k.double(), v.double(), is_causal=True, enable_gqa=True
    )
    np.testing.assert_allclose(out.double().cpu().numpy(), ref.cpu().numpy(), atol=3e-2)
    assert do.shape == out.shape


@requires_cuda
@pytest.mark.parametrize(
    "case",
    ["float32", "mask", "dropout", "head_dim_48", "three_dims", "flash_off", "value_dim"],
)
def test_composition_runs_where_the_kernel_does_not_apply(case):
    from cudalite.nn import _functional_attention as A

    dt = torch.float32 if case == "float32" else torch.bfloat16
    D = 48 if case == "head_dim_48" else 64
    q = torch.randn(1, 2, 8, D, device="cuda", dtype=dt)
    k = torch.randn(1, 2, 8, D, device="cuda", dtype=dt)
    v = torch.randn(1, 2, 8, 32 if case == "value_dim" else D, device="cuda", dtype=dt)
    mask = torch.ones(8, 8, dtype=torch.bool, device="cuda") if case == "mask" else None
    p = 0.5 if case == "dropout" else 0.0
    if case == "three_dims":
        q, k, v = q[0], k[0], v[0]
    if case == "flash_off":
        with sdpa_kernel(SDPBackend.MATH):
            assert not A._use_flash(q, k, v, mask, p)
        assert A._use_flash(q, k, v, mask, p)
        torch.backends.cuda.enable_flash_sdp(False)  # (the fixture turns it back on)
        assert not A._use_flash(q, k, v, mask, p)
    else:
        assert not A._use_flash(q, k, v, mask, p)
    q.requires_grad_()
    out = F.scaled_dot_product_attention(q, k, v, attn_mask=mask, dropout_p=p)
    assert out.grad_fn.name() != "ScaledDotProductFlashAttentionBackward0"


@requires_cuda
def test_fused_saved_output_modified_in_place_raises():
    q = torch.randn(1, 1, 10, 64, device="cuda", dtype=torch.float16, requires_grad=True)
    out = F.scaled_dot_product_attention(q, q, q)
    out.mul_(2)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        out.sum().backward()


@requires_cuda
def test_fused_under_autocast():
    q = torch.randn(1, 2, 20, 64, device="cuda", requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with torch.autocast("cuda", dtype=torch.bfloat16):
            out = F.scaled_dot_product_attention(q, q, q, is_causal=True)
    assert out.dtype is torch.bfloat16
    assert out.grad_fn.name() == "ScaledDotProductFlashAttentionBackward0"
    out.float().sum().backward()
    assert q.grad.dtype is torch.float32 and q.grad.shape == q.shape


# ---- the op's checks (reached through _C: the dispatch never passes such inputs) ----


def test_flash_supported_only_for_its_head_dims():
    from cudalite import _C

    for d in (16, 48, 80, 160, 256):
        assert _C._flash_attention_supported(0, d) is False
    assert _C._flash_attention_supported(-1, 64) is False
    assert _C._flash_attention_supported(1 << 20, 64) is False


def test_flash_op_rejects_bad_operands_on_the_cpu():
    from cudalite import _C

    q4 = torch.randn(1, 1, 4, 64, dtype=torch.float16)
    with pytest.raises(RuntimeError, match="expected query of 4 dims"):
        _C._flash_attention_forward(q4[0], q4, q4, False, 0.125)
    with pytest.raises(RuntimeError, match="expected CUDA tensors, got query on cpu"):
        _C._flash_attention_forward(q4, q4, q4, False, 0.125)


@requires_cuda
def test_flash_op_rejects_bad_operands_on_cuda():
    from cudalite import _C

    def t(*shape, dtype=torch.float16):
        return torch.randn(*shape, device="cuda", dtype=dtype)

    q = t(1, 2, 4, 64)
    cases = [
        ((t(1, 2, 4, 64, dtype=torch.float32), q, q), "float16 or bfloat16 tensors of one dtype"),
        ((q, t(1, 2, 4, 64, dtype=torch.bfloat16), q), "float16 or bfloat16 tensors of one dtype"),
        ((q, t(1, 3, 4, 64), q), "key has another batch, head count or head dim"),
        ((q, q, t(1, 2, 4, 32)), "value has another batch, head count or head dim"),
        ((q, t(1, 2, 5, 64), q), "key and value have different lengths \\(5 and 4\\)"),
        ((t(1, 2, 4, 48),) * 3, "head dim 48 is not supported"),
    ]
    for args, msg in cases:
        with pytest.raises(RuntimeError, match=msg):
            _C._flash_attention_forward(*args, False, 0.125)
    out, lse = _C._flash_attention_forward(q, q, q, True, 0.125)
    assert out.shape == q.shape and out.dtype is q.dtype
    assert lse.shape == (1, 2, 4) and lse.dtype is torch.float32
    with pytest.raises(RuntimeError, match="grad_output and out must have query's shape"):
        _C._flash_attention_backward(t(1, 2, 3, 64), q, q, q, out, lse, True, 0.125)
    with pytest.raises(RuntimeError, match="contiguous float32 \\(B, H, L\\) logsumexp"):
        _C._flash_attention_backward(q, q, q, q, out, lse.half(), True, 0.125)
    dq, dk, dv = _C._flash_attention_backward(q, q, q, q, out, lse, True, 0.125)
    assert dq.shape == dk.shape == dv.shape == q.shape
