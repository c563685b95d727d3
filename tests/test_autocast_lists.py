"""Autocast's op lists against torch 2.11's: the output dtypes of every op of torch's lists
(tests/_autocast_cases.py) in autocast regions, compared with torch's.

On the CPU: against tests/data/autocast_dtypes.json, torch's dtypes recorded under
torch.autocast("cpu") for bfloat16 and float16 (tests/gen_autocast_table.py). On CUDA: live
against torch where torch sees a GPU, else against the recorded CUDA rows (torch's CUDA
autocast run on fake CUDA tensors).
"""

from __future__ import annotations

import importlib.util
import json
import warnings
import zlib
from pathlib import Path

import pytest

import cudalite
from _autocast_cases import CASES, VARIANTS, Ctx, summarize
from conftest import requires_cuda
from cudalite.amp import autocast_mode

TABLE = json.loads((Path(__file__).parent / "data" / "autocast_dtypes.json").read_text())
HAS_TORCH = importlib.util.find_spec("torch") is not None

# Ops of torch's lists (or modes of them) that cudalite does not have: their calls raise
# AttributeError, or NotImplementedError for a mode of a function cudalite has.
MISSING = frozenset(
    """
    torch.conv2d convolution conv_tbc linalg_vecdot chain_matmul linalg_multi_dot
    lstm_cell gru_cell rnn_tanh_cell rnn_relu_cell native_layer_norm frobenius_norm
    nuclear_norm norm_nuc cdist _upsample_bilinear2d_aa upsample_trilinear3d
    upsample_bicubic2d _upsample_bicubic2d_aa interpolate_area linalg_vector_norm
    linalg_norm_vector linalg_matrix_norm_str_ord linalg_matrix_norm linalg_cross tensordot
    polar stft view_as_complex cholesky cholesky_inverse cholesky_solve inverse pinverse
    lu_solve orgqr ormqr triangular_solve geqrf qr svd fractional_max_pool2d
    fractional_max_pool3d ctc_loss
    fft_fft fft_rfft fft_irfft fft_hfft linalg_cond linalg_matrix_rank linalg_solve
    linalg_cholesky linalg_svdvals linalg_eigvalsh linalg_inv linalg_qr linalg_svd linalg_eigh
    linalg_lstsq
    """.split()
)

# Where torch's fake CUDA tensors (the recorded CUDA rows) take another path than a real GPU:
# mixed dtypes in index_copy and in-place addmm_ raise on a GPU; trace of a 16-bit matrix
# is float16 on fake tensors but float32 on an H100 (its sum is cast, as cudalite's). The
# live test sees them.
FAKE_ONLY = frozenset(
    {
        ("index_copy", "mix"),
        ("Tensor.index_copy", "mix"),
        ("Tensor.addmm_", "mix"),
        ("trace", "low"),
        ("trace", "mix"),
    }
)

CASE_NAMES = [name for name, _ in CASES]


def _key(name):
    return name.replace(" ", "_")


def _outcome(fn, ctx):
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return summarize(fn(ctx))
    except (AttributeError, NotImplementedError) as e:
        if "not implemented for" in str(e):
            return f"no kernel: {e}"  # an op cudalite has, without this dtype's kernel
        return "missing"
    except Exception as e:  # noqa: BLE001 (torch's error type is part of the table)
        return "error:" + type(e).__name__


def _run(lib, device, low, name, fn, outcome):
    seed = zlib.crc32(name.encode())
    with lib.autocast(device, dtype=low):
        return {v: outcome(fn, Ctx(lib, device, low, v, seed)) for v in VARIANTS}


def _check(name, got, expected, skip=()):
    missing = _key(name) in MISSING
    for v in VARIANTS:
        if expected[v] == "unsupported" or (name, v) in skip:
            continue  # torch has no kernel for the dtype
        if missing:
            assert got[v] == "missing", (name, v, got[v])
        else:
            assert got[v] == expected[v], (name, v, got[v], expected[v])


@pytest.mark.parametrize("name", CASE_NAMES)
def test_cpu_autocast_dtypes_match_torch(name):
    fn = dict(CASES)[name]
    for low in ("bfloat16", "float16"):
        got = _run(cudalite, "cpu", getattr(cudalite, low), name, fn, _outcome)
        _check(name, got, TABLE["cpu"][low][name])


@requires_cuda
@pytest.mark.parametrize("name", CASE_NAMES)
def test_cuda_autocast_dtypes_match_recorded_torch(name):
    fn = dict(CASES)[name]
    for low in ("float16", "bfloat16"):
        got = _run(cudalite, "cuda", getattr(cudalite, low), name, fn, _outcome)
        _check(name, got, TABLE["cuda"][low][name], skip=FAKE_ONLY)


def _torch_outcome(fn, ctx):
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return summarize(fn(ctx))
    except Exception as e:  # noqa: BLE001
        if "not implemented for" in str(e):
            return "unsupported"
        return "error:" + type(e).__name__


@requires_cuda
@pytest.mark.skipif(not HAS_TORCH, reason="compares with torch where it is installed")
@pytest.mark.parametrize("name", CASE_NAMES)
def test_cuda_autocast_dtypes_match_live_torch(name):
    import torch

    if not torch.cuda.is_available():
        pytest.skip("torch sees no GPU")
    fn = dict(CASES)[name]
    for low in ("float16", "bfloat16"):
        expected = _run(torch, "cuda", getattr(torch, low), name, fn, _torch_outcome)
        got = _run(cudalite, "cuda", getattr(cudalite, low), name, fn, _outcome)
        _check(name, got, expected)


# Names in cudalite's lists whose cases carry another name.
_CASE_OF = {
    "__matmul__": "__matmul__",
    "__rmatmul__": "__matmul__",
    "__pow__": "__pow__",
    "__rpow__": "__rpow__",
    "float_power": None,  # torch's float_power computes in float64 whatever autocast does
    "grid_sample": "grid_sampler",
    "interpolate": "upsample_nearest2d",
    "cross_entropy": "cross_entropy",
}


def test_every_listed_op_has_a_case():
    """Each op of cudalite's lists (its copy of torch's) is in the table."""
    covered = {name.split(" ")[0].removeprefix("Tensor.") for name in CASE_NAMES}
    for device in ("cuda", "cpu"):
        for name, policy in autocast_mode._POLICIES[device].items():
            if policy == autocast_mode.NATIVE and name.endswith("_"):
                continue  # in-place forms: a few cases stand for all
            target = _CASE_OF.get(name, name)
            assert target is None or target in covered, (device, name)


def test_missing_ops_have_cases():
    assert MISSING <= {_key(n) for n in CASE_NAMES}


@requires_cuda
def test_binary_cross_entropy_is_refused_in_cuda_regions():
    x = cudalite.full((3,), 0.5, device="cuda")
    msg = "torch.nn.functional.binary_cross_entropy and torch.nn.BCELoss are unsafe to autocast"
    with cudalite.autocast("cuda"):
        with pytest.raises(RuntimeError, match=msg):
            cudalite.nn.functional.binary_cross_entropy(x, x)
        with pytest.raises(RuntimeError, match=msg):
            cudalite.nn.BCELoss()(x, x)
    assert cudalite.nn.functional.binary_cross_entropy(x, x).dtype == cudalite.float32


def test_in_place_forms_and_native_ops_run_as_written():
    """x.addmm_() and ops that torch runs as one kernel cast nothing inside a region (their
    parts, which cudalite composes from listed ops, included)."""
    g = cudalite.Generator().manual_seed(0)
    x = cudalite.randn(2, 3, 4, 4, generator=g)
    with cudalite.autocast("cpu"):
        assert cudalite.nn.functional.adaptive_avg_pool2d(x, 3).dtype == cudalite.float32
        m = cudalite.randn(4, 5, generator=g)
        assert m.addmm_(cudalite.randn(4, 3), cudalite.randn(3, 5)).dtype == cudalite.float32
        assert cudalite.einsum("ij,jk->ik", m.bfloat16(), m.t()).dtype == cudalite.bfloat16
        assert cudalite.einsum("ii->i", m[:4, :4]).dtype == cudalite.float32


# ---- CUDA's lists on the CPU ----

# What the emulation below cannot show: F.pad's modes look up the CPU's list themselves, and
# the CPU has no float16 trace.
_EMULATION_SKIP = frozenset(
    {(n, v) for n in ("trace",) for v in ("low", "mix")}
    | {
        (n, v)
        for n in "reflection_pad1d reflection_pad2d replication_pad1d replication_pad2d "
        "replication_pad3d".split()
        for v in VARIANTS
    }
)


@pytest.fixture
def cuda_lists_on_cpu(monkeypatch):
    """CUDA's policies written into every entry's CPU bits, so that a CPU region applies
    CUDA's lists: the composite ops cudalite builds from listed ops (which run on every
    device) then meet CUDA's rules on a machine without a GPU."""
    from cudalite import _C, _tensor
    from cudalite.nn import functional

    owners = (vars(_C.Tensor), _tensor._slow_methods, vars(cudalite), vars(functional))

    policies = dict(autocast_mode._POLICIES)
    autocast_mode._arm()  # with the real lists, before they change

    def write():
        for name in set(policies["cuda"]) | set(policies["cpu"]):
            for owner in owners:
                entry = owner.get(name)
                if isinstance(entry, _C._Checked):
                    entry._set_cast_policy(autocast_mode._policy_bits(name))

    monkeypatch.setitem(autocast_mode._POLICIES, "cpu", policies["cuda"])
    write()
    yield
    monkeypatch.setitem(autocast_mode._POLICIES, "cpu", policies["cpu"])
    write()


@pytest.mark.parametrize("name", CASE_NAMES)
def test_cuda_lists_on_cpu_tensors_match_recorded_torch(name, cuda_lists_on_cpu):
    fn = dict(CASES)[name]
    for low in ("float16", "bfloat16"):
        got = _run(cudalite, "cpu", getattr(cudalite, low), name, fn, _outcome)
        _check(name, got, TABLE["cuda"][low][name], skip=FAKE_ONLY | _EMULATION_SKIP)
